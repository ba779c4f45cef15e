//! CUDA facts about a stage that the toolkit rules (CU120, CU121, CU132)
//! share: which CUDA the stage's base provides, and which CUDA its pip/uv/
//! conda installs (as the model's `package_installs` reads them) pin.

use crate::checks::dockerfile::support::{base_facts, root_image};
use crate::checks::DockerfileContext;
use crate::dockerfile::ast::Word;
use crate::dockerfile::model::Stage;
use crate::dockerfile::packages::{PackageInstall, PackageManager};
use crate::knowledge::packages::{CudaPin, ExtraIndexTorch, PackageKnowledge, PypiTorch, SpecCuda};
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
    /// How pip came to this build when the words alone do not say it
    /// (`torch==2.6.0` next to a cu121 extra index comes from PyPI).
    pub resolution: Option<String>,
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
                let mut found = python_pins(ctx, stage, assignments, install);
                if let Some(newest) = unpinned_torch_pin(ctx, stage, run, assignments, install) {
                    if !found.iter().any(|(w, _, _)| w.span == newest.0.span) {
                        found.push(newest);
                    }
                }
                found
            } else if install.manager.is_conda() {
                conda_pins(ctx, install)
                    .into_iter()
                    .map(|(word, pin)| (word, pin, None))
                    .collect()
            } else {
                continue;
            };
            pins.extend(found.into_iter().map(|(word, pin, resolution)| StagePin {
                run,
                text: word.text.clone(),
                span: word.span,
                pin,
                resolution,
            }));
        }
    }
    pins
}

/// A pin, the word that carries it, and how pip resolved it (if the
/// words alone do not say).
type FoundPin<'i> = (&'i Word, CudaPin, Option<String>);

/// Options that replace PyPI (`--index-url`) rather than add to it.
const PRIMARY_INDEX_OPTIONS: &[&str] = &["-i", "--index-url", "--default-index"];
/// PyTorch's nightly index holds only pre-releases, which pip ignores
/// without `--pre`.
const NIGHTLY_INDEX_SEGMENT: &str = "/whl/nightly/";

/// Pins of a pip/uv install: its index URLs, uv's `--torch-backend`, and
/// its requirements (read as PyPI builds only when no other index is in
/// play, from the command line or the environment).
///
/// pip (not uv, which takes a package from the first index that has it)
/// with PyTorch's index only as `--extra-index-url` takes the highest
/// version across PyPI and that index: the index's CUDA applies to a torch
/// requirement only where the index has the release pip picks.
fn python_pins<'i>(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    assignments: &[(String, String)],
    install: &'i PackageInstall,
) -> Vec<FoundPin<'i>> {
    let packages = &ctx.knowledge.packages;
    let backend = option_value(install, TORCH_BACKEND_OPTION);
    let pre = install.has_option("--pre");
    // Index URLs pip would actually consult, with whether each replaces PyPI.
    let indexes: Vec<(&String, bool)> = install
        .index_urls
        .iter()
        .map(|url| (url, is_primary_index(install, url)))
        .filter(|(url, primary)| {
            *primary
                || install.manager != PackageManager::Pip
                || pre
                || !url.contains(NIGHTLY_INDEX_SEGMENT)
        })
        .collect();
    let has_primary = indexes.iter().any(|(_, primary)| *primary);
    let env_index = stage
        .env
        .iter()
        .chain(assignments)
        .any(|(key, value)| INDEX_ENV_VARS.contains(&key.as_str()) && !value.trim().is_empty());
    let other_index = !indexes.is_empty() || backend.is_some() || env_index;
    let pip_extra_only = install.manager == PackageManager::Pip && !has_primary && !env_index;
    let mut found: Vec<FoundPin<'i>> = Vec::new();
    for (url, _) in &indexes {
        let (Some(word), Some(SpecCuda::Pin(pin))) =
            (value_word(install, url), packages.classify_index_url(url))
        else {
            continue;
        };
        if !pip_extra_only {
            found.push((word, pin, None));
            continue;
        }
        for package in install.packages.iter().filter(|p| !p.is_location) {
            let spec = torch_spec(ctx, &package.word.text);
            match packages.torch_with_extra_index(&spec, pin.cuda) {
                Some(ExtraIndexTorch::FromIndex) => {
                    found.push((word, pin.clone(), None));
                }
                Some(ExtraIndexTorch::FromPypi(pypi)) => {
                    let resolution = pypi_resolution(&package.word.text, &pypi, pin.cuda);
                    let pypi_pin = CudaPin {
                        cuda: pypi.cuda,
                        system: false,
                        source: format!("{}; {}", pypi.source, pin.source),
                    };
                    found.push((&package.word, pypi_pin, Some(resolution)));
                }
                Some(ExtraIndexTorch::Unknown) | None => {}
            }
        }
    }
    if let Some((word, label)) = backend {
        if let Some(SpecCuda::Pin(pin)) = packages.classify_cuda_label(label) {
            found.push((word, pin, None));
        }
    }
    for package in &install.packages {
        // `torchvision==0.21.0` from PyPI pulls PyPI's `torch==2.6.0`.
        let spec = torch_spec(ctx, &package.word.text);
        if let Some(SpecCuda::Pin(pin)) = packages.classify_requirement(&spec, !other_index) {
            if !found.iter().any(|(w, _, _)| w.span == package.word.span) {
                found.push((&package.word, pin, None));
            }
        }
    }
    found.sort_by_key(|(word, _, _)| word.span.start);
    found
}

