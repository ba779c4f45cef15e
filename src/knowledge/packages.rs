//! Packages: which pip/conda packages bring which CUDA, and which
//! distribution packages are NVIDIA driver userspace (`rules/packages.toml`).
//!
//! Besides the typed tables, this module classifies single specs the model
//! found in package installs: a requirement, an index URL, a conda spec or
//! channel (which CUDA does it select?), a distribution package name or an
//! installer file name (is it driver userspace?). It never reads commands.

use crate::from_toml::{FromToml, Node, TomlError};

use super::merge_by;
use super::version::Version;

/// The embedded `rules/packages.toml`.
pub fn embedded_toml() -> &'static str {
    super::embedded::file("rules/packages.toml")
}

/// Names and commands are short; longer words are not package names, and
/// the cap keeps pattern matching cheap on hostile input.
const MAX_NAME_LEN: usize = 256;

#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct PackageKnowledge {
    #[toml(default)]
    pub local_labels: SourceNote,
    #[toml(default)]
    pub index_urls: Vec<IndexUrl>,
    #[toml(default)]
    pub pypi_defaults: Vec<PypiDefault>,
    #[toml(default)]
    pub torch_cuda_builds: Vec<TorchCudaBuilds>,
    #[toml(default)]
    pub runtime_compilers: Vec<RuntimeCompiler>,
    #[toml(default)]
    pub runtime_ptxas: Vec<PtxasUser>,
    #[toml(default)]
    pub extras: Vec<Extra>,
    #[toml(default)]
    pub meta_packages: Vec<MetaPackage>,
    #[toml(default)]
    pub cuda_variants: Vec<CudaVariants>,
    #[toml(default)]
    pub name_patterns: Vec<NamePattern>,
    #[toml(default)]
    pub versioned: Vec<Versioned>,
    #[toml(default)]
    pub conda: Vec<CondaPackage>,
    #[toml(default)]
    pub conda_channels: Vec<CondaChannel>,
    #[toml(default)]
    pub driver_userspace: Vec<DriverPackage>,
    #[toml(default)]
    pub driver_exceptions: Vec<DriverPackage>,
    #[toml(default)]
    pub driver_installers: Vec<DriverPackage>,
    /// Signs that a Dockerfile builds a driver container.
    #[toml(default)]
    pub driver_container: DriverContainer,
    /// What driver userspace in an image breaks, quoted in messages.
    #[toml(default)]
    pub driver_consequence: Consequence,
}

#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct Consequence {
    pub text: String,
    pub source: String,
}

/// Text that shows a file builds a driver container (kernel module work).
#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct DriverContainer {
    pub signals: super::needles::Needles,
    pub source: String,
}

#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct SourceNote {
    pub source: String,
}

/// An index URL prefix followed by a `cuXYZ` (or `cpu`) path segment.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct IndexUrl {
    /// Without scheme: `download.pytorch.org/whl/`.
    pub prefix: String,
    pub source: String,
}

/// The CUDA an exact `package==X.Y.Z` from PyPI brings.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct PypiDefault {
    pub package: String,
    /// `major.minor` of the package versions this applies to.
    pub versions: Vec<Version>,
    pub cuda: Version,
    pub source: String,
}

/// The CUDA builds the PyTorch index publishes for one torch release.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct TorchCudaBuilds {
    /// `major.minor` of the torch release.
    pub release: Version,
    /// The CUDA of each `cuXYZ` build (`12.4` for cu124).
    pub cuda: Vec<Version>,
    pub source: String,
}

/// A package that compiles CUDA code where it is installed or where it
/// runs, so the image that ships it needs a devel base.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct RuntimeCompiler {
    /// Distribution names (pip names, compared case-insensitively).
    pub names: Vec<String>,
    /// A non-pip installer whose install of these names compiles (`mim`).
    #[toml(default)]
    pub installer: Option<String>,
    /// What it compiles and when, for the doc and reviewers.
    pub what: String,
    pub source: String,
}

/// Software that runs `ptxas` at run time (XLA compiles its GPU kernels when it runs): an image
/// that ships it has a reason to ship `cuda-nvcc` (CU103), though not the rest of a devel image.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct PtxasUser {
    /// pip distribution names (compared case-insensitively, extras aside).
    #[toml(default)]
    pub names: Vec<String>,
    /// Program file names, seen in a COPY or RUN of the shipped stages.
    #[toml(default)]
    pub programs: Vec<String>,
    /// Extras that install NVIDIA's nvcc wheel, and with it a ptxas of the
    /// package's own (`tensorflow[and-cuda]`, `jax[cuda12]`).
    #[toml(default)]
    pub own_ptxas_extras: Vec<String>,
    pub what: String,
    pub source: String,
}

/// Where pip takes a `torch` requirement from when PyPI and an extra
/// PyTorch index (`--extra-index-url …/cuXYZ`) are both in play: pip takes
/// the highest matching version across all indexes, and `2.6.0+cu126`
/// sorts above PyPI's `2.6.0`, so the index wins only where it has the
/// release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExtraIndexTorch {
    /// The extra index has the release pip picks: its CUDA applies.
    FromIndex,
    /// PyPI's build wins.
    FromPypi(PypiTorch),
    /// The data cannot tell (a release or range it does not cover).
    Unknown,
}

/// The PyPI torch build pip picks instead of the extra index's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PypiTorch {
    /// The torch release (`2.6`), the requirement's own or the newest.
    pub release: Version,
    /// The CUDA of PyPI's wheel for that release.
    pub cuda: Version,
    /// The requirement names no exact release: the newest one applies.
    pub newest: bool,
    /// The newest release the index has a build of, for this CUDA.
    pub index_newest: Option<Version>,
    pub source: String,
}

/// `package[extra]` pulls a CUDA major's wheels (or, with `system`, expects
/// the image's own CUDA of that major).
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct Extra {
    pub package: String,
    pub extra: String,
    pub cuda: Version,
    #[toml(default)]
    pub system: bool,
    /// Package versions before this one are not judged.
    #[toml(default)]
    pub since: Option<Version>,
    /// The first package version this no longer applies to (its extra
    /// maps to another build from then on). An entry with an end applies
    /// to exact pins only: what an unpinned requirement gets depends on
    /// the newest release for the image's Python.
    #[toml(default)]
    pub until: Option<Version>,
    pub source: String,
}

