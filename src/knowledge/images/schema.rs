//! The TOML shape of the `[images]` table, as written in `rules/images.toml`
//! and in `--knowledge` files. [`super::ImageKnowledge::from_raw`] checks it
//! and builds the typed view.

use serde::Deserialize;

use super::super::version::Version;

/// The `[images]` table as written.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImagesToml {
    #[serde(default)]
    pub policy: Option<PolicyToml>,
    #[serde(default)]
    pub variants: Vec<VariantToml>,
    #[serde(default)]
    pub cudnn: Option<SizeToml>,
    #[serde(default)]
    pub toolkit_dir: Option<ToolkitDirToml>,
    #[serde(default)]
    pub build_signals: Option<BuildSignalsToml>,
    #[serde(default)]
    pub devel_packages: Vec<PackagePatternToml>,
    #[serde(default)]
    pub mirrors: Vec<MirrorToml>,
    #[serde(default)]
    pub nvidia_cuda: Option<NvidiaCudaToml>,
    #[serde(default)]
    pub families: Vec<FamilyToml>,
    #[serde(default)]
    pub parent_env: Vec<ParentEnvToml>,
}

/// ENV that a known parent image sets in its own Dockerfile.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParentEnvToml {
    /// Canonical repository patterns (`registry.access.redhat.com/ubi*/python-*`).
    pub images: Vec<String>,
    pub env: std::collections::BTreeMap<String, String>,
    pub source: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyToml {
    pub no_latest_tag: bool,
    pub only_latest_point_release_supported: bool,
    pub deletion_after_months: u32,
    pub source: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantToml {
    pub name: String,
    pub adds_mib: u64,
    pub contents: String,
    pub has_compiler: bool,
    pub has_cupti: bool,
    pub library_path_stubs: bool,
    pub source: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizeToml {
    pub adds_mib: u64,
    pub source: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolkitDirToml {
    pub paths: Vec<String>,
    pub size_gb: f64,
    pub static_archives_mib: u64,
    pub source: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildSignalsToml {
    #[serde(default)]
    pub commands: Vec<String>,
    #[serde(default)]
    pub python_scripts: Vec<String>,
    #[serde(default)]
    pub text: Vec<String>,
    #[serde(default)]
    pub env: Vec<String>,
    #[serde(default)]
    pub pip_source_flags: Vec<String>,
    #[serde(default)]
    pub pip_source_packages: Vec<String>,
    #[serde(default)]
    pub system_packages: Vec<String>,
    #[serde(default)]
    pub python_modules: Vec<String>,
    #[serde(default)]
    pub pip_subcommands: Vec<String>,
    #[serde(default)]
    pub source_installers: Vec<String>,
    #[serde(default)]
    pub helper_files: Vec<String>,
    #[serde(default)]
    pub runtime_compilers: Vec<String>,
    pub source: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackagePatternToml {
    pub pattern: String,
    pub what: String,
    #[serde(default)]
    pub provides_cupti: bool,
    #[serde(default)]
    pub provides_ptxas: bool,
    pub source: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MirrorToml {
    pub prefix: String,
    pub upstream: String,
    pub source: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NvidiaCudaToml {
    #[serde(default)]
    pub repositories: Vec<String>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub releases: Vec<ReleaseToml>,
    #[serde(default)]
    pub version_env: Option<VersionEnvToml>,
}

/// The ENV in which NVIDIA's images carry the toolkit version of their tag.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersionEnvToml {
    pub name: String,
    pub source: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReleaseToml {
    pub version: Version,
    pub status: String,
    #[serde(default)]
    pub eol_since: Option<String>,
    #[serde(default)]
    pub superseded_by: Option<Version>,
    #[serde(default = "default_true")]
    pub complete: bool,
    /// Tags of this release also existed without the OS (`10.0-devel`).
    #[serde(default)]
    pub os_optional: bool,
    /// OSes with no tags of this release at all, even where `published` is
    /// incomplete (Ubuntu 20.04 for 13.x: dropped by CUDA 13.0).
    #[serde(default)]
    pub unpublished_os: Vec<String>,
    #[serde(default)]
    pub published: Vec<PublishedToml>,
    pub source: String,
}

fn default_true() -> bool {
    true
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedToml {
    pub os: Vec<String>,
    pub tags: Vec<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilyToml {
    pub name: String,
    pub repositories: Vec<String>,
    pub tag: String,
    #[serde(default)]
    pub variants: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    pub variant: Option<String>,
    #[serde(default)]
    pub cupti_in: Option<Vec<String>>,
    #[serde(default)]
    pub compiler_in: Option<Vec<String>>,
    #[serde(default)]
    pub unknown: Vec<String>,
    #[serde(default)]
    pub validate: bool,
    pub source: String,
}
