//! Resolution: what pip and apt install when a Dockerfile leaves the choice
//! to them (`rules/resolution.toml`): how pip and uv pick among indexes,
//! which torch a torchvision or vLLM pin pulls,
//! which CUDA and cuDNN a system-CUDA framework release loads, which apt
//! names are the distribution's own CUDA, and which NVIDIA repository
//! packages come in one build per CUDA release.
//!
//! It answers questions about single names and versions; it never reads
//! commands (the rules and `checks::dockerfile::resolution` do).

use crate::from_toml::{FromToml, Node, TomlError};

use super::images::glob_matches;
use super::merge_by;
use super::source_builds::{
    CudaHomeWithoutNvcc, CudaSwitchOutcome, NewestForPython, NoCudaBase, PythonInstaller,
    SourceBuild,
};
use super::version::Version;

#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct ResolutionKnowledge {
    #[toml(default)]
    pub torch_companions: Vec<TorchCompanion>,
    #[toml(default)]
    pub torch_pinners: NameList,
    #[toml(default)]
    pub installers: Vec<Installer>,
    #[toml(default)]
    pub torch_pins: Vec<TorchPins>,
    #[toml(default)]
    pub system_frameworks: Vec<SystemFramework>,
    #[toml(default)]
    pub unnumbered_cudnn: Option<UnnumberedCudnn>,
    #[toml(default)]
    pub base_variant_libraries: Option<BaseVariantLibraries>,
    #[toml(default)]
    pub distro_cuda: PatternList,
    #[toml(default)]
    pub distro_cuda_versions: Vec<DistroCuda>,
    #[toml(default)]
    pub cuda_builds: Vec<CudaBuilds>,
    #[toml(default)]
    pub cuda_compile: CudaCompile,
    #[toml(default)]
    pub toolkit_installs: ToolkitInstalls,
    #[toml(default)]
    pub python_newest: Vec<PythonNewest>,
    #[toml(default)]
    pub other_python: OtherPython,
    #[toml(default)]
    pub cuda_home_without_nvcc: Option<CudaHomeWithoutNvcc>,
    #[toml(default)]
    pub source_builds: Vec<SourceBuild>,
    #[toml(default)]
    pub cuda_switch_outcomes: Vec<CudaSwitchOutcome>,
    #[toml(default)]
    pub python_installers: Vec<PythonInstaller>,
    #[toml(default)]
    pub newest_for_python: Vec<NewestForPython>,
    #[toml(default)]
    pub no_cuda_base: Option<NoCudaBase>,
}

/// The newest release of some packages for the Python of a tag OS.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct PythonNewest {
    pub os: String,
    pub python: String,
    /// (package, `major.minor`).
    pub newest: Vec<(String, Version)>,
    /// The day these releases were read (`2026-11-26`); the knowledge's
    /// `checked` date where absent.
    #[toml(default)]
    pub checked: Option<String>,
    pub source: String,
}

/// A package whose every release pins one torch release (`vllm==0.6.3`
/// requires `torch==2.4.0`).
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct TorchPins {
    pub package: String,
    /// (package release `X.Y.Z`, the torch release it pins).
    pub releases: Vec<(Version, Version)>,
    pub source: String,
}

/// How a Python installer picks among indexes that have the same package.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromToml)]
#[toml(rename_all = "kebab-case")]
pub enum IndexStrategy {
    /// The highest version across all indexes (pip).
    BestMatch,
    /// Only the first index that has the package, extra indexes before the
    /// default one (uv's default).
    FirstIndex,
    /// The first index with a version that satisfies the requirement.
    FirstMatch,
}

/// One installer's index rules (`pip`, `uv`).
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct Installer {
    /// The manager's data name (`PackageManager::name`).
    pub manager: String,
    /// What it does when nothing changes it.
    pub strategy: IndexStrategy,
    #[toml(default)]
    pub strategy_option: Option<String>,
    #[toml(default)]
    pub strategy_env: Option<String>,
    /// (value of the option or variable, strategy).
    #[toml(default)]
    pub strategies: Vec<(String, IndexStrategy)>,
    /// Environment variables it reads indexes from.
    pub index_env: Vec<String>,
    pub source: String,
}

