//! CU006 file-too-complex: the stage model stopped following part of the
//! file because a pathological shape exceeded its work budget (thousands of
//! chained stages each inheriting the whole environment, variables that
//! double in size on every line). The model records where
//! ([`crate::dockerfile::model::BuildModel::limits_hit`]); this rule turns
//! each record into a finding, so that an incomplete analysis is never
//! silent.

use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};

pub static META: RuleMeta = RuleMeta {
    code: "CU006",
    name: "file-too-complex",
    category: Category::Structure,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The file exceeds cudalint's analysis budget; findings may be incomplete",
    doc: Doc::Page,
};

pub struct FileTooComplex;

impl DockerfileRule for FileTooComplex {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        for limit in &ctx.model.limits_hit {
            out.push(
                Diagnostic::at(&META, limit.span, limit.message.clone()).with_help(
                    "findings that depend on this part of the file may be missing; \
                     simplify the file (fewer chained stages, no self-doubling variables)",
                ),
            );
        }
    }
}
