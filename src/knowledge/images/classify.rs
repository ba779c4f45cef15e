//! Looking an image reference up in the knowledge: registry defaults and
//! mirrors removed ([`ImageKnowledge::canonicalize`]), the facts of a base
//! ([`ImageKnowledge::classify`]), its runtime twin and devel packages.

use super::super::version::Version;
use super::family::Family;
use super::glob::glob_matches;
use super::tag::{parse_cuda_tag, CudaTag};
use super::view::{
    BaseImageFacts, CanonicalImage, ImageKnowledge, PackagePattern, ParentEnv, Variant, VariantInfo,
};
use crate::dockerfile::model::ImageRef;

const DOCKER_HUB_HOSTS: &[&str] = &["docker.io", "index.docker.io", "registry-1.docker.io"];

impl ImageKnowledge {
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

    pub(super) fn family_for(&self, repository: &str) -> Option<&Family> {
        self.families
            .iter()
            .find(|f| f.repositories.iter().any(|r| r == repository))
    }

    /// The ENV that `image`'s own Dockerfile sets, where the knowledge knows
    /// its family (`ubi9/python-311` sets `PIP_NO_CACHE_DIR=off`).
    pub fn parent_env(&self, image: &ImageRef) -> impl Iterator<Item = &ParentEnv> {
        let repository = self.canonicalize(image).repository;
        self.parent_env.iter().filter(move |known| {
            known
                .images
                .iter()
                .any(|pattern| glob_matches(pattern, &repository))
        })
    }

    /// The ENV `image`'s own Dockerfile sets, as far as the knowledge knows
    /// it: its family's [`Self::parent_env`], and `CUDA_VERSION` of an
    /// nvidia/cuda tag.
    pub fn image_env(&self, image: &ImageRef) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = self
            .parent_env(image)
            .flat_map(|known| known.env.iter().cloned())
            .collect();
        let canonical = self.canonicalize(image);
        if let Some(name) = &self.nvidia_cuda_version_env {
            let version = canonical
                .tag
                .as_deref()
                .filter(|_| self.is_nvidia_cuda(&canonical.repository))
                .and_then(|t| parse_cuda_tag(t).ok())
                .map(|t| t.version);
            if let Some(version) = version {
                env.push((name.clone(), version.to_string()));
            }
        }
        env
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
            has_cupti: info.is_none_or(|i| i.has_cupti),
            has_compiler: info.is_none_or(|i| i.has_compiler),
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