/// A package on PyPI that only pulls in the build for one CUDA major
/// (`tensorrt` 10.13.2 on installs `tensorrt-cu13`), per release range.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct MetaPackage {
    pub package: String,
    /// The package it installs (`tensorrt-cu13`), for messages.
    pub variant: String,
    pub cuda: Version,
    /// The first release (`10.13.2`) this applies to.
    pub since: Version,
    /// The first release it no longer applies to.
    #[toml(default)]
    pub until: Option<Version>,
    pub source: String,
}

/// The builds a project publishes per CUDA major under their own names
/// (`tensorrt-cu11`, `tensorrt-cu12`, `tensorrt-cu13`): what to install
/// instead on a base of another major.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct CudaVariants {
    pub package: String,
    /// `[CUDA major, package name]` pairs.
    pub variants: Vec<(u32, String)>,
    pub source: String,
}

impl MetaPackage {
    fn covers(&self, release: Version) -> bool {
        release >= self.since && self.until.is_none_or(|until| release < until)
    }
}

/// A package name carrying its CUDA: `cupy-cuda{major}x`, `nvidia-*-cu{major}`.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct NamePattern {
    pub pattern: String,
    pub source: String,
}

/// Packages whose version is the CUDA version.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct Versioned {
    pub names: Vec<String>,
    pub source: String,
}

/// A conda package whose version selects the CUDA version.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct CondaPackage {
    pub name: String,
    pub source: String,
}

/// A conda channel prefix followed by a CUDA version (`nvidia/label/cuda-`).
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct CondaChannel {
    pub prefix: String,
    pub source: String,
}

/// A package-name (or installer file-name) glob.
#[derive(Clone, Debug, PartialEq, Eq, FromToml)]
#[toml(deny_unknown_fields)]
pub struct DriverPackage {
    pub pattern: String,
    pub source: String,
}

/// The CUDA version a package spec selects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaPin {
    /// Major only (`12`, from `cupy-cuda12x`) or `major.minor` (`12.4`).
    pub cuda: Version,
    /// The package brings no CUDA of its own and uses the image's
    /// (`jax[cuda12-local]`).
    pub system: bool,
    pub source: String,
}

/// What one package spec says about CUDA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecCuda {
    Pin(CudaPin),
    /// An explicit CPU-only build (`+cpu`, `/whl/cpu`).
    Cpu,
}

/// A driver userspace package or installer a spec names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverMatch<'k> {
    /// The package name (without version or architecture) or installer file.
    pub name: String,
    pub entry: &'k DriverPackage,
}

impl PackageKnowledge {
    /// The knowledge shipped with cudalint.
    pub fn embedded() -> Result<Self, TomlError> {
        Self::from_toml_text(embedded_toml())
    }

    /// Reads a knowledge document holding a `[packages]` table, or that table's text.
    pub fn from_toml_text(text: &str) -> Result<Self, TomlError> {
        Self::from_area(&crate::from_toml::parse(text)?)
    }

    /// Reads a whole knowledge document (taking its `[packages]` table) or
    /// the table itself.
    pub fn from_area(node: &Node<'_>) -> Result<Self, TomlError> {
        <PackageKnowledge as FromToml>::from_toml(super::area_table(node, "packages"))
    }

    /// Adds `other`'s entries; an entry with the same key replaces ours.
    pub fn extend(&mut self, other: Self) {
        if !other.local_labels.source.is_empty() {
            self.local_labels = other.local_labels;
        }
        if !other.driver_container.signals.is_empty() {
            self.driver_container = other.driver_container;
        }
        if !other.driver_consequence.text.is_empty() {
            self.driver_consequence = other.driver_consequence;
        }
        merge_by(&mut self.index_urls, other.index_urls, |a, b| {
            a.prefix == b.prefix
        });
        merge_by(&mut self.pypi_defaults, other.pypi_defaults, |a, b| {
            a.package == b.package && a.versions == b.versions
        });
        merge_by(
            &mut self.torch_cuda_builds,
            other.torch_cuda_builds,
            |a, b| a.release == b.release,
        );
        merge_by(
            &mut self.runtime_compilers,
            other.runtime_compilers,
            |a, b| a.names == b.names && a.installer == b.installer,
        );
        merge_by(&mut self.runtime_ptxas, other.runtime_ptxas, |a, b| {
            a.names == b.names && a.programs == b.programs
        });
        merge_by(&mut self.extras, other.extras, |a, b| {
            a.package == b.package && a.extra == b.extra && a.since == b.since
        });
        merge_by(&mut self.meta_packages, other.meta_packages, |a, b| {
            a.package == b.package && a.since == b.since
        });
        merge_by(&mut self.cuda_variants, other.cuda_variants, |a, b| {
            a.package == b.package
        });
        merge_by(&mut self.name_patterns, other.name_patterns, |a, b| {
            a.pattern == b.pattern
        });
        merge_by(&mut self.versioned, other.versioned, |a, b| {
            a.names == b.names
        });
        merge_by(&mut self.conda, other.conda, |a, b| a.name == b.name);
        merge_by(&mut self.conda_channels, other.conda_channels, |a, b| {
            a.prefix == b.prefix
        });
        let same = |a: &DriverPackage, b: &DriverPackage| a.pattern == b.pattern;
        merge_by(&mut self.driver_userspace, other.driver_userspace, same);
        merge_by(&mut self.driver_exceptions, other.driver_exceptions, same);
        merge_by(&mut self.driver_installers, other.driver_installers, same);
    }

    /// What an index or wheel URL says about CUDA
    /// (`https://download.pytorch.org/whl/cu121`, `…/whl/nightly/cpu`).
    pub fn classify_index_url(&self, url: &str) -> Option<SpecCuda> {
        let bare = url.split_once("://").map_or(url, |(_, rest)| rest);
        self.index_urls.iter().find_map(|index| {
            let rest = bare.strip_prefix(index.prefix.as_str())?;
            let segment = rest.split(['/', '?', '#']).next().unwrap_or(rest);
            cuda_label(segment, &index.source)
        })
    }

