//! Source builds and installer Pythons (`rules/source-builds.toml`,
//! `rules/python-installers.toml`, both under `[resolution]`): packages
//! whose install runs nvcc before anything else (flash-attn's setup.py), the
//! `nvidia/cuda` variants where that fails, CUDA build switches whose outcome
//! the switch decides, and the Pythons an unpinned installer may give with
//! the newest torch for each.
//!
//! Like the rest of the resolution knowledge it answers questions about
//! names and versions; the rules read the commands.

use crate::from_toml::FromToml;

use super::images::glob_matches;
use super::packages::{normalize, same_name};
use super::version::Version;

/// The `nvidia/cuda` variants with /usr/local/cuda but no bin/nvcc.
#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct CudaHomeWithoutNvcc {
    pub variants: Vec<String>,
    pub source: String,
}

/// A package pip builds from source whose setup.py runs
/// `$CUDA_HOME/bin/nvcc` while pip prepares its metadata.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct SourceBuild {
    pub package: String,
    /// GitHub `owner/name` whose URL installs the same build.
    #[toml(default)]
    pub repositories: Vec<String>,
    /// The variable that skips the CUDA build when `TRUE`.
    pub skip_env: String,
    pub source: String,
}

impl SourceBuild {
    /// Whether a requirement or location word installs this package from
    /// source: its name (`flash-attn==2.8.3`, `flash_attn`) or a URL of
    /// one of its repositories that is not a wheel.
    pub fn installed_by(&self, name: &str, word: &str, is_location: bool) -> bool {
        if !is_location {
            return same_name(name, &self.package);
        }
        let lower = word.to_ascii_lowercase();
        let path = lower.split(['?', '#']).next().unwrap_or(&lower);
        if path.ends_with(".whl") {
            return false;
        }
        self.repositories.iter().any(|repo| {
            let repo = repo.to_ascii_lowercase();
            lower.contains(&format!("github.com/{repo}"))
                && lower
                    .split(&format!("github.com/{repo}"))
                    .nth(1)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '/', '@', '#']))
        })
    }
}

/// CUDA build switches whose outcome the switch decides.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct CudaSwitchOutcome {
    /// Compared without case.
    pub switches: Vec<String>,
    /// The installs the switch applies to (as an assignment of their
    /// command); empty: anywhere.
    #[toml(default)]
    pub packages: Vec<String>,
    /// The first release of those packages the outcome holds for; an
    /// install pinned below it is not judged by it.
    #[toml(default)]
    pub from_release: Option<Version>,
    pub outcome: String,
    pub source: String,
}

impl CudaSwitchOutcome {
    pub fn matches(&self, text: &str) -> bool {
        self.switches.iter().any(|s| s.eq_ignore_ascii_case(text))
    }

    /// Whether the outcome holds for an install of `package`, pinned to
    /// `release` where it names one.
    pub fn applies_to(&self, package: &str, release: Option<Version>) -> bool {
        self.packages.iter().any(|p| same_name(p, package))
            && match (release, self.from_release) {
                (Some(release), Some(from)) => release >= from,
                _ => true,
            }
    }
}

/// An installer of a Python whose version the Dockerfile does not name.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct PythonInstaller {
    pub name: String,
    /// Text in a RUN that runs or fetches it.
    pub words: Vec<String>,
    /// The Pythons it may give (`3.10`).
    pub pythons: Vec<String>,
    pub checked: String,
    pub source: String,
}

/// The newest release of some packages with a wheel for one Python.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct NewestForPython {
    pub python: String,
    /// (package, `major.minor`).
    pub newest: Vec<(String, Version)>,
    pub checked: String,
    pub source: String,
}

impl NewestForPython {
    pub fn newest(&self, package: &str) -> Option<Version> {
        self.newest
            .iter()
            .find(|(name, _)| same_name(name, package))
            .map(|(_, version)| *version)
    }
}

/// Which frameworks are judged on a base with no CUDA at all, and which
/// installs bring CUDA into such an image.
#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct NoCudaBase {
    /// Names (globs) judged at any release.
    pub gpu_names: Vec<String>,
    /// Names judged only at a pinned release.
    pub pinned_names: Vec<String>,
    /// apt/dnf packages that bring CUDA libraries.
    pub system: Vec<String>,
    /// conda packages that bring CUDA libraries.
    pub conda: Vec<String>,
    pub source: String,
}

impl NoCudaBase {
    /// Whether a requirement of `name` is judged; `pinned`: it names an
    /// exact release.
    pub fn judges(&self, name: &str, pinned: bool) -> bool {
        let name = normalize(name);
        let any = |list: &[String]| list.iter().any(|g| glob_matches(g, &name));
        any(&self.gpu_names) || (pinned && any(&self.pinned_names))
    }

    /// Whether a system (`conda == false`) or conda package brings CUDA.
    pub fn brings_cuda(&self, name: &str, conda: bool) -> bool {
        let name = name.split(['=', '<', '>']).next().unwrap_or(name);
        let list = if conda { &self.conda } else { &self.system };
        list.iter().any(|g| glob_matches(g, name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flash() -> SourceBuild {
        SourceBuild {
            package: "flash-attn".into(),
            repositories: vec!["Dao-AILab/flash-attention".into()],
            skip_env: "FLASH_ATTENTION_SKIP_CUDA_BUILD".into(),
            source: String::new(),
        }
    }

    #[test]
    fn a_name_or_a_source_url_installs_the_build_but_a_wheel_does_not() {
        let build = flash();
        assert!(build.installed_by("flash_attn", "flash_attn==2.8.3", false));
        assert!(build.installed_by(
            "",
            "git+https://github.com/Dao-AILab/flash-attention.git@v2.8.3",
            true
        ));
        assert!(!build.installed_by(
            "",
            "https://github.com/Dao-AILab/flash-attention/releases/download/v2.8.3/flash_attn-2.8.3+cu12torch2.7cxx11abiTRUE-cp310-cp310-linux_x86_64.whl",
            true
        ));
        assert!(!build.installed_by(
            "",
            "git+https://github.com/Dao-AILab/flash-attention-other",
            true
        ));
        assert!(!build.installed_by("flash-attn-triton", "flash-attn-triton", false));
    }
}