impl Installer {
    /// The strategy a value of `strategy_option`/`strategy_env` names.
    pub fn strategy_named(&self, value: &str) -> Option<IndexStrategy> {
        self.strategies
            .iter()
            .find(|(name, _)| name == value.trim_matches(['"', '\'']))
            .map(|(_, strategy)| *strategy)
    }
}

/// Signs of another Python than the distribution's.
#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct OtherPython {
    pub packages: Vec<String>,
    pub words: super::needles::Needles,
    pub source: String,
}

/// Signs that a build compiles CUDA code.
#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct CudaCompile {
    pub commands: Vec<String>,
    pub text: Vec<String>,
    pub env: Vec<String>,
    pub source: String,
}

/// Installs that put nvcc into the image.
#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct ToolkitInstalls {
    pub system: Vec<String>,
    pub conda: Vec<String>,
    pub pip: Vec<String>,
    pub runfile: String,
    pub source: String,
}

/// A package whose release pins one torch release.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct TorchCompanion {
    pub package: String,
    /// (companion `major.minor`, torch `major.minor`).
    pub pairs: Vec<(Version, Version)>,
    pub source: String,
}

#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct NameList {
    pub names: Vec<String>,
    pub source: String,
}

#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct PatternList {
    pub patterns: Vec<String>,
    pub source: String,
}

/// Releases of a framework that load the system's CUDA `cuda` and cuDNN
/// `cudnn` majors.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct SystemFramework {
    /// The distribution name, or a name pattern that carries the CUDA
    /// (`cupy-cuda{major}x`, `cupy-cuda{cuda}`: see the packages
    /// knowledge's name patterns), which then holds for every release.
    pub package: String,
    /// Other distribution names with the same builds (`tensorflow-gpu`).
    #[toml(default)]
    pub also: Vec<String>,
    /// `major.minor` releases; empty for a name pattern (every release).
    #[toml(default)]
    pub versions: Vec<Version>,
    /// The CUDA the releases load; absent for a name pattern.
    #[toml(default)]
    pub cuda: Option<Version>,
    /// The cuDNN major they load; absent where cuDNN is optional.
    #[toml(default)]
    pub cudnn: Option<u32>,
    /// The CUDA library named in messages, opened by SONAME
    /// (`libcublas`; `libcudart` when absent).
    #[toml(default)]
    pub library: Option<String>,
    /// CUDA older than this is not judged (its SONAMEs carry the minor,
    /// and differ per library).
    #[toml(default)]
    pub min_cuda: Option<Version>,
    /// Extras that bring NVIDIA's CUDA wheels instead (`tensorflow[and-cuda]`).
    #[toml(default)]
    pub own_cuda_extras: Vec<String>,
    /// What to install instead on a base of another CUDA, `{major}` the
    /// base's CUDA major (`` `cupy-cuda{major}x` ``); without it, the help
    /// says to pin a release built for the base's CUDA.
    #[toml(default)]
    pub instead: Option<String>,
    /// Text in a pinned version that marks a build from the project's own
    /// pages rather than PyPI, followed by the CUDA it was built for
    /// (`.post117`: Paddle's CUDA 11.7 build), judged by that CUDA.
    #[toml(default)]
    pub cuda_label_marker: Option<String>,
    /// What fails when the libraries are missing, for messages (the
    /// framework runs on the CPU when absent).
    #[toml(default)]
    pub consequence: Option<String>,
    pub source: String,
}

impl SystemFramework {
    /// The CUDA a pinned version's label names (`2.6.1.post117` → 11.7,
    /// with `.post117`), where the entry has a label marker.
    pub fn labelled_cuda(&self, version: &str) -> Option<(Version, String)> {
        let marker = self.cuda_label_marker.as_deref()?;
        let (_, rest) = version.split_once(marker)?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let cuda = super::packages::cuda_of_tag(&digits)?;
        Some((cuda, format!("{marker}{digits}")))
    }

