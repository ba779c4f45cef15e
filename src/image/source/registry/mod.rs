//! Images straight from a registry (the OCI distribution API): `registry:HOST/REPO[:TAG][@DIGEST]`
//! and skopeo's `docker://…`, with Docker Hub's defaults for short names. No engine, no pull, and
//! nothing written to disk: the manifest (a list or index descends to `--platform`, the host's by
//! default) and the config are read whole under size bounds and checked against their digests, and
//! each layer blob streams from the network through the same layer reader the archives use
//! ([`read_layer`]), which hashes it as it goes: a blob that does not hash to its digest is an
//! error, never a clean result.
//!
//! Layers download `--jobs` at a time, each on its own worker with its own connection; memory is
//! bounded by the workers' buffers, not by the layers' sizes. A layer whose diff ID (from the
//! config) is in the layer cache is not downloaded at all, so a re-scan costs the manifest and the
//! config, and a second image on the same base pays only for its own layers. What the cache trusts
//! is the config's diff ID, which the config's digest and the manifest vouch for (see `cache.rs`).
//!
//! The modules: `reference.rs` (the grammar), `credentials.rs` (Docker's and podman's files and
//! helpers), `auth.rs` (challenges and tokens), `tls.rs` (roots and certs.d), `client.rs` (the HTTP
//! session).

mod auth;
mod client;
mod credentials;
pub mod reference;
mod tls;

use std::time::Duration;

use anyhow::{bail, Context};
use serde::Deserialize;
use sha2::{Digest, Sha256};

pub use client::is_loopback;
pub use reference::Reference;

use super::layout::DescriptorPlatform;
use super::{LoadOptions, LoadedImage, Platform};
use crate::image::cache::{BlobInfo, LayerCache};
use crate::image::config::ImageConfig;
use crate::image::layer::{
    complete_unread, needs_completion, read_layer, sha256_name, Compression, ExpectedDigests,
    LayerContents,
};
use client::{Session, SessionOptions};

/// The bound on a manifest or index, as distribution's own server applies (4 MiB).
pub const MAX_MANIFEST_BYTES: u64 = 4 << 20;
/// The bound on an image config.
const MAX_CONFIG_BYTES: u64 = 64 << 20;
/// How deep manifest lists may nest.
const MAX_INDEX_DEPTH: usize = 4;
/// `--timeout` unless given.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// `--jobs` unless given.
pub const DEFAULT_JOBS: usize = 4;

const MANIFEST_TYPES: &str = "application/vnd.oci.image.index.v1+json, \
     application/vnd.docker.distribution.manifest.list.v2+json, \
     application/vnd.oci.image.manifest.v1+json, \
     application/vnd.docker.distribution.manifest.v2+json";

/// What the registry source takes beyond the common load options.
#[derive(Clone, Debug)]
pub struct RegistryOptions {
    /// Layer downloads at once.
    pub jobs: usize,
    /// The bound on every network wait.
    pub timeout: Duration,
    /// Hosts that may be reached over plain HTTP (loopback always may).
    pub insecure_registries: Vec<String>,
}

impl Default for RegistryOptions {
    fn default() -> Self {
        RegistryOptions {
            jobs: DEFAULT_JOBS,
            timeout: DEFAULT_TIMEOUT,
            insecure_registries: Vec::new(),
        }
    }
}

/// A descriptor as manifests and indexes write it (OCI and Docker schema 2 agree).
#[derive(Clone, Debug, Deserialize)]
struct Descriptor {
    #[serde(rename = "mediaType", default)]
    media_type: String,
    digest: String,
    size: u64,
    #[serde(default)]
    platform: Option<DescriptorPlatform>,
    #[serde(default)]
    urls: Vec<String>,
}

/// A manifest or an index: which fields are present tells them apart where the media type is absent.
#[derive(Debug, Deserialize)]
struct ManifestDocument {
    #[serde(rename = "schemaVersion", default)]
    schema_version: u32,
    #[serde(rename = "mediaType", default)]
    media_type: Option<String>,
    #[serde(default)]
    config: Option<Descriptor>,
    #[serde(default)]
    layers: Option<Vec<Descriptor>>,
    #[serde(default)]
    manifests: Option<Vec<Descriptor>>,
}