    /// What one requirement (`torch==2.5.1+cu121`, `jax[cuda12]`,
    /// `cupy-cuda12x`) says about CUDA. `from_pypi`: the command uses no
    /// other index, so PyPI's default build applies to exact pins.
    pub fn classify_requirement(&self, spec: &str, from_pypi: bool) -> Option<SpecCuda> {
        if spec.contains("://") {
            return self.classify_index_url(spec);
        }
        let requirement = Requirement::parse(spec)?;
        if let Some(label) = requirement.local_label() {
            return cuda_label(label, &self.local_labels.source);
        }
        let pinned = requirement.exact_version();
        for extra in &self.extras {
            if extra.package != requirement.name {
                continue;
            }
            let in_range = match pinned {
                Some(version) => {
                    extra.since.is_none_or(|since| version >= since)
                        && extra.until.is_none_or(|until| version < until)
                }
                // Without a release, the newest applies: only an entry
                // without an end can be it.
                None => extra.until.is_none() && !self.extra_has_ranges(extra),
            };
            if in_range
                && requirement
                    .extras
                    .iter()
                    .any(|e| normalizes_to(&extra.extra, e))
            {
                return Some(SpecCuda::Pin(CudaPin {
                    cuda: extra.cuda,
                    system: extra.system,
                    source: extra.source.clone(),
                }));
            }
        }
        if let Some(version) = requirement.exact_version_text() {
            for versioned in &self.versioned {
                if versioned
                    .names
                    .iter()
                    .any(|n| normalizes_to(n, &requirement.name))
                {
                    if let Some(cuda) = cuda_of_version_text(version) {
                        return Some(pin(cuda, &versioned.source));
                    }
                }
            }
        }
        for pattern in &self.name_patterns {
            if let Some(cuda) = match_name_pattern(&pattern.pattern, &requirement.name) {
                return Some(pin(cuda, &pattern.source));
            }
        }
        if from_pypi {
            let version = pinned?;
            if let Some(meta) = self.meta_package(&requirement.name, version) {
                return Some(pin(meta.cuda, &meta.source));
            }
            return self
                .pypi_defaults
                .iter()
                .find(|d| {
                    normalizes_to(&d.package, &requirement.name)
                        && d.versions.contains(&version.major_minor())
                })
                .map(|d| pin(d.cuda, &d.source));
        }
        None
    }

    /// Whether the extra's mapping changes between releases (more than one
    /// entry for the package and extra, one of them with a range).
    fn extra_has_ranges(&self, extra: &Extra) -> bool {
        self.extras
            .iter()
            .filter(|e| e.package == extra.package && e.extra == extra.extra)
            .any(|e| e.until.is_some())
    }

    /// Whether the CUDA a requirement brings depends on the release it
    /// resolves to, by the tables here: a meta package (`tensorrt`), or an
    /// extra whose mapping changes between releases (`jax[cuda]`).
    pub fn depends_on_release(&self, spec: &str) -> bool {
        let Some(requirement) = Requirement::parse(spec.trim_matches(['"', '\''])) else {
            return false;
        };
        let name = &requirement.name;
        self.meta_packages
            .iter()
            .any(|m| normalizes_to(&m.package, name))
            || self.extras.iter().any(|e| {
                normalizes_to(&e.package, name)
                    && requirement
                        .extras
                        .iter()
                        .any(|x| normalizes_to(&e.extra, x))
                    && self.extra_has_ranges(e)
            })
    }

    /// The CUDA variant that `package` `release` from PyPI installs
    /// (`tensorrt` `11.4.0` → `tensorrt-cu13`).
    pub fn meta_package(&self, package: &str, release: Version) -> Option<&MetaPackage> {
        let name = normalize(package);
        self.meta_packages
            .iter()
            .find(|m| normalizes_to(&m.package, &name) && m.covers(release))
    }

    /// What to install instead of the package a requirement names, for a
    /// base of CUDA `major`, where the data knows a build of it: the meta
    /// package's variant (`tensorrt-cu12`) or the package's extra that
    /// brings that major's wheels (`jax[cuda12]`). For help texts.
    pub fn build_for_major(&self, spec: &str, major: u32) -> Option<String> {
        let requirement = Requirement::parse(spec.trim_matches(['"', '\'']))?;
        let name = &requirement.name;
        let named = self
            .cuda_variants
            .iter()
            .filter(|v| {
                normalizes_to(&v.package, name)
                    || v.variants.iter().any(|(_, n)| normalizes_to(n, name))
            })
            .flat_map(|v| &v.variants)
            .find(|(cuda, _)| *cuda == major);
        if let Some((_, variant)) = named {
            return Some(format!("`{variant}`"));
        }
        let variant = self
            .meta_packages
            .iter()
            .filter(|m| normalizes_to(&m.package, name) && m.cuda.major() == major)
            .max_by_key(|m| m.since);
        if let Some(meta) = variant {
            return Some(format!("`{}`", meta.variant));
        }
        self.extras
            .iter()
            .find(|e| {
                normalizes_to(&e.package, name)
                    && !e.system
                    && e.until.is_none()
                    && e.cuda.written == 1
                    && e.cuda.major() == major
            })
            .map(|e| format!("`{}[{}]`", e.package, e.extra))
    }

    /// The CUDA builds the PyTorch index has for torch `release` (`2.6`).
    pub fn torch_builds(&self, release: Version) -> Option<&TorchCudaBuilds> {
        let release = release.major_minor();
        self.torch_cuda_builds.iter().find(|b| b.release == release)
    }

    /// The CUDA of PyPI's `package` wheel for `release` (`2.6`).
    pub fn pypi_default(&self, package: &str, release: Version) -> Option<&PypiDefault> {
        let release = release.major_minor();
        self.pypi_defaults
            .iter()
            .find(|d| same_name(&d.package, package) && d.versions.contains(&release))
    }