    /// The CUDA of releases of `name` this entry covers: its own, or the
    /// one a name pattern captures.
    pub fn cuda_of(&self, name: &str) -> Option<Version> {
        // Every requirement is asked about every entry, and most start with
        // another letter than each name the entry has (a pattern starting
        // with a placeholder or `*` can start with any).
        let first = name.as_bytes().first()?;
        let may_start = |known: &str| {
            known
                .as_bytes()
                .first()
                .is_some_and(|k| !k.is_ascii_alphanumeric() || k.to_ascii_lowercase() == *first)
        };
        if !may_start(&self.package) && !self.also.iter().any(|a| may_start(a)) {
            return None;
        }
        if is_name_pattern(&self.package) {
            let cuda = super::packages::match_name_pattern(&self.package, name)?;
            return self.min_cuda.is_none_or(|min| cuda >= min).then_some(cuda);
        }
        let named =
            normalizes_to(&self.package, name) || self.also.iter().any(|a| normalizes_to(a, name));
        if named {
            self.cuda
        } else {
            None
        }
    }

    /// What fails when the libraries are missing, for messages.
    pub fn consequence(&self) -> &str {
        self.consequence.as_deref().unwrap_or(DEFAULT_CONSEQUENCE)
    }

    /// The library messages name (`libcudart`).
    pub fn library(&self) -> &str {
        self.library.as_deref().unwrap_or(DEFAULT_LIBRARY)
    }
}

/// The library a system-CUDA framework is said to open when its entry
/// names none: every CUDA program needs the runtime.
const DEFAULT_LIBRARY: &str = "libcudart";

/// What a framework without a `consequence` does without its libraries.
const DEFAULT_CONSEQUENCE: &str =
    "the GPU provider does not load and the work runs on the CPU, with a warning at most";

fn is_name_pattern(package: &str) -> bool {
    package.contains('{') && (package.contains("{major}") || package.contains("{cuda}"))
}

/// The CUDA libraries the `nvidia/cuda` variants in `variants` hold
/// (`base`: the runtime only), and the packages that add the others.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct BaseVariantLibraries {
    pub variants: Vec<String>,
    pub libraries: Vec<String>,
    pub provided_by: Vec<String>,
    pub source: String,
}

impl BaseVariantLibraries {
    /// Whether an image of `variant` lacks `library` (`libcublas`).
    pub fn lacks(&self, variant: &str, library: &str) -> bool {
        self.variants.iter().any(|v| v == variant) && !self.libraries.iter().any(|l| l == library)
    }

    /// Whether a system package install adds the libraries (`cuda-libraries-12-4`).
    pub fn provided_by(&self, package: &str) -> bool {
        self.provided_by.iter().any(|p| glob_matches(p, package))
    }
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct UnnumberedCudnn {
    pub major: u32,
    pub source: String,
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct DistroCuda {
    pub os: String,
    pub cuda: Version,
    pub source: String,
}

/// NVIDIA repository packages built once per CUDA release.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct CudaBuilds {
    pub names: Vec<String>,
    /// nvidia/cuda variants that install and hold them.
    pub held_in: Vec<String>,
    /// Held only in the cuDNN flavours of those variants.
    #[toml(default)]
    pub held_needs_cudnn: bool,
    /// (tag OS, CUDA major of the newest build).
    pub newest: Vec<(String, Version)>,
    pub source: String,
}

impl CudaBuilds {
    /// The CUDA major of the newest build for a tag OS (`ubuntu22.04`).
    pub fn newest_for(&self, os: &str) -> Option<Version> {
        self.newest
            .iter()
            .find(|(name, _)| name == os)
            .map(|(_, cuda)| *cuda)
    }
}

/// What a system-CUDA framework requirement resolves to.
#[derive(Clone, Debug)]
pub struct FrameworkBuild<'k> {
    /// The release (`1.31`), the requirement's own or the newest known;
    /// `None` where the name alone decides (`cupy-cuda12x`).
    pub release: Option<Version>,
    /// The requirement names no exact release: the newest one for the
    /// image's Python applies, from this list.
    pub newest: Option<&'k PythonNewest>,
    /// The CUDA the build loads.
    pub cuda: Version,
    /// The pinned version carries the CUDA (`2.6.1.post117`): a build from
    /// the project's own pages, the label as written.
    pub label: Option<String>,
    pub entry: &'k SystemFramework,
}

