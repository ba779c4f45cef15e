//! The `nvidia/cuda` tag grammar (`X.Y.Z-[cudnn-]{base,runtime,devel}-<os>`)
//! and the check of a tag against the catalogue
//! ([`ImageKnowledge::validate_tag`]): the problems that make a tag one the
//! registry never published.

use std::fmt;

use super::super::version::Version;
use super::family::validate_family_tag;
use super::view::{ImageKnowledge, Variant};
use crate::dockerfile::model::ImageRef;

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

impl ImageKnowledge {
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
        let os_optional = self.release(parsed.version).is_some_and(|r| r.os_optional);
        if parsed.os.is_none() && !os_optional {
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
    /// ones (`12.7`, `10.3`) or too far past the newest one (`13.9`). The
    /// next minor past the catalogue is unknown, not wrong.
    fn major_minor_never_published(&self, version: Version) -> bool {
        let wanted = version.major_minor();
        let known = |v: Version| v.major_minor() == wanted;
        if self.releases.iter().any(|r| known(r.version)) {
            return false;
        }
        let newest = self.releases.first().map(|r| r.version.major_minor());
        let oldest = self.releases.last().map(|r| r.version.major_minor());
        if matches!((oldest, newest), (Some(lo), Some(hi)) if lo < wanted && wanted < hi) {
            return true;
        }
        // Past the catalogue, only the next minor (or the next major's first
        // releases) can have appeared since the knowledge was checked; a
        // version further out (13.9 when 13.4 is the newest) is not published.
        match newest {
            Some(hi) if wanted.major() == hi.major() => wanted.minor() > hi.minor() + 1,
            Some(hi) => wanted.major() > hi.major() + 1,
            None => false,
        }
    }
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
}
