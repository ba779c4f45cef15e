//! CU124 stubs-on-runtime-path: the toolkit's link-time stub directory
//! (`lib64/stubs`, `targets/<arch>/lib/stubs`) is on the shipped image's
//! loader path, so programs load the stub `libcuda.so` instead of the driver.

use crate::checks::dockerfile::runtime_env;
use crate::checks::{Category, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};

pub static META: RuleMeta = RuleMeta {
    code: "CU124",
    name: "stubs-on-runtime-path",
    category: Category::Correctness,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "The CUDA stub libraries are on the run-time loader path",
    doc: include_str!("../../../docs/rules/CU124.md"),
};

pub struct StubsOnRuntimePath;

impl DockerfileRule for StubsOnRuntimePath {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let runtime = &ctx.knowledge.cupti.runtime;
        let error = runtime.error("stub");
        for found in runtime_env::loader_dirs(ctx, |dir| runtime.is_stub_dir(dir)) {
            let how = found.route.phrase();
            let consequence = error.map_or_else(String::new, |e| {
                format!(
                    ": every CUDA program then loads the stub libcuda.so and fails with error {} {} (\"{}\")",
                    e.code, e.name, e.text
                )
            });
            let mut finding = Diagnostic::at(
                &META,
                found.span,
                format!("the link-time stub directory `{}` {how}{consequence}", found.dir),
            )
            .with_help(
                "stubs are for linking only: put them on `LIBRARY_PATH` or pass `-L…/stubs` to the build command, and keep them off the run-time loader path",
            )
            .with_note(format!("source: {}", runtime.source));
            if let Some(e) = error {
                finding = finding.with_note(format!("source: {}", e.source));
            }
            out.push(finding);
        }
    }
}
