//! CU109 cuda-compile-without-toolkit: a stage compiles CUDA code (runs
//! `nvcc`, builds a `CUDAExtension`, switches on a CUDA build with
//! `FORCE_CUDA=1` or `-DGGML_CUDA=on`) on a base image without the CUDA
//! compiler (`-runtime`/`-base` tags, PyTorch's runtime images) and nothing
//! in its chain installs one. The build fails, or the extension is quietly
//! built without CUDA. The mirror image of CU101.

use crate::checks::dockerfile::cuda_stages::{stage_builds_native_code, Evidence};
use crate::checks::dockerfile::stack::chain;
use crate::checks::dockerfile::support::{base_facts, stage_instructions};
use crate::checks::{Category, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::ast::Command;
use crate::dockerfile::model::Stage;
use crate::dockerfile::shell::command_start;
use crate::knowledge::images::glob_matches;
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU109",
    name: "cuda-compile-without-toolkit",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "A stage compiles CUDA code on an image that has no CUDA compiler",
    doc: include_str!("../../../docs/rules/CU109.md"),
};

pub struct CudaCompileWithoutToolkit;

impl DockerfileRule for CudaCompileWithoutToolkit {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        for stage in &ctx.model.stages {
            let Some(facts) = base_facts(ctx, stage) else {
                continue;
            };
            if facts.has_compiler || facts.is_unknown("has_compiler") {
                continue;
            }
            let Some((span, what)) = cuda_compile(ctx, stage) else {
                continue;
            };
            if chain_installs_toolkit(ctx, stage) {
                continue;
            }
            let variant = facts
                .variant
                .map_or(String::new(), |v| format!(" ({v} variant)"));
            let root = crate::checks::dockerfile::support::root_image(ctx, stage)
                .map_or_else(|| facts.family.clone(), |i| i.text.clone());
            out.push(
                Diagnostic::at(
                    &META,
                    span,
                    format!(
                        "{what}, but the base image `{root}`{variant} has no nvcc and no CUDA headers, and the stage installs none"
                    ),
                )
                .with_help("compile in a stage built on the matching `-devel` image and COPY the result into this one, or install the toolkit's compiler (`cuda-nvcc-X-Y` and the `-dev` packages of the image's CUDA)")
                .with_note("without nvcc the build stops (`nvcc: not found`, torch's `CUDA_HOME environment variable is not set`), or a package that falls back to a CPU build installs without its CUDA kernels")
                .with_note(format!("source: {}; {}", facts.source, ctx.knowledge.resolution.cuda_compile.source)),
            );
        }
    }
}

/// The first thing in `stage` that compiles CUDA code, and how to say it.
fn cuda_compile(ctx: &DockerfileContext<'_>, stage: &Stage) -> Option<(Span, String)> {
    let signals = &ctx.knowledge.resolution.cuda_compile;
    let switch = |text: &str| {
        signals
            .text
            .iter()
            .find(|t| text.to_ascii_lowercase().contains(&t.to_ascii_lowercase()))
    };
    // The stage's own ENV: a CUDA switch, or a CUDA setting with a build.
    let mut setting: Option<(Span, String)> = None;
    for instruction in stage_instructions(ctx, stage) {
        let Command::Env(pairs) = &instruction.command else {
            continue;
        };
        for pair in pairs {
            let assignment = format!("{}={}", pair.key, pair.value);
            if let Some(found) = switch(&assignment) {
                return Some((
                    pair.span,
                    format!("`ENV {assignment}` switches on a CUDA build (`{found}`)"),
                ));
            }
            if signals.env.contains(&pair.key) && setting.is_none() {
                setting = Some((
                    pair.span,
                    format!("`ENV {}` sets up a CUDA build", pair.key),
                ));
            }
        }
    }
    for run in &stage.runs {
        for (index, command) in run.commands.iter().enumerate() {
            let installs_here = run.installs.iter().any(|i| i.command == index);
            for (key, value) in &command.assignments {
                let assignment = format!("{key}={value}");
                if let Some(found) = switch(&assignment) {
                    return Some((
                        command.span,
                        format!("`{assignment}` switches on a CUDA build (`{found}`)"),
                    ));
                }
                if signals.env.contains(key) && setting.is_none() {
                    setting = Some((command.span, format!("`{key}=…` sets up a CUDA build")));
                }
            }
            let words = command
                .words
                .get(command_start(&command.words)..)
                .unwrap_or_default();
            if let Some(program) = words.first() {
                let name = program.text.rsplit('/').next().unwrap_or(&program.text);
                if signals.commands.iter().any(|c| c == name) {
                    return Some((command.span, format!("`{name}` compiles CUDA code")));
                }
            }
            // A package install's words name packages, not switches.
            if installs_here {
                continue;
            }
            if let Some((word, found)) = command
                .words
                .iter()
                .find_map(|w| switch(&w.text).map(|f| (w, f)))
            {
                return Some((word.span, format!("`{found}` builds CUDA code")));
            }
        }
    }
    let (span, what) = setting?;
    // The stage's build settings are what is being judged: only its
    // actions count as building (a compiler run, a source install).
    let mut actions = ctx.knowledge.images.build_signals.clone();
    actions.env.clear();
    let builds = stage_builds_native_code(
        ctx,
        stage,
        &actions,
        // With a CUDA setting in force, a source install (a checkout, a
        // VCS URL) is the CUDA build it sets up.
        Evidence::MayCompile,
    );
    builds.then_some((span, format!("{what} and the stage builds native code")))
}

/// Whether the stage or a stage it is built on puts nvcc into the image: a
/// toolkit package (apt/dnf, conda, pip), NVIDIA's runfile, or a COPY of a
/// toolkit directory from another stage or image.
fn chain_installs_toolkit(ctx: &DockerfileContext<'_>, stage: &Stage) -> bool {
    let toolkit = &ctx.knowledge.resolution.toolkit_installs;
    let images = &ctx.knowledge.images;
    let any = |patterns: &[String], name: &str| patterns.iter().any(|p| glob_matches(p, name));
    for s in chain(ctx, stage) {
        for run in &s.runs {
            for install in &run.installs {
                for package in &install.packages {
                    let name = package
                        .distribution()
                        .unwrap_or(&package.name)
                        .to_ascii_lowercase();
                    let found = if install.manager.is_system() {
                        images.devel_package(&name).is_some() || any(&toolkit.system, &name)
                    } else if install.manager.is_conda() {
                        any(&toolkit.conda, &name)
                    } else {
                        any(&toolkit.pip, &name)
                    };
                    if found {
                        return true;
                    }
                }
            }
            let runfile = run.commands.iter().flat_map(|c| &c.words).any(|w| {
                let file = w.text.rsplit('/').next().unwrap_or(&w.text);
                glob_matches(&toolkit.runfile, file)
            });
            if runfile {
                return true;
            }
        }
        if let Some(dir) = images.toolkit_dir.as_ref() {
            let copies_toolkit =
                stage_instructions(ctx, s)
                    .iter()
                    .any(|instruction| match &instruction.command {
                        Command::Copy(copy) | Command::Add(copy) => {
                            copy.from.is_some()
                                && copy
                                    .sources
                                    .iter()
                                    .any(|src| dir.matching(&src.text).is_some())
                        }
                        _ => false,
                    });
            if copies_toolkit {
                return true;
            }
        }
    }
    false
}
