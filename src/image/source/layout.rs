//! Finding an image inside an archive or directory: Docker's `manifest.json` (legacy `docker save`, and
//! the one Docker 25+ writes beside its OCI layout) and the OCI image layout (`index.json` → manifest,
//! chosen by `org.opencontainers.image.ref.name` and platform). The result is a plan: the config
//! document and each layer's blob name with the digests it must hash to.

use std::collections::HashMap;

use anyhow::{bail, Context};
use serde::Deserialize;
use serde_json::Value;

use super::blobs::BlobStore;
use crate::image::layer::ExpectedDigests;

// The OCI image-spec documents, as far as a layout is read: the fields below, every other one
// ignored; a digest is checked where it is used (`blob_name`). oci-spec's types did this before, and
// that crate turned on the `regex` crate's default features: regex-syntax's Unicode tables, which no
// glob here uses (globset and ignore match bytes, `(?-u)`), made the release binary
// 437,568 bytes larger.

/// An image index (`index.json`, or a multi-platform index blob).
#[derive(Debug, Deserialize)]
struct ImageIndex {
    manifests: Vec<Descriptor>,
}

/// An image manifest: its config and layers.
#[derive(Debug, Deserialize)]
struct ImageManifest {
    config: Descriptor,
    layers: Vec<Descriptor>,
}

/// A content descriptor.
#[derive(Clone, Debug, Deserialize)]
struct Descriptor {
    #[serde(rename = "mediaType", default)]
    media_type: String,
    digest: String,
    #[serde(default)]
    platform: Option<DescriptorPlatform>,
    #[serde(default)]
    annotations: Option<HashMap<String, String>>,
}

/// A descriptor's `platform` in an image index, as OCI layouts and registries both write it.
#[derive(Clone, Debug, Deserialize)]
pub(super) struct DescriptorPlatform {
    pub(super) os: String,
    pub(super) architecture: String,
    #[serde(default)]
    pub(super) variant: Option<String>,
}

impl DescriptorPlatform {
    /// The platform `wanted` asks for: its os and architecture, and its variant when it names one.
    pub(super) fn matches(&self, wanted: &Platform) -> bool {
        self.os == wanted.os
            && self.architecture == wanted.architecture
            && (wanted.variant.is_none() || self.variant == wanted.variant)
    }

    /// An attestation manifest (`unknown/unknown`), never an image.
    pub(super) fn is_attestation(&self) -> bool {
        self.os == "unknown"
    }

    /// `os/arch[/variant]`, as `--platform` takes it.
    pub(super) fn text(&self) -> String {
        match &self.variant {
            Some(variant) => format!("{}/{}/{variant}", self.os, self.architecture),
            None => format!("{}/{}", self.os, self.architecture),
        }
    }
}

/// An image's config and layers, named in a blob store.
pub struct Plan {
    pub config: Vec<u8>,
    /// Blob names and expected digests, in manifest order (lowest layer first).
    pub layers: Vec<(String, ExpectedDigests)>,
}

/// `os/arch[/variant]`, as `--platform` takes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Platform {
    pub os: String,
    pub architecture: String,
    pub variant: Option<String>,
}

impl Platform {
    /// The platform this program runs on, in OCI's names.
    pub fn host() -> Platform {
        let architecture = match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            "powerpc64" => "ppc64le",
            other => other,
        };
        Platform {
            os: "linux".into(),
            architecture: architecture.into(),
            variant: None,
        }
    }

    pub fn parse(text: &str) -> anyhow::Result<Platform> {
        let parts: Vec<&str> = text.split('/').collect();
        match parts.as_slice() {
            [os, arch] if !os.is_empty() && !arch.is_empty() => Ok(Platform {
                os: os.to_string(),
                architecture: arch.to_string(),
                variant: None,
            }),
            [os, arch, variant] if !os.is_empty() && !arch.is_empty() => Ok(Platform {
                os: os.to_string(),
                architecture: arch.to_string(),
                variant: Some(variant.to_string()),
            }),
            _ => bail!("--platform {text}: expected os/arch or os/arch/variant (linux/amd64)"),
        }
    }
}

impl std::fmt::Display for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.os, self.architecture)?;
        if let Some(variant) = &self.variant {
            write!(f, "/{variant}")?;
        }
        Ok(())
    }
}