    /// The newest `package` release series (`2.3`) in the PyPI table that a
    /// version range admits (`torch>=2.1,<2.4` → 2.3), at most `cap` (the
    /// newest release for the image's Python) where given. `None` for an
    /// exact pin, a range the data cannot read, or one nothing admits.
    pub fn newest_in_range(&self, spec: &str, cap: Option<Version>) -> Option<Version> {
        let requirement = Requirement::parse(spec.trim_matches(['"', '\'']))?;
        if requirement.local_label().is_some() {
            return None;
        }
        let mut best: Option<Version> = None;
        for release in self
            .pypi_defaults
            .iter()
            .filter(|d| normalizes_to(&d.package, &requirement.name))
            .flat_map(|d| d.versions.iter().copied())
        {
            if cap.is_some_and(|cap| release.major_minor() > cap.major_minor()) {
                continue;
            }
            if requirement.admits_series(release)? && best.is_none_or(|b| release > b) {
                best = Some(release);
            }
        }
        best
    }

    /// The newest `package` release the PyPI table knows.
    pub fn newest_pypi_release(&self, package: &str) -> Option<Version> {
        self.pypi_defaults
            .iter()
            .filter(|d| same_name(&d.package, package))
            .flat_map(|d| d.versions.iter().copied())
            .max()
    }

    /// The newest torch release the PyPI torch index has a `cuda` build of.
    pub fn newest_torch_build(&self, cuda: Version) -> Option<Version> {
        let cuda = cuda.major_minor();
        self.torch_cuda_builds
            .iter()
            .filter(|b| b.cuda.contains(&cuda))
            .map(|b| b.release)
            .max()
    }

    /// Where pip takes the requirement `spec` from when PyPI and an extra
    /// PyTorch index of `index_cuda` are both in play. `None` when `spec`
    /// is not a plain `torch` requirement (a `+cuXYZ` label pins itself).
    /// `python_newest`: the newest torch with wheels for the image's Python,
    /// where known; a requirement without an exact release gets no newer.
    pub fn torch_with_extra_index(
        &self,
        spec: &str,
        index_cuda: Version,
        python_newest: Option<Version>,
    ) -> Option<ExtraIndexTorch> {
        let requirement = Requirement::parse(spec)?;
        if requirement.name != "torch" || requirement.local_label().is_some() {
            return None;
        }
        let index_cuda = index_cuda.major_minor();
        let index_newest = self.newest_torch_build(index_cuda);
        let from_pypi = |release: Version, newest: bool| match self.pypi_default("torch", release) {
            Some(default) => ExtraIndexTorch::FromPypi(PypiTorch {
                release: release.major_minor(),
                cuda: default.cuda,
                newest,
                index_newest,
                source: default.source.clone(),
            }),
            None => ExtraIndexTorch::Unknown,
        };
        if let Some(version) = requirement.exact_version() {
            return Some(match self.torch_builds(version) {
                Some(builds) if builds.cuda.contains(&index_cuda) => ExtraIndexTorch::FromIndex,
                Some(_) => from_pypi(version, false),
                None => ExtraIndexTorch::Unknown,
            });
        }
        // pip takes the newest release the range admits, on either index.
        let newest = if requirement.lower_bound_only() && python_newest.is_none() {
            self.newest_pypi_release("torch")
        } else {
            self.newest_in_range(spec, python_newest)
        };
        let Some(newest) = newest else {
            return Some(ExtraIndexTorch::Unknown);
        };
        let index_stopped = index_newest.is_some_and(|last| {
            self.torch_cuda_builds
                .iter()
                .any(|b| b.release > last && !b.cuda.contains(&index_cuda))
        });
        Some(match self.torch_builds(newest) {
            Some(builds) if builds.cuda.contains(&index_cuda) => ExtraIndexTorch::FromIndex,
            Some(_) => from_pypi(newest, true),
            None if index_stopped => from_pypi(newest, true),
            None => ExtraIndexTorch::Unknown,
        })
    }

    /// A pip requirement's normalised name, its exact release (`==X.Y.Z`,
    /// local label ignored) and whether it has only lower bounds (or none),
    /// so that the newest release satisfies it. `None` for what is not a
    /// requirement (a URL, a path).
    pub fn requirement_terms(spec: &str) -> Option<(String, Option<Version>, bool)> {
        if spec.contains("://") {
            return None;
        }
        let requirement = Requirement::parse(spec.trim_matches(['"', '\'']))?;
        let exact = requirement.exact_version();
        let open = requirement.lower_bound_only();
        Some((requirement.name, exact, open))
    }

    /// The extras of a pip requirement, normalised.
    pub fn requirement_extras(spec: &str) -> Vec<String> {
        Requirement::parse(spec.trim_matches(['"', '\'']))
            .map(|r| r.extras)
            .unwrap_or_default()
    }

    /// What one conda spec (`pytorch-cuda=12.1`, `cuda-version==12.4.*`,
    /// `conda-forge::cudatoolkit=11.8`) says about CUDA.
    pub fn classify_conda_spec(&self, spec: &str) -> Option<CudaPin> {
        let spec = spec.rsplit_once("::").map_or(spec, |(_, rest)| rest);
        let end = spec
            .find(['=', '<', '>', '!', '~', ' ', '['])
            .unwrap_or(spec.len());
        let (name, rest) = spec.split_at(end);
        let entry = self
            .conda
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))?;
        let version = rest.strip_prefix("==").or_else(|| rest.strip_prefix('='))?;
        let version = version.split('=').next().unwrap_or(version);
        cuda_of_version_text(version).map(|cuda| CudaPin {
            cuda,
            system: false,
            source: entry.source.clone(),
        })
    }

    /// What a conda channel (`nvidia/label/cuda-12.1.0`) says about CUDA.
    pub fn classify_conda_channel(&self, channel: &str) -> Option<CudaPin> {
        let bare = channel.split_once("://").map_or(channel, |(_, rest)| rest);
        self.conda_channels.iter().find_map(|c| {
            let version = bare
                .find(c.prefix.as_str())
                .and_then(|at| bare.get(at + c.prefix.len()..))?;
            let version = version.split('/').next().unwrap_or(version);
            cuda_of_version_text(version).map(|cuda| CudaPin {
                cuda,
                system: false,
                source: c.source.clone(),
            })
        })
    }

    /// What a CUDA build label says (`cu126` → 12.6, `cpu`), as uv's
    /// `--torch-backend` takes it.
    pub fn classify_cuda_label(&self, label: &str) -> Option<SpecCuda> {
        cuda_label(label, &self.local_labels.source)
    }

    /// The driver userspace entry a package name matches, if any.
    pub fn driver_package(&self, name: &str) -> Option<&DriverPackage> {
        if self
            .driver_exceptions
            .iter()
            .any(|e| glob_match(&e.pattern, name))
        {
            return None;
        }
        self.driver_userspace
            .iter()
            .find(|p| glob_match(&p.pattern, name))
    }

    /// The driver userspace a distribution package spec installs:
    /// `libcuda1=535.261.03-1`, `libcuda1:amd64`, a module spec
    /// `nvidia-driver:535-dkms`, or a package file
    /// `./libcuda1_535.261.03-1_amd64.deb`.
    pub fn classify_driver_spec(&self, spec: &str) -> Option<DriverMatch<'_>> {
        let name = package_name(spec);
        self.driver_package(&name)
            .map(|entry| DriverMatch { name, entry })
    }

    /// The driver installer a file name is (`NVIDIA-Linux-x86_64-535.104.05.run`),
    /// given as a path or a bare name.
    pub fn classify_driver_installer(&self, path: &str) -> Option<DriverMatch<'_>> {
        let file = basename(path);
        self.driver_installers
            .iter()
            .find(|i| glob_match(&i.pattern, file))
            .map(|entry| DriverMatch {
                name: file.to_owned(),
                entry,
            })
    }
}

