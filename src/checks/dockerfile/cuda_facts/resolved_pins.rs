//! The pins of [`super::stage_pins`] that resolution decides rather than
//! the words: an unpinned torch (PyPI's newest for the image's Python), the
//! torch a package pins exactly (`vllm==0.6.3` → `torch==2.4.0`), and the
//! newest release of a requirement whose CUDA depends on the release
//! (`jax[cuda]`, `tensorrt`); each judged only where nothing installed
//! before in the stage's chain decides instead.

use super::{
    as_of, index_rule, is_primary_index, option_value, torch_spec, FoundPin, NIGHTLY_INDEX_SEGMENT,
    TORCH_BACKEND_OPTION,
};
use crate::checks::dockerfile::installer_python;
use crate::checks::dockerfile::requirement_files;
use crate::checks::dockerfile::support::base_facts;
use crate::checks::DockerfileContext;
use crate::dockerfile::ast::Word;
use crate::dockerfile::model::Stage;
use crate::dockerfile::packages::PackageInstall;
use crate::knowledge::packages::{CudaPin, PackageKnowledge, SpecCuda};
use crate::knowledge::resolution::IndexStrategy;
use crate::knowledge::Version;

/// An unpinned `torch` (or one with only lower bounds, or an unpinned
/// torchvision/torchaudio, which pins the newest torch) installed from
/// PyPI alone: pip takes PyPI's newest torch, whose CUDA is the newest
/// `pypi_defaults` row. Said only where nothing else can hold torch back:
/// the base is a plain `nvidia/cuda` image (no torch in it), no earlier
/// install in the stage's chain brought torch, and the command has no
/// requirement or constraint file, no exact torch pin and no package that
/// pins torch itself (vLLM, xFormers). PyTorch's nightly index without
/// `--pre` counts as absent (pip ignores its pre-releases).
pub(super) fn unpinned_torch_pin<'i>(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    python_os: Option<&str>,
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
    let rule = index_rule(ctx, stage, assignments, install)?;
    let pre = install.has_option("--pre");
    // A first-index installer takes torch from the nightly index when it
    // is the first with torch; a best-match one ignores its pre-releases.
    let nightly_only = install.index_urls.iter().all(|url| {
        url.contains(NIGHTLY_INDEX_SEGMENT)
            && !pre
            && !is_primary_index(install, url)
            && rule.strategy != IndexStrategy::FirstIndex
    });
    if !nightly_only || rule.env_index(stage, assignments) {
        return None;
    }
    let mut carrier: Option<&Word> = None;
    for package in &install.packages {
        if package.is_location {
            continue;
        }
        let Some((name, exact, open)) = ctx.memo.requirement_terms(&package.word.text) else {
            continue;
        };
        if resolution.pins_torch(&name) {
            return None;
        }
        let is_torch = name == "torch" || resolution.is_torch_companion(&name);
        if !is_torch {
            continue;
        }
        // An exact pin decides torch; so does a companion's range, which
        // the data does not follow.
        if exact.is_some() || (!open && name != "torch") {
            return None;
        }
        if open {
            carrier.get_or_insert(&package.word);
        } else {
            // A torch range holds back the companions too.
            carrier = Some(&package.word);
        }
    }
    let carrier = carrier?;
    if torch_installed_before(ctx, stage, run) {
        return None;
    }
    let Some(os) = python_os else {
        // pip of a Python the Dockerfile does not name: judged over every
        // Python its installer may give, from PyPI only.
        let possible = installer_python::possible_pythons(ctx, stage)?;
        if !install.index_urls.is_empty() {
            return None;
        }
        return installer_python::torch_pin(ctx, &possible, carrier, &rule.installer.manager);
    };
    let (newest, python) = resolution.newest_release(os, "torch")?;
    // A range with an upper bound: the newest release it admits, up to the
    // newest for the image's Python.
    let bounded = ctx
        .memo
        .requirement_terms(&carrier.text)
        .is_some_and(|(_, _, open)| !open);
    let newest = if bounded {
        packages.newest_in_range(&carrier.text, Some(newest))?
    } else {
        newest
    };
    let default = packages.pypi_default("torch", newest)?;
    let checked = as_of(ctx, python);
    let nightly = if install.index_urls.is_empty() {
        String::new()
    } else {
        format!(
            " (PyTorch's nightly index holds only pre-releases, which {} ignores without `--pre` when PyPI has final releases)",
            rule.installer.manager
        )
    };
    let which = if bounded {
        "the newest torch on PyPI in that range"
    } else {
        "the newest torch on PyPI"
    };
    let resolution = format!(
        "`{}` names no exact release, so {} installs {which} for the image's Python {}{nightly}: torch {newest}, a CUDA {} build, as of {checked}",
        carrier.text, rule.installer.manager, python.python, default.cuda
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
    let installs_torch = |stage: &Stage, step: &crate::dockerfile::model::RunStep| {
        step.installs
            .iter()
            .any(|install| step_install_brings_torch(ctx, stage, step, install))
    };
    if stage
        .runs
        .iter()
        .take(run)
        .any(|step| installs_torch(stage, step))
    {
        return true;
    }
    ctx.model
        .ancestry(stage.index)
        .into_iter()
        .skip(1)
        .filter_map(|index| ctx.model.stages.get(index))
        .any(|parent| parent.runs.iter().any(|step| installs_torch(parent, step)))
}

