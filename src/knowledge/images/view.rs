//! The typed view of the image knowledge: variants, releases, mirrors,
//! policy, and how a loaded table becomes [`ImageKnowledge`] and how a
//! `--knowledge` layer is merged over the built-in one.

use std::fmt;

use crate::from_toml::{FromToml, Node, TomlError};

use super::super::version::Version;
use super::family::{family_from_raw, Family};
use super::glob::glob_matches;
use super::schema::ImagesToml;
use super::tag::parse_cuda_tag;

/// Which layer of NVIDIA's image stack a tag is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    Base,
    Runtime,
    Devel,
}

impl Variant {
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::Base => "base",
            Variant::Runtime => "runtime",
            Variant::Devel => "devel",
        }
    }

    pub fn parse(text: &str) -> Option<Variant> {
        match text {
            "base" => Some(Variant::Base),
            "runtime" => Some(Variant::Runtime),
            "devel" => Some(Variant::Devel),
            _ => None,
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the knowledge says about a base image reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseImageFacts {
    /// The family that matched, e.g. `nvidia/cuda`, `pytorch/pytorch`,
    /// `nvcr.io/nvidia/pytorch`, or a user-declared family.
    pub family: String,
    /// The CUDA toolkit version the image ships, where known.
    pub cuda: Option<Version>,
    pub variant: Option<Variant>,
    /// cuDNN major version when the tag has one.
    pub cudnn: Option<u32>,
    pub os: Option<String>,
    /// CUPTI is in the image (devel variants).
    pub has_cupti: bool,
    /// nvcc and headers are in the image.
    pub has_compiler: bool,
    /// The image is devel-sized (devel variants, NGC framework images).
    pub devel_sized: bool,
    /// Where these facts come from.
    pub source: String,
    /// Facts above that the sources do not give (`cuda`, `has_cupti`,
    /// `has_compiler`): their values are permissive guesses, and no finding
    /// should rest on them.
    pub unknown: Vec<String>,
}

impl BaseImageFacts {
    /// Whether `fact` (`cuda`, `has_cupti`, `has_compiler`) is only a guess.
    pub fn is_unknown(&self, fact: &str) -> bool {
        self.unknown.iter().any(|u| u == fact)
    }
}

/// Facts about one layer of the nvidia/cuda stack.
#[derive(Clone, Debug, PartialEq)]
pub struct VariantInfo {
    pub variant: Variant,
    /// Uncompressed MiB this layer adds over the one below.
    pub adds_mib: u64,
    pub contents: String,
    pub has_compiler: bool,
    pub has_cupti: bool,
    /// `LIBRARY_PATH=/usr/local/cuda/lib64/stubs` is set.
    pub library_path_stubs: bool,
    pub source: String,
}

/// A size fact with its source.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeFact {
    pub mib: u64,
    pub source: String,
}

/// The toolkit directory of a devel image.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolkitDir {
    /// Path patterns (`#` = digits) naming the directory or a parent of it.
    pub paths: Vec<String>,
    pub size_gb: f64,
    pub static_archives_mib: u64,
    pub source: String,
}

impl ToolkitDir {
    /// The pattern that `path` (trailing slashes ignored) is, if any.
    pub fn matching(&self, path: &str) -> Option<&str> {
        let trimmed = path.trim_end_matches('/');
        let trimmed = if trimmed.is_empty() { path } else { trimmed };
        self.paths
            .iter()
            .find(|p| glob_matches(p, trimmed))
            .map(String::as_str)
    }
}

/// What in a stage says it builds native code.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BuildSignals {
    pub commands: Vec<String>,
    pub python_scripts: Vec<String>,
    pub text: Vec<String>,
    pub env: Vec<String>,
    pub pip_source_flags: Vec<String>,
    pub pip_source_packages: Vec<String>,
    /// System packages (apt, dnf…) that are a build toolchain.
    pub system_packages: Vec<String>,
    /// `python -m <module>` that builds a wheel from source.
    pub python_modules: Vec<String>,
    /// `pip <subcommand>` that builds (`pip wheel`).
    pub pip_subcommands: Vec<String>,
    /// `<program> <subcommand>` that compiles what it installs (`pyenv install`).
    pub source_installers: Vec<String>,
    /// Files copied from the build context that are helpers of the build
    /// (scripts, repository lists), not the application it ships (globs).
    pub helper_files: Vec<String>,
    /// pip packages (glob patterns) that compile CUDA code at run time
    /// with the toolkit's compiler or headers.
    pub runtime_compilers: Vec<String>,
    pub source: String,
}