fn pin(cuda: Version, source: &str) -> SpecCuda {
    SpecCuda::Pin(CudaPin {
        cuda,
        system: false,
        source: source.to_owned(),
    })
}

/// `cu121` → CUDA 12.1, `cpu` → CPU-only; `pt21cu121` (PyG wheels) too.
fn cuda_label(label: &str, source: &str) -> Option<SpecCuda> {
    let label = label.to_ascii_lowercase();
    if label == "cpu" {
        return Some(SpecCuda::Cpu);
    }
    let tag = label
        .strip_prefix("pt")
        .and_then(|rest| {
            rest.trim_start_matches(|c: char| c.is_ascii_digit())
                .strip_prefix("cu")
        })
        .or_else(|| label.strip_prefix("cu"))?;
    cuda_of_tag(tag).map(|cuda| pin(cuda, source))
}

/// The digits of a `cuXYZ` tag: the last digit is the minor (`118` → 11.8,
/// `92` → 9.2, `130` → 13.0).
pub(crate) fn cuda_of_tag(digits: &str) -> Option<Version> {
    if !(2..=3).contains(&digits.len()) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    let cuda = Version::parse(&format!("{major}.{minor}"))?;
    (cuda.major() > 0).then_some(cuda)
}

/// A CUDA version written as a package version: `12.4.127` → 12.4,
/// `12.*` → 12, `13.0.2` → 13.0, `11.8.0` → 11.8.
fn cuda_of_version_text(text: &str) -> Option<Version> {
    let text = text.split('+').next().unwrap_or(text);
    let text = text.trim_end_matches('*').trim_end_matches('.');
    let mut parts = text.split('.');
    let major = parts.next()?;
    let minor = parts.next();
    let cuda = match minor {
        Some(minor) => Version::parse(&format!("{major}.{minor}"))?,
        None => Version::parse(major)?,
    };
    (cuda.major() > 0).then_some(cuda)
}

/// PEP 503/685 normalisation: lower case, runs of `-_.` as one `-`.
pub fn normalize(name: &str) -> String {
    // Sized once: every requirement of every install is normalised.
    let mut normalized = String::with_capacity(name.len());
    normalized.extend(normalized_chars(name));
    normalized
}

/// The characters of `name` as [`normalize`] writes them: lower case, each
/// run of `-`, `_` and `.` one `-`.
fn normalized_chars(name: &str) -> impl Iterator<Item = char> + '_ {
    let mut after_separator = false;
    name.chars().filter_map(move |c| {
        if matches!(c, '-' | '_' | '.') {
            let first = !after_separator;
            after_separator = true;
            first.then_some('-')
        } else {
            after_separator = false;
            Some(c.to_ascii_lowercase())
        }
    })
}

/// Whether [`normalize`] turns `name` into `normalized`, without building
/// the normalised text (the knowledge compares its names with every
/// requirement's).
pub fn normalizes_to(name: &str, normalized: &str) -> bool {
    // Most names the knowledge holds differ from the requirement's in the
    // first letter: told apart without walking the characters.
    if let (Some(&first), Some(&other)) = (name.as_bytes().first(), normalized.as_bytes().first()) {
        if first.is_ascii_alphanumeric() && first.to_ascii_lowercase() != other {
            return false;
        }
    }
    normalized_chars(name).eq(normalized.chars())
}

/// Whether two names are the same project: `normalize(a) == normalize(b)`,
/// without building either.
pub fn same_name(a: &str, b: &str) -> bool {
    normalized_chars(a).eq(normalized_chars(b))
}

/// Just enough of PEP 508 to read `name[extras]==version; marker`.
struct Requirement<'s> {
    name: String,
    extras: Vec<String>,
    /// The version clauses, e.g. `==2.5.1+cu121` or `>=2,<3`.
    specifier: &'s str,
}

impl<'s> Requirement<'s> {
    fn parse(spec: &'s str) -> Option<Self> {
        let spec = spec.split(';').next().unwrap_or(spec).trim();
        if spec.len() > MAX_NAME_LEN {
            return None;
        }
        let name_end = spec
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
            .unwrap_or(spec.len());
        let (name, rest) = spec.split_at(name_end);
        if name.is_empty() || name.starts_with(['-', '.']) {
            return None;
        }
        let (extras, specifier) = match rest.strip_prefix('[') {
            Some(inside) => {
                let (list, after) = inside.split_once(']')?;
                let extras = list
                    .split(',')
                    .map(|e| normalize(e.trim()))
                    .filter(|e| !e.is_empty())
                    .collect();
                (extras, after)
            }
            None => (Vec::new(), rest),
        };
        Some(Requirement {
            name: normalize(name),
            extras,
            specifier: specifier.trim(),
        })
    }

