//! CU201 cupti-unresolvable: an ELF object NEEDs `libcupti.so.N` and the loader cannot find it in the
//! image (PyTorch's `libtorch_cpu.so` does): loading the object, e.g. `import torch`, fails.

use super::{ImageContext, ImageRule};
use crate::checks::{Category, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};

pub struct CuptiUnresolvable;

static META: RuleMeta = RuleMeta {
    code: "CU201",
    name: "cupti-unresolvable",
    category: Category::Correctness,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "A library NEEDs CUPTI and the loader cannot find it in the image",
    doc: include_str!("../../../docs/rules/CU201.md"),
};

/// The CUDA major a CUPTI SONAME belongs to (`libcupti.so.12` → 12, `libcupti.so.11.8` → 11).
pub fn cupti_major(soname: &str) -> Option<u32> {
    soname
        .strip_prefix("libcupti.so.")?
        .split('.')
        .next()?
        .parse()
        .ok()
}

impl ImageRule for CuptiUnresolvable {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        for need in super::faulty_unresolved(ctx) {
            let Some(major) = cupti_major(&need.needed) else {
                continue;
            };
            let mut finding = ctx
                .finding_at(
                    &META,
                    need.layer,
                    &need.object,
                    format!(
                        "`{}` needs `{}`, which the loader cannot find in the image: loading it fails",
                        need.object, need.needed
                    ),
                )
                .with_note(
                    "the loader searched the object's RPATH/RUNPATH, LD_LIBRARY_PATH from the image \
                     config, the ld cache from /etc/ld.so.conf and the default directories",
                );
            match ctx
                .knowledge
                .cupti
                .majors
                .iter()
                .find(|entry| entry.cuda_major == major)
            {
                Some(entry) => {
                    finding = finding
                        .with_help(format!(
                            "install CUPTI for CUDA {major}: pip `{}` (its library lands in site-packages/{}, \
                             where PyTorch's RPATH looks) or apt `{}`; or put the directory holding `{}` on \
                             LD_LIBRARY_PATH",
                            entry.pip_package,
                            entry.pip_lib_dir,
                            entry.apt_package.replace("{major}", &major.to_string()).replace("-{minor}", "-X"),
                            need.needed
                        ))
                        .with_source(entry.source.clone());
                }
                None => {
                    finding = finding.with_help(format!(
                        "install CUPTI for CUDA {major}, or put the directory holding `{}` on LD_LIBRARY_PATH",
                        need.needed
                    ));
                }
            }
            out.push(finding);
        }
    }
}
