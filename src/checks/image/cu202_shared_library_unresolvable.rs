//! CU202 shared-library-unresolvable: a CUDA-related ELF object (a CUDA library, anything in the
//! toolkit tree or the pip `nvidia-*` wheels, or an object that links a CUDA library or the driver)
//! NEEDs a library that resolves neither in the image nor among the libraries the NVIDIA Container
//! Toolkit injects from the host. CUPTI is CU201's.

use std::collections::BTreeMap;

use super::cu201_cupti_unresolvable::cupti_major;
use super::{ImageContext, ImageRule};
use crate::checks::{Category, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::image::facts::{Captured, FsView};
use crate::knowledge::host_libraries::HostLibraries;

pub struct SharedLibraryUnresolvable;

static META: RuleMeta = RuleMeta {
    code: "CU202",
    name: "shared-library-unresolvable",
    category: Category::Correctness,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "A CUDA-related library or program NEEDs a library the loader cannot find",
    doc: include_str!("../../../docs/rules/CU202.md"),
};

/// Whether the object at `path` is CUDA-related: what a CUDA image's users load.
fn cuda_related(ctx: &ImageContext<'_>, path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    if ctx.content.cuda_library_stem(name).is_some() || ctx.content.is_cuda_runtime_path(path) {
        return true;
    }
    let Some(Captured::Elf(elf)) = ctx
        .image
        .report
        .fs
        .lstat(path)
        .and_then(|node| node.captured.as_deref())
    else {
        return false;
    };
    let host = HostLibraries::embedded();
    elf.needed.iter().any(|needed| {
        ctx.content.cuda_library_stem(needed).is_some() || host.group_of(needed).is_some()
    })
}

impl ImageRule for SharedLibraryUnresolvable {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        let mut missing: BTreeMap<(&str, usize), Vec<&str>> = BTreeMap::new();
        for need in super::faulty_unresolved(ctx) {
            if cupti_major(&need.needed).is_some() || !cuda_related(ctx, &need.object) {
                continue;
            }
            missing
                .entry((need.object.as_str(), need.layer))
                .or_default()
                .push(need.needed.as_str());
        }
        for ((object, layer), names) in missing {
            let list = names
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ");
            out.push(
                ctx.finding_at(
                    &META,
                    layer,
                    object,
                    format!(
                        "`{object}` needs {list}, which the loader cannot find in the image or from the host driver: loading it fails"
                    ),
                )
                .with_help(
                    "install the package that provides it in the image, or put its directory on LD_LIBRARY_PATH \
                     or in /etc/ld.so.conf.d",
                )
                .with_note(
                    "libraries the NVIDIA Container Toolkit injects from the host (libcuda, libnvidia-ml, …) count as found",
                )
                .with_source(HostLibraries::embedded().default_capabilities_source.clone()),
            );
        }
    }
}
