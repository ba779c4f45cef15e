//! CU232 ptx-newer-than-driver: with a target driver, a target GPU reaches a library only through
//! PTX whose ISA version is newer than the driver can compile: the kernels fail with `the provided
//! PTX was compiled with an unsupported toolchain`. Minor-version compatibility does not cover PTX JIT.

use super::gpu_fleet;
use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::image::gpu::{coverage, Coverage};
use crate::knowledge::gpus::{Gpus, TargetGpu};

pub struct PtxNewerThanDriver;

static META: RuleMeta = RuleMeta {
    code: "CU232",
    name: "ptx-newer-than-driver",
    category: Category::Compatibility,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "A target GPU needs a library's PTX, written for a newer CUDA than the target driver",
    doc: Doc::Page,
};

impl ImageRule for PtxNewerThanDriver {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        let targets = gpu_fleet::targets(ctx);
        let Some(driver) = gpu_fleet::driver(ctx) else {
            return;
        };
        let Some(driver_cuda) = gpu_fleet::driver_cuda(ctx, driver) else {
            return;
        };
        let fleet = Gpus::embedded();
        for (_, objects) in gpu_fleet::families(ctx) {
            let found = objects
                .iter()
                .filter(|object| object.at_start)
                .find_map(|object| {
                    let mut needs = None;
                    let gpus: Vec<&TargetGpu> = targets
                        .iter()
                        .filter(|gpu| match coverage(&object.object.code, gpu.capability) {
                            Coverage::PtxOnly { isa, .. } => {
                                match fleet.ptx_too_new(isa, driver_cuda) {
                                    Some(cuda) => {
                                        needs = Some((isa, cuda));
                                        true
                                    }
                                    None => false,
                                }
                            }
                            _ => false,
                        })
                        .collect();
                    Some((object, gpus, needs?))
                });
            let Some((object, gpus, ((major, minor), cuda))) = found else {
                continue;
            };
            let path = &object.object.path;
            out.push(
                ctx.finding_at(
                    &META,
                    object.object.layer,
                    path,
                    format!(
                        "`{path}` reaches {} only through PTX ISA {major}.{minor}, which needs the driver of {cuda}; driver {driver} \
                         (CUDA {driver_cuda}) fails with `the provided PTX was compiled with an unsupported toolchain`",
                        gpu_fleet::list(&gpus),
                    ),
                )
                .with_help(format!(
                    "upgrade the hosts' driver to one of {cuda} or newer, or install a build with SASS for those GPUs"
                ))
                .with_note("minor-version compatibility runs newer CUDA runtimes on an older driver, but not JIT compilation of newer PTX")
                .with_source(fleet.ptx_isa.source.clone())
                .with_source("https://docs.nvidia.com/deploy/cuda-compatibility/#minor-version-compatibility"),
            );
        }
    }
}
