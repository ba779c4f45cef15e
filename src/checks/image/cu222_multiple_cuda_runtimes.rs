//! CU222 multiple-cuda-runtimes: CUDA runtimes (`libcudart`) of different majors coexist in the
//! image, or the only major shipped is not the one the base image declares (`CUDA_VERSION`). Which
//! one a program loads then depends on search order, and every extra major is a full set of
//! libraries shipped for nothing.

use std::collections::BTreeMap;

use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::image::facts::FsView;
use crate::image::inventory::CudaLibrary;
use crate::knowledge::Version;

pub struct MultipleCudaRuntimes;

static META: RuleMeta = RuleMeta {
    code: "CU222",
    name: "multiple-cuda-runtimes",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "CUDA runtimes of different majors coexist, or differ from the base image's",
    doc: Doc::Page,
};

impl ImageRule for MultipleCudaRuntimes {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        let runtime_env = &ctx.knowledge.cupti.runtime;
        let mut by_major: BTreeMap<u32, Vec<&CudaLibrary>> = BTreeMap::new();
        for library in ctx.image.inventory.cuda_runtimes() {
            let dir = library.path.rsplit_once('/').map_or("", |(dir, _)| dir);
            if runtime_env.is_compat_dir(dir) || runtime_env.is_stub_dir(dir) {
                continue;
            }
            if let Some(major) = library.cuda_major() {
                by_major.entry(major).or_default().push(library);
            }
        }
        let declared = ctx
            .image
            .report
            .config
            .env_var(&runtime_env.legacy_version_var)
            .and_then(Version::parse)
            .map(Version::major);
        let listing = by_major
            .iter()
            .map(|(major, libraries)| {
                let paths: Vec<&str> = libraries.iter().map(|l| l.path.as_str()).collect();
                format!("CUDA {major}: {}", paths.join(", "))
            })
            .collect::<Vec<_>>();
        let strays: Vec<(u32, &CudaLibrary)> = match declared {
            Some(base) if by_major.len() > 1 || !by_major.contains_key(&base) => by_major
                .iter()
                .filter(|(major, _)| **major != base)
                .map(|(major, libraries)| (*major, libraries[0]))
                .collect(),
            None if by_major.len() > 1 => by_major
                .iter()
                .skip(1)
                .map(|(major, libraries)| (*major, libraries[0]))
                .collect(),
            _ => Vec::new(),
        };
        for (major, library) in strays {
            let layer = ctx
                .image
                .report
                .fs
                .lstat(&library.path)
                .map_or(0, |node| node.layer);
            let message = match declared {
                Some(base) => format!(
                    "a CUDA {major} runtime (`{}`) ships in an image whose base declares CUDA {base} (`{}`)",
                    library.path, runtime_env.legacy_version_var
                ),
                None => format!(
                    "CUDA runtimes of {} majors coexist; `{}` is CUDA {major}",
                    by_major.len(),
                    library.path
                ),
            };
            let mut finding = ctx
                .finding_at(&META, layer, &library.path, message)
                .with_help(
                    "keep one CUDA major: install wheels and packages built for the base image's CUDA (or move the \
                     base to the CUDA the framework needs), and remove the other runtime",
                )
                .with_source(ctx.content.library_source.clone());
            for line in &listing {
                finding = finding.with_note(line.clone());
            }
            out.push(finding);
        }
    }
}
