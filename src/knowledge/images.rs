//! Base images: the `nvidia/cuda` tag grammar and catalogue, other CUDA base
//! families (`pytorch/pytorch`, NGC, user-declared ones), internal mirrors,
//! what each variant contains and weighs, and which packages make an image
//! devel-sized (`rules/images.toml`).
//!
//! The TOML shape is [`ImagesToml`]; [`ImageKnowledge::from_toml`] checks it
//! and builds the typed view the rules query: [`ImageKnowledge::classify`],
//! [`ImageKnowledge::validate_tag`], [`ImageKnowledge::eol`] and
//! [`ImageKnowledge::runtime_twin`].

use std::fmt;

use serde::Deserialize;

use super::version::Version;
use crate::dockerfile::model::ImageRef;

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

// ---------------------------------------------------------------------------
// The TOML shape of the `[images]` table.

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
    pub runtime_compilers: Vec<String>,
    pub source: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackagePatternToml {
    pub pattern: String,
    pub what: String,
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

// ---------------------------------------------------------------------------
// The typed view.

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
        (self.complete && !self.published.is_empty()).then_some(false)
    }
}

/// One piece of a family's tag template.
#[derive(Clone, Debug, PartialEq, Eq)]
enum TemplatePart {
    Literal(String),
    /// `cuda`, `cudnn`, `variant`, `os`, `release` or `*`.
    Slot(String),
}

const TEMPLATE_SLOTS: &[&str] = &["cuda", "cudnn", "variant", "os", "release", "*"];

/// A CUDA base-image family other than `nvidia/cuda`.
#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    pub name: String,
    pub repositories: Vec<String>,
    pub tag: String,
    template: Vec<TemplatePart>,
    /// Tag word → variant.
    pub variants: Vec<(String, Variant)>,
    /// The variant when the tag has no `{variant}`.
    pub variant: Option<Variant>,
    pub cupti_in: Option<Vec<Variant>>,
    pub compiler_in: Option<Vec<Variant>>,
    pub unknown: Vec<String>,
    /// CU130 checks tags of this family that start with a digit.
    pub validate: bool,
    pub source: String,
}

/// The values a family's template took from a tag.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TemplateMatch {
    pub cuda: Option<String>,
    pub cudnn: Option<String>,
    pub variant: Option<String>,
    pub os: Option<String>,
    pub release: Option<String>,
}

impl Family {
    /// Match `tag` against the template: each slot takes the text up to the
    /// next literal part (or the rest of the tag), and must not be empty.
    pub fn match_tag(&self, tag: &str) -> Option<TemplateMatch> {
        let mut found = TemplateMatch::default();
        let mut rest = tag;
        let mut parts = self.template.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                TemplatePart::Literal(literal) => rest = rest.strip_prefix(literal.as_str())?,
                TemplatePart::Slot(name) => {
                    let end = match parts.peek() {
                        Some(TemplatePart::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    let value = rest.get(..end)?;
                    if value.is_empty() {
                        return None;
                    }
                    rest = rest.get(end..)?;
                    let slot = match name.as_str() {
                        "cuda" => &mut found.cuda,
                        "cudnn" => &mut found.cudnn,
                        "variant" => &mut found.variant,
                        "os" => &mut found.os,
                        "release" => &mut found.release,
                        _ => continue,
                    };
                    *slot = Some(value.to_string());
                }
            }
        }
        rest.is_empty().then_some(found)
    }

    fn variant_of(&self, word: &str) -> Option<Variant> {
        self.variants
            .iter()
            .find(|(w, _)| w == word)
            .map(|&(_, v)| v)
    }

    fn has_slot(&self, slot: &str) -> bool {
        self.template
            .iter()
            .any(|p| matches!(p, TemplatePart::Slot(s) if s == slot))
    }
}

/// A problem with an image tag: the tag cannot exist in the registry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TagProblem {
    /// No tag at all: Docker pulls `latest`.
    NoTag,
    /// `latest`, which the repository does not publish.
    Latest,
    /// The tag does not have the family's form.
    Malformed { reason: String, expected: String },
    /// No `base`/`runtime`/`devel` part.
    MissingVariant,
    /// A word where the variant belongs that is not one.
    UnknownVariant { word: String, known: Vec<String> },
    /// No OS part.
    MissingOs,
    /// The release exists but not for this OS.
    OsNotPublished {
        version: String,
        os: String,
        published: Vec<String>,
    },
    /// The release and OS exist, but not this variant form (`cudnn8-devel`
    /// where the release has `cudnn-devel`).
    VariantNotPublished {
        version: String,
        os: String,
        middle: String,
        published: Vec<String>,
    },
    /// No release of this major.minor was ever published.
    VersionNotPublished { version: String },
}

