//! CU233 compressed-gpu-code-needs-driver: with a target driver, a library loaded at start carries
//! fatbin entries compressed in a way the driver cannot decompress (ZSTD, from nvcc 12.8's
//! `--compress-mode`, needs a CUDA 12.4 driver): loading its kernels fails with `device kernel image
//! is invalid`.

use super::gpu_fleet;
use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::knowledge::gpus::Gpus;

pub struct CompressedGpuCodeNeedsDriver;

static META: RuleMeta = RuleMeta {
    code: "CU233",
    name: "compressed-gpu-code-needs-driver",
    category: Category::Compatibility,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "A library's GPU code is compressed in a way the target driver cannot load",
    doc: Doc::Page,
};

impl ImageRule for CompressedGpuCodeNeedsDriver {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        let Some(driver) = gpu_fleet::driver(ctx) else {
            return;
        };
        let fleet = Gpus::embedded();
        for (_, objects) in gpu_fleet::families(ctx) {
            let found =
                objects
                    .iter()
                    .filter(|object| object.at_start)
                    .find_map(|object| {
                        object.object.code.compression().into_iter().find_map(
                            |(compression, count)| {
                                let (needs, source) = fleet.compression_need(compression.name())?;
                                (driver < needs).then_some((
                                    object,
                                    compression.name(),
                                    count,
                                    needs,
                                    source,
                                ))
                            },
                        )
                    });
            let Some((object, name, count, needs, source)) = found else {
                continue;
            };
            let path = &object.object.path;
            out.push(
                ctx.finding_at(
                    &META,
                    object.object.layer,
                    path,
                    format!(
                        "`{path}` holds {count} GPU code entries compressed with {}, which need driver {needs} or newer; \
                         driver {driver} cannot load them (`device kernel image is invalid`)",
                        name.to_uppercase()
                    ),
                )
                .with_help(format!(
                    "upgrade the hosts' driver to {needs} or newer, or rebuild with `--compress-mode=none` or `--compress-mode=speed` (LZ4)"
                ))
                .with_source(source.to_owned()),
            );
        }
    }
}
