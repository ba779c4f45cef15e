//! CUDA facts about a stage that the toolkit rules (CU120, CU121, CU132)
//! share: which CUDA the stage's base provides, and which CUDA its pip/uv/
//! conda installs (as the model's `package_installs` reads them) pin, as
//! the installer's index rule resolves them (pip's best match, uv's first
//! index) and through packages that pin torch (vLLM).

mod resolved_pins;

use resolved_pins::{
    install_brings_torch, newest_release_pins, pinned_torch_pin, unpinned_torch_pin,
};

use crate::checks::dockerfile::requirement_files::{self, FileOrigin};
use crate::checks::dockerfile::support::{base_facts, root_image};
use crate::checks::DockerfileContext;
use crate::dockerfile::ast::Word;
use crate::dockerfile::model::Stage;
use crate::dockerfile::packages::{PackageInstall, PackageManager};
use crate::knowledge::packages::{CudaPin, ExtraIndexTorch, PypiTorch, SpecCuda};
use crate::knowledge::resolution::{IndexStrategy, Installer, PythonNewest};
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
    /// The requirements file and line the word was read from, when the
    /// install read it with `-r` (`span` is then the RUN's word naming the file).
    pub from_file: Option<FileOrigin>,
}

impl StagePin {
    /// The pin's word for messages: `` `torch>=2.1` ``, and for a
    /// requirement read from a requirements file, the file and line too
    /// (`` `torch>=2.1` from line 3 of `requirements.txt` ``).
    pub fn named(&self) -> String {
        match &self.from_file {
            Some(origin) => format!(
                "`{}` from line {} of {}",
                self.text, origin.line, origin.file
            ),
            None => format!("`{}`", self.text),
        }
    }
}

/// uv's `--torch-backend cu126` picks the PyTorch index for that CUDA.
const TORCH_BACKEND_OPTION: &str = "--torch-backend";

/// Every CUDA pin in the stage's own pip/uv/conda installs, in file order.
pub fn stage_pins(ctx: &DockerfileContext<'_>, stage: &Stage) -> Vec<StagePin> {
    let mut pins = Vec::new();
    // A fact of the whole stage chain (it reads every RUN): found once here,
    // not once per install.
    let python_os = crate::checks::dockerfile::stack::distro_python_os(ctx, stage);
    let python_os = python_os.as_deref();
    for (run, step) in stage.runs.iter().enumerate() {
        for install in &step.installs {
            // `-r requirements.txt` read from the build context, as if on the command line.
            let expanded = requirement_files::expand(ctx, stage, step, install);
            let install = expanded.as_ref().map_or(install, |e| &e.install);
            let assignments = step
                .commands
                .get(install.command)
                .map_or(&[][..], |c| c.assignments.as_slice());
            let found = if install.manager.is_python() {
                let mut found = python_pins(ctx, stage, python_os, assignments, install);
                let derived = unpinned_torch_pin(ctx, stage, python_os, run, assignments, install)
                    .into_iter()
                    .chain(pinned_torch_pin(
                        ctx,
                        stage,
                        python_os,
                        run,
                        assignments,
                        install,
                    ))
                    .chain(newest_release_pins(
                        ctx,
                        stage,
                        python_os,
                        run,
                        assignments,
                        install,
                    ));
                for pin in derived {
                    // Words read from a requirements file share the span of
                    // the RUN's file word: the text tells them apart.
                    if !found
                        .iter()
                        .any(|(w, _, _)| w.span == pin.0.span && w.text == pin.0.text)
                    {
                        found.push(pin);
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
            // A requirement read from a file is judged only where nothing
            // installed before could have brought torch.
            let from_file = |word: &Word| {
                expanded
                    .as_ref()
                    .and_then(|e| e.origin(word.span, &word.text))
            };
            let found: Vec<_> = if found.iter().any(|(word, _, _)| from_file(word).is_some())
                && requirement_files::torch_may_be_installed_before(
                    ctx,
                    stage,
                    run,
                    install.command,
                    &|other| install_brings_torch(ctx, other),
                ) {
                found
                    .into_iter()
                    .filter(|(word, _, _)| from_file(word).is_none())
                    .collect()
            } else {
                found
            };
            pins.extend(found.into_iter().map(|(word, pin, resolution)| StagePin {
                run,
                text: word.text.clone(),
                span: word.span,
                pin,
                resolution,
                from_file: from_file(word).cloned(),
            }));
        }
    }
    pins
}

/// A pin, the word that carries it, and how pip resolved it (if the
/// words alone do not say).
pub(crate) type FoundPin<'i> = (&'i Word, CudaPin, Option<String>);

/// Options that replace PyPI (`--index-url`) rather than add to it.
const PRIMARY_INDEX_OPTIONS: &[&str] = &["-i", "--index-url", "--default-index"];
/// PyTorch's nightly index holds only pre-releases, which pip ignores
/// without `--pre`.
const NIGHTLY_INDEX_SEGMENT: &str = "/whl/nightly/";

/// The index rule an install follows: its installer's (pip's, uv's) and
/// the strategy in force, from the command's option, the environment or
/// the installer's default.
#[derive(Clone, Debug)]
pub(crate) struct IndexRule<'k> {
    pub strategy: IndexStrategy,
    pub installer: &'k Installer,
    /// How the strategy was chosen, for messages: "the default", "`--index-strategy unsafe-best-match`".
    pub chosen_by: Option<String>,
}

impl IndexRule<'_> {
    /// Who decided, for messages: "pip", "uv (index strategy `first-index`, its default)".
    fn who(&self) -> String {
        let name = &self.installer.manager;
        match &self.chosen_by {
            Some(by) => format!("{name} with {by}"),
            None => match self
                .installer
                .strategies
                .iter()
                .find(|(_, strategy)| *strategy == self.strategy)
            {
                Some((value, _)) => format!("{name} (index strategy `{value}`, its default)"),
                None => name.clone(),
            },
        }
    }

    /// Whether an environment variable the installer reads indexes from is
    /// set in the stage or on the command.
    fn env_index(&self, stage: &Stage, assignments: &[(String, String)]) -> bool {
        let set = |value: &str| !value.trim().is_empty();
        self.installer.index_env.iter().any(|name| {
            stage.env_value(name).is_some_and(set)
                || assignments
                    .iter()
                    .any(|(key, value)| key == name && set(value))
        })
    }
}