    /// Whether some release of the `major.minor` series `series` can
    /// satisfy every clause of the specifier (`>=2.1,<2.4` admits 2.1, 2.2
    /// and 2.3). `None` where a clause is not understood (a local label, a
    /// pre-release, `===`, a marker-like text): the range is then not judged.
    /// Patch releases are not known, so `>=2.4.1` admits the 2.4 series.
    fn admits_series(&self, series: Version) -> Option<bool> {
        let series = series.major_minor();
        let first = Version::new(series.major(), series.minor(), 0);
        let mut admitted = true;
        for clause in self.specifier.split(',').map(str::trim) {
            if clause.is_empty() {
                continue;
            }
            let op_end = clause
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(clause.len());
            let (op, text) = clause.split_at(op_end);
            let text = text.trim();
            let (text, wildcard) = match text.strip_suffix(".*") {
                Some(stem) => (stem, true),
                None => (text, false),
            };
            let version = Version::parse(text)?;
            let ok = match (op.trim(), wildcard) {
                ("==", true) => match version.written {
                    1 => series.major() == version.major(),
                    _ => series == version.major_minor(),
                },
                ("!=", true) => version.written < 2 || series != version.major_minor(),
                // An exact release: judged elsewhere.
                ("==", false) => return None,
                ("!=", false) => true,
                ("<", false) => first < version,
                ("<=", false) => first <= version,
                (">=", false) | (">", false) => series >= version.major_minor(),
                ("~=", false) => match version.written {
                    2 => series.major() == version.major() && series >= version,
                    3 => series == version.major_minor(),
                    _ => return None,
                },
                _ => return None,
            };
            admitted &= ok;
        }
        Some(admitted)
    }

    /// The version of a single `==` clause, as written.
    fn exact_version_text(&self) -> Option<&'s str> {
        let version = self.specifier.strip_prefix("==")?;
        (!version.starts_with('=') && !version.contains(',')).then(|| version.trim())
    }

    /// No version clause, or only lower bounds (`>=2.1`, `>2`): the newest
    /// release satisfies it.
    fn lower_bound_only(&self) -> bool {
        self.specifier.is_empty()
            || self.specifier.split(',').all(|clause| {
                let clause = clause.trim();
                clause.starts_with(">=") || (clause.starts_with('>') && !clause.starts_with(">>"))
            })
    }

    /// The `+label` of an exact pin.
    fn local_label(&self) -> Option<&'s str> {
        self.exact_version_text()?
            .split_once('+')
            .map(|(_, label)| label)
    }

    /// The exact pin's public version (`2.5.1` of `==2.5.1+cu121`).
    fn exact_version(&self) -> Option<Version> {
        let version = self.exact_version_text()?;
        let public = version.split('+').next().unwrap_or(version);
        // `2.5.1.post1`, `2.6.0rc1`: judge by the numeric release part (at
        // most three all-digit parts), a slice of `public` rather than a copy.
        let mut numeric_end = 0;
        for (index, part) in public.split('.').take(3).enumerate() {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                break;
            }
            // The parts before this one and their dots.
            numeric_end += usize::from(index > 0) + part.len();
        }
        Version::parse(public.get(..numeric_end).unwrap_or(""))
    }
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// A package argument's name: `libcuda1=535.261.03-1` → `libcuda1`,
/// `libcuda1:amd64` → `libcuda1`, `./libcuda1_535.261.03-1_amd64.deb` →
/// `libcuda1`.
fn package_name(word: &str) -> String {
    let file = basename(word);
    if file.ends_with(".deb") {
        return file.split('_').next().unwrap_or(file).to_owned();
    }
    let end = word.find(['=', ':']).unwrap_or(word.len());
    word.get(..end).unwrap_or(word).to_owned()
}

/// Matches `name` against a pattern of literals, `*` (any run),
/// `{major}` (a CUDA major) and `{cuda}` (major+minor digits, `118`).
/// Returns the CUDA version the placeholder captured; for a pattern without
/// a placeholder use [`glob_match`].
pub(crate) fn match_name_pattern(pattern: &str, name: &str) -> Option<Version> {
    // Every requirement of every install is asked about every pattern, and
    // most differ from it in their first or last letter: told apart before
    // the pattern is taken apart.
    if !literal_ends_match(pattern.as_bytes(), name.as_bytes()) {
        return None;
    }
    // Where `placeholder` first stands: looked for only at the `{`s (a
    // substring search per pattern and name costs more than the match).
    let first_at = |placeholder: &str| {
        pattern
            .match_indices('{')
            .map(|(at, _)| at)
            .find(|&at| pattern[at..].starts_with(placeholder))
    };
    let (before, placeholder, after) = ["{major}", "{cuda}"].iter().find_map(|p| {
        let at = first_at(p)?;
        Some((&pattern[..at], *p, &pattern[at + p.len()..]))
    })?;
    if name.len() > MAX_NAME_LEN {
        return None;
    }
    // The literal ends of the pattern must be the name's ends, whatever the
    // placeholder captures: most names fail here, before any digit run.
    let literal_head = before.split('*').next().unwrap_or("");
    let literal_tail = after.rsplit('*').next().unwrap_or("");
    if !name.starts_with(literal_head)
        || !name.ends_with(literal_tail)
        || name.len() < literal_head.len() + literal_tail.len()
    {
        return None;
    }
    // Try each run of digits in the name as the placeholder's capture.
    let bytes = name.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        if !bytes.get(start).is_some_and(u8::is_ascii_digit) {
            start += 1;
            continue;
        }
        let mut end = start;
        while bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        let (head, digits, tail) = (name.get(..start)?, name.get(start..end)?, name.get(end..)?);
        if glob_match(before, head) && glob_match(after, tail) {
            let cuda = if placeholder == "{major}" {
                Version::parse(digits).filter(|v| (1..100).contains(&v.major()))
            } else {
                cuda_of_tag(digits)
            };
            if cuda.is_some() {
                return cuda;
            }
        }
        start = end;
    }
    None
}

/// Whether `name` agrees with `pattern` where the pattern is literal at
/// its two ends: up to its first `{` or `*`, and after its last `}` or `*`.
/// `false` only for a name the pattern cannot match (a name shorter than
/// the two ends together cannot match, whatever this says of it).
fn literal_ends_match(pattern: &[u8], name: &[u8]) -> bool {
    let agree = |pattern: &mut dyn Iterator<Item = &u8>, name: &mut dyn Iterator<Item = &u8>| {
        pattern
            .zip(name)
            .take_while(|(p, _)| !matches!(p, b'{' | b'}' | b'*'))
            .all(|(p, n)| p == n)
    };
    agree(&mut pattern.iter(), &mut name.iter())
        && agree(&mut pattern.iter().rev(), &mut name.iter().rev())
}

