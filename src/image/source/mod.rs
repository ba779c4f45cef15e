//! Where an image comes from. Every source ends in the same [`LoadedImage`]: the config and each
//! layer's changes in manifest order, so every source gives identical results. References follow
//! skopeo's transports: `docker-archive:PATH[:TAG]`, `oci-archive:PATH[:TAG]`, `oci:DIR[:TAG]`,
//! `rootfs:DIR`, `docker-daemon:NAME`, `registry:REF` and `docker://REF` (straight from a registry,
//! see `registry/`), a bare path (a tar or a directory, detected), or else an image name or ID in the
//! Docker engine.

mod blobs;
pub mod engine;
mod layout;
pub mod registry;
mod rootfs;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context};

pub use blobs::{BlobStore, DirStore, TarStore};
pub use layout::Platform;

use super::cache::{BlobInfo, BlobLocation, LayerCache};
use super::config::ImageConfig;
use super::layer::{read_layer_at, Compression, ExpectedDigests, LayerContents};

/// A parsed image reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImageSource {
    DockerArchive {
        path: PathBuf,
        tag: Option<String>,
    },
    OciArchive {
        path: PathBuf,
        tag: Option<String>,
    },
    OciDir {
        path: PathBuf,
        tag: Option<String>,
    },
    /// A path whose kind is found by looking at it.
    Path(PathBuf),
    Rootfs(PathBuf),
    Engine(String),
    /// `registry:REF` or `docker://REF`.
    Registry(registry::Reference),
}

/// Options every source takes.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    pub platform: Option<Platform>,
    /// For `rootfs:`, the config document to use.
    pub image_config: Option<PathBuf>,
    /// Called after each layer is read, with the layer's blob size.
    pub on_layer: Option<fn(u64)>,
    /// Where layer facts are looked up before a blob is read and written after; `None` reads every
    /// layer from its blob and writes nothing (`--no-cache`).
    pub cache: Option<Arc<LayerCache>>,
    /// Jobs, timeout and plain-HTTP hosts for `registry:` references.
    pub registry: registry::RegistryOptions,
}

/// An image as read from its source: config and layers (lowest first).
pub struct LoadedImage {
    pub config: ImageConfig,
    pub layers: Vec<LayerContents>,
}

impl ImageSource {
    /// Parses a reference as `cudalint image` takes it.
    pub fn parse(reference: &str) -> anyhow::Result<ImageSource> {
        anyhow::ensure!(!reference.is_empty(), "an empty image reference");
        if let Some(rest) = reference.strip_prefix("docker-archive:") {
            let (path, tag) = path_and_tag(rest);
            return Ok(ImageSource::DockerArchive { path, tag });
        }
        if let Some(rest) = reference.strip_prefix("oci-archive:") {
            let (path, tag) = path_and_tag(rest);
            return Ok(ImageSource::OciArchive { path, tag });
        }
        if let Some(rest) = reference.strip_prefix("oci:") {
            let (path, tag) = path_and_tag(rest);
            return Ok(ImageSource::OciDir { path, tag });
        }
        if let Some(rest) = reference.strip_prefix("rootfs:") {
            return Ok(ImageSource::Rootfs(PathBuf::from(rest)));
        }
        for transport in ["registry:", "docker://"] {
            if let Some(rest) = reference.strip_prefix(transport) {
                let parsed = registry::Reference::parse(rest)
                    .map_err(|error| anyhow::anyhow!("{reference}: {error:#}"))?;
                return Ok(ImageSource::Registry(parsed));
            }
        }
        if let Some(rest) = reference.strip_prefix("docker-daemon:") {
            anyhow::ensure!(!rest.is_empty(), "docker-daemon: needs an image name or ID");
            return Ok(ImageSource::Engine(rest.to_string()));
        }
        let path = Path::new(reference);
        if reference.starts_with(['/', '.']) || path.exists() {
            return Ok(ImageSource::Path(path.to_path_buf()));
        }
        Ok(ImageSource::Engine(reference.to_string()))
    }

