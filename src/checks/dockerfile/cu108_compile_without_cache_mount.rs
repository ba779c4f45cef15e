//! CU108 compile-without-cache-mount: a long CUDA compile (flash-attention,
//! xformers, apex, a PyTorch or vLLM source build, a `MAX_JOBS` build) runs
//! in a RUN with no BuildKit cache mount and no compiler cache, so any
//! change above it recompiles everything from scratch. Info: the build is
//! right, only slow. What counts as a long compile and as a cache is data
//! (`rules/build.toml` `compiles`); the RUN reading is `build_steps`.

use crate::checks::dockerfile::build_steps::{built_stages, compile_cached, long_compile};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::knowledge::build::BuildFacts;

pub static META: RuleMeta = RuleMeta {
    code: "CU108",
    name: "compile-without-cache-mount",
    category: Category::Size,
    default_severity: Severity::Info,
    fix: FixAvailability::None,
    summary: "A long CUDA compile runs without a build cache mount or a compiler cache",
    doc: Doc::Page,
};

pub struct CompileWithoutCacheMount;

impl DockerfileRule for CompileWithoutCacheMount {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let facts = BuildFacts::embedded();
        for stage in built_stages(ctx) {
            for step in &stage.runs {
                let Some(compile) = long_compile(ctx, stage, step, facts) else {
                    continue;
                };
                if compile_cached(ctx, stage, step, facts) {
                    continue;
                }
                out.push(
                    Diagnostic::at(
                        &META,
                        compile.span,
                        format!(
                            "this RUN compiles {} with no cache mount and no compiler cache: any change to it or above it recompiles every CUDA kernel from scratch",
                            compile.what
                        ),
                    )
                    .with_help(format!("cache the build: {}", facts.compiles.advice))
                    .with_note("BuildKit keeps a `--mount=type=cache` directory across builds, even when the layer itself is rebuilt")
                    .with_source(facts.compiles.source.clone()),
                );
            }
        }
    }
}
