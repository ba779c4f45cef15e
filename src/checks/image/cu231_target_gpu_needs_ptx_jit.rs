//! CU231 target-gpu-needs-ptx-jit: a target GPU gets a library's kernels only by JIT-compiling its
//! PTX: the first start compiles them (minutes for a large library) into the JIT cache, which must be
//! large enough and writable or every start compiles again. Information, one finding per family.

use super::gpu_fleet;
use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::image::gpu::{coverage, Coverage};
use crate::knowledge::gpus::{Gpus, TargetGpu};

pub struct TargetGpuNeedsPtxJit;

static META: RuleMeta = RuleMeta {
    code: "CU231",
    name: "target-gpu-needs-ptx-jit",
    category: Category::Compatibility,
    default_severity: Severity::Info,
    fix: FixAvailability::None,
    summary: "A target GPU runs a library's kernels only after JIT-compiling its PTX",
    doc: Doc::Page,
};

impl ImageRule for TargetGpuNeedsPtxJit {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        let targets = gpu_fleet::targets(ctx);
        if targets.is_empty() {
            return;
        }
        for (_, objects) in gpu_fleet::families(ctx) {
            let found = objects.iter().find_map(|object| {
                let mut entries = 0;
                let mut bytes = 0;
                let gpus: Vec<&TargetGpu> = targets
                    .iter()
                    .filter(|gpu| match coverage(&object.object.code, gpu.capability) {
                        Coverage::PtxOnly {
                            entries: n,
                            bytes: b,
                            ..
                        } => {
                            entries = entries.max(n);
                            bytes = bytes.max(b);
                            true
                        }
                        _ => false,
                    })
                    .collect();
                (!gpus.is_empty()).then_some((object, gpus, entries, bytes))
            });
            let Some((object, gpus, entries, bytes)) = found else {
                continue;
            };
            let path = &object.object.path;
            let rules = &Gpus::embedded().compatibility;
            out.push(
                ctx.finding_at(
                    &META,
                    object.object.layer,
                    path,
                    format!(
                        "`{path}` has no SASS for {}: the driver JIT-compiles its PTX ({entries} entries, {} of PTX) at the first start, \
                         which takes a while and needs a JIT cache large enough and writable",
                        gpu_fleet::list(&gpus),
                        gpu_fleet::bytes(bytes)
                    ),
                )
                .with_help(
                    "build SASS for those GPUs, or keep the JIT cache between starts: a writable CUDA_CACHE_PATH on a volume and \
                     CUDA_CACHE_MAXSIZE above the PTX's compiled size",
                )
                .with_note(rules.ptx.clone())
                .with_source(rules.ptx_source.clone())
                .with_source("https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#just-in-time-compilation"),
            );
        }
    }
}