/// The index rule of a pip/uv/pipx install (pipx runs pip).
pub(crate) fn index_rule<'k>(
    ctx: &DockerfileContext<'k>,
    stage: &Stage,
    assignments: &[(String, String)],
    install: &PackageInstall,
) -> Option<IndexRule<'k>> {
    let manager = match install.manager {
        PackageManager::Pipx => PackageManager::Pip,
        other => other,
    };
    let installer = ctx.knowledge.resolution.installer(manager.name())?;
    let from_option = installer.strategy_option.as_deref().and_then(|option| {
        let (_, value) = option_value(install, option)?;
        Some((
            installer.strategy_named(value)?,
            format!("`{option} {value}`"),
        ))
    });
    let from_env = || {
        let var = installer.strategy_env.as_deref()?;
        let value = assignments
            .iter()
            .rev()
            .find(|(key, _)| key == var)
            .map(|(_, value)| value.as_str())
            .or_else(|| stage.env_value(var))?;
        Some((installer.strategy_named(value)?, format!("`{var}={value}`")))
    };
    let (strategy, chosen_by) = match from_option.or_else(from_env) {
        Some((strategy, by)) => (strategy, Some(by)),
        None => (installer.strategy, None),
    };
    Some(IndexRule {
        strategy,
        installer,
        chosen_by,
    })
}

