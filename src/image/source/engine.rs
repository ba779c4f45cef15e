//! The Docker engine through bollard: `myimg:tag`, an image ID, or `docker-daemon:NAME`. The image must
//! already be local: nothing is pulled, no container is created. The endpoint is `DOCKER_HOST` (unix or
//! tcp, TLS with `DOCKER_TLS_VERIFY`/`DOCKER_CERT_PATH`), else the current docker context, else the
//! default socket; the API version is negotiated, so Docker 20.10 (API 1.41) and later work.
//!
//! Content comes from the export (`docker save`) stream, parsed as it arrives: the async stream feeds a
//! bounded channel that a tar reader on another thread consumes, so no temporary file holds the image.
//! Each layer blob in the stream is read once and matched to the inspect's diff IDs; the config blob
//! (named by the image ID) gives history with `empty_layer`.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read};
use std::path::PathBuf;
use std::sync::mpsc;

use anyhow::{bail, Context};
use bollard::errors::Error as EngineError;
use bollard::Docker;
use futures_util::StreamExt;
use sha2::{Digest, Sha256};

use super::{LoadOptions, LoadedImage};
use crate::image::cache::BlobInfo;
use crate::image::config::ImageConfig;
use crate::image::decode::ChunkReader;
use crate::image::layer::{
    complete_unread, needs_completion, read_layer_here, Compression, ExpectedDigests,
    HashingReader, LayerContents,
};

/// Seconds before a request to the engine gives up (an export of a large image takes minutes).
const REQUEST_TIMEOUT_S: u64 = 3600;
/// Export chunks in flight between the network and the tar reader.
const CHANNEL_CHUNKS: usize = 64;

/// Reads image `name` from the engine.
pub fn load(name: &str, options: &LoadOptions) -> anyhow::Result<LoadedImage> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the engine client")?;
    let (docker, endpoint) = connect_with_timeout(REQUEST_TIMEOUT_S)?;
    let docker = runtime
        .block_on(docker.negotiate_version())
        .with_context(|| format!("cannot reach the Docker engine at {endpoint}"))?;
    let inspect = match runtime.block_on(docker.inspect_image(name)) {
        Ok(inspect) => inspect,
        Err(EngineError::DockerResponseServerError {
            status_code: 404, ..
        }) => {
            bail!("{name}: no such image in the Docker engine at {endpoint} (cudalint never pulls; `docker pull` it first)")
        }
        Err(error) => {
            return Err(error)
                .with_context(|| format!("{name}: inspecting the image at {endpoint}"))
        }
    };
    let image_id = inspect
        .id
        .clone()
        .context("the engine's inspect answer has no image ID")?;
    let diff_ids: Vec<String> = inspect
        .root_fs
        .as_ref()
        .and_then(|rootfs| rootfs.layers.clone())
        .unwrap_or_default();
    let mut config = inspect_config(&inspect);

    let wanted = diff_ids.clone();
    let id_hex = image_id.trim_start_matches("sha256:").to_string();
    let reader_options = options.clone();
    let read = stream_export(&runtime, &docker, &image_id, name, move |stream| {
        read_export(stream, &wanted, &id_hex, &reader_options)
    });
    let export = read.with_context(|| format!("{name}: reading the export stream"))?;
    let (mut layers_by_id, config_blob) = (export.layers, export.config);
    // ELF strings a stream could not keep (rare): one more export, reading only those layers.
    let incomplete: Vec<(&String, &String)> = export
        .blob_names
        .iter()
        .filter(|(_, diff_id)| layers_by_id.get(*diff_id).is_some_and(needs_completion))
        .collect();
    let pending: HashMap<String, LayerContents> = incomplete
        .into_iter()
        .filter_map(|(blob, diff_id)| Some((blob.clone(), layers_by_id.remove(diff_id)?)))
        .collect();
    if !pending.is_empty() {
        let completed = stream_export(&runtime, &docker, &image_id, name, move |stream| {
            complete_export(stream, pending)
        })
        .with_context(|| format!("{name}: reading the export stream a second time"))?;
        for layer in completed {
            if let Some(cache) = options.cache.as_deref() {
                cache.put(&layer, None);
            }
            layers_by_id.insert(layer.diff_id.clone(), layer);
        }
    }
    if let Some(blob) = config_blob {
        // The config blob has the full history (with empty_layer); the inspect's config is the same
        // document's env and labels.
        if let Ok(full) = ImageConfig::from_json(&blob) {
            config = full;
        }
    }
    let mut layers = Vec::with_capacity(diff_ids.len());
    for diff_id in &diff_ids {
        let layer = layers_by_id
            .get(diff_id)
            .cloned()
            .with_context(|| format!("{name}: the export stream has no layer {diff_id}"))?;
        layers.push(layer);
    }
    layers_by_id.clear();
    Ok(LoadedImage { config, layers })
}

