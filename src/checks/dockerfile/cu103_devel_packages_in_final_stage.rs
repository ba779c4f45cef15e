//! CU103 devel-packages-in-final-stage: the final image (its stage or the
//! stages it is built `FROM`) installs CUDA development packages (the
//! toolkit, nvcc, `-dev` libraries, Nsight) although the final stage
//! compiles nothing. The package patterns are data (`images.devel_packages`).

use crate::checks::dockerfile::cuda_stages::{
    is_base_or_build_environment, runs_ptxas, shipped_image_compiles,
};
use crate::checks::dockerfile::cupti_use::cupti_use;
use crate::checks::dockerfile::runtime_env;
use crate::checks::dockerfile::support::{base_facts, shipped_stages};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::model::Stage;

pub static META: RuleMeta = RuleMeta {
    code: "CU103",
    name: "devel-packages-in-final-stage",
    category: Category::Size,
    default_severity: Severity::Info,
    fix: FixAvailability::None,
    summary: "The final image installs CUDA development packages it does not use",
    doc: Doc::Page,
};

pub struct DevelPackagesInFinalStage;

impl DockerfileRule for DevelPackagesInFinalStage {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let images = &ctx.knowledge.images;
        let chain = shipped_stages(ctx.model);
        let Some(target) = chain.last() else {
            return;
        };
        if shipped_image_compiles(ctx, &chain, &images.build_signals) {
            return;
        }
        // A file with no start command of its own (or only a shell) that
        // installs a toolkit or toolchain builds a base for other builds or
        // a build environment: the toolkit is its product, not dead weight.
        if is_base_or_build_environment(ctx, &chain) {
            return;
        }
        // On a devel base these packages add little; CU101 reports the base.
        if base_facts(ctx, target).is_some_and(|facts| facts.devel_sized) {
            return;
        }
        let wants_cupti = wants_cupti(ctx, &chain);
        let runs_ptxas = runs_ptxas(ctx, &chain);
        for stage in &chain {
            let place = if std::ptr::eq(*stage, *target) {
                "the final stage".to_string()
            } else {
                match &stage.name {
                    Some(name) => format!("stage `{name}`, which the final image is built on,"),
                    None => format!("stage {}, which the final image is built on,", stage.index),
                }
            };
            for run in &stage.runs {
                let system_packages = run
                    .installs
                    .iter()
                    .filter(|install| install.manager.is_system())
                    .flat_map(|install| &install.packages)
                    .filter(|package| !package.is_location);
                for package in system_packages {
                    let Some(pattern) = images.devel_package(&package.name) else {
                        continue;
                    };
                    // In NVIDIA's apt layout CUPTI comes with the command-line
                    // tools: an image that wants CUPTI has its reason.
                    if pattern.provides_cupti
                        && (wants_cupti || comment_mentions_cupti(ctx, run.instruction))
                    {
                        continue;
                    }
                    // nvcc's package carries ptxas, which XLA runs where it runs.
                    if pattern.provides_ptxas && runs_ptxas {
                        continue;
                    }
                    out.push(
                    Diagnostic::at(
                        &META,
                        package.word.span,
                        format!(
                            "{place} installs `{}` ({}), but nothing in the final stage compiles",
                            package.word.text, pattern.what
                        ),
                    )
                    .with_help(
                        "install development packages in a build stage and COPY its output; the final image needs only the runtime libraries (`cuda-libraries-X-Y` or a `-runtime-` base)",
                    )
                    .with_note(format!("package facts: {}", pattern.source)),
                );
                }
            }
        }
    }
}

/// Whether the shipped image wants CUPTI: something in it needs it (as
/// CU110 reads it), its loader path names a CUPTI directory, or it installs
/// a CUPTI package by name.
fn wants_cupti(ctx: &DockerfileContext<'_>, chain: &[&Stage]) -> bool {
    if !cupti_use(ctx, chain).needs.is_empty() {
        return true;
    }
    let settings = runtime_env::settings(ctx, chain);
    let on_path = ctx.knowledge.cupti.runtime.loader_vars.iter().any(|var| {
        runtime_env::effective_path(&settings, var)
            .iter()
            .any(|entry| entry.text.to_ascii_lowercase().contains("cupti"))
    });
    on_path
        || chain
            .iter()
            .flat_map(|stage| &stage.runs)
            .flat_map(|run| &run.installs)
            .filter(|install| install.manager.is_system())
            .flat_map(|install| &install.packages)
            .any(|package| package.name.to_ascii_lowercase().contains("cupti"))
}

/// A comment on the lines just above the RUN, or inside it, that says the
/// install is for CUPTI.
fn comment_mentions_cupti(ctx: &DockerfileContext<'_>, instruction: usize) -> bool {
    let Some(run) = ctx.dockerfile.instructions.get(instruction) else {
        return false;
    };
    let first = run.start_line.saturating_sub(3);
    ctx.dockerfile
        .comments
        .iter()
        .filter(|c| c.line >= first && c.line <= run.end_line)
        .any(|c| c.text.to_ascii_lowercase().contains("cupti"))
}