impl ResolutionKnowledge {
    /// Reads a whole knowledge document (taking its `[resolution]` table) or
    /// the table itself.
    pub fn from_area(node: &Node<'_>) -> Result<Self, TomlError> {
        <ResolutionKnowledge as FromToml>::from_toml(super::area_table(node, "resolution"))
    }

    /// Adds `other`'s entries; an entry with the same key replaces ours.
    pub fn extend(&mut self, other: Self) {
        merge_by(
            &mut self.torch_companions,
            other.torch_companions,
            |a, b| a.package == b.package,
        );
        if !other.torch_pinners.names.is_empty() {
            self.torch_pinners = other.torch_pinners;
        }
        merge_by(&mut self.installers, other.installers, |a, b| {
            a.manager == b.manager
        });
        merge_by(&mut self.torch_pins, other.torch_pins, |a, b| {
            a.package == b.package
        });
        merge_by(
            &mut self.system_frameworks,
            other.system_frameworks,
            |a, b| a.package == b.package && a.versions == b.versions,
        );
        if other.unnumbered_cudnn.is_some() {
            self.unnumbered_cudnn = other.unnumbered_cudnn;
        }
        if other.base_variant_libraries.is_some() {
            self.base_variant_libraries = other.base_variant_libraries;
        }
        if !other.distro_cuda.patterns.is_empty() {
            self.distro_cuda = other.distro_cuda;
        }
        merge_by(
            &mut self.distro_cuda_versions,
            other.distro_cuda_versions,
            |a, b| a.os == b.os,
        );
        merge_by(&mut self.cuda_builds, other.cuda_builds, |a, b| {
            a.names == b.names
        });
        if !other.cuda_compile.source.is_empty() {
            self.cuda_compile = other.cuda_compile;
        }
        if !other.toolkit_installs.source.is_empty() {
            self.toolkit_installs = other.toolkit_installs;
        }
        // Rows of one OS are kept apart by the packages they list.
        merge_by(&mut self.python_newest, other.python_newest, |a, b| {
            a.os == b.os
                && a.newest
                    .iter()
                    .map(|n| &n.0)
                    .eq(b.newest.iter().map(|n| &n.0))
        });
        if !other.other_python.source.is_empty() {
            self.other_python = other.other_python;
        }
        if other.no_cuda_base.is_some() {
            self.no_cuda_base = other.no_cuda_base;
        }
        if other.cuda_home_without_nvcc.is_some() {
            self.cuda_home_without_nvcc = other.cuda_home_without_nvcc;
        }
        merge_by(&mut self.source_builds, other.source_builds, |a, b| {
            a.package == b.package
        });
        merge_by(
            &mut self.cuda_switch_outcomes,
            other.cuda_switch_outcomes,
            |a, b| a.switches == b.switches,
        );
        merge_by(
            &mut self.python_installers,
            other.python_installers,
            |a, b| a.name == b.name,
        );
        merge_by(
            &mut self.newest_for_python,
            other.newest_for_python,
            |a, b| a.python == b.python,
        );
    }

    /// The torch release a companion release pins (`torchvision` `0.21` → `2.6`).
    pub fn torch_for(&self, package: &str, release: Version) -> Option<(Version, &str)> {
        let release = release.major_minor();
        let companion = self
            .torch_companions
            .iter()
            .find(|c| same_name(&c.package, package))?;
        companion
            .pairs
            .iter()
            .find(|(own, _)| *own == release)
            .map(|(_, torch)| (*torch, companion.source.as_str()))
    }

