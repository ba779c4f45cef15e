//! What the GPU-code rules (CU230–CU233, and CU221's verdict on minor-version compatibility) share:
//! the fleet from `--gpu`/`[target] gpus`, the driver from `--driver`, and the image's objects with
//! GPU code grouped by library family, each marked by how it is loaded: at start, on demand (a known
//! plugin, or a library something in the image NEEDs), or by nothing in the image.

use std::collections::{BTreeMap, BTreeSet};

use super::ImageContext;
use crate::image::facts::{Captured, FsView, NodeKind};
use crate::image::gpu::{self, GpuObject};
use crate::knowledge::gpus::{Gpus, TargetGpu};
use crate::knowledge::image_loading::ImageLoading;
use crate::knowledge::Version;

/// The target GPUs (the CLI has already rejected unknown names).
pub fn targets(ctx: &ImageContext<'_>) -> Vec<TargetGpu> {
    Gpus::embedded().targets(&ctx.settings.target_gpus)
}

/// The target driver, if one is given.
pub fn driver(ctx: &ImageContext<'_>) -> Option<Version> {
    ctx.settings
        .target_driver
        .as_deref()
        .and_then(Version::parse)
}

/// The CUDA version the target driver supports (`13.0` for R580).
pub fn driver_cuda(ctx: &ImageContext<'_>, driver: Version) -> Option<Version> {
    ctx.knowledge
        .toolkits
        .newest_release_for_driver(driver)
        .map(|release| release.version.major_minor())
}

/// One object with GPU code and how it is loaded.
pub struct Loaded {
    pub object: GpuObject,
    pub at_start: bool,
    /// Not at start, but a feature opens it: a plugin of `rules/image-loading.toml`, or a library
    /// another object of the image NEEDs (by SONAME or file name). Neither at start nor on demand:
    /// nothing in the image loads it (cuFFTW beside cuFFT in the toolkit wheel).
    pub on_demand: bool,
}

/// Objects with GPU code built for the image's machine, by family (sorted), in path order.
pub fn families(ctx: &ImageContext<'_>) -> BTreeMap<String, Vec<Loaded>> {
    let mut families: BTreeMap<String, Vec<Loaded>> = BTreeMap::new();
    let objects = gpu::gpu_objects(&ctx.image.report.fs);
    let needed = if objects
        .iter()
        .any(|object| !ctx.image.loaded_at_start(&object.path))
    {
        needed_names(ctx)
    } else {
        BTreeSet::new()
    };
    let loading = ImageLoading::embedded();
    for object in objects {
        if !ctx.image.runs_here(&object.path) {
            continue;
        }
        let at_start = ctx.image.loaded_at_start(&object.path);
        let on_demand = !at_start
            && (loading.plugin(&object.path).is_some()
                || names_of(ctx, &object.path)
                    .iter()
                    .any(|name| needed.contains(name.as_str())));
        families
            .entry(gpu::family(&object.path).to_owned())
            .or_default()
            .push(Loaded {
                object,
                at_start,
                on_demand,
            });
    }
    families
}

/// Every name some ELF object of the image lists in its DT_NEEDED.
fn needed_names(ctx: &ImageContext<'_>) -> BTreeSet<String> {
    ctx.image
        .report
        .fs
        .walk()
        .filter(|(_, node)| node.kind == NodeKind::File)
        .filter_map(|(_, node)| match node.captured.as_deref() {
            Some(Captured::Elf(elf)) => Some(elf.needed.iter().cloned()),
            _ => None,
        })
        .flatten()
        .collect()
}

/// The names a NEEDED can find the object at `path` by: its file name and its SONAME.
fn names_of(ctx: &ImageContext<'_>, path: &str) -> Vec<String> {
    let mut names = vec![path.rsplit('/').next().unwrap_or(path).to_owned()];
    if let Some(Captured::Elf(elf)) = ctx
        .image
        .report
        .fs
        .lstat(path)
        .and_then(|node| node.captured.as_deref())
    {
        names.extend(elf.soname.iter().cloned());
    }
    names
}

/// `V100 (sm_70), sm_61`.
pub fn list(gpus: &[&TargetGpu]) -> String {
    gpus.iter()
        .map(|gpu| gpu.label.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `1.2 MB` of GPU code.
pub fn bytes(bytes: u64) -> String {
    crate::units::human_bytes(bytes)
}