/// Why pip takes PyPI's torch although a PyTorch index is an extra index.
fn pypi_resolution(spec: &str, pypi: &PypiTorch, index_cuda: Version) -> String {
    let tag = cuda_tag(index_cuda);
    let last = match pypi.index_newest {
        Some(last) => format!(" (its newest is torch {last})"),
        None => String::new(),
    };
    if pypi.newest {
        format!(
            "`{spec}` names no exact release, and pip takes the newest torch across PyPI and the extra index: PyPI's torch {} (a CUDA {} build), since the {tag} index has no torch {} wheels{last}",
            pypi.release, pypi.cuda, pypi.release
        )
    } else {
        format!(
            "the {tag} index has no torch {} wheels{last}, so pip takes `{spec}` from PyPI, a CUDA {} build; `--extra-index-url` adds an index, it does not pin the build",
            pypi.release, pypi.cuda
        )
    }
}

/// Whether `url` was given with an option that replaces PyPI.
fn is_primary_index(install: &PackageInstall, url: &str) -> bool {
    let mut previous: Option<&Word> = None;
    for word in &install.options {
        if word.text == url {
            if let Some(option) = previous {
                return PRIMARY_INDEX_OPTIONS.contains(&option.text.as_str());
            }
        }
        if let Some((option, value)) = word.text.split_once('=') {
            if value == url && option.starts_with('-') {
                return PRIMARY_INDEX_OPTIONS.contains(&option);
            }
        }
        previous = Some(word);
    }
    false
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

/// The torch requirement a package requirement amounts to: a torch
/// companion's exact release pins torch (`torchvision==0.21.0` →
/// `torch==2.6`); anything else is itself. A companion pinned with a
/// `+cuXYZ` label keeps it (the label says the build).
fn torch_spec(ctx: &DockerfileContext<'_>, spec: &str) -> String {
    let Some((name, Some(version), _)) = PackageKnowledge::requirement_terms(spec) else {
        return spec.to_string();
    };
    if spec.contains('+') {
        return spec.to_string();
    }
    match ctx.knowledge.resolution.torch_for(&name, version) {
        Some((torch, _)) => format!("torch=={torch}"),
        None => spec.to_string(),
    }
}

/// An unpinned `torch` (or one with only lower bounds, or an unpinned
/// torchvision/torchaudio, which pins the newest torch) installed from
/// PyPI alone: pip takes PyPI's newest torch, whose CUDA is the newest
/// `pypi_defaults` row. Said only where nothing else can hold torch back:
/// the base is a plain `nvidia/cuda` image (no torch in it), no earlier
/// install in the stage's chain brought torch, and the command has no
/// requirement or constraint file, no exact torch pin and no package that
/// pins torch itself (vLLM, xFormers). PyTorch's nightly index without
/// `--pre` counts as absent (pip ignores its pre-releases).
fn unpinned_torch_pin<'i>(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    run: usize,
    assignments: &[(String, String)],
    install: &'i PackageInstall,
) -> Option<FoundPin<'i>> {
    let packages = &ctx.knowledge.packages;
    let resolution = &ctx.knowledge.resolution;
    if !install.requirement_files.is_empty()
        || !install.constraint_files.is_empty()
        || option_value(install, TORCH_BACKEND_OPTION).is_some()
    {
        return None;
    }
    let pre = install.has_option("--pre");
    let nightly_only = install
        .index_urls
        .iter()
        .all(|url| url.contains(NIGHTLY_INDEX_SEGMENT) && !pre && !is_primary_index(install, url));
    let env_index = stage
        .env
        .iter()
        .chain(assignments)
        .any(|(key, value)| INDEX_ENV_VARS.contains(&key.as_str()) && !value.trim().is_empty());
    if !nightly_only || env_index {
        return None;
    }
    let os = crate::checks::dockerfile::stack::distro_python_os(ctx, stage)?;
    let mut carrier: Option<&Word> = None;
    for package in &install.packages {
        if package.is_location {
            continue;
        }
        let Some((name, exact, open)) = PackageKnowledge::requirement_terms(&package.word.text)
        else {
            continue;
        };
        if resolution.pins_torch(&name) {
            return None;
        }
        let is_torch = name == "torch" || resolution.is_torch_companion(&name);
        if !is_torch {
            continue;
        }
        // An exact pin (or a range with an upper bound) decides torch.
        if exact.is_some() || !open {
            return None;
        }
        carrier.get_or_insert(&package.word);
    }
    let carrier = carrier?;
    if torch_installed_before(ctx, stage, run) {
        return None;
    }
    let (newest, python) = resolution.newest_release(&os, "torch")?;
    let default = packages.pypi_default("torch", newest)?;
    let checked = ctx
        .knowledge
        .checked
        .as_deref()
        .unwrap_or("the knowledge's date");
    let nightly = if install.index_urls.is_empty() {
        String::new()
    } else {
        " (PyTorch's nightly index holds only pre-releases, which pip ignores without `--pre`)"
            .to_string()
    };
    let resolution = format!(
        "`{}` names no exact release, so pip installs the newest torch on PyPI for the image's Python {}{nightly}: torch {newest}, a CUDA {} build, as of {checked}",
        carrier.text, python.python, default.cuda
    );
    Some((
        carrier,
        CudaPin {
            cuda: default.cuda,
            system: false,
            source: format!("{}; {}", default.source, python.source),
        },
        Some(resolution),
    ))
}

/// Whether a RUN before `run` in `stage`, or any RUN of the stages it is
/// built on, installs torch or a torch companion (pip then keeps that torch
/// for an unpinned requirement).
fn torch_installed_before(ctx: &DockerfileContext<'_>, stage: &Stage, run: usize) -> bool {
    let resolution = &ctx.knowledge.resolution;
    let installs_torch = |step: &crate::dockerfile::model::RunStep| {
        step.installs.iter().any(|install| {
            install.packages.iter().any(|p| {
                let name = p.distribution().unwrap_or_default();
                let name = crate::knowledge::resolution::normalize(name);
                name == "torch" || name == "pytorch" || resolution.is_torch_companion(&name)
            })
        })
    };
    if stage.runs.iter().take(run).any(installs_torch) {
        return true;
    }
    ctx.model
        .ancestry(stage.index)
        .into_iter()
        .skip(1)
        .filter_map(|index| ctx.model.stages.get(index))
        .any(|parent| parent.runs.iter().any(installs_torch))
}