/// A package-name pattern (`*` any run, `#` one or more digits).
#[derive(Clone, Debug, PartialEq)]
pub struct PackagePattern {
    pub pattern: String,
    pub what: String,
    /// NVIDIA's apt layout brings CUPTI (the library) with this package:
    /// an image that wants CUPTI has a reason to install it.
    pub provides_cupti: bool,
    /// The package carries `ptxas`: an image whose programs run it at run time (XLA) has a reason to
    /// install it.
    pub provides_ptxas: bool,
    pub source: String,
}

impl PackagePattern {
    pub fn matches(&self, package: &str) -> bool {
        glob_matches(&self.pattern, package)
    }
}

/// An internal registry path holding an upstream repository's images.
#[derive(Clone, Debug, PartialEq)]
pub struct Mirror {
    pub prefix: String,
    pub upstream: String,
    pub source: String,
}

/// The support state of a CUDA image release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleaseStatus {
    Supported,
    /// Still pullable, no more updates; deleted after the policy's months.
    Eol,
    /// Deleted from the registries.
    Removed,
}

impl ReleaseStatus {
    fn parse(text: &str) -> Option<ReleaseStatus> {
        match text {
            "supported" => Some(ReleaseStatus::Supported),
            "eol" => Some(ReleaseStatus::Eol),
            "removed" => Some(ReleaseStatus::Removed),
            _ => None,
        }
    }
}

/// OS names and the tag middles (`devel`, `cudnn-runtime`…) published for them.
#[derive(Clone, Debug, PartialEq)]
pub struct Published {
    pub os: Vec<String>,
    pub tags: Vec<String>,
}

/// One `nvidia/cuda` release.
#[derive(Clone, Debug, PartialEq)]
pub struct CudaRelease {
    pub version: Version,
    pub status: ReleaseStatus,
    pub eol_since: Option<String>,
    pub superseded_by: Option<Version>,
    /// Tags without the OS part (`10.0-devel`) were published too.
    pub os_optional: bool,
    /// OSes known to have no tags of this release.
    pub unpublished_os: Vec<String>,
    /// `published` lists every tag (else only those seen).
    pub complete: bool,
    pub published: Vec<Published>,
    pub source: String,
}

impl CudaRelease {
    /// Every OS with at least one published tag.
    pub fn os_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for group in &self.published {
            for os in &group.os {
                if !names.contains(&os.as_str()) {
                    names.push(os);
                }
            }
        }
        names
    }

    /// The tag middles published for `os`.
    pub fn middles_for(&self, os: &str) -> Vec<&str> {
        self.published
            .iter()
            .filter(|g| g.os.iter().any(|o| o == os))
            .flat_map(|g| g.tags.iter().map(String::as_str))
            .collect()
    }

    /// Whether `<version>-<middle>-<os>` is published. `None`: not known
    /// (the list is incomplete or empty).
    pub fn publishes(&self, middle: &str, os: &str) -> Option<bool> {
        if self.middles_for(os).contains(&middle) {
            return Some(true);
        }
        if self.unpublished_os.iter().any(|o| o == os) {
            return Some(false);
        }
        (self.complete && !self.published.is_empty()).then_some(false)
    }
}

/// ENV a family of parent images sets in its own Dockerfile: a stage built
/// `FROM` one of them runs with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParentEnv {
    /// Canonical repository patterns (`*` any run, `#` digits).
    pub images: Vec<String>,
    pub env: Vec<(String, String)>,
    pub source: String,
}

/// The support policy for nvidia/cuda images.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SupportPolicy {
    pub no_latest_tag: bool,
    pub only_latest_point_release_supported: bool,
    pub deletion_after_months: u32,
    pub source: String,
}

