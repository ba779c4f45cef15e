//! CU107 cuda-runfile-in-image: NVIDIA's CUDA runfile installer
//! (`cuda_<version>_<driver>_linux.run`) runs in the shipped image without
//! `--toolkit`, so it installs its driver too (whose libraries then shadow
//! the host's, as CU122 says of driver packages), or the runfile stays in a
//! layer of the image. The file pattern and options are data
//! (`rules/build.toml` `runfile`).

use crate::checks::dockerfile::support::{rm_target, shipped_stages};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::ast::Command;
use crate::dockerfile::model::Reach;
use crate::knowledge::build::{glob, BuildFacts};
use crate::paths::basename;

pub static META: RuleMeta = RuleMeta {
    code: "CU107",
    name: "cuda-runfile-in-image",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The CUDA runfile installer installs its driver or stays in an image layer",
    doc: Doc::Page,
};

pub struct CudaRunfileInImage;

fn file_name(word: &str) -> &str {
    basename(word)
}

impl DockerfileRule for CudaRunfileInImage {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let runfile = &BuildFacts::embedded().runfile;
        let is_runfile = |word: &str| glob(&runfile.pattern, file_name(word));
        for stage in shipped_stages(ctx.model) {
            // A runfile COPY'd or ADD'ed into a shipped stage is in that layer for good.
            for at in stage.instructions.clone() {
                let Some(instruction) = ctx.dockerfile.instructions.get(at) else {
                    continue;
                };
                let (Command::Copy(copy) | Command::Add(copy)) = &instruction.command else {
                    continue;
                };
                if copy.from.is_some() {
                    continue;
                }
                if let Some(source) = copy.sources.iter().find(|w| is_runfile(&w.text)) {
                    out.push(
                        Diagnostic::at(
                            &META,
                            source.span,
                            format!(
                                "`{}` copies the CUDA runfile installer into a layer of the shipped image: it stays there (gigabytes: the whole toolkit and a driver), even if a later RUN deletes it",
                                file_name(&source.text)
                            ),
                        )
                        .with_help("download, run and delete the runfile in one RUN (or run it from `RUN --mount=type=bind`), or install the toolkit from NVIDIA's apt/dnf repository")
                        .with_source(runfile.source.clone()),
                    );
                }
            }
            for step in &stage.runs {
                let mut left_behind = None;
                for command in step.commands.iter().filter(|c| c.reach != Reach::Skipped) {
                    let words = command.program_words();
                    // Downloaded here: it must be deleted in this RUN.
                    if let Some(word) = words.iter().skip(1).find(|w| is_runfile(&w.text)) {
                        let program = file_name(words.first().map_or("", |w| w.text.as_str()));
                        if matches!(program, "wget" | "curl") && left_behind.is_none() {
                            left_behind = Some(word);
                        }
                    }
                    if left_behind.is_some()
                        && rm_target(command, |path| {
                            is_runfile(path)
                                || path.ends_with(".run")
                                || path.ends_with("/*")
                                || path.contains("tmp")
                        })
                        .is_some()
                    {
                        left_behind = None;
                    }
                    // Run: `sh cuda_….run --silent …` or `./cuda_….run …`.
                    let run_at = match words.first().map(|w| file_name(&w.text)) {
                        Some("sh" | "bash") => words
                            .iter()
                            .skip(1)
                            .position(|w| !w.text.starts_with('-'))
                            .map(|p| p + 1),
                        Some(_) => Some(0),
                        None => None,
                    };
                    let Some(installer) = run_at
                        .and_then(|at| words.get(at))
                        .filter(|w| is_runfile(&w.text))
                    else {
                        continue;
                    };
                    let options: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
                    let toolkit_only = options.iter().any(|o| {
                        runfile
                            .toolkit_only
                            .iter()
                            .any(|t| o == t || o.starts_with(&format!("{t}=")))
                    });
                    let driver_asked = options
                        .iter()
                        .any(|o| runfile.driver_options.iter().any(|d| o == d));
                    if toolkit_only && !driver_asked {
                        continue;
                    }
                    out.push(
                        Diagnostic::at(
                            &META,
                            installer.span,
                            format!(
                                "`{}` runs without `--toolkit`: the runfile installs its NVIDIA driver into the image too, and those driver libraries (libcuda, libnvidia-ml) shadow the host driver's that the NVIDIA Container Toolkit mounts",
                                file_name(&installer.text)
                            ),
                        )
                        .with_help("pass `--silent --toolkit` (toolkit only), or install `cuda-toolkit-X-Y` from NVIDIA's repository, or start from an `nvidia/cuda` image")
                        .with_note("with `--silent` and no component option the runfile installs its default components, the driver among them")
                        .with_source(runfile.source.clone()),
                    );
                }
                if let Some(word) = left_behind {
                    out.push(
                        Diagnostic::at(
                            &META,
                            word.span,
                            format!(
                                "the CUDA runfile `{}` downloaded here is not deleted in the same RUN: the installer (gigabytes: the whole toolkit and a driver) stays in this layer of the shipped image",
                                file_name(&word.text)
                            ),
                        )
                        .with_help("delete it in the same RUN, after running it (`… && sh cuda_*.run --silent --toolkit && rm cuda_*.run`)")
                        .with_source(runfile.source.clone()),
                    );
                }
            }
        }
    }
}