mod bytes_chunk {
    pub type Chunk = Vec<u8>;
}

/// The config as inspect reports it (used when the export's config blob is not found).
fn inspect_config(inspect: &bollard::models::ImageInspect) -> ImageConfig {
    let inner = inspect.config.clone().unwrap_or_default();
    ImageConfig {
        architecture: inspect.architecture.clone(),
        os: inspect.os.clone(),
        variant: inspect.variant.clone(),
        env: inner.env.unwrap_or_default(),
        labels: inner.labels.unwrap_or_default().into_iter().collect(),
        user: inner.user.filter(|user| !user.is_empty()),
        entrypoint: inner.entrypoint.unwrap_or_default(),
        cmd: inner.cmd.unwrap_or_default(),
        working_dir: inner.working_dir.filter(|dir| !dir.is_empty()),
        history: Vec::new(),
        diff_ids: inspect
            .root_fs
            .as_ref()
            .and_then(|rootfs| rootfs.layers.clone())
            .unwrap_or_default(),
    }
}

/// What one pass over an export stream read.
struct ExportRead {
    /// The image's layers by diff ID.
    layers: HashMap<String, LayerContents>,
    /// The config blob, when the stream holds it.
    config: Option<Vec<u8>>,
    /// The stream's name of each layer blob read, and its diff ID.
    blob_names: HashMap<String, String>,
}

/// Reads a `docker save` stream (legacy or OCI layout) front to back: layer blobs whose diff ID the
/// image lists are kept, the config blob named by the image ID too; everything else is skipped.
///
/// With a cache, a blob named by a diff ID the image lists (`blobs/sha256/<diff ID>`: Docker 25+
/// names an uncompressed layer by its digest) whose facts are cached streams past hashed, neither
/// parsed nor probed, and must hash to its name. A legacy stream (`<v1 id>/layer.tar`) names no
/// digest, so its layers are read and then cached for the archive and OCI sources.
fn read_export(
    stream: impl Read,
    wanted: &[String],
    id_hex: &str,
    options: &LoadOptions,
) -> anyhow::Result<ExportRead> {
    let cache = options.cache.as_deref();
    let mut archive = tar::Archive::new(stream);
    let mut layers = HashMap::new();
    let mut config = None;
    let mut blob_names = HashMap::new();
    for entry in archive
        .entries()
        .context("the export is not a tar stream")?
    {
        let entry = entry.context("a damaged tar header in the export stream")?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = String::from_utf8_lossy(&entry.path_bytes())
            .trim_start_matches("./")
            .to_string();
        if name == format!("{id_hex}.json") || name == format!("blobs/sha256/{id_hex}") {
            let mut bytes = Vec::new();
            entry.take(64 << 20).read_to_end(&mut bytes)?;
            config = Some(bytes);
            continue;
        }
        if !(name.ends_with("/layer.tar") || name.starts_with("blobs/")) {
            continue;
        }
        let size = entry.size();
        let mut blob = BufReader::with_capacity(1 << 20, entry);
        let head = blob.fill_buf()?;
        if head.first() == Some(&b'{') {
            continue; // a manifest or index blob
        }
        let compression = Compression::sniff(head);
        let named = name
            .strip_prefix("blobs/sha256/")
            .map(|hex| format!("sha256:{hex}"))
            .filter(|digest| wanted.contains(digest) && compression == Compression::None);
        let cached = match (cache, &named) {
            (Some(cache), Some(diff_id)) => cache.get(
                diff_id,
                BlobInfo {
                    digest: diff_id.clone(),
                    size,
                    compression,
                    at: None,
                },
            ),
            _ => None,
        };
        let layer = match cached {
            Some(layer) => {
                let mut hashing = HashingReader::new(blob);
                io::copy(&mut hashing, &mut io::sink())
                    .with_context(|| format!("layer {name} of the export"))?;
                let (digest, _) = hashing.finish();
                anyhow::ensure!(
                    digest == layer.diff_id,
                    "layer {name} of the export hashes to {digest}, not its name"
                );
                layer
            }
            None => {
                let layer = read_layer_here(blob, &ExpectedDigests::default())
                    .with_context(|| format!("layer {name} of the export"))?;
                if let Some(cache) = cache.filter(|_| wanted.contains(&layer.diff_id)) {
                    if named.is_none() {
                        cache.count_miss();
                    }
                    // A layer awaiting its second pass is cached once that is done.
                    if !needs_completion(&layer) {
                        cache.put(&layer, None);
                    }
                }
                layer
            }
        };
        if let Some(report) = options.on_layer {
            report(layer.blob_size);
        }
        if wanted.contains(&layer.diff_id) {
            blob_names.insert(name, layer.diff_id.clone());
            layers.insert(layer.diff_id.clone(), layer);
        }
    }
    Ok(ExportRead {
        layers,
        config,
        blob_names,
    })
}