    /// Reads the image: config and every layer, digests verified.
    pub fn load(&self, options: &LoadOptions) -> anyhow::Result<LoadedImage> {
        let platform = options.platform.as_ref();
        match self {
            ImageSource::DockerArchive { path, tag } => {
                let store = open_store(path)?;
                let plan = layout::docker_archive(store.as_ref(), tag.as_deref(), platform)?;
                read_plan(store.as_ref(), plan, options)
            }
            ImageSource::OciArchive { path, tag } => {
                let store = TarStore::index(path)?;
                let plan = layout::oci_layout(&store, tag.as_deref(), platform)?;
                read_plan(&store, plan, options)
            }
            ImageSource::OciDir { path, tag } => {
                anyhow::ensure!(path.is_dir(), "oci:{}: not a directory", path.display());
                let store = DirStore::new(path);
                let plan = layout::oci_layout(&store, tag.as_deref(), platform)?;
                read_plan(&store, plan, options)
            }
            ImageSource::Path(path) => {
                if !path.exists() {
                    bail!("{}: no such file or directory", path.display());
                }
                if path.is_dir()
                    && !path.join("index.json").is_file()
                    && !path.join("manifest.json").is_file()
                {
                    return ImageSource::Rootfs(path.clone()).load(options);
                }
                let store = open_store(path)?;
                let plan = layout::docker_archive(store.as_ref(), None, platform)?;
                read_plan(store.as_ref(), plan, options)
            }
            ImageSource::Rootfs(path) => {
                let config = match &options.image_config {
                    Some(file) => ImageConfig::from_json(
                        &std::fs::read(file)
                            .with_context(|| format!("--image-config {}", file.display()))?,
                    )
                    .with_context(|| format!("--image-config {}", file.display()))?,
                    None => ImageConfig::default(),
                };
                let layer = rootfs::read_rootfs(path)?;
                Ok(LoadedImage {
                    config,
                    layers: vec![layer],
                })
            }
            ImageSource::Engine(name) => engine::load(name, options),
            ImageSource::Registry(reference) => registry::load(reference, options),
        }
    }

    /// The image name the reference gives (`docker-daemon:NAME`, or a name for the engine), by which
    /// the knowledge knows base images (`cudalint facts`); `None` for files and directories.
    pub fn image_name(&self) -> Option<&str> {
        match self {
            ImageSource::Engine(name) => Some(name),
            ImageSource::Registry(reference) => Some(&reference.written),
            ImageSource::DockerArchive { .. }
            | ImageSource::OciArchive { .. }
            | ImageSource::OciDir { .. }
            | ImageSource::Path(_)
            | ImageSource::Rootfs(_) => None,
        }
    }
}

/// `PATH:TAG` → (PATH, TAG): the shortest prefix before a `:` that exists is the path (a tag may hold
/// a colon itself, `repo:v1`); with none existing, the text up to the last `:` is.
fn path_and_tag(text: &str) -> (PathBuf, Option<String>) {
    if Path::new(text).exists() {
        return (PathBuf::from(text), None);
    }
    for (at, _) in text.match_indices(':') {
        if Path::new(&text[..at]).exists() && at + 1 < text.len() {
            return (PathBuf::from(&text[..at]), Some(text[at + 1..].to_string()));
        }
    }
    match text.rsplit_once(':') {
        Some((path, tag)) if !tag.is_empty() && !tag.contains('/') => {
            (PathBuf::from(path), Some(tag.to_string()))
        }
        _ => (PathBuf::from(text), None),
    }
}

fn open_store(path: &Path) -> anyhow::Result<Box<dyn BlobStore>> {
    if path.is_dir() {
        Ok(Box::new(DirStore::new(path)))
    } else {
        Ok(Box::new(TarStore::index(path)?))
    }
}

/// Reads every layer of `plan`, several at a time (each on its own reader), kept in manifest order.
fn read_plan(
    store: &dyn BlobStore,
    plan: layout::Plan,
    options: &LoadOptions,
) -> anyhow::Result<LoadedImage> {
    let config = ImageConfig::from_json(&plan.config)?;
    for (name, _) in &plan.layers {
        anyhow::ensure!(
            store.contains(name),
            "{}: the manifest names layer {name}, which is missing",
            store.location()
        );
    }
    let workers = std::thread::available_parallelism()
        .map(|cores| cores.get())
        .unwrap_or(1);
    let layers = read_in_parallel(plan.layers.len(), workers, options, |index| {
        let (name, expected) = &plan.layers[index];
        read_planned_layer(store, name, expected, options.cache.as_deref())
            .with_context(|| format!("{}: layer {} ({name})", store.location(), index + 1))
    })?;
    anyhow::ensure!(
        layers.len() == plan.layers.len(),
        "{}: not every layer could be read",
        store.location()
    );
    Ok(LoadedImage { config, layers })
}