/// Pins of a pip/uv install: its index URLs, uv's `--torch-backend`, and
/// its requirements (read as PyPI builds only when no other index is in
/// play, from the command line or the environment).
///
/// Where PyTorch's index is an extra index next to PyPI, the installer's
/// index rule (`rules/resolution.toml` `installers`) decides which index a
/// torch requirement comes from: pip (and uv with `unsafe-best-match`)
/// take the highest version across both, so the index's CUDA applies only
/// where the index has the release picked; uv by default takes torch only
/// from the first index that has it, the extra index before PyPI, so the
/// index's CUDA applies, and a release the index lacks does not resolve.
fn python_pins<'i>(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    python_os: Option<&str>,
    assignments: &[(String, String)],
    install: &'i PackageInstall,
) -> Vec<FoundPin<'i>> {
    let packages = &ctx.knowledge.packages;
    let rule = index_rule(ctx, stage, assignments, install);
    let strategy = rule.as_ref().map(|r| r.strategy);
    let backend = option_value(install, TORCH_BACKEND_OPTION);
    let pre = install.has_option("--pre");
    // Index URLs the installer would actually consult, with whether each
    // replaces PyPI. A best-match installer ignores the nightly index's
    // pre-releases without `--pre` when PyPI has final releases.
    let indexes: Vec<(&String, bool)> = install
        .index_urls
        .iter()
        .map(|url| (url, is_primary_index(install, url)))
        .filter(|(url, primary)| {
            *primary
                || strategy == Some(IndexStrategy::FirstIndex)
                || pre
                || !url.contains(NIGHTLY_INDEX_SEGMENT)
        })
        .collect();
    let has_primary = indexes.iter().any(|(_, primary)| *primary);
    let env_index = rule
        .as_ref()
        .is_some_and(|rule| rule.env_index(stage, assignments));
    let other_index = !indexes.is_empty() || backend.is_some() || env_index;
    // The resolution is modelled where every index is in the command, and
    // (for a best-match installer) PyPI is one of them.
    let modelled = match &rule {
        Some(rule) if !env_index => rule.strategy != IndexStrategy::BestMatch || !has_primary,
        _ => false,
    };
    let torch_words: Vec<(&Word, String)> = install
        .packages
        .iter()
        .filter(|p| !p.is_location)
        .map(|p| (&p.word, torch_spec(ctx, &p.word.text)))
        .filter(|(_, spec)| {
            ctx.memo
                .requirement_terms(spec)
                .is_some_and(|(name, _, _)| name == "torch")
        })
        .collect();
    let mut found: Vec<FoundPin<'i>> = Vec::new();
    // The extra index a first-index installer takes torch from: the first
    // of PyTorch's (a CPU one included).
    let first_torch_index = indexes
        .iter()
        .find(|(url, primary)| !*primary && packages.classify_index_url(url).is_some())
        .map(|(url, _)| *url);
    for (url, primary) in &indexes {
        let (Some(word), Some(SpecCuda::Pin(pin))) =
            (value_word(install, url), packages.classify_index_url(url))
        else {
            continue;
        };
        let Some(rule) = rule.as_ref().filter(|_| modelled && !*primary) else {
            found.push((word, pin, None));
            continue;
        };
        match rule.strategy {
            IndexStrategy::FirstIndex => {
                // Only the first extra index with torch counts; torch comes
                // from it or not at all.
                if first_torch_index != Some(*url) {
                    continue;
                }
                if torch_words.is_empty() {
                    found.push((word, pin, None));
                    continue;
                }
                let index_cuda = pin.cuda.major_minor();
                let lacking = torch_words.iter().find_map(|(_, spec)| {
                    let (_, exact, _) = ctx.memo.requirement_terms(spec)?;
                    let builds = packages.torch_builds(exact?)?;
                    (!builds.cuda.contains(&index_cuda)).then_some(exact?)
                });
                if lacking.is_some() {
                    // The index has torch but not this release: the
                    // install fails to resolve, no CUDA to compare.
                    continue;
                }
                let resolution = first_index_resolution(ctx, rule, &torch_words[0].0.text, &pin);
                found.push((word, with_rule_source(pin, rule), Some(resolution)));
            }
            IndexStrategy::BestMatch | IndexStrategy::FirstMatch => {
                for (package_word, spec) in &torch_words {
                    let open = ctx
                        .memo
                        .requirement_terms(spec)
                        .is_some_and(|(_, exact, _)| exact.is_none());
                    if rule.strategy == IndexStrategy::FirstMatch && open {
                        // The index is searched first and has a torch
                        // that satisfies a requirement without a release.
                        let resolution =
                            first_index_resolution(ctx, rule, &package_word.text, &pin);
                        found.push((word, with_rule_source(pin.clone(), rule), Some(resolution)));
                        continue;
                    }
                    let python_newest = python_os.and_then(|os| {
                        Some(ctx.knowledge.resolution.newest_release(os, "torch")?.0)
                    });
                    match packages.torch_with_extra_index(spec, pin.cuda, python_newest) {
                        Some(ExtraIndexTorch::FromIndex) => {
                            found.push((word, pin.clone(), None));
                        }
                        Some(ExtraIndexTorch::FromPypi(pypi)) => {
                            let resolution =
                                pypi_resolution(rule, &package_word.text, &pypi, pin.cuda);
                            let pypi_pin = CudaPin {
                                cuda: pypi.cuda,
                                system: false,
                                source: format!(
                                    "{}; {}; {}",
                                    pypi.source, pin.source, rule.installer.source
                                ),
                            };
                            found.push((package_word, pypi_pin, Some(resolution)));
                        }
                        Some(ExtraIndexTorch::Unknown) | None => {}
                    }
                }
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
            if !found
                .iter()
                .any(|(w, _, _)| w.span == package.word.span && w.text == package.word.text)
            {
                found.push((&package.word, pin, None));
            }
        }
    }
    found.sort_by_key(|(word, _, _)| word.span.start);
    found
}

