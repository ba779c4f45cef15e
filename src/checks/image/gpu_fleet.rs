//! What the GPU-code rules (CU230–CU233, and CU221's verdict on minor-version compatibility) share:
//! the fleet from `--gpu`/`[target] gpus`, the driver from `--driver`, and the image's objects with
//! GPU code grouped by library family, each marked loaded at start or only on demand.

use std::collections::BTreeMap;

use super::ImageContext;
use crate::image::gpu::{self, GpuObject};
use crate::knowledge::gpus::{Gpus, TargetGpu};
use crate::knowledge::Version;

/// The target GPUs (the CLI has already rejected unknown names).
pub fn targets(ctx: &ImageContext<'_>) -> Vec<TargetGpu> {
    let fleet = Gpus::embedded();
    let mut targets: Vec<TargetGpu> = ctx
        .settings
        .target_gpus
        .iter()
        .filter_map(|gpu| fleet.parse_target(gpu).ok())
        .collect();
    targets.sort_by_key(|gpu| gpu.capability);
    targets.dedup_by_key(|gpu| gpu.capability);
    targets
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

/// One object with GPU code and whether it is loaded at start.
pub struct Loaded {
    pub object: GpuObject,
    pub at_start: bool,
}

/// Objects with GPU code built for the image's machine, by family (sorted), in path order.
pub fn families(ctx: &ImageContext<'_>) -> BTreeMap<String, Vec<Loaded>> {
    let mut families: BTreeMap<String, Vec<Loaded>> = BTreeMap::new();
    for object in gpu::gpu_objects(&ctx.image.report.fs) {
        if !ctx.image.runs_here(&object.path) {
            continue;
        }
        let at_start = ctx.image.loaded_at_start(&object.path);
        families
            .entry(gpu::family(&object.path).to_owned())
            .or_default()
            .push(Loaded { object, at_start });
    }
    families
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