/// Reads `count` layers with up to `workers` threads, `read(index)` each, kept in manifest order;
/// the first failure stops handing out layers and is returned. Every source that reads layers on
/// their own readers (archives, layouts, a registry) shares it. A layer left unread (its worker
/// panicked) is missing from the result, which the caller checks against `count`.
pub(super) fn read_in_parallel(
    count: usize,
    workers: usize,
    options: &LoadOptions,
    read: impl Fn(usize) -> anyhow::Result<LayerContents> + Sync,
) -> anyhow::Result<Vec<LayerContents>> {
    let workers = workers.max(1).min(count.max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<anyhow::Result<LayerContents>>>> =
        Mutex::new((0..count).map(|_| None).collect());
    // Each worker is joined (not left to the scope's end), so it has fully exited when this returns,
    // and a worker that panicked leaves its layer unread: an error for the caller, not a panic here.
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= count {
                        break;
                    }
                    let result = read(index);
                    if let (Ok(layer), Some(report)) = (&result, options.on_layer) {
                        report(layer.blob_size);
                    }
                    let failed = result.is_err();
                    results.lock().unwrap_or_else(|poison| poison.into_inner())[index] =
                        Some(result);
                    if failed {
                        // Stop handing out layers: the image cannot be read.
                        next.store(usize::MAX / 2, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for handle in handles {
            let _ = handle.join();
        }
    });
    let mut layers = Vec::with_capacity(count);
    for layer in results
        .into_inner()
        .unwrap_or_else(|poison| poison.into_inner())
        .into_iter()
        .flatten()
    {
        layers.push(layer?);
    }
    Ok(layers)
}

/// One layer of a plan: from the cache when its diff ID is known and cached (its blob is not
/// decompressed, only its first bytes read to name the compression), else read from its blob, its
/// digests checked, and cached. The blob's place is taken from the file it is then read from, before
/// the read, so a change to the file after it is seen by the next run.
fn read_planned_layer(
    store: &dyn BlobStore,
    name: &str,
    expected: &ExpectedDigests,
    cache: Option<&LayerCache>,
) -> anyhow::Result<LayerContents> {
    let (file, start, len) = store.locate(name)?;
    let Some(cache) = cache else {
        return read_layer_at(&file, start, len, expected);
    };
    let at = BlobLocation::of(&file, start, len);
    let blob = expected
        .diff_id
        .as_deref()
        .map(|diff_id| describe_blob(store, name, expected, diff_id, at))
        .transpose()?
        .flatten();
    match (&expected.diff_id, blob) {
        (Some(diff_id), Some(blob)) => {
            if let Some(layer) = cache.get(diff_id, blob) {
                return Ok(layer);
            }
        }
        _ => cache.count_miss(),
    }
    let layer = read_layer_at(&file, start, len, expected)?;
    cache.put(&layer, at);
    Ok(layer)
}

/// What the report says of a blob, found without reading it: its size from the store, its
/// compression from its first bytes, its digest from the manifest (an uncompressed blob's digest is
/// its diff ID); and its place `at`. `None` for a compressed blob that the manifest gives no digest
/// for.
fn describe_blob(
    store: &dyn BlobStore,
    name: &str,
    expected: &ExpectedDigests,
    diff_id: &str,
    at: Option<BlobLocation>,
) -> anyhow::Result<Option<BlobInfo>> {
    let compression = Compression::sniff(&store.head(name, 4)?);
    let digest = match (&expected.blob, compression) {
        (Some(digest), _) => digest.clone(),
        (None, Compression::None) => diff_id.to_string(),
        (None, _) => return Ok(None),
    };
    Ok(Some(BlobInfo {
        digest,
        size: store.size(name)?,
        compression,
        at,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_follow_skopeo_transports() {
        assert_eq!(
            ImageSource::parse("docker-archive:/nonexistent/x.tar:v1").unwrap(),
            ImageSource::DockerArchive {
                path: "/nonexistent/x.tar".into(),
                tag: Some("v1".into())
            }
        );
        assert_eq!(
            ImageSource::parse("oci:/nonexistent/dir").unwrap(),
            ImageSource::OciDir {
                path: "/nonexistent/dir".into(),
                tag: None
            }
        );
        assert_eq!(
            ImageSource::parse("rootfs:/").unwrap(),
            ImageSource::Rootfs("/".into())
        );
        assert_eq!(
            ImageSource::parse("myimg:tag").unwrap(),
            ImageSource::Engine("myimg:tag".into())
        );
        assert_eq!(
            ImageSource::parse("docker-daemon:myimg:tag").unwrap(),
            ImageSource::Engine("myimg:tag".into())
        );
    }
}