impl fmt::Display for TagProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TagProblem::NoTag => {
                f.write_str("has no tag, so Docker pulls `latest`, which is not published")
            }
            TagProblem::Latest => f.write_str("uses `latest`, which is not published"),
            TagProblem::Malformed { reason, expected } => {
                write!(f, "{reason} (expected `{expected}`)")
            }
            TagProblem::MissingVariant => {
                f.write_str("names no variant (`base`, `runtime` or `devel`)")
            }
            TagProblem::UnknownVariant { word, known } => {
                write!(
                    f,
                    "has `{word}` where the variant belongs (known: {})",
                    known.join(", ")
                )
            }
            TagProblem::MissingOs => f.write_str("names no OS (e.g. `ubuntu22.04`)"),
            TagProblem::OsNotPublished {
                version,
                os,
                published,
            } => write!(
                f,
                "has no `{os}` images for CUDA {version} (published: {})",
                published.join(", ")
            ),
            TagProblem::VariantNotPublished {
                version,
                os,
                middle,
                published,
            } => write!(
                f,
                "has no `{middle}` variant for CUDA {version} on {os} (published: {})",
                published.join(", ")
            ),
            TagProblem::VersionNotPublished { version } => {
                write!(
                    f,
                    "names CUDA {version}, which was never published as an image"
                )
            }
        }
    }
}

/// An `nvidia/cuda` tag split into its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaTag {
    pub version: Version,
    /// `cudnn`, `cudnn8`, `cudnn9`, `tensorrt`, when present.
    pub flavour: Option<String>,
    pub variant: Option<Variant>,
    pub os: Option<String>,
}

impl CudaTag {
    /// The part between version and OS, e.g. `cudnn-devel`.
    pub fn middle(&self) -> Option<String> {
        let variant = self.variant?;
        Some(match &self.flavour {
            Some(flavour) => format!("{flavour}-{variant}"),
            None => variant.as_str().to_string(),
        })
    }

    /// The cuDNN major the tag names (`cudnn8` → 8). `cudnn` alone names none.
    pub fn cudnn_major(&self) -> Option<u32> {
        self.flavour
            .as_deref()
            .and_then(|f| f.strip_prefix("cudnn"))
            .and_then(|n| n.parse().ok())
    }
}

const CUDA_TAG_FORM: &str = "X.Y.Z-[cudnn-]{base,runtime,devel}-<os>";

/// Split an `nvidia/cuda` tag (`12.4.1-cudnn-devel-ubuntu22.04`). Missing
/// variant or OS are left `None` for the caller to report; words that fit no
/// slot are errors.
pub fn parse_cuda_tag(tag: &str) -> Result<CudaTag, TagProblem> {
    let mut words: Vec<&str> = tag.split('-').collect();
    let version_word = if words.is_empty() {
        ""
    } else {
        words.remove(0)
    };
    let version = Version::parse(version_word).ok_or_else(|| TagProblem::Malformed {
        reason: format!("does not start with a CUDA version (`{version_word}`)"),
        expected: CUDA_TAG_FORM.into(),
    })?;
    if words.iter().any(|w| w.is_empty()) {
        return Err(TagProblem::Malformed {
            reason: "has an empty part between dashes".into(),
            expected: CUDA_TAG_FORM.into(),
        });
    }
    let os = match words.last() {
        Some(last) if looks_like_os(last) => words.pop().map(str::to_string),
        _ => None,
    };
    let variant = match words.last().and_then(|w| Variant::parse(w)) {
        Some(variant) => {
            words.pop();
            Some(variant)
        }
        None => None,
    };
    let mut flavour = None;
    for word in words {
        if Variant::parse(word).is_some() {
            return Err(TagProblem::Malformed {
                reason: format!("has `{word}` out of place"),
                expected: CUDA_TAG_FORM.into(),
            });
        }
        if flavour.is_none() && is_flavour(word) {
            flavour = Some(word.to_string());
            continue;
        }
        return Err(TagProblem::UnknownVariant {
            word: word.to_string(),
            known: ["base", "runtime", "devel", "cudnn-runtime", "cudnn-devel"]
                .map(String::from)
                .to_vec(),
        });
    }
    Ok(CudaTag {
        version,
        flavour,
        variant,
        os,
    })
}

