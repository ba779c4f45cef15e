//! CU202 shared-library-unresolvable: a CUDA-related ELF object (a CUDA library, anything in the
//! toolkit tree or the pip `nvidia-*` wheels, or an object that links a CUDA library or the driver)
//! that is loaded at start (by a program, an import, or a framework's preload) NEEDs a library that
//! resolves neither in the image, nor through its framework's preload, nor among the libraries the
//! NVIDIA Container Toolkit injects from the host: the program or the import fails. CUPTI is CU201's;
//! plugins opened only on demand are CU204's and CU205's.

use std::collections::BTreeMap;

use super::cu201_cupti_unresolvable::{cupti_major, others};
use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::knowledge::host_libraries::HostLibraries;

pub struct SharedLibraryUnresolvable;

static META: RuleMeta = RuleMeta {
    code: "CU202",
    name: "shared-library-unresolvable",
    category: Category::Correctness,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "A CUDA-related object loaded at start NEEDs a library the loader cannot find",
    doc: Doc::Page,
};

impl ImageRule for SharedLibraryUnresolvable {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        let mut missing: BTreeMap<(&str, usize), (Vec<&str>, &str, usize)> = BTreeMap::new();
        for failure in super::start_failures(ctx) {
            if cupti_major(&failure.needed).is_some() || !super::cuda_related(ctx, &failure.object)
            {
                continue;
            }
            let entry = missing
                .entry((failure.object.as_str(), failure.layer))
                .or_insert_with(|| (Vec::new(), failure.root.as_str(), failure.roots));
            entry.0.push(failure.needed.as_str());
            entry.2 = entry.2.max(failure.roots);
        }
        for ((object, layer), (names, root, roots)) in missing {
            let list = super::name_list(&names);
            out.push(
                ctx.finding_at(
                    &META,
                    layer,
                    object,
                    format!(
                        "`{object}` needs {list}, which the loader cannot find in the image or from the host driver: {} fails{}",
                        super::what_fails(root),
                        others(roots)
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
