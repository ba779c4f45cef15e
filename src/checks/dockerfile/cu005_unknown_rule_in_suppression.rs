//! CU005 unknown-rule-in-suppression: a `# cudalint ignore=` comment names a
//! rule that does not exist, so it silences nothing.
//!
//! Suppressions are read by the engine (`suppress.rs`), which reports this;
//! this file holds the metadata and the docs.

use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};

pub static META: RuleMeta = RuleMeta {
    code: "CU005",
    name: "unknown-rule-in-suppression",
    category: Category::Structure,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "A suppression comment names a rule that does not exist",
    doc: Doc::Page,
};

pub struct UnknownRuleInSuppression;

impl DockerfileRule for UnknownRuleInSuppression {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    /// Suppressions are collected by the engine, which reports unknown names.
    fn check(&self, _ctx: &DockerfileContext<'_>, _out: &mut Vec<Diagnostic>) {}
}