/// [`install_brings_torch`] with the install's requirement files read.
fn step_install_brings_torch(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    step: &crate::dockerfile::model::RunStep,
    install: &PackageInstall,
) -> bool {
    match requirement_files::expand(ctx, stage, step, install) {
        Some(expanded) => install_brings_torch(ctx, &expanded.install),
        None => install_brings_torch(ctx, install),
    }
}

/// The torch a package that pins torch exactly pulls in (`vllm==0.6.3`
/// requires `torch==2.4.0`; `rules/resolution.toml` `torch_pins`), as PyPI's
/// build of that release. Said only where PyPI is the only index (none on
/// the command line or in the installer's environment variables, no
/// requirement or constraint file, no `--no-deps`), the install names no
/// torch release of its own, the base is a plain `nvidia/cuda` image, no
/// other install in the stage and none in the stages it is built on brings
/// torch (pip keeps an installed torch that satisfies the pin; a later one
/// replaces it). An unpinned requirement
/// (or one with only lower bounds) is the newest release for the image's
/// Python, as of the knowledge's `checked` date.
pub(super) fn pinned_torch_pin<'i>(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    python_os: Option<&str>,
    run: usize,
    assignments: &[(String, String)],
    install: &'i PackageInstall,
) -> Option<FoundPin<'i>> {
    let packages = &ctx.knowledge.packages;
    let resolution = &ctx.knowledge.resolution;
    let rule = index_rule(ctx, stage, assignments, install)?;
    if install.no_deps
        || !install.requirement_files.is_empty()
        || !install.constraint_files.is_empty()
        || !install.index_urls.is_empty()
        || option_value(install, TORCH_BACKEND_OPTION).is_some()
        || rule.env_index(stage, assignments)
    {
        return None;
    }
    if base_facts(ctx, stage)?.family != "nvidia/cuda" {
        return None;
    }
    let mut carrier: Option<(&Word, String, Option<Version>, bool)> = None;
    for package in install.packages.iter().filter(|p| !p.is_location) {
        let Some((name, exact, open)) = ctx.memo.requirement_terms(&package.word.text) else {
            continue;
        };
        let torch = torch_spec(ctx, &package.word.text);
        let names_torch = ctx
            .memo
            .requirement_terms(&torch)
            .is_some_and(|(torch_name, exact, _)| torch_name == "torch" && exact.is_some());
        if names_torch || torch.contains('+') && name == "torch" {
            // The command names a torch release itself.
            return None;
        }
        if resolution.has_torch_pins(&name) && carrier.is_none() {
            carrier = Some((&package.word, name, exact, open));
        }
    }
    let (word, name, exact, open) = carrier?;
    // Another install of torch in the stage, before (pip keeps a torch that
    // satisfies the pin) or after (it replaces vLLM's), decides instead.
    let other_torch = stage.runs.iter().any(|step| {
        step.installs.iter().any(|other| {
            other.span != install.span && step_install_brings_torch(ctx, stage, step, other)
        })
    });
    if other_torch || torch_installed_before(ctx, stage, run) {
        return None;
    }
    let (release, newest) = match exact {
        Some(release) => (release, None),
        None if open => {
            let (release, python) = resolution.newest_release(python_os?, &name)?;
            (release, Some(python))
        }
        None => return None,
    };
    let (torch, pins_source) = resolution.torch_pinned_by(&name, release)?;
    let default = packages.pypi_default("torch", torch)?;
    let installer = &rule.installer.manager;
    let chosen = match newest {
        Some(python) => format!(
            "`{}` names no exact release, so {installer} installs the newest {name} on PyPI for the image's Python {}, {name} {release} (as of {}), which",
            word.text,
            python.python,
            as_of(ctx, python)
        ),
        None => format!("`{}`", word.text),
    };
    let note = format!(
        "{chosen} requires `torch=={torch}`, and {installer} takes that torch from PyPI: a CUDA {} build",
        default.cuda
    );
    let mut source = format!("{pins_source}; {}", default.source);
    if let Some(python) = newest {
        source = format!("{source}; {}", python.source);
    }
    Some((
        word,
        CudaPin {
            cuda: default.cuda,
            system: false,
            source,
        },
        Some(note),
    ))
}

