//! CU211 duplicate-cuda-libraries: the same CUDA library is shipped in several places (the same
//! SONAME, or the same build, by GNU build ID, under another name), e.g. the toolkit's `lib64` and
//! a pip `nvidia-*` wheel. The loader uses one of them per process; the others are bytes to save
//! (and, when they are different builds, a version skew waiting to happen).

use super::{human_bytes, ImageContext, ImageRule};
use crate::checks::{Category, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};

pub struct DuplicateCudaLibraries;

static META: RuleMeta = RuleMeta {
    code: "CU211",
    name: "duplicate-cuda-libraries",
    category: Category::Size,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The same CUDA library is shipped in several places",
    doc: include_str!("../../../docs/rules/CU211.md"),
};

impl ImageRule for DuplicateCudaLibraries {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        for group in &ctx.image.content.duplicates {
            for extra in &group.extra {
                let kinship = match extra.same_build(&group.kept) {
                    Some(true) => "the same build (same build ID)",
                    Some(false) => "a different build (another build ID)",
                    None => "not compared (no build ID)",
                };
                out.push(
                    ctx.finding_at(
                        &META,
                        extra.layer,
                        &extra.path,
                        format!(
                            "`{}` ({}) is also shipped at {}, {kinship}: {} could be saved",
                            extra.soname,
                            human_bytes(extra.size),
                            group.kept.path,
                            human_bytes(extra.size)
                        ),
                    )
                    .with_note(format!(
                        "the other copy: {} ({})",
                        group.kept.path,
                        ctx.image.describe_layer(group.kept.layer)
                    ))
                    .with_help(
                        "keep one copy: with pip-installed frameworks use the nvidia-* wheels and a base without \
                         the toolkit's libraries (or the reverse), and do not copy libraries next to programs",
                    )
                    .with_source(ctx.content.library_source.clone()),
                );
            }
        }
    }
}