/// `ubuntu22.04`, `ubi9`, `rockylinux9`, `amzn2023`, `cm2`: letters then a number.
fn looks_like_os(word: &str) -> bool {
    let letters = word.bytes().take_while(u8::is_ascii_lowercase).count();
    let rest = word.get(letters..).unwrap_or("");
    letters > 0
        && !rest.is_empty()
        && rest.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && !is_flavour(word)
}

fn is_flavour(word: &str) -> bool {
    word == "tensorrt"
        || word
            .strip_prefix("cudnn")
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether the EOL state comes straight from the data or from the policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EolBasis {
    /// The release's own catalogue entry.
    Catalogue,
    /// A later point release of the same major.minor exists, and only the
    /// latest one is supported.
    Superseded { by: Version },
    /// Older than every catalogued release.
    OlderThanCatalogue,
}

/// The EOL state of a CUDA image release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EolInfo {
    pub version: Version,
    pub status: ReleaseStatus,
    pub since: Option<String>,
    pub basis: EolBasis,
    /// Supported releases of the same major (else any), newest first.
    pub supported_alternatives: Vec<Version>,
    /// Months after EOL until tags are deleted.
    pub deletion_after_months: Option<u32>,
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
    /// Newest first.
    pub releases: Vec<CudaRelease>,
    pub families: Vec<Family>,
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

const DOCKER_HUB_HOSTS: &[&str] = &["docker.io", "index.docker.io", "registry-1.docker.io"];

impl ImageKnowledge {
    /// Build from a `toml::Value` holding the `[images]` table.
    pub fn from_toml(value: toml::Value) -> Result<Self, String> {
        let raw = ImagesToml::deserialize(value).map_err(|e| e.to_string())?;
        Self::from_raw(raw)
    }

    /// Build from the deserialized table, checking what serde cannot.
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
                runtime_compilers: b.runtime_compilers,
                source: b.source,
            })
            .unwrap_or_default();
        let mut releases = Vec::new();
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
            releases,
            families,
        };
        knowledge.sort_releases();
        Ok(knowledge)
    }

    /// Add `other`'s entries; entries with the same key (variant name,
    /// release version, family name, mirror prefix, package pattern) replace
    /// ours, single tables (policy, sizes) are replaced when `other` has them.
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

    /// `image` with registry defaults removed and mirrors mapped to upstream.
    pub fn canonicalize(&self, image: &ImageRef) -> CanonicalImage {
        let repository = image
            .repository
            .strip_prefix("library/")
            .unwrap_or(&image.repository);
        let full = match image.registry.as_deref() {
            Some(host) if !DOCKER_HUB_HOSTS.contains(&host.to_ascii_lowercase().as_str()) => {
                format!("{}/{}", host.to_ascii_lowercase(), repository)
            }
            _ => repository.to_string(),
        };
        for mirror in &self.mirrors {
            if let Some(rest) = strip_path_prefix(&full, &mirror.prefix) {
                let upstream = match (mirror.upstream.is_empty(), rest.is_empty()) {
                    (true, _) => rest.to_string(),
                    (false, true) => mirror.upstream.clone(),
                    (false, false) => format!("{}/{}", mirror.upstream, rest),
                };
                let upstream = upstream
                    .strip_prefix("library/")
                    .map(str::to_string)
                    .unwrap_or(upstream);
                return CanonicalImage {
                    repository: upstream,
                    tag: image.tag.clone(),
                    via_mirror: Some(mirror.prefix.clone()),
                };
            }
        }
        CanonicalImage {
            repository: full,
            tag: image.tag.clone(),
            via_mirror: None,
        }
    }

    /// Whether `repository` (canonical) carries nvidia/cuda's tags.
    pub fn is_nvidia_cuda(&self, repository: &str) -> bool {
        self.nvidia_cuda_repositories
            .iter()
            .any(|r| r == repository)
    }

    fn family_for(&self, repository: &str) -> Option<&Family> {
        self.families
            .iter()
            .find(|f| f.repositories.iter().any(|r| r == repository))
    }

    /// Facts about `image`, or `None` when it is not a known CUDA base.
    pub fn classify(&self, image: &ImageRef) -> Option<BaseImageFacts> {
        let canonical = self.canonicalize(image);
        if self.is_nvidia_cuda(&canonical.repository) {
            return Some(self.classify_cuda(&canonical));
        }
        let family = self.family_for(&canonical.repository)?;
        Some(self.classify_family(family, canonical.tag.as_deref()))
    }

    fn classify_cuda(&self, canonical: &CanonicalImage) -> BaseImageFacts {
        let parsed = canonical
            .tag
            .as_deref()
            .and_then(|t| parse_cuda_tag(t).ok());
        let variant = parsed.as_ref().and_then(|t| t.variant);
        let info = variant.and_then(|v| self.variant(v));
        let mut unknown = Vec::new();
        if parsed.is_none() {
            unknown.push("cuda".to_string());
        }
        if info.is_none() {
            unknown.extend(["has_cupti".to_string(), "has_compiler".to_string()]);
        }
        let source = match info {
            Some(info) => info.source.clone(),
            None => self.nvidia_cuda_source.clone(),
        };
        BaseImageFacts {
            family: "nvidia/cuda".into(),
            cuda: parsed.as_ref().map(|t| t.version),
            variant,
            cudnn: parsed.as_ref().and_then(CudaTag::cudnn_major),
            os: parsed.as_ref().and_then(|t| t.os.clone()),
            has_cupti: info.map_or(true, |i| i.has_cupti),
            has_compiler: info.map_or(true, |i| i.has_compiler),
            devel_sized: variant == Some(Variant::Devel),
            source,
            unknown,
        }
    }

    fn classify_family(&self, family: &Family, tag: Option<&str>) -> BaseImageFacts {
        let found = tag.and_then(|t| family.match_tag(t)).unwrap_or_default();
        let variant = found
            .variant
            .as_deref()
            .and_then(|w| family.variant_of(w))
            .or(family.variant);
        let cuda = found.cuda.as_deref().and_then(Version::parse);
        let mut unknown = family.unknown.clone();
        if cuda.is_none() && !unknown.iter().any(|u| u == "cuda") {
            unknown.push("cuda".into());
        }
        let from_list = |list: &Option<Vec<Variant>>, default: fn(&VariantInfo) -> bool| match (
            list, variant,
        ) {
            (Some(list), Some(v)) => Some(list.contains(&v)),
            (None, Some(v)) => self.variant(v).map(default),
            _ => None,
        };
        let cupti = from_list(&family.cupti_in, |i| i.has_cupti);
        let compiler = from_list(&family.compiler_in, |i| i.has_compiler);
        for (name, value) in [("has_cupti", cupti), ("has_compiler", compiler)] {
            if value.is_none() && !unknown.iter().any(|u| u == name) {
                unknown.push(name.into());
            }
        }
        let is_unknown = |name: &str| unknown.iter().any(|u| u == name);
        BaseImageFacts {
            family: family.name.clone(),
            cuda,
            variant,
            cudnn: found.cudnn.as_deref().and_then(|n| n.parse().ok()),
            os: found.os,
            // Unknown facts are permissive: present.
            has_cupti: is_unknown("has_cupti") || cupti.unwrap_or(true),
            has_compiler: is_unknown("has_compiler") || compiler.unwrap_or(true),
            devel_sized: variant == Some(Variant::Devel),
            source: family.source.clone(),
            unknown,
        }
    }

    /// Problems that make `image`'s tag impossible, for nvidia/cuda and for
    /// families marked `validate`. Empty when the tag may exist or the image
    /// is not one the knowledge checks.
    pub fn validate_tag(&self, image: &ImageRef) -> Vec<TagProblem> {
        let canonical = self.canonicalize(image);
        if self.is_nvidia_cuda(&canonical.repository) {
            return self.validate_cuda_tag(canonical.tag.as_deref(), image.digest.is_some());
        }
        match self.family_for(&canonical.repository) {
            Some(family) if family.validate => {
                validate_family_tag(family, canonical.tag.as_deref())
            }
            _ => Vec::new(),
        }
    }

    fn validate_cuda_tag(&self, tag: Option<&str>, has_digest: bool) -> Vec<TagProblem> {
        let no_latest = self.policy.as_ref().is_some_and(|p| p.no_latest_tag);
        let tag = match tag {
            // `image@sha256:…` pulls by digest: the missing tag is fine.
            None if has_digest => return Vec::new(),
            None if no_latest => return vec![TagProblem::NoTag],
            None => return Vec::new(),
            Some(tag) => tag,
        };
        if tag == "latest" {
            return if no_latest {
                vec![TagProblem::Latest]
            } else {
                Vec::new()
            };
        }
        let parsed = match parse_cuda_tag(tag) {
            Ok(parsed) => parsed,
            Err(problem) => return vec![problem],
        };
        let mut problems = Vec::new();
        if parsed.variant.is_none() {
            problems.push(TagProblem::MissingVariant);
        }
        if parsed.os.is_none() {
            problems.push(TagProblem::MissingOs);
        }
        if !problems.is_empty() {
            return problems;
        }
        match self.release(parsed.version) {
            Some(release) => {
                let (Some(os), Some(middle)) = (parsed.os.as_deref(), parsed.middle()) else {
                    return problems;
                };
                if release.publishes(&middle, os) != Some(false) {
                    return problems;
                }
                let os_names = release.os_names();
                if os_names.contains(&os) {
                    problems.push(TagProblem::VariantNotPublished {
                        version: release.version.to_string(),
                        os: os.to_string(),
                        middle,
                        published: release
                            .middles_for(os)
                            .into_iter()
                            .map(String::from)
                            .collect(),
                    });
                } else {
                    problems.push(TagProblem::OsNotPublished {
                        version: release.version.to_string(),
                        os: os.to_string(),
                        published: os_names.into_iter().map(String::from).collect(),
                    });
                }
            }
            None if self.major_minor_never_published(parsed.version) => {
                problems.push(TagProblem::VersionNotPublished {
                    version: parsed.version.to_string(),
                });
            }
            None => {}
        }
        problems
    }

    /// A major.minor with no catalogued release, lying between catalogued
    /// ones (`12.7`, `10.3`). Versions newer than the catalogue are unknown,
    /// not wrong.
    fn major_minor_never_published(&self, version: Version) -> bool {
        let wanted = version.major_minor();
        let known = |v: Version| v.major_minor() == wanted;
        if self.releases.iter().any(|r| known(r.version)) {
            return false;
        }
        let newest = self.releases.first().map(|r| r.version.major_minor());
        let oldest = self.releases.last().map(|r| r.version.major_minor());
        matches!((oldest, newest), (Some(lo), Some(hi)) if lo < wanted && wanted < hi)
    }

    /// The EOL state of the CUDA release `version`, or `None` when it is
    /// supported or unknown (newer than the catalogue).
    pub fn eol(&self, version: Version) -> Option<EolInfo> {
        let deletion_after_months = self.policy.as_ref().map(|p| p.deletion_after_months);
        let alternatives = self.supported_alternatives(version);
        if let Some(release) = self.release(version) {
            if release.status == ReleaseStatus::Supported {
                return None;
            }
            let basis = match release.superseded_by {
                Some(by) => EolBasis::Superseded { by },
                None => EolBasis::Catalogue,
            };
            return Some(EolInfo {
                version,
                status: release.status,
                since: release.eol_since.clone(),
                basis,
                supported_alternatives: alternatives,
                deletion_after_months,
                source: release.source.clone(),
            });
        }
        let policy = self.policy.as_ref()?;
        let newer_point = self
            .releases
            .iter()
            .filter(|r| r.version.major_minor() == version.major_minor() && r.version > version)
            .map(|r| r.version)
            .max();
        if let (true, Some(by)) = (policy.only_latest_point_release_supported, newer_point) {
            return Some(EolInfo {
                version,
                status: ReleaseStatus::Eol,
                since: None,
                basis: EolBasis::Superseded { by },
                supported_alternatives: alternatives,
                deletion_after_months,
                source: policy.source.clone(),
            });
        }
        let oldest = self.releases.last()?;
        (version < oldest.version && oldest.status == ReleaseStatus::Removed).then(|| EolInfo {
            version,
            status: ReleaseStatus::Removed,
            since: None,
            basis: EolBasis::OlderThanCatalogue,
            supported_alternatives: alternatives,
            deletion_after_months,
            source: oldest.source.clone(),
        })
    }

    fn supported_alternatives(&self, version: Version) -> Vec<Version> {
        let supported: Vec<Version> = self
            .releases
            .iter()
            .filter(|r| r.status == ReleaseStatus::Supported)
            .map(|r| r.version)
            .collect();
        let same_major: Vec<Version> = supported
            .iter()
            .copied()
            .filter(|v| v.major() == version.major())
            .collect();
        if same_major.is_empty() {
            supported
        } else {
            same_major
        }
    }

    /// The runtime tag matching an nvidia/cuda devel tag
    /// (`12.4.1-cudnn-devel-ubuntu22.04` → `12.4.1-cudnn-runtime-ubuntu22.04`),
    /// only when the catalogue says that runtime tag is published.
    pub fn runtime_twin(&self, tag: &str) -> Option<String> {
        let parsed = parse_cuda_tag(tag).ok()?;
        if parsed.variant != Some(Variant::Devel) {
            return None;
        }
        let twin = CudaTag {
            variant: Some(Variant::Runtime),
            ..parsed.clone()
        };
        let middle = twin.middle()?;
        let os = twin.os.as_deref()?;
        let release = self.release(parsed.version)?;
        if release.publishes(&middle, os) != Some(true) {
            return None;
        }
        Some(format!("{}-{middle}-{os}", version_as_written(tag)))
    }

    /// Uncompressed MiB saved by moving from devel to runtime.
    pub fn devel_over_runtime_mib(&self) -> Option<(u64, &str)> {
        self.variant(Variant::Devel)
            .map(|v| (v.adds_mib, v.source.as_str()))
    }

    /// The devel package pattern `package` matches. Version pins
    /// (`pkg=1.2-1`, `pkg-12.4.1-1` rpm style) are stripped first.
    pub fn devel_package(&self, package: &str) -> Option<&PackagePattern> {
        let name = package.split('=').next().unwrap_or(package);
        let name = strip_rpm_version(name);
        self.devel_packages.iter().find(|p| p.matches(name))
    }
}

