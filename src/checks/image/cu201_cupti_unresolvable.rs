//! CU201 cupti-unresolvable: an object loaded at start NEEDs `libcupti.so.N` and neither the loader nor
//! a preload of its framework provides it (PyTorch's `libtorch_cpu.so` NEEDs it): the import or the
//! program fails. A copy elsewhere in the image (Triton's bundled CUPTI) does not count unless it is
//! on the object's search path or preloaded.

use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};

pub struct CuptiUnresolvable;

static META: RuleMeta = RuleMeta {
    code: "CU201",
    name: "cupti-unresolvable",
    category: Category::Correctness,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary:
        "A library loaded at start NEEDs CUPTI and the loader cannot find it: the import fails",
    doc: Doc::Page,
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
        for failure in super::start_failures(ctx) {
            let Some(major) = cupti_major(&failure.needed) else {
                continue;
            };
            let mut finding = ctx
                .finding_at(
                    &META,
                    failure.layer,
                    &failure.object,
                    format!(
                        "`{}` needs `{}`, which the loader cannot find in the image: {} fails{}",
                        failure.object,
                        failure.needed,
                        super::what_fails(&failure.root),
                        others(failure.roots)
                    ),
                )
                .with_note(
                    "the loader searched the object's RPATH/RUNPATH, LD_LIBRARY_PATH from the image \
                     config, the ld cache from /etc/ld.so.conf and the default directories, after the \
                     libraries its framework preloads; a copy elsewhere in the image is not on that path",
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
                             where PyTorch's RPATH and preload look) or apt `{}`; or put the directory holding `{}` on \
                             LD_LIBRARY_PATH",
                            entry.pip_package,
                            entry.pip_lib_dir,
                            entry.apt_package.replace("{major}", &major.to_string()).replace("-{minor}", "-X"),
                            failure.needed
                        ))
                        .with_source(entry.source.clone());
                }
                None => {
                    finding = finding.with_help(format!(
                        "install CUPTI for CUDA {major}, or put the directory holding `{}` on LD_LIBRARY_PATH",
                        failure.needed
                    ));
                }
            }
            out.push(finding);
        }
    }
}

/// `, and N other programs or modules` when more than one root fails with it.
pub fn others(roots: usize) -> String {
    match roots {
        0 | 1 => String::new(),
        2 => ", and 1 other program or module".to_owned(),
        n => format!(", and {} other programs or modules", n - 1),
    }
}
