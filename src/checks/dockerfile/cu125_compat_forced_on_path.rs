//! CU125 compat-forced-on-path: the forward-compatibility driver
//! (`/usr/local/cuda/compat`) is put on the shipped image's loader path by
//! hand, instead of letting the NVIDIA Container Toolkit enable it when the
//! host driver is older.

use crate::checks::dockerfile::runtime_env;
use crate::checks::{Category, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};

pub static META: RuleMeta = RuleMeta {
    code: "CU125",
    name: "compat-forced-on-path",
    category: Category::Compatibility,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The CUDA forward-compatibility libraries are forced onto the loader path",
    doc: include_str!("../../../docs/rules/CU125.md"),
};

pub struct CompatForcedOnPath;

impl DockerfileRule for CompatForcedOnPath {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let runtime = &ctx.knowledge.cupti.runtime;
        let error = runtime.error("compat");
        for found in runtime_env::loader_dirs(ctx, |dir| runtime.is_compat_dir(dir)) {
            let how = found.route.phrase();
            let consequence = error.map_or_else(String::new, |e| {
                format!(
                    ": its libcuda.so.1 then replaces the host driver's on every GPU, and GPUs without forward-compatibility support (GeForce, most workstation cards) fail with error {} {} (\"{}\")",
                    e.code, e.name, e.text
                )
            });
            let mut finding = Diagnostic::at(
                &META,
                found.span,
                format!("the forward-compatibility directory `{}` {how}{consequence}", found.dir),
            )
            .with_help(
                "remove it: the NVIDIA Container Toolkit registers the compat libraries at container start, and only when the host driver is older than them",
            )
            .with_note(format!("source: {}", runtime.source));
            if let Some(e) = error {
                finding = finding.with_note(format!("source: {}", e.source));
            }
            out.push(finding);
        }
    }
}