/// The version text of a tag as written (`12.4.1` from `12.4.1-devel-…`).
fn version_as_written(tag: &str) -> &str {
    tag.split('-').next().unwrap_or(tag)
}

/// `cuda-toolkit-12-4-12.4.1-1` → `cuda-toolkit-12-4`: drop a trailing
/// `-<dotted version>[-release]` that dnf accepts as a pin.
fn strip_rpm_version(name: &str) -> &str {
    let mut cut = name.len();
    let mut rest = name;
    // At most two trailing parts (version, release) are removed.
    for _ in 0..2 {
        let Some(dash) = rest.rfind('-') else { break };
        let tail = rest.get(dash + 1..).unwrap_or("");
        if tail.contains('.')
            && tail
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b'.' || b == b'_')
        {
            cut = dash;
            rest = rest.get(..dash).unwrap_or("");
        } else if cut != name.len() || !tail.bytes().all(|b| b.is_ascii_digit()) {
            break;
        } else {
            // A bare release number only counts after a version part.
            let before = rest.get(..dash).unwrap_or("");
            let prev_tail = before.rsplit('-').next().unwrap_or("");
            if prev_tail.contains('.') {
                cut = dash;
                rest = before;
            } else {
                break;
            }
        }
    }
    name.get(..cut).unwrap_or(name)
}

