//! CU133 gpu-arch-detected-at-build: the build asks the GPUs of the machine
//! it runs on which architectures to compile for, and `docker build` shows
//! it none: `CMAKE_CUDA_ARCHITECTURES=native` / `CUDAARCHS=native` (CMake
//! stops configuring), a torch CUDA extension built with no
//! `TORCH_CUDA_ARCH_LIST` (torch's arch detection raises), or
//! `nvcc -arch=native` (a warning, and code for nvcc's default architecture
//! only). What builds a torch extension, and which projects pass their own
//! arch flags, is data (`rules/build.toml` `torch_extensions`); the lists
//! are the model's (`dockerfile::arch_lists`).

use crate::checks::dockerfile::build_steps::{
    built_stages, cwd_before, holds, names_project, settings_for, source_build_target,
};
use crate::checks::dockerfile::cuda_stages::arch_lists_read;
use crate::checks::dockerfile::support::stage_instructions;
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::arch_lists::{self, ArchList, Origin, Special, Syntax};
use crate::dockerfile::model::{Reach, RunStep, Stage};
use crate::knowledge::build::{BuildFacts, TorchExtensions};
use crate::source::Span;

static META: RuleMeta = RuleMeta {
    code: "CU133",
    name: "gpu-arch-detected-at-build",
    category: Category::Compatibility,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "The build asks for the GPU architecture of a machine that has no GPU (`native`, a torch extension with no TORCH_CUDA_ARCH_LIST)",
    doc: Doc::Page,
};

const TORCH_LIST: &str = "TORCH_CUDA_ARCH_LIST";
const HELP_LIST: &str = "name the architectures of the GPUs you deploy to, e.g. `8.0;8.6;9.0+PTX` (add `+PTX` to the newest for GPUs newer than the list)";

pub struct GpuArchDetectedAtBuild;

fn native_finding(list: &ArchList, facts: &BuildFacts) -> Diagnostic {
    let native = &facts.native_arch;
    if list.syntax == Syntax::Nvcc {
        let mut finding = Diagnostic::at(
            &META,
            list.span,
            "nvcc `-arch=native` compiles for the GPUs of the build machine, and `docker build` shows it none: nvcc warns and builds for its default architecture only",
        )
        .with_help(format!("replace `-arch=native` with `-gencode` options for the GPUs you deploy to; {HELP_LIST}"))
        .with_note(native.nvcc.clone())
        .with_source(native.nvcc_source.clone());
        finding.severity = Severity::Warning;
        return finding;
    }
    Diagnostic::at(
        &META,
        list.span,
        format!(
            "{} is `native`: CMake asks the GPUs of the build machine, and `docker build` shows it none, so configuring stops",
            list.setting
        ),
    )
    .with_help(format!("set the architectures, e.g. `-DCMAKE_CUDA_ARCHITECTURES=\"80;86;90\"`, or `all-major`; {HELP_LIST}"))
    .with_note(native.cmake.clone())
    .with_source(native.cmake_source.clone())
}

/// What command `at` of `step` builds from source: paths and URLs it
/// installs (`pip install -e repo`, `git+…`), or `setup.py`'s directory.
fn source_targets(step: &RunStep, at: usize) -> Vec<(String, Span)> {
    let mut targets: Vec<(String, Span)> = step
        .installs
        .iter()
        .filter(|install| install.command == at && install.manager.is_python())
        .flat_map(|install| &install.packages)
        .filter(|package| package.is_location && !package.word.text.ends_with(".whl"))
        .map(|package| (package.word.text.clone(), package.word.span))
        .collect();
    // `-e repo`: an editable install is always of a path or URL, even one
    // written without `./`.
    let is_pip_install = step
        .installs
        .iter()
        .any(|install| install.command == at && install.manager.is_python());
    if let Some(command) = step.commands.get(at).filter(|_| is_pip_install) {
        let mut editable = false;
        for word in &command.words {
            let text = word.text.as_str();
            if std::mem::take(&mut editable) {
                if !targets.iter().any(|(t, _)| t == text) {
                    targets.push((text.to_string(), word.span));
                }
            } else if text == "-e" || text == "--editable" {
                editable = true;
            } else if let Some(path) = text.strip_prefix("--editable=") {
                targets.push((path.to_string(), word.span));
            }
        }
    }
    if let Some(command) = step.commands.get(at) {
        if let Some(build) = source_build_target(command.program_words()) {
            if build.extension_build && targets.is_empty() {
                targets.push((build.target, command.span));
            }
        }
    }
    targets
}

