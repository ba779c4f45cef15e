//! CU124 stubs-on-runtime-path: the toolkit's link-time stub directory
//! (`lib64/stubs`, `targets/<arch>/lib/stubs`) is on the shipped image's
//! loader path, so programs load the stub `libcuda.so` instead of the driver.

use crate::checks::dockerfile::runtime_env;
use crate::checks::dockerfile::support::{base_facts, shipped_stages, stage_instructions};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::ast::Command;

pub static META: RuleMeta = RuleMeta {
    code: "CU124",
    name: "stubs-on-runtime-path",
    category: Category::Correctness,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "The CUDA stub libraries are on the run-time loader path",
    doc: Doc::Page,
};

pub struct StubsOnRuntimePath;

impl DockerfileRule for StubsOnRuntimePath {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let may_have_stubs = image_may_have_stubs(ctx);
        let runtime = &ctx.knowledge.cupti.runtime;
        let error = runtime.error("stub");
        for found in runtime_env::loader_dirs(ctx, |dir| runtime.is_stub_dir(dir)) {
            let how = found.route.phrase();
            let mut finding = if may_have_stubs {
                let consequence = error.map_or_else(String::new, |e| {
                    format!(
                        ": every CUDA program then loads the stub libcuda.so and fails with error {} {} (\"{}\")",
                        e.code, e.name, e.text
                    )
                });
                Diagnostic::at(
                    &META,
                    found.span,
                    format!("the link-time stub directory `{}` {how}{consequence}", found.dir),
                )
            } else {
                // Dead today, a trap tomorrow: the day the base becomes a
                // devel image or a CUDA -dev package is installed, the stubs
                // appear and shadow the driver.
                let mut latent = Diagnostic::at(
                    &META,
                    found.span,
                    format!(
                        "the link-time stub directory `{}` {how}; this image has no stubs there yet (its base ships none and nothing installs CUDA development packages), but its CUDA programs load the stub libcuda and fail the day the base changes to a devel image or a -dev package brings them",
                        found.dir
                    ),
                );
                latent.severity = Severity::Info;
                latent
            }
            .with_help(
                "stubs are for linking only: put them on `LIBRARY_PATH` or pass `-L…/stubs` to the build command, and keep them off the run-time loader path",
            )
            .with_note(format!("source: {}", runtime.source));
            if let Some(e) = error.filter(|_| may_have_stubs) {
                finding = finding.with_note(format!("source: {}", e.source));
            }
            out.push(finding);
        }
    }
}

/// Whether the shipped image can hold a stub directory at all. Stubs come
/// with CUDA development packages (devel images; `cuda-driver-dev-X-Y`,
/// pulled in by `cuda-cudart-dev-X-Y`), so a known base/runtime image that
/// installs none of them and copies nothing into the toolkit has none, and
/// a stale `…/stubs` entry on its path is dead but harmless. Unknown bases
/// might have them.
fn image_may_have_stubs(ctx: &DockerfileContext<'_>) -> bool {
    let chain = shipped_stages(ctx.model);
    let Some(root) = chain.first() else {
        return true;
    };
    let Some(facts) = base_facts(ctx, root) else {
        return true;
    };
    if facts.has_compiler || facts.is_unknown("has_compiler") {
        return true;
    }
    let images = &ctx.knowledge.images;
    chain.iter().any(|stage| {
        let installs_devel = stage
            .runs
            .iter()
            .flat_map(|run| &run.installs)
            .flat_map(|install| &install.packages)
            .any(|package| !package.is_location && images.devel_package(&package.name).is_some());
        let copies_toolkit =
            stage_instructions(ctx, stage)
                .iter()
                .any(|instruction| match &instruction.command {
                    Command::Copy(copy) | Command::Add(copy) => {
                        copy.dest.text.starts_with("/usr/local/cuda")
                            || copy.dest.text.trim_end_matches('/') == "/usr/local"
                    }
                    _ => false,
                });
        installs_devel || copies_toolkit
    })
}