    /// The torch release that `package`'s `release` pins, with the table's
    /// source (`vllm` `0.6.3` → `2.4.0`). A release written with fewer
    /// parts (`0.6`) matches the newest patch the table has.
    pub fn torch_pinned_by(&self, package: &str, release: Version) -> Option<(Version, &str)> {
        let entry = self
            .torch_pins
            .iter()
            .find(|p| same_name(&p.package, package))?;
        entry
            .releases
            .iter()
            .filter(|(own, _)| match release.written {
                3 => *own == release,
                _ => own.major_minor() == release.major_minor(),
            })
            .max_by_key(|(own, _)| *own)
            .map(|(_, torch)| (*torch, entry.source.as_str()))
    }

    /// Whether `package` has a table of the torch each release pins.
    pub fn has_torch_pins(&self, package: &str) -> bool {
        self.torch_pins
            .iter()
            .any(|p| same_name(&p.package, package))
    }

    /// The index rules of a Python installer (`pip`, `uv`).
    pub fn installer(&self, manager: &str) -> Option<&Installer> {
        self.installers.iter().find(|i| i.manager == manager)
    }

    /// Whether `package` is a torch companion (`torchvision`, `torchaudio`).
    pub fn is_torch_companion(&self, package: &str) -> bool {
        self.torch_companions
            .iter()
            .any(|c| same_name(&c.package, package))
    }

    /// Whether `package` pins torch in a way the data does not follow.
    pub fn pins_torch(&self, package: &str) -> bool {
        self.torch_pinners
            .names
            .iter()
            .any(|n| same_name(n, package))
    }

    /// The build a system-CUDA framework requirement gets: the release of an
    /// exact pin, or the newest release for a requirement without an upper
    /// bound. `None` for other packages, unknown releases and ranges.
    /// `os`: the tag OS whose Python's newest release an open requirement
    /// gets (`None`: an open requirement is not judged).
    pub fn framework_build(
        &self,
        package: &str,
        pinned: Option<Version>,
        lower_bound_only: bool,
        os: Option<&str>,
    ) -> Option<FrameworkBuild<'_>> {
        let name = normalize(package);
        // The entries naming the package, found in one pass: most packages
        // are none of these frameworks.
        let named: Vec<(&SystemFramework, Version)> = self
            .system_frameworks
            .iter()
            .filter_map(|f| Some((f, f.cuda_of(&name)?)))
            .collect();
        let entries = || named.iter().copied();
        if named.is_empty() {
            return None;
        }
        // A name that carries its CUDA decides for every release.
        if let Some((entry, cuda)) = entries().find(|(f, _)| f.versions.is_empty()) {
            return Some(FrameworkBuild {
                release: None,
                newest: None,
                cuda,
                label: None,
                entry,
            });
        }
        let (release, newest) = match pinned {
            Some(version) => (version.major_minor(), None),
            None if lower_bound_only => {
                let package = &entries().next()?.0.package;
                let (release, list) = self.newest_release(os?, package)?;
                (release.major_minor(), Some(list))
            }
            None => return None,
        };
        let (entry, cuda) = entries().find(|(f, _)| f.versions.contains(&release))?;
        Some(FrameworkBuild {
            release: Some(release),
            newest,
            cuda,
            label: None,
            entry,
        })
    }

    /// The newest release of `package` for the Python of tag OS `os`.
    pub fn newest_release(&self, os: &str, package: &str) -> Option<(Version, &PythonNewest)> {
        self.python_newest
            .iter()
            .filter(|p| p.os == os)
            .find_map(|entry| {
                entry
                    .newest
                    .iter()
                    .find(|(name, _)| same_name(name, package))
                    .map(|(_, version)| (*version, entry))
            })
    }

    /// Whether an apt package name is the distribution's own CUDA.
    pub fn is_distro_cuda(&self, name: &str) -> bool {
        self.distro_cuda
            .patterns
            .iter()
            .any(|p| glob_matches(p, name))
    }

    /// The CUDA a distribution release packages (`ubuntu22.04` → 11.5).
    pub fn distro_cuda_version(&self, os: &str) -> Option<&DistroCuda> {
        self.distro_cuda_versions.iter().find(|d| d.os == os)
    }

    /// The per-CUDA-build entry for an apt package name.
    pub fn cuda_builds(&self, name: &str) -> Option<&CudaBuilds> {
        self.cuda_builds
            .iter()
            .find(|b| b.names.iter().any(|n| n == name))
    }
}