fn strip_path_prefix<'a>(path: &'a str, prefix: &str) -> Option<&'a str> {
    if prefix.is_empty() {
        return None;
    }
    let rest = path.strip_prefix(prefix)?;
    if rest.is_empty() {
        Some(rest)
    } else {
        rest.strip_prefix('/')
    }
}

fn family_from_raw(f: FamilyToml) -> Result<Family, String> {
    let template =
        parse_template(&f.tag).map_err(|e| format!("images.families `{}`: {e}", f.name))?;
    let mut variants = Vec::new();
    for (word, name) in &f.variants {
        let variant = Variant::parse(name).ok_or_else(|| {
            format!(
                "images.families `{}`: unknown variant `{name}` for `{word}`",
                f.name
            )
        })?;
        variants.push((word.clone(), variant));
    }
    let parse_list =
        |list: &Option<Vec<String>>, key: &str| -> Result<Option<Vec<Variant>>, String> {
            list.as_ref()
                .map(|names| {
                    names
                        .iter()
                        .map(|n| {
                            Variant::parse(n).ok_or_else(|| {
                                format!(
                                    "images.families `{}`: unknown variant `{n}` in {key}",
                                    f.name
                                )
                            })
                        })
                        .collect()
                })
                .transpose()
        };
    let variant = match &f.variant {
        Some(name) => Some(
            Variant::parse(name)
                .ok_or_else(|| format!("images.families `{}`: unknown variant `{name}`", f.name))?,
        ),
        None => None,
    };
    for fact in &f.unknown {
        if !["cuda", "has_cupti", "has_compiler"].contains(&fact.as_str()) {
            return Err(format!(
                "images.families `{}`: unknown fact `{fact}` (cuda, has_cupti, has_compiler)",
                f.name
            ));
        }
    }
    let family = Family {
        cupti_in: parse_list(&f.cupti_in, "cupti_in")?,
        compiler_in: parse_list(&f.compiler_in, "compiler_in")?,
        name: f.name,
        repositories: f
            .repositories
            .iter()
            .map(|r| r.trim_end_matches('/').to_string())
            .collect(),
        tag: f.tag,
        template,
        variants,
        variant,
        unknown: f.unknown,
        validate: f.validate,
        source: f.source,
    };
    if family.has_slot("variant") && family.variants.is_empty() {
        return Err(format!(
            "images.families `{}`: the tag has `{{variant}}` but `variants` maps no words",
            family.name
        ));
    }
    Ok(family)
}