/// The second pass over an export stream: each blob named in `pending` is read again for the ELF
/// strings its first pass left (see [`complete_unread`]); everything else streams past.
fn complete_export(
    stream: impl Read,
    mut pending: HashMap<String, LayerContents>,
) -> anyhow::Result<Vec<LayerContents>> {
    let mut completed = Vec::new();
    let mut archive = tar::Archive::new(stream);
    for entry in archive
        .entries()
        .context("the export is not a tar stream")?
    {
        if pending.is_empty() {
            break;
        }
        let entry = entry.context("a damaged tar header in the export stream")?;
        let name = String::from_utf8_lossy(&entry.path_bytes())
            .trim_start_matches("./")
            .to_string();
        if let Some(mut layer) = pending.remove(&name) {
            complete_unread(entry, &mut layer)
                .with_context(|| format!("layer {name} of the export"))?;
            completed.push(layer);
        }
    }
    anyhow::ensure!(
        pending.is_empty(),
        "the second export stream lacks {} layer blob(s) of the first",
        pending.len()
    );
    Ok(completed)
}

/// Streams the engine's export of `image_id` into `consume` on another thread, as it arrives: the
/// async stream feeds a bounded channel that `consume` reads as a plain `Read`.
fn stream_export<T: Send + 'static>(
    runtime: &tokio::runtime::Runtime,
    docker: &Docker,
    image_id: &str,
    name: &str,
    consume: impl FnOnce(ChunkReader) -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    let (sender, receiver) = mpsc::sync_channel::<io::Result<bytes_chunk::Chunk>>(CHANNEL_CHUNKS);
    let reader = std::thread::spawn(move || consume(ChunkReader::new(receiver)));
    let mut stream = docker.export_image(image_id);
    let streamed: anyhow::Result<()> = runtime.block_on(async {
        while let Some(chunk) = stream.next().await {
            let chunk =
                chunk.with_context(|| format!("{name}: the engine's export stream failed"))?;
            if sender.send(Ok(chunk.to_vec())).is_err() {
                break; // the reader stopped (an error it reports)
            }
        }
        Ok(())
    });
    drop(sender);
    let read = reader
        .join()
        .map_err(|_| anyhow::anyhow!("the export reader panicked"))?;
    streamed?;
    read
}

