//! The Pythons that may run pip when a Dockerfile does not name one (an
//! unpinned installer such as `Miniconda3-latest`, beside or instead of the
//! distribution's `python3`), and what an unpinned `torch` resolves to over
//! all of them (CU120, through `cuda_facts`). Data:
//! `rules/python-installers.toml`.

use crate::checks::dockerfile::cuda_facts::FoundPin;
use crate::checks::dockerfile::stack::{chain, is_versioned_python};
use crate::checks::dockerfile::support::base_facts;
use crate::checks::DockerfileContext;
use crate::dockerfile::ast::Word;
use crate::dockerfile::model::Stage;
use crate::knowledge::packages::CudaPin;
use crate::knowledge::source_builds::PythonInstaller;
use crate::knowledge::Version;
use crate::paths::basename;

/// The Pythons that may run pip in a stage whose Dockerfile does not name
/// one: an unpinned installer's (`Miniconda3-latest-Linux-x86_64.sh`,
/// fetched in a RUN of the chain) and, where the chain also installs the
/// distribution's `python3` packages, that Python too.
pub struct PossiblePythons<'k> {
    pub installer: &'k PythonInstaller,
    /// `3.10`, … in the installer's order, the distribution's last.
    pub pythons: Vec<String>,
    /// The distribution's Python, when it is one of them.
    pub distro: Option<String>,
}

/// The [`PossiblePythons`] of a stage on a plain `nvidia/cuda` base (which
/// has no Python of its own), unless something else picks the Python: a
/// conda install or environment naming `python`, a versioned interpreter
/// (`python3.11`, pyenv, deadsnakes).
pub fn possible_pythons<'k>(
    ctx: &'k DockerfileContext<'_>,
    stage: &Stage,
) -> Option<PossiblePythons<'k>> {
    let facts = base_facts(ctx, stage)?;
    if facts.family != "nvidia/cuda" {
        return None;
    }
    let resolution = &ctx.knowledge.resolution;
    let other = &resolution.other_python;
    let mut found: Option<&PythonInstaller> = None;
    let mut distro_python = false;
    for s in chain(ctx, stage) {
        for run in &s.runs {
            for install in &run.installs {
                let names = install
                    .packages
                    .iter()
                    .map(|p| p.distribution().unwrap_or(&p.name).to_ascii_lowercase());
                if install.manager.is_conda() {
                    if install.subcommand.contains("create")
                        || names.clone().any(|n| n.starts_with("python"))
                    {
                        return None;
                    }
                } else if install.manager.is_system() {
                    for name in names {
                        if name.starts_with("python3.") {
                            return None;
                        }
                        if name == "python3"
                            || name.starts_with("python3-")
                            || name == "python-is-python3"
                        {
                            distro_python = true;
                        }
                    }
                }
            }
            for word in run.commands.iter().flat_map(|c| &c.words) {
                let program = basename(&word.text);
                if is_versioned_python(program) {
                    return None;
                }
                if let Some(installer) = resolution
                    .python_installers
                    .iter()
                    .find(|i| i.words.iter().any(|w| word.text.contains(w.as_str())))
                {
                    found = Some(installer);
                    continue;
                }
                let lower = word.text.to_ascii_lowercase();
                let other_word = other.words.iter().any(|w| {
                    let w = w.to_ascii_lowercase();
                    // conda's own names are the installers above.
                    !["miniconda", "miniforge", "mambaforge", "micromamba"].contains(&w.as_str())
                        && lower.contains(&w)
                });
                if other_word {
                    return None;
                }
            }
        }
    }
    let installer = found?;
    let mut pythons = installer.pythons.clone();
    let mut distro = None;
    if distro_python {
        let os = facts.os?;
        let python = resolution
            .python_newest
            .iter()
            .find(|row| row.os == os)?
            .python
            .clone();
        if !pythons.contains(&python) {
            pythons.push(python.clone());
        }
        distro = Some(python);
    }
    Some(PossiblePythons {
        installer,
        pythons,
        distro,
    })
}

/// An open `torch` requirement installed by the pip of an installer's
/// Python: the newest torch on PyPI for each Python the installer may give.
/// Judged only when all of them are builds of one CUDA major; the pin is
/// that build, or only its major when the minors differ, so a finding holds
/// for every Python.
pub fn torch_pin<'i>(
    ctx: &DockerfileContext<'_>,
    possible: &PossiblePythons<'_>,
    carrier: &'i Word,
    manager: &str,
) -> Option<FoundPin<'i>> {
    // A bounded range (`torch<2.13`) is not followed here.
    if !ctx
        .memo
        .requirement_terms(&carrier.text)
        .is_some_and(|(_, _, open)| open)
    {
        return None;
    }
    let resolution = &ctx.knowledge.resolution;
    let packages = &ctx.knowledge.packages;
    let mut builds = Vec::new();
    let installer = possible.installer;
    for python in &possible.pythons {
        let row = resolution
            .newest_for_python
            .iter()
            .find(|row| row.python == *python)?;
        let newest = row.newest("torch")?;
        let default = packages.pypi_default("torch", newest)?;
        builds.push((newest, default, row));
    }
    let lowest = builds.iter().min_by_key(|(_, d, _)| d.cuda)?;
    let highest = builds.iter().max_by_key(|(_, d, _)| d.cuda)?;
    if lowest.1.cuda.major() != highest.1.cuda.major() {
        return None;
    }
    let range = |low: String, high: String| {
        if low == high {
            low
        } else {
            format!("{low} to {high}")
        }
    };
    let oldest_torch = builds.iter().map(|b| b.0).min()?;
    let newest_torch = builds.iter().map(|b| b.0).max()?;
    let given = range(
        installer.pythons.first()?.clone(),
        installer.pythons.last()?.clone(),
    );
    let distro = possible
        .distro
        .as_ref()
        .map_or(String::new(), |p| format!(", or the distribution's {p}"));
    let resolution_text = format!(
        "`{}` names no exact release, so {manager} installs the newest torch on PyPI for the Python that runs it: {given} from `{}` (as of {}){distro}, which get torch {}, CUDA {} builds",
        carrier.text,
        installer.name,
        installer.checked,
        range(oldest_torch.to_string(), newest_torch.to_string()),
        range(lowest.1.cuda.to_string(), highest.1.cuda.to_string()),
    );
    let mut sources: Vec<&str> = vec![installer.source.as_str()];
    for (_, default, row) in &builds {
        for source in [default.source.as_str(), row.source.as_str()] {
            if !sources.contains(&source) {
                sources.push(source);
            }
        }
    }
    // Builds of several minors are one CUDA major, and only that is said
    // (a major alone is never judged against the base's minor).
    let cuda = if lowest.1.cuda == highest.1.cuda {
        lowest.1.cuda
    } else {
        Version::parse(&lowest.1.cuda.major().to_string())?
    };
    Some((
        carrier,
        CudaPin {
            cuda,
            system: false,
            source: sources.join("; "),
        },
        Some(resolution_text),
    ))
}