fn parse_template(text: &str) -> Result<Vec<TemplatePart>, String> {
    let mut parts = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        match rest.find('{') {
            Some(0) => {
                let close = rest.find('}').ok_or("unclosed `{` in tag template")?;
                let name = rest.get(1..close).unwrap_or("");
                if !TEMPLATE_SLOTS.contains(&name) {
                    return Err(format!(
                        "unknown placeholder `{{{name}}}` (known: {})",
                        TEMPLATE_SLOTS.join(", ")
                    ));
                }
                if matches!(parts.last(), Some(TemplatePart::Slot(_))) {
                    return Err("two placeholders need literal text between them".into());
                }
                parts.push(TemplatePart::Slot(name.to_string()));
                rest = rest.get(close + 1..).unwrap_or("");
            }
            Some(open) => {
                parts.push(TemplatePart::Literal(
                    rest.get(..open).unwrap_or("").to_string(),
                ));
                rest = rest.get(open..).unwrap_or("");
            }
            None => {
                parts.push(TemplatePart::Literal(rest.to_string()));
                rest = "";
            }
        }
    }
    Ok(parts)
}

fn validate_family_tag(family: &Family, tag: Option<&str>) -> Vec<TagProblem> {
    // Named tags (`latest`, `nightly`) are left alone: only version-shaped
    // tags are checked against the template.
    let Some(tag) = tag.filter(|t| t.starts_with(|c: char| c.is_ascii_digit())) else {
        return Vec::new();
    };
    let Some(found) = family.match_tag(tag) else {
        return vec![TagProblem::Malformed {
            reason: format!("does not have the form of {} tags", family.name),
            expected: family.tag.clone(),
        }];
    };
    let mut problems = Vec::new();
    if let Some(word) = found.variant {
        if family.variant_of(&word).is_none() {
            problems.push(TagProblem::UnknownVariant {
                word,
                known: family.variants.iter().map(|(w, _)| w.clone()).collect(),
            });
        }
    }
    if let Some(cuda) = found.cuda {
        if Version::parse(&cuda).is_none() {
            problems.push(TagProblem::Malformed {
                reason: format!("has `{cuda}` where the CUDA version belongs"),
                expected: family.tag.clone(),
            });
        }
    }
    problems
}