/// The engine client and where it points, for messages: `DOCKER_HOST` (unix or tcp, TLS through
/// `DOCKER_TLS_VERIFY`/`DOCKER_CERT_PATH`), else the current docker context's endpoint, else the
/// default socket. `cudalint image` and `cudalint build` both connect here.
pub fn connect_with_timeout(timeout_s: u64) -> anyhow::Result<(Docker, String)> {
    let version = bollard::API_DEFAULT_VERSION;
    if let Ok(host) = std::env::var("DOCKER_HOST") {
        let tls =
            std::env::var("DOCKER_TLS_VERIFY").is_ok_and(|value| !value.is_empty() && value != "0");
        let docker = if tls {
            Docker::connect_with_ssl_defaults()
        } else {
            Docker::connect_with_defaults()
        };
        return Ok((docker.with_context(|| format!("DOCKER_HOST={host}"))?, host));
    }
    if let Some(host) = context_host() {
        let docker = if host.starts_with("unix://") {
            connect_with_unix(&host, timeout_s, version)
        } else {
            Docker::connect_with_http(&host, timeout_s, version).map_err(Into::into)
        };
        return Ok((
            docker.with_context(|| format!("docker context endpoint {host}"))?,
            host,
        ));
    }
    default_engine(timeout_s, version)
}

/// A Unix socket endpoint (the engine's usual transport).
#[cfg(unix)]
fn connect_with_unix(
    socket: &str,
    timeout_s: u64,
    version: &bollard::ClientVersion,
) -> anyhow::Result<Docker> {
    Ok(Docker::connect_with_unix(socket, timeout_s, version)?)
}

/// A Unix socket endpoint cannot be reached from a non-Unix host (Windows).
#[cfg(not(unix))]
fn connect_with_unix(
    socket: &str,
    _timeout_s: u64,
    _version: &bollard::ClientVersion,
) -> anyhow::Result<Docker> {
    anyhow::bail!(
        "{socket} is a Unix socket, which this host cannot reach: set DOCKER_HOST to a tcp:// or npipe:// endpoint"
    )
}

/// The engine's default socket on Unix.
#[cfg(unix)]
fn default_engine(
    timeout_s: u64,
    version: &bollard::ClientVersion,
) -> anyhow::Result<(Docker, String)> {
    let docker = Docker::connect_with_unix("unix:///var/run/docker.sock", timeout_s, version)
        .context("cannot reach the Docker engine at /var/run/docker.sock (set DOCKER_HOST)")?;
    Ok((docker, "unix:///var/run/docker.sock".into()))
}

/// The engine's default endpoint elsewhere (on Windows, Docker Desktop's named pipe).
#[cfg(not(unix))]
fn default_engine(
    _timeout_s: u64,
    _version: &bollard::ClientVersion,
) -> anyhow::Result<(Docker, String)> {
    let docker = Docker::connect_with_defaults()
        .context("cannot reach the Docker engine at its default endpoint (set DOCKER_HOST)")?;
    Ok((docker, "the default engine endpoint".into()))
}

/// The endpoint of the current docker context (`DOCKER_CONTEXT`, else `currentContext` in
/// `~/.docker/config.json`), from `contexts/meta/<sha256 of the name>/meta.json`.
fn context_host() -> Option<String> {
    let config_dir = std::env::var_os("DOCKER_CONFIG")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".docker")))?;
    let name = match std::env::var("DOCKER_CONTEXT") {
        Ok(name) => name,
        Err(_) => {
            let config: serde_json::Value =
                serde_json::from_slice(&std::fs::read(config_dir.join("config.json")).ok()?)
                    .ok()?;
            config.get("currentContext")?.as_str()?.to_string()
        }
    };
    if name.is_empty() || name == "default" {
        return None;
    }
    let digest = Sha256::digest(name.as_bytes());
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    let meta: serde_json::Value = serde_json::from_slice(
        &std::fs::read(config_dir.join("contexts/meta").join(hex).join("meta.json")).ok()?,
    )
    .ok()?;
    Some(
        meta.get("Endpoints")?
            .get("docker")?
            .get("Host")?
            .as_str()?
            .to_string(),
    )
}