/// Base-image knowledge, loaded from `[images]` tables.
#[derive(Clone, Debug, Default)]
pub struct ImageKnowledge {
    pub policy: Option<SupportPolicy>,
    pub variants: Vec<VariantInfo>,
    pub cudnn: Option<SizeFact>,
    pub toolkit_dir: Option<ToolkitDir>,
    pub build_signals: BuildSignals,
    pub devel_packages: Vec<PackagePattern>,
    pub mirrors: Vec<Mirror>,
    /// Repositories (registry-qualified unless Docker Hub) with nvidia/cuda's tags.
    pub nvidia_cuda_repositories: Vec<String>,
    pub nvidia_cuda_source: String,
    /// The ENV (`CUDA_VERSION`) nvidia/cuda images set to their tag's
    /// toolkit version.
    pub nvidia_cuda_version_env: Option<String>,
    /// Newest first.
    pub releases: Vec<CudaRelease>,
    pub families: Vec<Family>,
    pub parent_env: Vec<ParentEnv>,
}

/// A reference to a base image, mirrors resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CanonicalImage {
    /// `nvidia/cuda`, `nvcr.io/nvidia/pytorch`, …
    pub repository: String,
    pub tag: Option<String>,
    /// The mirror prefix that was replaced, if any.
    pub via_mirror: Option<String>,
}

impl ImageKnowledge {
    /// Reads a whole knowledge document (taking its `[images]` table) or the table itself.
    pub fn from_area(node: &Node<'_>) -> Result<Self, TomlError> {
        let raw = ImagesToml::from_toml(crate::knowledge::area_table(node, "images"))?;
        Self::from_raw(raw).map_err(TomlError::unlocated)
    }

    /// Build from the table as read, checking what its reader cannot.
    pub fn from_raw(raw: ImagesToml) -> Result<Self, String> {
        let policy = raw.policy.map(|p| SupportPolicy {
            no_latest_tag: p.no_latest_tag,
            only_latest_point_release_supported: p.only_latest_point_release_supported,
            deletion_after_months: p.deletion_after_months,
            source: p.source,
        });
        let mut variants = Vec::new();
        for v in raw.variants {
            let variant = Variant::parse(&v.name).ok_or_else(|| {
                format!(
                    "images.variants: unknown variant `{}` (base, runtime, devel)",
                    v.name
                )
            })?;
            variants.push(VariantInfo {
                variant,
                adds_mib: v.adds_mib,
                contents: v.contents,
                has_compiler: v.has_compiler,
                has_cupti: v.has_cupti,
                library_path_stubs: v.library_path_stubs,
                source: v.source,
            });
        }
        let build_signals = raw
            .build_signals
            .map(|b| BuildSignals {
                commands: b.commands,
                python_scripts: b.python_scripts,
                text: b.text,
                env: b.env,
                pip_source_flags: b.pip_source_flags,
                pip_source_packages: b.pip_source_packages,
                system_packages: b.system_packages,
                python_modules: b.python_modules,
                pip_subcommands: b.pip_subcommands,
                source_installers: b.source_installers,
                helper_files: b.helper_files,
                runtime_compilers: b.runtime_compilers,
                source: b.source,
            })
            .unwrap_or_default();
        let mut releases = Vec::new();
        let version_env = raw
            .nvidia_cuda
            .as_ref()
            .and_then(|c| c.version_env.as_ref())
            .map(|v| v.name.clone());
        let (nvidia_cuda_repositories, nvidia_cuda_source) = match raw.nvidia_cuda {
            Some(cuda) => {
                for r in cuda.releases {
                    let status = ReleaseStatus::parse(&r.status).ok_or_else(|| {
                        format!(
                            "images.nvidia_cuda.releases {}: unknown status `{}` (supported, eol, removed)",
                            r.version, r.status
                        )
                    })?;
                    for group in &r.published {
                        for tag in &group.tags {
                            let probe = format!("{}-{tag}-ubuntu22.04", r.version);
                            let parsed = parse_cuda_tag(&probe).ok();
                            if parsed.and_then(|t| t.variant).is_none() {
                                return Err(format!(
                                    "images.nvidia_cuda.releases {}: `{tag}` is not a tag middle like `devel` or `cudnn-runtime`",
                                    r.version
                                ));
                            }
                        }
                    }
                    releases.push(CudaRelease {
                        version: r.version,
                        status,
                        eol_since: r.eol_since,
                        superseded_by: r.superseded_by,
                        os_optional: r.os_optional,
                        unpublished_os: r.unpublished_os,
                        complete: r.complete,
                        published: r
                            .published
                            .into_iter()
                            .map(|g| Published {
                                os: g.os,
                                tags: g.tags,
                            })
                            .collect(),
                        source: r.source,
                    });
                }
                (cuda.repositories, cuda.source.unwrap_or_default())
            }
            None => (Vec::new(), String::new()),
        };
        let mut families = Vec::new();
        for f in raw.families {
            families.push(family_from_raw(f)?);
        }
        let mut knowledge = ImageKnowledge {
            policy,
            variants,
            cudnn: raw.cudnn.map(|c| SizeFact {
                mib: c.adds_mib,
                source: c.source,
            }),
            toolkit_dir: raw.toolkit_dir.map(|t| ToolkitDir {
                paths: t.paths,
                size_gb: t.size_gb,
                static_archives_mib: t.static_archives_mib,
                source: t.source,
            }),
            build_signals,
            devel_packages: raw
                .devel_packages
                .into_iter()
                .map(|p| PackagePattern {
                    pattern: p.pattern,
                    what: p.what,
                    provides_cupti: p.provides_cupti,
                    provides_ptxas: p.provides_ptxas,
                    source: p.source,
                })
                .collect(),
            mirrors: raw
                .mirrors
                .into_iter()
                .map(|m| Mirror {
                    prefix: m.prefix.trim_end_matches('/').to_string(),
                    upstream: m.upstream.trim_end_matches('/').to_string(),
                    source: m.source,
                })
                .collect(),
            nvidia_cuda_repositories,
            nvidia_cuda_source,
            nvidia_cuda_version_env: version_env,
            releases,
            families,
            parent_env: raw
                .parent_env
                .into_iter()
                .map(|p| ParentEnv {
                    images: p.images,
                    env: p.env.into_iter().collect(),
                    source: p.source,
                })
                .collect(),
        };
        knowledge.sort_releases();
        Ok(knowledge)
    }