/// `*` matches any run of characters (case-sensitive). Linear in practice:
/// the classic two-pointer wildcard match, backtracking only to the last `*`.
fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if t.get(ti) == Some(&c) => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((star_pi, star_ti)) => {
                    pi = star_pi + 1;
                    ti = star_ti + 1;
                    star = Some((star_pi, star_ti + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..).unwrap_or_default().iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    fn embedded() -> PackageKnowledge {
        PackageKnowledge::embedded().unwrap()
    }

    fn pypi_cuda(outcome: Option<ExtraIndexTorch>) -> Option<(Version, Version, bool)> {
        match outcome {
            Some(ExtraIndexTorch::FromPypi(p)) => Some((p.release, p.cuda, p.newest)),
            _ => None,
        }
    }

    #[test]
    fn an_extra_index_without_the_release_leaves_torch_to_pypi() {
        let k = embedded();
        // torch 2.6 was published for cu118, cu124, cu126 only.
        assert_eq!(
            pypi_cuda(k.torch_with_extra_index("torch==2.6.0", v("12.1"), None)),
            Some((v("2.6"), v("12.4"), false))
        );
        assert_eq!(
            k.torch_with_extra_index("torch==2.6.0", v("12.6"), None),
            Some(ExtraIndexTorch::FromIndex)
        );
        // A `+cu121` label pins itself; other packages are not torch.
        assert_eq!(
            k.torch_with_extra_index("torch==2.5.1+cu121", v("12.1"), None),
            None
        );
        assert_eq!(
            k.torch_with_extra_index("numpy==1.26.4", v("12.1"), None),
            None
        );
    }

    #[test]
    fn an_unpinned_torch_takes_the_newest_release() {
        let k = embedded();
        let newest = k.newest_pypi_release("torch").unwrap();
        // The cu118 index stopped at 2.7 while 2.8 and 2.9 went on without it.
        assert_eq!(k.newest_torch_build(v("11.8")), Some(v("2.7")));
        let (release, _, is_newest) =
            pypi_cuda(k.torch_with_extra_index("torch>=2.0", v("11.8"), None)).unwrap();
        assert_eq!((release, is_newest), (newest, true));
        // No newer than the newest torch for the image's Python (3.10: 2.14,
        // a CUDA 13.0 build where PyPI's newest, 2.15, is CUDA 13.2).
        let (release, cuda, _) =
            pypi_cuda(k.torch_with_extra_index("torch>=2.0", v("11.8"), Some(v("2.14")))).unwrap();
        assert_eq!((release, cuda), (v("2.14"), v("13.0")));
        // An upper bound: the newest release it admits, 2.4, which the
        // cu118 index has; `<2.9` admits 2.8, which it lacks.
        assert_eq!(
            k.torch_with_extra_index("torch<2.5", v("11.8"), None),
            Some(ExtraIndexTorch::FromIndex)
        );
        let (release, _, _) =
            pypi_cuda(k.torch_with_extra_index("torch<2.9", v("11.8"), None)).unwrap();
        assert_eq!(release, v("2.8"));
        // A range the data cannot read.
        assert_eq!(
            k.torch_with_extra_index("torch<2.5rc1", v("11.8"), None),
            Some(ExtraIndexTorch::Unknown)
        );
    }

    #[test]
    fn pypi_defaults_cover_every_torch_release_from_1_13() {
        let k = embedded();
        for (release, cuda) in [
            ("1.13", "11.7"),
            ("2.0", "11.7"),
            ("2.4", "12.1"),
            ("2.6", "12.4"),
            ("2.7", "12.6"),
            ("2.10", "12.8"),
            ("2.14", "13.0"),
            ("2.15", "13.2"),
        ] {
            assert_eq!(
                k.pypi_default("torch", v(release)).map(|d| d.cuda),
                Some(v(cuda)),
                "torch {release}"
            );
        }
    }

    #[test]
    fn ranges_resolve_to_the_newest_release_they_admit() {
        let k = embedded();
        let newest = |spec: &str, cap: Option<&str>| k.newest_in_range(spec, cap.map(v));
        assert_eq!(newest("torch>=2.1,<2.4", None), Some(v("2.3")));
        assert_eq!(newest("\"torch<=2.4.1\"", None), Some(v("2.4")));
        assert_eq!(newest("torch<2.4.1", None), Some(v("2.4")));
        assert_eq!(newest("torch~=2.7.0", None), Some(v("2.7")));
        assert_eq!(newest("torch~=2.7", Some("2.14")), Some(v("2.14")));
        assert_eq!(newest("torch==2.5.*", None), Some(v("2.5")));
        assert_eq!(newest("torch>=2.1,!=2.3.*,<2.4", None), Some(v("2.2")));
        // Nothing admitted, an exact pin, a local label: not judged.
        assert_eq!(newest("torch>=3", None), None);
        assert_eq!(newest("torch==2.5.1", None), None);
        assert_eq!(newest("torch<2.4+cu121", None), None);
        // The image's Python caps an open range.
        assert_eq!(newest("torch>=2.1", Some("2.4")), Some(v("2.4")));
    }

    #[test]
    fn globs_match_whole_names() {
        assert!(glob_match("nvidia-driver-*", "nvidia-driver-535"));
        assert!(glob_match(
            "libnvidia-tesla-*-cuda1",
            "libnvidia-tesla-535-cuda1"
        ));
        assert!(!glob_match(
            "libnvidia-tesla-*-cuda1",
            "libnvidia-tesla-535-cuda1x"
        ));
        assert!(glob_match("cuda", "cuda"));
        assert!(!glob_match("cuda", "cuda-toolkit-12-4"));
        assert!(glob_match(
            "NVIDIA-Linux-*.run",
            "NVIDIA-Linux-x86_64-535.104.05.run"
        ));
        assert!(!glob_match("a*b", ""));
    }

    #[test]
    fn tensorrt_releases_install_one_cuda_major() {
        let k = embedded();
        let cuda = |spec: &str| match k.classify_requirement(spec, true) {
            Some(SpecCuda::Pin(pin)) => Some(pin.cuda),
            _ => None,
        };
        assert_eq!(cuda("tensorrt==10.3.0"), Some(v("12")));
        assert_eq!(cuda("tensorrt==10.13.0.35"), Some(v("12")));
        // 10.13.2 switched the Linux default to CUDA 13.
        assert_eq!(cuda("tensorrt==10.13.2.6"), Some(v("13")));
        assert_eq!(cuda("tensorrt==11.4.0.106"), Some(v("13")));
        // 8.6.1 installs tensorrt_libs from NVIDIA's index: not judged.
        assert_eq!(cuda("tensorrt==8.6.1"), None);
        // Unpinned: the newest release for the image's Python decides,
        // not this table.
        assert_eq!(cuda("tensorrt"), None);
        assert!(k.depends_on_release("tensorrt>=10"));
        // Only from PyPI: another index may hold other builds.
        assert!(k.classify_requirement("tensorrt==10.3.0", false).is_none());
        assert_eq!(cuda("tensorrt-cu12==11.4.0.106"), Some(v("12")));
        assert_eq!(cuda("tensorrt-cu13-libs"), Some(v("13")));
        assert_eq!(cuda("tensorrt-lean-cu12"), Some(v("12")));
        assert_eq!(cuda("tensorrt-llm"), None);
        assert_eq!(
            k.build_for_major("tensorrt", 12).as_deref(),
            Some("`tensorrt-cu12`")
        );
    }

    #[test]
    fn jax_cuda_extra_follows_the_release() {
        let k = embedded();
        let pin = |spec: &str| match k.classify_requirement(spec, true) {
            Some(SpecCuda::Pin(pin)) => Some((pin.cuda, pin.system)),
            _ => None,
        };
        assert_eq!(pin("jax[cuda]==0.4.20"), Some((v("11"), true)));
        assert_eq!(pin("jax[cuda]==0.4.26"), Some((v("12"), true)));
        assert_eq!(pin("jax[cuda]==0.4.30"), Some((v("12"), false)));
        assert_eq!(pin("jax[cuda]==0.10.2"), Some((v("12"), false)));
        assert_eq!(pin("jax[cuda]==0.3.25"), None);
        // Without a release the mapping is the newest release's.
        assert_eq!(pin("jax[cuda]"), None);
        assert!(k.depends_on_release("jax[cuda]"));
        assert!(!k.depends_on_release("jax[cuda12]"));
        // Extras named for a CUDA keep deciding without a release, unless
        // the newest releases dropped them.
        assert_eq!(pin("jax[cuda12]"), Some((v("12"), false)));
        assert_eq!(pin("jax[cuda12_pip]==0.4.20"), Some((v("12"), false)));
        assert_eq!(pin("jax[cuda11_pip]==0.4.30"), None);
        assert_eq!(
            k.build_for_major("jax[cuda]", 12).as_deref(),
            Some("`jax[cuda12]`")
        );
        assert_eq!(k.build_for_major("jax[cuda]", 11), None);
    }

    #[test]
    fn cupy_is_not_a_cuda_wheel() {
        // CuPy loads the image's CUDA (the resolution knowledge's
        // system frameworks), so it pins no CUDA build here.
        let k = embedded();
        assert!(k.classify_requirement("cupy-cuda12x", true).is_none());
        assert!(k
            .classify_requirement("cupy-cuda118==9.6.0", true)
            .is_none());
    }

    #[test]
    fn name_patterns_capture_cuda() {
        assert_eq!(
            match_name_pattern("cupy-cuda{major}x", "cupy-cuda12x"),
            Some(v("12"))
        );
        assert_eq!(
            match_name_pattern("cupy-cuda{cuda}", "cupy-cuda118"),
            Some(v("11.8"))
        );
        assert_eq!(match_name_pattern("cupy-cuda{cuda}", "cupy-cuda12x"), None);
        assert_eq!(
            match_name_pattern("nvidia-*-cu{major}", "nvidia-cuda-runtime-cu12"),
            Some(v("12"))
        );
        assert_eq!(
            match_name_pattern("nvidia-*-cu{major}", "nvidia-ml-py"),
            None
        );
    }

    #[test]
    fn literal_ends_reject_only_what_cannot_match() {
        let ends =
            |pattern: &str, name: &str| literal_ends_match(pattern.as_bytes(), name.as_bytes());
        assert!(ends("cupy-cuda{major}x", "cupy-cuda12x"));
        assert!(ends("nvidia-*-cu{major}", "nvidia-cuda-runtime-cu12"));
        assert!(ends("*-cu{major}", "anything-cu12"));
        assert!(ends("cupy-cuda{major}x", "cupy-cudaXYZx"));
        assert!(!ends("cupy-cuda{major}x", "package7"));
        assert!(!ends("cupy-cuda{major}x", "cupy-cuda12y"));
        assert!(!ends("nvidia-*-cu{major}", "torch"));
    }

    #[test]
    fn cuda_tags_and_versions() {
        assert_eq!(cuda_of_tag("118"), Some(v("11.8")));
        assert_eq!(cuda_of_tag("92"), Some(v("9.2")));
        assert_eq!(cuda_of_tag("130"), Some(v("13.0")));
        assert_eq!(cuda_of_tag("1"), None);
        assert_eq!(cuda_of_tag("12x"), None);
        assert_eq!(cuda_of_version_text("12.4.127"), Some(v("12.4")));
        assert_eq!(cuda_of_version_text("12.*"), Some(v("12")));
        assert_eq!(cuda_of_version_text("13.0.2"), Some(v("13.0")));
        assert_eq!(cuda_of_version_text("x"), None);
    }

    #[test]
    fn package_names_lose_versions_and_architectures() {
        assert_eq!(package_name("libcuda1=535.261.03-1"), "libcuda1");
        assert_eq!(package_name("libcuda1:amd64"), "libcuda1");
        assert_eq!(
            package_name("./libcuda1_535.261.03-1_amd64.deb"),
            "libcuda1"
        );
        assert_eq!(package_name("nvidia-driver:535-dkms"), "nvidia-driver");
    }
}