/// Whether an install names torch or a torch companion.
pub(super) fn install_brings_torch(ctx: &DockerfileContext<'_>, install: &PackageInstall) -> bool {
    let resolution = &ctx.knowledge.resolution;
    install.packages.iter().any(|p| {
        let name = p.distribution().unwrap_or_default();
        let name = crate::knowledge::resolution::normalize(name);
        name == "torch" || name == "pytorch" || resolution.is_torch_companion(&name)
    })
}

/// Requirements without an exact release whose CUDA depends on the release
/// (`jax[cuda]`, `tensorrt`): pip installs the newest release for the
/// image's Python (`rules/resolution.toml` `python_newest`), as of the
/// knowledge's `checked` date, and that release's build decides. Said only
/// where PyPI is the only index (none on the command line, no find-links,
/// none in the installer's environment), with no requirement or constraint
/// file, on a plain `nvidia/cuda` base running its distribution's Python,
/// and when no earlier install in the stage's chain named the package.
pub(super) fn newest_release_pins<'i>(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    python_os: Option<&str>,
    run: usize,
    assignments: &[(String, String)],
    install: &'i PackageInstall,
) -> Vec<FoundPin<'i>> {
    let packages = &ctx.knowledge.packages;
    let resolution = &ctx.knowledge.resolution;
    let Some(rule) = index_rule(ctx, stage, assignments, install) else {
        return Vec::new();
    };
    if !install.requirement_files.is_empty()
        || !install.constraint_files.is_empty()
        || !install.index_urls.is_empty()
        || option_value(install, TORCH_BACKEND_OPTION).is_some()
        || rule.env_index(stage, assignments)
    {
        return Vec::new();
    }
    let Some(os) = python_os else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for package in install.packages.iter().filter(|p| !p.is_location) {
        let spec = package.word.text.trim_matches(['"', '\'']);
        let Some((name, None, true)) = ctx.memo.requirement_terms(spec) else {
            continue;
        };
        // Only where the release decides (the words alone decide
        // `jax[cuda12]`; torch has its own resolution above).
        if !packages.depends_on_release(spec) || packages.classify_requirement(spec, true).is_some()
        {
            continue;
        }
        let Some((newest, python)) = resolution.newest_release(os, &name) else {
            continue;
        };
        let extras = PackageKnowledge::requirement_extras(spec);
        let resolved = if extras.is_empty() {
            format!("{name}=={newest}")
        } else {
            format!("{name}[{}]=={newest}", extras.join(","))
        };
        let Some(SpecCuda::Pin(pin)) = packages.classify_requirement(&resolved, true) else {
            continue;
        };
        if package_installed_before(ctx, stage, run, &name) {
            continue;
        }
        let what = match packages.meta_package(&name, newest) {
            Some(meta) => format!("which installs `{}`", meta.variant),
            None if !extras.is_empty() => format!(
                "whose `{}` extra {}",
                extras.join(","),
                if pin.system {
                    "uses the image's own CUDA"
                } else {
                    "brings NVIDIA's CUDA wheels"
                }
            ),
            None => "which".to_string(),
        };
        let note = format!(
            "`{}` names no exact release, so {} installs the newest {name} on PyPI for the image's Python {}, {name} {newest} (as of {}), {what}: a CUDA {} build",
            package.word.text,
            rule.installer.manager,
            python.python,
            as_of(ctx, python),
            pin.cuda
        );
        let pin = CudaPin {
            source: format!("{}; {}", pin.source, python.source),
            ..pin
        };
        found.push((&package.word, pin, Some(note)));
    }
    found
}

/// Whether a RUN before `run` in `stage`, or any RUN of the stages it is
/// built on, installs the Python package `name` (pip keeps it for an
/// unpinned requirement).
fn package_installed_before(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    run: usize,
    name: &str,
) -> bool {
    let installs_it = |step: &crate::dockerfile::model::RunStep| {
        step.installs.iter().any(|install| {
            install.manager.is_python()
                && install.packages.iter().any(|p| {
                    p.distribution()
                        .is_some_and(|d| crate::knowledge::resolution::normalize(d) == name)
                })
        })
    };
    if stage.runs.iter().take(run).any(installs_it) {
        return true;
    }
    ctx.model
        .ancestry(stage.index)
        .into_iter()
        .skip(1)
        .filter_map(|index| ctx.model.stages.get(index))
        .any(|parent| parent.runs.iter().any(installs_it))
}