    /// Add `other`'s entries; entries with the same key (variant name,
    /// release version, family name, mirror prefix, package pattern, parent
    /// image patterns) replace ours, single tables (policy, sizes) are
    /// replaced when `other` has them.
    pub fn extend(&mut self, other: ImageKnowledge) {
        if other.policy.is_some() {
            self.policy = other.policy;
        }
        for v in other.variants {
            self.variants.retain(|mine| mine.variant != v.variant);
            self.variants.push(v);
        }
        if other.cudnn.is_some() {
            self.cudnn = other.cudnn;
        }
        if other.toolkit_dir.is_some() {
            self.toolkit_dir = other.toolkit_dir;
        }
        let signals = other.build_signals;
        if !signals.source.is_empty() {
            self.build_signals = signals;
        }
        for p in other.devel_packages {
            self.devel_packages.retain(|mine| mine.pattern != p.pattern);
            self.devel_packages.push(p);
        }
        for m in other.mirrors {
            self.mirrors.retain(|mine| mine.prefix != m.prefix);
            self.mirrors.push(m);
        }
        if !other.nvidia_cuda_source.is_empty() {
            self.nvidia_cuda_source = other.nvidia_cuda_source;
        }
        if other.nvidia_cuda_version_env.is_some() {
            self.nvidia_cuda_version_env = other.nvidia_cuda_version_env;
        }
        for repo in other.nvidia_cuda_repositories {
            if !self.nvidia_cuda_repositories.contains(&repo) {
                self.nvidia_cuda_repositories.push(repo);
            }
        }
        for r in other.releases {
            self.releases.retain(|mine| mine.version != r.version);
            self.releases.push(r);
        }
        self.sort_releases();
        for p in other.parent_env {
            self.parent_env.retain(|mine| mine.images != p.images);
            self.parent_env.push(p);
        }
        for f in other.families {
            self.families.retain(|mine| mine.name != f.name);
            // User families come first so they win over built-in ones for
            // the same repository.
            self.families.insert(0, f);
        }
    }

    fn sort_releases(&mut self) {
        self.releases.sort_by_key(|r| std::cmp::Reverse(r.version));
    }

    /// Facts about one variant of the nvidia/cuda stack.
    pub fn variant(&self, variant: Variant) -> Option<&VariantInfo> {
        self.variants.iter().find(|v| v.variant == variant)
    }

    /// The catalogue entry for exactly `version`.
    pub fn release(&self, version: Version) -> Option<&CudaRelease> {
        self.releases.iter().find(|r| r.version == version)
    }
}