/// The torch CUDA extension command `at` of `step` builds without a list:
/// its span and what makes it one.
fn unlisted_extension_build(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    step: &RunStep,
    at: usize,
    known: &TorchExtensions,
) -> Option<(Span, String)> {
    let targets = source_targets(step, at);
    if targets.is_empty() {
        return None;
    }
    // `pip install .` builds the working directory: WORKDIR, or a `cd`
    // earlier in the RUN.
    let cwd = cwd_before(ctx, stage, step, at);
    let names = |project: &String| {
        targets.iter().any(|(text, _)| names_project(text, project))
            || cwd.as_deref().is_some_and(|dir| {
                targets.iter().any(|(t, _)| t == ".") && names_project(dir, project)
            })
    };
    if known.own_arch_flags.iter().any(names) {
        return None;
    }
    let settings = settings_for(ctx, stage, step, at);
    let listed = settings
        .iter()
        .any(|(k, v)| k == TORCH_LIST && !v.trim().is_empty());
    if listed {
        return None;
    }
    let target = &targets[0];
    let why = if let Some(project) = known.always_cuda.iter().find(|p| names(p)) {
        format!("`{project}` always builds a torch CUDA extension")
    } else if let Some(setting) = known.force_env.iter().find(|s| holds(&settings, s)) {
        format!(
            "`{setting}` makes the build of `{}` compile its torch CUDA extensions",
            target.0
        )
    } else {
        return None;
    };
    let span = step.commands.get(at).map_or(target.1, |c| c.span);
    Some((span, why))
}

impl DockerfileRule for GpuArchDetectedAtBuild {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let facts = BuildFacts::embedded();
        let read_by_stage = arch_lists_read(ctx);
        for stage in built_stages(ctx) {
            let read = read_by_stage.get(stage.index).copied().unwrap_or(true);
            let lists = arch_lists::stage_lists(stage_instructions(ctx, stage), stage);
            // CMake reads `native` from `-DCMAKE_CUDA_ARCHITECTURES=` or the
            // `CUDAARCHS` environment variable, not from an environment
            // variable named CMAKE_CUDA_ARCHITECTURES.
            let cmake_reads = |l: &ArchList| {
                l.syntax == Syntax::Nvcc || l.cmake_define || l.variable == Some("CUDAARCHS")
            };
            for list in lists.iter().filter(|l| {
                l.special() == Some(Special::Native)
                    && cmake_reads(l)
                    && (read || l.origin == Origin::Run)
            }) {
                out.push(native_finding(list, facts));
            }
            let known = &facts.torch_extensions;
            for step in &stage.runs {
                for (at, command) in step.commands.iter().enumerate() {
                    if command.reach != Reach::Runs {
                        continue;
                    }
                    let Some((span, why)) = unlisted_extension_build(ctx, stage, step, at, known)
                    else {
                        continue;
                    };
                    let mut finding = Diagnostic::at(
                        &META,
                        span,
                        format!("this builds a torch CUDA extension with `{TORCH_LIST}` unset or empty ({why}): torch then asks the GPUs it sees for their architecture, and `docker build` shows it none, so the build fails"),
                    )
                    .with_help(format!("set `ENV {TORCH_LIST}=…` before this RUN: {HELP_LIST}"));
                    for [line, what] in &known.no_gpu {
                        finding = finding.with_note(format!("torch {line}: {what}"));
                    }
                    out.push(finding.with_source(known.source.clone()));
                }
            }
        }
    }
}
