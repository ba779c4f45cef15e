//! CU220 driver-libraries-shipped: the driver's own user-space (`libcuda.so*`, `libnvidia-ml.so*`,
//! the other libraries the NVIDIA Container Toolkit injects, and `nvidia-smi`) is baked into the
//! image outside a forward-compatibility (`compat`) or link-stub directory. Baked copies shadow the
//! ones the toolkit mounts from the host and break as soon as the host driver differs.

use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::image::facts::FsView;
use crate::image::facts::NodeKind;
use crate::knowledge::host_libraries::HostLibraries;

pub struct DriverLibrariesInImage;

static META: RuleMeta = RuleMeta {
    code: "CU220",
    name: "driver-libraries-shipped",
    category: Category::Compatibility,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "The driver's own libraries or nvidia-smi are baked into the image",
    doc: Doc::Page,
};

impl ImageRule for DriverLibrariesInImage {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        let host = HostLibraries::embedded();
        let runtime = &ctx.knowledge.cupti.runtime;
        for (path, node) in ctx.image.report.fs.walk() {
            if node.kind != NodeKind::File {
                continue;
            }
            let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
            let what = if let Some(group) = host.group_of(name) {
                format!(
                    "the driver's own library (capability `{}`), which the NVIDIA Container Toolkit mounts from the host",
                    group.capability
                )
            } else if ctx.content.is_driver_program(name) {
                "a driver program, which the NVIDIA Container Toolkit mounts from the host"
                    .to_owned()
            } else {
                continue;
            };
            if runtime.is_compat_dir(dir) || runtime.is_stub_dir(dir) {
                continue;
            }
            let mut finding = ctx
                .finding_at(
                    &META,
                    node.layer,
                    path,
                    format!(
                        "`{path}` is {what}: a baked copy shadows the host's and fails when the host driver differs"
                    ),
                )
                .with_help(
                    "do not install driver packages (libcuda1, libnvidia-compute-*, nvidia-utils-*) in the image; \
                     for a newer CUDA on an older data-center driver use the cuda-compat package, which installs \
                     under /usr/local/cuda/compat",
                )
                .with_source(ctx.content.driver_source.clone());
            if let Some(group) = host.group_of(name) {
                finding = finding.with_source(group.source.clone());
            }
            out.push(finding);
        }
    }
}
