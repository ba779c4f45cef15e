//! CUDA facts about a stage that the toolkit rules (CU120, CU121, CU132)
//! share: which CUDA the stage's base provides, and which CUDA its pip/uv/
//! conda installs (as the model's `package_installs` reads them) pin.

use crate::checks::dockerfile::support::{base_facts, root_image};
use crate::checks::DockerfileContext;
use crate::dockerfile::ast::Word;
use crate::dockerfile::model::Stage;
use crate::dockerfile::packages::PackageInstall;
use crate::knowledge::packages::{CudaPin, SpecCuda};
use crate::knowledge::Version;
use crate::source::Span;

/// The environment variable NVIDIA's images (and hand-rolled ones) set to
/// the toolkit version (NVIDIA's recipes, https://gitlab.com/nvidia/container-images/cuda).
const CUDA_VERSION_ENV: &str = "CUDA_VERSION";

/// The CUDA toolkit a stage stands on, and how we know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageCuda {
    pub version: Version,
    /// For messages: "the base image `nvidia/cuda:12.4.1-…`" or
    /// "`ENV CUDA_VERSION=12.4.1`".
    pub origin: String,
}

/// The base image's CUDA when the knowledge knows the image, else the
/// stage's `ENV CUDA_VERSION` (inherited from parent stages included).
pub fn stage_cuda(ctx: &DockerfileContext<'_>, stage: &Stage) -> Option<StageCuda> {
    let from_base = base_facts(ctx, stage).and_then(|facts| facts.cuda);
    if let (Some(version), Some(image)) = (from_base, root_image(ctx, stage)) {
        return Some(StageCuda {
            version,
            origin: format!("the base image `{}`", image.text),
        });
    }
    let value = stage.env_value(CUDA_VERSION_ENV)?;
    let version = Version::parse(value)?;
    Some(StageCuda {
        version,
        origin: format!("`ENV {CUDA_VERSION_ENV}={value}`"),
    })
}

/// A CUDA pin in one of a stage's package installs.
#[derive(Clone, Debug)]
pub struct StagePin {
    /// Index of the RUN step in `Stage::runs`.
    pub run: usize,
    /// The word that pins (a requirement, an index URL, a conda spec).
    pub text: String,
    pub span: Span,
    pub pin: CudaPin,
}

/// Environment variables that point pip/uv at another index than PyPI
/// (pip's `PIP_<OPTION>` convention; uv's `UV_*` settings): with one set,
/// a bare `torch==2.5.1` need not be PyPI's build.
const INDEX_ENV_VARS: &[&str] = &[
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
    "UV_INDEX_URL",
    "UV_EXTRA_INDEX_URL",
    "UV_INDEX",
    "UV_DEFAULT_INDEX",
    "UV_TORCH_BACKEND",
];
/// uv's `--torch-backend cu126` picks the PyTorch index for that CUDA.
const TORCH_BACKEND_OPTION: &str = "--torch-backend";

/// Every CUDA pin in the stage's own pip/uv/conda installs, in file order.
pub fn stage_pins(ctx: &DockerfileContext<'_>, stage: &Stage) -> Vec<StagePin> {
    let mut pins = Vec::new();
    for (run, step) in stage.runs.iter().enumerate() {
        for install in &step.installs {
            let assignments = step
                .commands
                .get(install.command)
                .map_or(&[][..], |c| c.assignments.as_slice());
            let found = if install.manager.is_python() {
                python_pins(ctx, stage, assignments, install)
            } else if install.manager.is_conda() {
                conda_pins(ctx, install)
            } else {
                continue;
            };
            pins.extend(found.into_iter().map(|(word, pin)| StagePin {
                run,
                text: word.text.clone(),
                span: word.span,
                pin,
            }));
        }
    }
    pins
}

/// Pins of a pip/uv install: its index URLs, uv's `--torch-backend`, and
/// its requirements (read as PyPI builds only when no other index is in
/// play, from the command line or the environment).
fn python_pins<'i>(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    assignments: &[(String, String)],
    install: &'i PackageInstall,
) -> Vec<(&'i Word, CudaPin)> {
    let packages = &ctx.knowledge.packages;
    let backend = option_value(install, TORCH_BACKEND_OPTION);
    let other_index =
        !install.index_urls.is_empty()
            || backend.is_some()
            || stage.env.iter().chain(assignments).any(|(key, value)| {
                INDEX_ENV_VARS.contains(&key.as_str()) && !value.trim().is_empty()
            });
    let mut found = Vec::new();
    for url in &install.index_urls {
        if let (Some(word), Some(SpecCuda::Pin(pin))) =
            (value_word(install, url), packages.classify_index_url(url))
        {
            found.push((word, pin));
        }
    }
    if let Some((word, label)) = backend {
        if let Some(SpecCuda::Pin(pin)) = packages.classify_cuda_label(label) {
            found.push((word, pin));
        }
    }
    for package in &install.packages {
        if let Some(SpecCuda::Pin(pin)) =
            packages.classify_requirement(&package.word.text, !other_index)
        {
            found.push((&package.word, pin));
        }
    }
    found.sort_by_key(|(word, _)| word.span.start);
    found
}

/// Pins of a conda install: `nvidia/label/cuda-X` channels and
/// CUDA-selecting specs (`pytorch-cuda=12.1`).
fn conda_pins<'i>(
    ctx: &DockerfileContext<'_>,
    install: &'i PackageInstall,
) -> Vec<(&'i Word, CudaPin)> {
    let packages = &ctx.knowledge.packages;
    let mut found = Vec::new();
    for channel in &install.channels {
        if let (Some(word), Some(pin)) = (
            value_word(install, channel),
            packages.classify_conda_channel(channel),
        ) {
            found.push((word, pin));
        }
    }
    for package in &install.packages {
        if let Some(pin) = packages.classify_conda_spec(&package.word.text) {
            found.push((&package.word, pin));
        }
    }
    found.sort_by_key(|(word, _)| word.span.start);
    found
}

/// The option word that carries `value`: the separate value word, or the
/// whole `--option=value` word.
fn value_word<'i>(install: &'i PackageInstall, value: &str) -> Option<&'i Word> {
    install.options.iter().find(|word| {
        word.text == value
            || (word.text.starts_with('-')
                && word
                    .text
                    .split_once('=')
                    .is_some_and(|(_, inline)| inline == value))
    })
}

/// The value of `option` (`--option value` or `--option=value`) and the
/// word holding it.
fn option_value<'i>(install: &'i PackageInstall, option: &str) -> Option<(&'i Word, &'i str)> {
    let mut words = install.options.iter();
    while let Some(word) = words.next() {
        if word.text == option {
            return words.next().map(|value| (value, value.text.as_str()));
        }
        if let Some(value) = word
            .text
            .strip_prefix(option)
            .and_then(|rest| rest.strip_prefix('='))
        {
            return Some((word, value));
        }
    }
    None
}

/// `cu124` for CUDA 12.4: how PyTorch names builds, for help texts.
pub fn cuda_tag(cuda: Version) -> String {
    format!("cu{}{}", cuda.major(), cuda.minor())
}