/// Why torch comes from the extra index under a first-index (or
/// first-match, for a requirement without a release) rule.
fn first_index_resolution(
    ctx: &DockerfileContext<'_>,
    rule: &IndexRule<'_>,
    spec: &str,
    pin: &CudaPin,
) -> String {
    let tag = cuda_tag(pin.cuda);
    let newest = ctx
        .knowledge
        .packages
        .newest_torch_build(pin.cuda)
        .map(|last| format!(" (its newest is torch {last})"))
        .unwrap_or_default();
    let how = match rule.strategy {
        IndexStrategy::FirstMatch => {
            "takes a package from the first index with a version that satisfies the requirement"
        }
        _ => "takes a package only from the first index that has it",
    };
    format!(
        "{} {how}, and searches `--extra-index-url` indexes before PyPI: `{spec}` comes from the {tag} index{newest}, a CUDA {} build, not from PyPI",
        rule.who(),
        pin.cuda,
    )
}

/// The pin with the installer's index rule added to its sources.
fn with_rule_source(mut pin: CudaPin, rule: &IndexRule<'_>) -> CudaPin {
    pin.source = format!("{}; {}", pin.source, rule.installer.source);
    pin
}

/// Why the installer takes PyPI's torch although a PyTorch index is an
/// extra index.
fn pypi_resolution(
    rule: &IndexRule<'_>,
    spec: &str,
    pypi: &PypiTorch,
    index_cuda: Version,
) -> String {
    let tag = cuda_tag(index_cuda);
    let who = rule.who();
    let last = match pypi.index_newest {
        Some(last) => format!(" (its newest is torch {last})"),
        None => String::new(),
    };
    if pypi.newest {
        format!(
            "`{spec}` names no exact release, and {who} takes the newest torch across PyPI and the extra index: PyPI's torch {} (a CUDA {} build), since the {tag} index has no torch {} wheels{last}",
            pypi.release, pypi.cuda, pypi.release
        )
    } else {
        format!(
            "the {tag} index has no torch {} wheels{last}, so {who} takes `{spec}` from PyPI, a CUDA {} build; `--extra-index-url` adds an index, it does not pin the build",
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
/// The day the newest releases in `list` were read: the list's own date, else
/// the knowledge's `checked` date.
pub(crate) fn as_of(ctx: &DockerfileContext<'_>, list: &PythonNewest) -> String {
    match (&list.checked, &ctx.knowledge.checked) {
        (Some(date), _) => date.clone(),
        (None, Some(date)) => date.clone(),
        (None, None) => "the knowledge's date".to_string(),
    }
}

pub fn cuda_tag(cuda: Version) -> String {
    format!("cu{}{}", cuda.major(), cuda.minor())
}

/// The torch requirement a package requirement amounts to: a torch
/// companion's exact release pins torch (`torchvision==0.21.0` →
/// `torch==2.6`); anything else is itself. A companion pinned with a
/// `+cuXYZ` label keeps it (the label says the build).
fn torch_spec(ctx: &DockerfileContext<'_>, spec: &str) -> String {
    let Some((name, Some(version), _)) = ctx.memo.requirement_terms(spec) else {
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