/// The blob name of a digest in an OCI layout (`blobs/sha256/<hex>`); refuses anything but hex.
pub fn blob_name(digest: &str) -> anyhow::Result<String> {
    let (algorithm, hex) = digest
        .split_once(':')
        .with_context(|| format!("{digest}: not a digest"))?;
    let valid = !algorithm.is_empty()
        && algorithm.chars().all(|c| c.is_ascii_alphanumeric())
        && !hex.is_empty()
        && hex.chars().all(|c| c.is_ascii_hexdigit());
    anyhow::ensure!(valid, "{digest}: not a digest");
    Ok(format!("blobs/{algorithm}/{hex}"))
}

/// A `docker save` archive: `manifest.json` when present (both layouts have it), else `index.json`.
pub fn docker_archive(
    store: &dyn BlobStore,
    tag: Option<&str>,
    platform: Option<&Platform>,
) -> anyhow::Result<Plan> {
    if !store.contains("manifest.json") {
        if store.contains("index.json") {
            return oci_layout(store, tag, platform);
        }
        bail!(
            "{}: neither manifest.json nor index.json: not a docker-archive",
            store.location()
        );
    }
    let manifest: Value = serde_json::from_slice(&store.read_document("manifest.json")?)
        .with_context(|| format!("{}: manifest.json is not valid JSON", store.location()))?;
    let images = manifest
        .as_array()
        .context("manifest.json is not a list of images")?;
    let image = match tag {
        Some(tag) => images
            .iter()
            .find(|image| {
                repo_tags(image)
                    .iter()
                    .any(|name| name == tag || name.ends_with(&format!(":{tag}")))
            })
            .with_context(|| {
                format!(
                    "{}: no image tagged {tag} (it has {})",
                    store.location(),
                    all_tags(images)
                )
            })?,
        None => match images.as_slice() {
            [image] => image,
            [] => bail!("{}: manifest.json lists no image", store.location()),
            _ => bail!(
                "{}: holds several images ({}): name one as docker-archive:PATH:TAG",
                store.location(),
                all_tags(images)
            ),
        },
    };
    let config_name = image
        .get("Config")
        .and_then(Value::as_str)
        .context("manifest.json: the image has no Config")?;
    let config = store
        .read_document(config_name)
        .with_context(|| format!("{}: the config {config_name} is missing", store.location()))?;
    let diff_ids = crate::image::config::ImageConfig::from_json(&config)?.diff_ids;
    let names: Vec<String> = image
        .get("Layers")
        .and_then(Value::as_array)
        .context("manifest.json: the image has no Layers")?
        .iter()
        .map(|layer| {
            layer
                .as_str()
                .map(str::to_string)
                .context("manifest.json: a layer name is not a string")
        })
        .collect::<anyhow::Result<_>>()?;
    anyhow::ensure!(
        names.len() == diff_ids.len(),
        "{}: manifest.json names {} layers, the config's rootfs {}",
        store.location(),
        names.len(),
        diff_ids.len()
    );
    let layers = names
        .into_iter()
        .zip(diff_ids)
        .map(|(name, diff_id)| {
            let blob = name
                .strip_prefix("blobs/")
                .and_then(|rest| rest.split_once('/'))
                .map(|(alg, hex)| format!("{alg}:{hex}"));
            (
                name,
                ExpectedDigests {
                    blob,
                    diff_id: Some(diff_id),
                },
            )
        })
        .collect();
    Ok(Plan { config, layers })
}