/// Glob match: `*` matches any run of characters, `#` one or more ASCII
/// digits, everything else itself. Dynamic programming over both strings,
/// so O(pattern × text) with no backtracking blow-up.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // reach[j]: the pattern prefix read so far matches text[..j].
    let mut reach = vec![false; t.len() + 1];
    reach[0] = true;
    for &pc in &p {
        let mut next = vec![false; t.len() + 1];
        match pc {
            '*' => {
                let mut any = false;
                for j in 0..=t.len() {
                    any |= reach[j];
                    next[j] = any;
                }
            }
            '#' => {
                for j in 0..t.len() {
                    if t[j].is_ascii_digit() && (reach[j] || next[j]) {
                        next[j + 1] = true;
                    }
                }
            }
            c => {
                for j in 0..t.len() {
                    if reach[j] && t[j] == c {
                        next[j + 1] = true;
                    }
                }
            }
        }
        reach = next;
    }
    reach[t.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_and_cudnn_tags() {
        let t = parse_cuda_tag("12.4.1-cudnn-devel-ubuntu22.04").unwrap();
        assert_eq!(t.version, Version::new(12, 4, 1));
        assert_eq!(t.flavour.as_deref(), Some("cudnn"));
        assert_eq!(t.variant, Some(Variant::Devel));
        assert_eq!(t.os.as_deref(), Some("ubuntu22.04"));
        assert_eq!(t.middle().as_deref(), Some("cudnn-devel"));
        assert_eq!(t.cudnn_major(), None);

        let t = parse_cuda_tag("11.8.0-cudnn8-runtime-ubi8").unwrap();
        assert_eq!(t.cudnn_major(), Some(8));
        assert_eq!(t.os.as_deref(), Some("ubi8"));

        let t = parse_cuda_tag("13.0.0-base-rockylinux10").unwrap();
        assert_eq!(t.variant, Some(Variant::Base));
        assert_eq!(t.flavour, None);

        // Two-part versions of the old tags.
        let t = parse_cuda_tag("10.2-cudnn7-devel-ubuntu18.04").unwrap();
        assert_eq!(t.version, Version::new(10, 2, 0));
    }

    #[test]
    fn reports_missing_and_unknown_parts() {
        let t = parse_cuda_tag("12.4.1-devel").unwrap();
        assert_eq!((t.variant, t.os), (Some(Variant::Devel), None));
        let t = parse_cuda_tag("12.4.1-ubuntu22.04").unwrap();
        assert_eq!(t.variant, None);
        assert!(matches!(
            parse_cuda_tag("12.4.1-dev-ubuntu22.04"),
            Err(TagProblem::UnknownVariant { word, .. }) if word == "dev"
        ));
        assert!(matches!(
            parse_cuda_tag("12.4.1-devel-cudnn-ubuntu22.04"),
            Err(TagProblem::Malformed { .. })
        ));
        assert!(matches!(
            parse_cuda_tag("devel-ubuntu22.04"),
            Err(TagProblem::Malformed { .. })
        ));
        assert!(matches!(
            parse_cuda_tag("12.4.1--devel-ubuntu22.04"),
            Err(TagProblem::Malformed { .. })
        ));
        assert!(matches!(
            parse_cuda_tag(""),
            Err(TagProblem::Malformed { .. })
        ));
    }

    #[test]
    fn globs() {
        assert!(glob_matches("cuda-#-#", "cuda-12-4"));
        assert!(!glob_matches("cuda-#-#", "cuda-compat-12-4"));
        assert!(!glob_matches("cuda-#-#", "cuda-12-"));
        assert!(glob_matches("libcudnn*-dev*", "libcudnn9-dev-cuda-12"));
        assert!(!glob_matches("libcudnn*-dev*", "libcurl4-openssl-dev"));
        assert!(glob_matches("/usr/local/cuda-#.#", "/usr/local/cuda-12.4"));
        assert!(glob_matches("*", ""));
        assert!(!glob_matches("a", ""));
    }

    #[test]
    fn strips_rpm_pins() {
        assert_eq!(
            strip_rpm_version("cuda-toolkit-12-4-12.4.1-1"),
            "cuda-toolkit-12-4"
        );
        assert_eq!(strip_rpm_version("cuda-toolkit-12-4"), "cuda-toolkit-12-4");
        assert_eq!(strip_rpm_version("cuda-12-4"), "cuda-12-4");
        assert_eq!(
            strip_rpm_version("libcudnn9-devel-cuda-12"),
            "libcudnn9-devel-cuda-12"
        );
    }

    #[test]
    fn templates_take_text_up_to_the_next_literal() {
        let raw = FamilyToml {
            name: "t".into(),
            repositories: vec!["pytorch/pytorch".into()],
            tag: "{*}-cuda{cuda}-cudnn{cudnn}-{variant}".into(),
            variants: [("runtime".to_string(), "runtime".to_string())].into(),
            variant: None,
            cupti_in: None,
            compiler_in: None,
            unknown: vec![],
            validate: true,
            source: "test".into(),
        };
        let family = family_from_raw(raw).unwrap();
        let m = family.match_tag("2.5.1-cuda12.4-cudnn9-runtime").unwrap();
        assert_eq!(m.cuda.as_deref(), Some("12.4"));
        assert_eq!(m.cudnn.as_deref(), Some("9"));
        assert_eq!(m.variant.as_deref(), Some("runtime"));
        assert_eq!(family.match_tag("2.5.1-cuda12.4-cudnn9"), None);
        assert!(parse_template("{cuda}{os}").is_err());
        assert!(parse_template("{cuda").is_err());
        assert!(parse_template("{nope}").is_err());
    }
}