/// Reads the image `reference` names from its registry.
pub fn load(reference: &Reference, options: &LoadOptions) -> anyhow::Result<LoadedImage> {
    let registry = &options.registry;
    let session = Session::open(
        reference,
        &SessionOptions {
            timeout: registry.timeout,
            insecure_registries: registry.insecure_registries.clone(),
        },
    )?;
    let wanted = options.platform.clone().unwrap_or_else(Platform::host);
    let (manifest, manifest_digest) = resolve_manifest(&session, reference, &wanted)?;
    let config_descriptor = manifest.config.context("the manifest names no config")?;
    let config_bytes = fetch_verified(&session, &config_descriptor, MAX_CONFIG_BYTES)
        .context("the image config")?;
    let config = ImageConfig::from_json(&config_bytes)?;
    let layers = manifest.layers.unwrap_or_default();
    anyhow::ensure!(
        config.diff_ids.len() == layers.len(),
        "manifest {manifest_digest} has {} layers, the config's rootfs {}",
        layers.len(),
        config.diff_ids.len()
    );
    let plan: Vec<(Descriptor, String)> = layers.into_iter().zip(config.diff_ids.clone()).collect();
    for (layer, _) in &plan {
        reference::parse_digest(&layer.digest)
            .with_context(|| format!("manifest {manifest_digest} names a layer"))?;
        if !layer.urls.is_empty() || layer.media_type.contains("foreign") {
            bail!(
                "layer {} is a foreign layer (stored outside the registry): not read",
                layer.digest
            );
        }
    }
    let layers = read_layers(&session, &plan, options, registry.jobs)?;
    Ok(LoadedImage { config, layers })
}

/// The image manifest for `wanted`, descending through lists and indexes; and its digest.
fn resolve_manifest(
    session: &Session,
    reference: &Reference,
    wanted: &Platform,
) -> anyhow::Result<(ManifestDocument, String)> {
    let mut target = reference.manifest_reference().to_string();
    let mut expected_digest = reference.digest.clone();
    for _ in 0..MAX_INDEX_DEPTH {
        let document = session
            .document(
                &format!("manifests/{target}"),
                MANIFEST_TYPES,
                MAX_MANIFEST_BYTES,
            )
            .with_context(|| format!("the manifest of {reference}"))?;
        let digest = sha256_name(&Sha256::digest(&document.bytes));
        if let Some(expected) = &expected_digest {
            anyhow::ensure!(
                &digest == expected,
                "the manifest {target} hashes to {digest}, not its digest {expected}"
            );
        } else if let Some(said) = &document.digest {
            anyhow::ensure!(
                &digest == said,
                "the manifest {target} hashes to {digest}, not the Docker-Content-Digest the registry \
                 sent ({said})"
            );
        }
        let parsed: ManifestDocument = serde_json::from_slice(&document.bytes)
            .with_context(|| format!("the manifest {target} is not a manifest or index (JSON)"))?;
        if parsed.schema_version == 1 {
            bail!("the manifest {target} is Docker's schema 1 (deprecated): not read");
        }
        let media_type = parsed
            .media_type
            .clone()
            .or(document.content_type)
            .unwrap_or_default();
        let is_index = parsed.manifests.is_some()
            || media_type.contains("image.index")
            || media_type.contains("manifest.list");
        if !is_index {
            return Ok((parsed, digest));
        }
        let chosen = pick_platform(parsed.manifests.as_deref().unwrap_or_default(), wanted)
            .with_context(|| format!("{reference} ({digest})"))?;
        target = chosen.digest.clone();
        reference::parse_digest(&target).context("the index names a manifest")?;
        expected_digest = Some(target.clone());
    }
    bail!("manifest lists nested more than {MAX_INDEX_DEPTH} deep")
}

/// The index's manifest for `wanted`: its os and architecture, and its variant when one is asked
/// for. Attestations (`unknown/unknown`) are never images.
fn pick_platform<'a>(
    manifests: &'a [Descriptor],
    wanted: &Platform,
) -> anyhow::Result<&'a Descriptor> {
    let images: Vec<&Descriptor> = manifests
        .iter()
        .filter(|descriptor| {
            descriptor
                .platform
                .as_ref()
                .is_none_or(|platform| !platform.is_attestation())
        })
        .collect();
    let matching = |descriptor: &&&Descriptor| {
        descriptor
            .platform
            .as_ref()
            .is_some_and(|platform| platform.matches(wanted))
    };
    if let Some(found) = images.iter().find(matching) {
        return Ok(found);
    }
    let listed: Vec<String> = images
        .iter()
        .map(|descriptor| {
            descriptor
                .platform
                .as_ref()
                .map_or_else(|| "(no platform)".to_string(), DescriptorPlatform::text)
        })
        .collect();
    if listed.is_empty() {
        bail!("the index lists no image");
    }
    bail!(
        "no image for {wanted} in the index; it has {} (choose one with --platform)",
        listed.join(", ")
    )
}