fn repo_tags(image: &Value) -> Vec<String> {
    image
        .get("RepoTags")
        .and_then(Value::as_array)
        .map(|tags| {
            tags.iter()
                .filter_map(|tag| tag.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn all_tags(images: &[Value]) -> String {
    let tags: Vec<String> = images.iter().flat_map(repo_tags).collect();
    if tags.is_empty() {
        "no tags".into()
    } else {
        tags.join(", ")
    }
}

/// An OCI image layout: `index.json`, then the manifest named `tag` (or the only one), descending into
/// a multi-platform index for `platform` (the host's by default).
pub fn oci_layout(
    store: &dyn BlobStore,
    tag: Option<&str>,
    platform: Option<&Platform>,
) -> anyhow::Result<Plan> {
    let index: ImageIndex = serde_json::from_slice(&store.read_document("index.json")?)
        .with_context(|| format!("{}: index.json is not an OCI image index", store.location()))?;
    let candidates: Vec<&Descriptor> = match tag {
        Some(tag) => index
            .manifests
            .iter()
            .filter(|manifest| {
                ref_names(manifest)
                    .iter()
                    .any(|name| name == tag || name.ends_with(&format!(":{tag}")))
            })
            .collect(),
        None => index.manifests.iter().collect(),
    };
    let wanted = platform.cloned().unwrap_or_else(Platform::host);
    let descriptor = pick(store, &candidates, &wanted, tag)?;
    let manifest = resolve_manifest(store, &descriptor, &wanted, 0)?;
    let config = store
        .read_document(&blob_name(&manifest.config.digest)?)
        .with_context(|| format!("{}: the image config blob is missing", store.location()))?;
    let diff_ids = crate::image::config::ImageConfig::from_json(&config)?.diff_ids;
    anyhow::ensure!(
        diff_ids.is_empty() || diff_ids.len() == manifest.layers.len(),
        "{}: the manifest has {} layers, the config's rootfs {}",
        store.location(),
        manifest.layers.len(),
        diff_ids.len()
    );
    let layers = manifest
        .layers
        .iter()
        .enumerate()
        .map(|(position, layer)| {
            let digest = layer.digest.clone();
            Ok((
                blob_name(&digest)?,
                ExpectedDigests {
                    blob: Some(digest),
                    diff_id: diff_ids.get(position).cloned(),
                },
            ))
        })
        .collect::<anyhow::Result<_>>()?;
    Ok(Plan { config, layers })
}

fn ref_names(descriptor: &Descriptor) -> Vec<String> {
    [
        "org.opencontainers.image.ref.name",
        "io.containerd.image.name",
    ]
    .iter()
    .filter_map(|key| descriptor.annotations.as_ref()?.get(*key).cloned())
    .collect()
}

fn is_index(descriptor: &Descriptor) -> bool {
    let media = &descriptor.media_type;
    media.contains("image.index") || media.contains("manifest.list")
}

fn matches(descriptor: &Descriptor, wanted: &Platform) -> Option<bool> {
    Some(descriptor.platform.as_ref()?.matches(wanted))
}

/// One descriptor among `candidates`: the platform's, or the only one that is not an attestation.
fn pick(
    store: &dyn BlobStore,
    candidates: &[&Descriptor],
    wanted: &Platform,
    tag: Option<&str>,
) -> anyhow::Result<Descriptor> {
    let usable: Vec<&Descriptor> = candidates
        .iter()
        .copied()
        .filter(|descriptor| {
            descriptor
                .platform
                .as_ref()
                .is_none_or(|platform| !platform.is_attestation())
        })
        .collect();
    if let Some(found) = usable
        .iter()
        .find(|descriptor| matches(descriptor, wanted) == Some(true))
    {
        return Ok((*found).clone());
    }
    match usable.as_slice() {
        [only] if matches(only, wanted) != Some(false) => Ok((*only).clone()),
        [] => match tag {
            Some(tag) => bail!("{}: no image named {tag} in index.json", store.location()),
            None => bail!("{}: index.json lists no image", store.location()),
        },
        [_] => bail!(
            "{}: the image is not for {wanted} (use --platform)",
            store.location()
        ),
        _ => bail!(
            "{}: several images and none for {wanted}: name one as oci:DIR:TAG or use --platform",
            store.location()
        ),
    }
}

fn resolve_manifest(
    store: &dyn BlobStore,
    descriptor: &Descriptor,
    wanted: &Platform,
    depth: usize,
) -> anyhow::Result<ImageManifest> {
    anyhow::ensure!(
        depth < 4,
        "{}: image indexes nested too deep",
        store.location()
    );
    let name = blob_name(&descriptor.digest)?;
    let bytes = store
        .read_document(&name)
        .with_context(|| format!("{}: the manifest blob {name} is missing", store.location()))?;
    if is_index(descriptor) {
        let index: ImageIndex = serde_json::from_slice(&bytes)
            .with_context(|| format!("{name}: not an OCI image index"))?;
        let candidates: Vec<&Descriptor> = index.manifests.iter().collect();
        let chosen = pick(store, &candidates, wanted, None)?;
        return resolve_manifest(store, &chosen, wanted, depth + 1);
    }
    serde_json::from_slice(&bytes).with_context(|| format!("{name}: not an OCI image manifest"))
}
