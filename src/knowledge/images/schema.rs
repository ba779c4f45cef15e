//! The TOML shape of the `[images]` table, as written in `rules/images.toml`
//! and in `--knowledge` files. [`super::ImageKnowledge::from_raw`] checks it
//! and builds the typed view.

use crate::from_toml::FromToml;

use super::super::version::Version;

/// The `[images]` table as written.
#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct ImagesToml {
    #[toml(default)]
    pub policy: Option<PolicyToml>,
    #[toml(default)]
    pub variants: Vec<VariantToml>,
    #[toml(default)]
    pub cudnn: Option<SizeToml>,
    #[toml(default)]
    pub toolkit_dir: Option<ToolkitDirToml>,
    #[toml(default)]
    pub build_signals: Option<BuildSignalsToml>,
    #[toml(default)]
    pub devel_packages: Vec<PackagePatternToml>,
    #[toml(default)]
    pub mirrors: Vec<MirrorToml>,
    #[toml(default)]
    pub nvidia_cuda: Option<NvidiaCudaToml>,
    #[toml(default)]
    pub families: Vec<FamilyToml>,
    #[toml(default)]
    pub parent_env: Vec<ParentEnvToml>,
}

/// ENV that a known parent image sets in its own Dockerfile.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct ParentEnvToml {
    /// Canonical repository patterns (`registry.access.redhat.com/ubi*/python-*`).
    pub images: Vec<String>,
    pub env: std::collections::BTreeMap<String, String>,
    pub source: String,
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct PolicyToml {
    pub no_latest_tag: bool,
    pub only_latest_point_release_supported: bool,
    pub deletion_after_months: u32,
    pub source: String,
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct VariantToml {
    pub name: String,
    pub adds_mib: u64,
    pub contents: String,
    pub has_compiler: bool,
    pub has_cupti: bool,
    pub library_path_stubs: bool,
    pub source: String,
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct SizeToml {
    pub adds_mib: u64,
    pub source: String,
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct ToolkitDirToml {
    pub paths: Vec<String>,
    pub size_gb: f64,
    pub static_archives_mib: u64,
    pub source: String,
}

#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct BuildSignalsToml {
    #[toml(default)]
    pub commands: Vec<String>,
    #[toml(default)]
    pub python_scripts: Vec<String>,
    #[toml(default)]
    pub text: Vec<String>,
    #[toml(default)]
    pub env: Vec<String>,
    #[toml(default)]
    pub pip_source_flags: Vec<String>,
    #[toml(default)]
    pub pip_source_packages: Vec<String>,
    #[toml(default)]
    pub system_packages: Vec<String>,
    #[toml(default)]
    pub python_modules: Vec<String>,
    #[toml(default)]
    pub pip_subcommands: Vec<String>,
    #[toml(default)]
    pub source_installers: Vec<String>,
    #[toml(default)]
    pub helper_files: Vec<String>,
    #[toml(default)]
    pub runtime_compilers: Vec<String>,
    pub source: String,
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct PackagePatternToml {
    pub pattern: String,
    pub what: String,
    #[toml(default)]
    pub provides_cupti: bool,
    #[toml(default)]
    pub provides_ptxas: bool,
    pub source: String,
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct MirrorToml {
    pub prefix: String,
    pub upstream: String,
    pub source: String,
}

#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct NvidiaCudaToml {
    #[toml(default)]
    pub repositories: Vec<String>,
    #[toml(default)]
    pub source: Option<String>,
    #[toml(default)]
    pub releases: Vec<ReleaseToml>,
    #[toml(default)]
    pub version_env: Option<VersionEnvToml>,
}

/// The ENV in which NVIDIA's images carry the toolkit version of their tag.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct VersionEnvToml {
    pub name: String,
    pub source: String,
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct ReleaseToml {
    pub version: Version,
    pub status: String,
    #[toml(default)]
    pub eol_since: Option<String>,
    #[toml(default)]
    pub superseded_by: Option<Version>,
    #[toml(default = "default_true")]
    pub complete: bool,
    /// Tags of this release also existed without the OS (`10.0-devel`).
    #[toml(default)]
    pub os_optional: bool,
    /// OSes with no tags of this release at all, even where `published` is
    /// incomplete (Ubuntu 20.04 for 13.x: dropped by CUDA 13.0).
    #[toml(default)]
    pub unpublished_os: Vec<String>,
    #[toml(default)]
    pub published: Vec<PublishedToml>,
    pub source: String,
}

fn default_true() -> bool {
    true
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct PublishedToml {
    pub os: Vec<String>,
    pub tags: Vec<String>,
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct FamilyToml {
    pub name: String,
    pub repositories: Vec<String>,
    pub tag: String,
    #[toml(default)]
    pub variants: std::collections::BTreeMap<String, String>,
    #[toml(default)]
    pub variant: Option<String>,
    #[toml(default)]
    pub cupti_in: Option<Vec<String>>,
    #[toml(default)]
    pub compiler_in: Option<Vec<String>>,
    #[toml(default)]
    pub unknown: Vec<String>,
    #[toml(default)]
    pub validate: bool,
    pub source: String,
}