/// A blob read whole (bounded by `limit` and its descriptor's size) and checked against its digest.
fn fetch_verified(
    session: &Session,
    descriptor: &Descriptor,
    limit: u64,
) -> anyhow::Result<Vec<u8>> {
    reference::parse_digest(&descriptor.digest)?;
    if descriptor.size > limit {
        bail!(
            "{}: {} bytes, over the {limit}-byte limit: refused",
            descriptor.digest,
            descriptor.size
        );
    }
    let mut reader = session.blob(&descriptor.digest, descriptor.size)?;
    let mut bytes = Vec::with_capacity(descriptor.size as usize);
    std::io::Read::read_to_end(&mut reader, &mut bytes)
        .with_context(|| format!("reading blob {}", descriptor.digest))?;
    let digest = sha256_name(&Sha256::digest(&bytes));
    anyhow::ensure!(
        digest == descriptor.digest,
        "blob {} hashes to {digest}: its bytes in the registry are not what the manifest names",
        descriptor.digest
    );
    Ok(bytes)
}

/// Reads the layers, `jobs` at a time, kept in manifest order; the first failure stops the rest.
fn read_layers(
    session: &Session,
    plan: &[(Descriptor, String)],
    options: &LoadOptions,
    jobs: usize,
) -> anyhow::Result<Vec<LayerContents>> {
    let layers = super::read_in_parallel(plan.len(), jobs, options, |index| {
        let (descriptor, diff_id) = &plan[index];
        read_one_layer(session, descriptor, diff_id, options.cache.as_deref())
            .with_context(|| format!("layer {} ({})", index + 1, descriptor.digest))
    })?;
    anyhow::ensure!(layers.len() == plan.len(), "not every layer could be read");
    Ok(layers)
}

/// One layer: from the cache by its diff ID (nothing downloaded), else streamed through the layer
/// reader with both digests checked, and cached.
fn read_one_layer(
    session: &Session,
    descriptor: &Descriptor,
    diff_id: &str,
    cache: Option<&LayerCache>,
) -> anyhow::Result<LayerContents> {
    if let Some(cache) = cache {
        let blob = BlobInfo {
            digest: descriptor.digest.clone(),
            size: descriptor.size,
            compression: compression_of(&descriptor.media_type, &descriptor.digest, diff_id),
            at: None,
        };
        if let Some(layer) = cache.get(diff_id, blob) {
            return Ok(layer);
        }
    }
    let expected = ExpectedDigests {
        blob: Some(descriptor.digest.clone()),
        diff_id: Some(diff_id.to_string()),
    };
    let mut layer = read_layer(
        session.blob(&descriptor.digest, descriptor.size)?,
        &expected,
    )?;
    if needs_completion(&layer) {
        // An ELF string the stream had passed: the blob once more, for those strings only.
        complete_unread(
            session.blob(&descriptor.digest, descriptor.size)?,
            &mut layer,
        )?;
    }
    if let Some(cache) = cache {
        cache.put(&layer, None);
    }
    Ok(layer)
}

/// A layer's compression from its media type, for the report of a cached layer (an uncompressed
/// blob's digest is its diff ID whatever the media type says).
fn compression_of(media_type: &str, digest: &str, diff_id: &str) -> Compression {
    if digest == diff_id {
        Compression::None
    } else if media_type.contains("zstd") {
        Compression::Zstd
    } else {
        Compression::Gzip
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn descriptor(platform: Option<(&str, &str, Option<&str>)>) -> Descriptor {
        Descriptor {
            media_type: String::new(),
            digest: format!("sha256:{}", "0".repeat(64)),
            size: 1,
            platform: platform.map(|(os, architecture, variant)| DescriptorPlatform {
                os: os.into(),
                architecture: architecture.into(),
                variant: variant.map(str::to_string),
            }),
            urls: Vec::new(),
        }
    }

    #[test]
    fn an_index_without_the_platform_lists_what_it_has() {
        let index = [
            descriptor(Some(("linux", "arm64", Some("v8")))),
            descriptor(Some(("linux", "ppc64le", None))),
            descriptor(Some(("unknown", "unknown", None))),
        ];
        let error = pick_platform(&index, &Platform::parse("linux/amd64").unwrap()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "no image for linux/amd64 in the index; it has linux/arm64/v8, linux/ppc64le (choose one \
             with --platform)"
        );
        assert!(pick_platform(&index, &Platform::parse("linux/arm64").unwrap()).is_ok());
        assert!(pick_platform(&index, &Platform::parse("linux/arm64/v7").unwrap()).is_err());
    }
}