/// PEP 503 normalisation, as the packages knowledge does it.
pub use super::packages::{normalize, normalizes_to, same_name};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::Knowledge;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn companions_name_their_torch() {
        let k = Knowledge::embedded().unwrap().resolution;
        assert_eq!(
            k.torch_for("torchvision", v("0.21.0")).map(|t| t.0),
            Some(v("2.6"))
        );
        assert_eq!(
            k.torch_for("TorchAudio", v("2.5.1")).map(|t| t.0),
            Some(v("2.5"))
        );
        assert_eq!(k.torch_for("torchvision", v("0.99")), None);
    }

    #[test]
    fn frameworks_resolve_by_release_or_newest() {
        let k = Knowledge::embedded().unwrap().resolution;
        let ort = k
            .framework_build("onnxruntime_gpu", None, true, Some("ubuntu24.04"))
            .unwrap();
        assert!(ort.newest.is_some());
        assert_eq!(ort.cuda.major(), 13);
        // Ubuntu 22.04's Python 3.10 gets an older, CUDA 12 release.
        let ort = k
            .framework_build("onnxruntime-gpu", None, true, Some("ubuntu22.04"))
            .unwrap();
        assert_eq!(ort.cuda.major(), 12);
        assert!(k
            .framework_build("onnxruntime-gpu", None, true, None)
            .is_none());
        let old = k
            .framework_build("onnxruntime-gpu", Some(v("1.18.1")), false, None)
            .unwrap();
        assert_eq!((old.cuda, old.entry.cudnn), (v("11.8"), Some(8)));
        let tf = k
            .framework_build("tensorflow", Some(v("2.15.0")), false, None)
            .unwrap();
        assert_eq!(tf.entry.cudnn, Some(8));
        assert!(k.framework_build("tensorflow", None, false, None).is_none());
        assert!(k
            .framework_build("numpy", None, true, Some("ubuntu22.04"))
            .is_none());
    }

    #[test]
    fn installers_pick_indexes_by_their_own_rule() {
        let k = Knowledge::embedded().unwrap().resolution;
        let pip = k.installer("pip").unwrap();
        assert_eq!(pip.strategy, IndexStrategy::BestMatch);
        assert!(pip.index_env.iter().any(|e| e == "PIP_EXTRA_INDEX_URL"));
        assert!(!pip.index_env.iter().any(|e| e.starts_with("UV_")));
        let uv = k.installer("uv").unwrap();
        assert_eq!(uv.strategy, IndexStrategy::FirstIndex);
        assert_eq!(uv.strategy_option.as_deref(), Some("--index-strategy"));
        assert_eq!(
            uv.strategy_named("unsafe-best-match"),
            Some(IndexStrategy::BestMatch)
        );
        assert_eq!(
            uv.strategy_named("\"unsafe-first-match\""),
            Some(IndexStrategy::FirstMatch)
        );
        // The old spelling of the default.
        assert_eq!(
            uv.strategy_named("first-match"),
            Some(IndexStrategy::FirstIndex)
        );
        assert_eq!(uv.strategy_named("best"), None);
        assert!(!uv.index_env.iter().any(|e| e.starts_with("PIP_")));
    }

    #[test]
    fn vllm_releases_name_the_torch_they_pin() {
        let k = Knowledge::embedded().unwrap().resolution;
        let torch = |release: &str| k.torch_pinned_by("vllm", v(release)).map(|t| t.0);
        assert_eq!(torch("0.6.3"), Some(v("2.4.0")));
        assert_eq!(torch("0.10.2"), Some(v("2.8.0")));
        // 0.11.0 and 0.11.1 pin different torch releases.
        assert_eq!(torch("0.11.0"), Some(v("2.8.0")));
        assert_eq!(torch("0.11.1"), Some(v("2.9.0")));
        // A release written as `major.minor` is its newest patch.
        assert_eq!(torch("0.11"), Some(v("2.9.0")));
        assert_eq!(torch("0.21.0"), None);
        assert_eq!(torch("0.2.7"), None);
        assert!(k.has_torch_pins("vLLM"));
        assert!(!k.has_torch_pins("xformers"));
        let (newest, _) = k.newest_release("ubuntu22.04", "vllm").unwrap();
        assert_eq!(torch(&newest.to_string()), Some(v("2.13.0")));
    }

    #[test]
    fn cupy_and_paddle_load_the_image_cuda() {
        let k = Knowledge::embedded().unwrap().resolution;
        let cupy = k
            .framework_build("cupy-cuda11x", Some(v("13.3.0")), false, None)
            .unwrap();
        assert_eq!(
            (cupy.cuda, cupy.release, cupy.entry.cudnn),
            (v("11"), None, None)
        );
        assert_eq!(cupy.entry.library(), "libcublas");
        // Every release, pinned or not, wherever the OS.
        assert_eq!(
            k.framework_build("cupy_cuda12x", None, true, None)
                .map(|b| b.cuda),
            Some(v("12"))
        );
        assert_eq!(
            k.framework_build("cupy-cuda118", None, false, None)
                .map(|b| b.cuda),
            Some(v("11.8"))
        );
        // CUDA 10 names their libraries by minor: not judged.
        assert!(k
            .framework_build("cupy-cuda102", None, true, None)
            .is_none());
        assert!(k.framework_build("cupy", None, true, None).is_none());
        let paddle = k
            .framework_build("paddlepaddle-gpu", Some(v("2.6.1")), false, None)
            .unwrap();
        assert_eq!((paddle.cuda, paddle.entry.cudnn), (v("11"), Some(8)));
        assert_eq!(paddle.entry.library(), "libcudart");
        // Paddle's own builds say their CUDA in the post number.
        assert_eq!(
            paddle.entry.labelled_cuda("2.6.1.post117"),
            Some((v("11.7"), ".post117".to_string()))
        );
        assert_eq!(paddle.entry.labelled_cuda("2.6.1"), None);
        let newest = k
            .framework_build("paddlepaddle-gpu", None, true, Some("ubuntu24.04"))
            .unwrap();
        assert_eq!(
            (newest.release, newest.newest.is_some()),
            (Some(v("2.6")), true)
        );
        // The newest-release rows of one OS are read together.
        assert_eq!(
            k.newest_release("ubuntu22.04", "torch").map(|n| n.0),
            Some(v("2.14"))
        );
        assert_eq!(
            k.newest_release("ubuntu22.04", "jax").map(|n| n.0),
            Some(v("0.6.2"))
        );
        assert!(k.newest_release("ubuntu20.04", "jax").is_none());
    }

    #[test]
    fn base_images_hold_only_the_runtime() {
        let k = Knowledge::embedded().unwrap().resolution;
        let base = k.base_variant_libraries.as_ref().unwrap();
        assert!(base.lacks("base", "libcublas"));
        assert!(!base.lacks("base", "libcudart"));
        assert!(!base.lacks("runtime", "libcublas"));
        assert!(base.provided_by("cuda-libraries-12-4"));
        assert!(base.provided_by("libcublas-12-4"));
        assert!(!base.provided_by("python3-pip"));
    }

    #[test]
    fn distribution_names_are_not_nvidias() {
        let k = Knowledge::embedded().unwrap().resolution;
        for name in [
            "libcupti-dev",
            "libcupti11.8",
            "libcudart11.0",
            "nvidia-cuda-toolkit",
            "libcublas12",
        ] {
            assert!(k.is_distro_cuda(name), "{name}");
        }
        for name in [
            "cuda-cupti-dev-12-4",
            "libcublas-12-4",
            "cuda-cudart-12-4",
            "libcudnn9-cuda-12",
            "libnccl2",
        ] {
            assert!(!k.is_distro_cuda(name), "{name}");
        }
    }
}
