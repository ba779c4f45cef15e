//! CU113 distro-cuda-on-cuda-image: an apt install of the distribution's own
//! CUDA packages (Ubuntu's and Debian's `nvidia-cuda-toolkit`,
//! `libcupti-dev`, `libcudart11.0`…) on an NVIDIA CUDA base. They put a
//! second CUDA, of the distribution's version, into `/usr/lib/<triplet>`,
//! where the loader and the linker find it before `/usr/local/cuda`.

use crate::checks::dockerfile::support::base_facts;
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::model::RunStep;
use crate::dockerfile::packages::PackageManager;
use crate::paths::basename;
use crate::prediction::Prediction;

pub static META: RuleMeta = RuleMeta {
    code: "CU113",
    name: "distro-cuda-on-cuda-image",
    category: Category::Compatibility,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The distribution's own CUDA packages are installed on an NVIDIA CUDA image",
    doc: Doc::Page,
};

pub struct DistroCudaOnCudaImage;

/// Whether a later command of the same RUN removes `name` again (`apt-get
/// purge -y libnvidia-ml-dev` after the build that needed it): then it
/// never reaches the image, and a build-time use is deliberate.
fn purged_later(run: &RunStep, after: usize, name: &str) -> bool {
    run.commands.iter().skip(after + 1).any(|command| {
        let words = command.program_words();
        let program = words.first().map(|w| basename(&w.text));
        matches!(program, Some("apt-get" | "apt" | "dpkg"))
            && words.iter().any(|w| {
                matches!(
                    w.text.as_str(),
                    "purge" | "remove" | "-r" | "-P" | "--purge"
                )
            })
            && words
                .iter()
                .any(|w| w.text == name || w.text.split(':').next() == Some(name))
    })
}

/// Families whose images carry NVIDIA's CUDA under `/usr/local/cuda`.
fn is_nvidia_cuda_family(family: &str) -> bool {
    family == "nvidia/cuda" || family.starts_with("NGC ")
}

impl DockerfileRule for DistroCudaOnCudaImage {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let resolution = &ctx.knowledge.resolution;
        for stage in &ctx.model.stages {
            let Some(facts) = base_facts(ctx, stage) else {
                continue;
            };
            if !is_nvidia_cuda_family(&facts.family) {
                continue;
            }
            let nvidia = match facts.cuda {
                Some(cuda) => format!("NVIDIA's CUDA {cuda} in /usr/local/cuda"),
                None => "NVIDIA's CUDA in /usr/local/cuda".to_string(),
            };
            let distro = facts
                .os
                .as_deref()
                .and_then(|os| resolution.distro_cuda_version(os));
            for run in &stage.runs {
                for install in run
                    .installs
                    .iter()
                    .filter(|i| i.manager == PackageManager::Apt)
                {
                    let names: Vec<_> = install
                        .packages
                        .iter()
                        .filter(|p| !p.is_location && resolution.is_distro_cuda(&p.name))
                        .filter(|p| !purged_later(run, install.command, &p.name))
                        .collect();
                    let Some(first) = names.first() else {
                        continue;
                    };
                    let listed = names
                        .iter()
                        .map(|p| format!("`{}`", p.name))
                        .collect::<Vec<_>>()
                        .join(", ");
                    let version = match distro {
                        Some(d) => format!("the distribution's CUDA {}", d.cuda),
                        None => "the distribution's own CUDA build".to_string(),
                    };
                    let mut diagnostic = Diagnostic::at(
                        &META,
                        first.word.span,
                        format!(
                            "{listed} installs {version} next to {nvidia} (from `{}`)",
                            facts.family
                        ),
                    )
                    .with_help("install NVIDIA's packages of the image's release instead (`cuda-cupti-dev-X-Y`, `cuda-cudart-dev-X-Y`, `cuda-nvcc-X-Y`, matching `CUDA_VERSION`), or nothing: a devel tag has them already")
                    .with_note("the distribution's libraries land in /usr/lib/x86_64-linux-gnu, which the loader's cache and `-l` search before /usr/local/cuda: programs and extensions may load or link against the other CUDA, and a devel image gets a second nvcc")
                    .with_note(format!("source: {}", resolution.distro_cuda.source))
                    .with_prediction(Prediction::DistroCudaLibraries {
                        packages: names.iter().map(|p| p.name.clone()).collect(),
                    });
                    if let Some(d) = distro {
                        diagnostic = diagnostic.with_note(format!("source: {}", d.source));
                    }
                    out.push(diagnostic);
                }
            }
        }
    }
}
