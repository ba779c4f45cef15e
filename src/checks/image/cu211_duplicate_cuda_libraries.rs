//! CU211 duplicate-cuda-libraries: the same CUDA library is shipped in several places (the same
//! SONAME, or the same build, by GNU build ID, under another name), e.g. the toolkit's `lib64` and
//! a pip `nvidia-*` wheel. The loader uses one of them per process; the others are bytes to save
//! (and, when they are different builds, a version skew waiting to happen). One finding per library,
//! listing every copy. Not copies: a wheel's one file under each of its names (wheels hold no
//! symbolic links), link stubs (CU210's), and copies a package loads from its own path for its own
//! feature (Triton's CUPTI), which a user cannot drop. Reported from `[image] duplicate-bytes` on.

use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::image::content::LibraryCopy;
use crate::units::human_bytes;

pub struct DuplicateCudaLibraries;

static META: RuleMeta = RuleMeta {
    code: "CU211",
    name: "duplicate-cuda-libraries",
    category: Category::Size,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The same CUDA library is shipped in several places",
    doc: Doc::Page,
};

impl ImageRule for DuplicateCudaLibraries {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        for group in &ctx.image.content.duplicates {
            let saved = group.saved_bytes();
            if saved < ctx.settings.image.duplicate_bytes {
                continue;
            }
            let Some(first_extra) = group.extra.first() else {
                continue;
            };
            let mut finding = ctx.finding_at(
                &META,
                first_extra.layer,
                &first_extra.path,
                format!(
                    "`{}` is shipped {} times ({} and {}): {} could be saved by keeping one",
                    group.soname,
                    group.extra.len() + 1,
                    group.kept.path,
                    group
                        .extra
                        .iter()
                        .map(|copy| copy.path.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    human_bytes(saved)
                ),
            );
            finding = finding.with_note(describe(ctx, &group.kept, "kept"));
            for extra in &group.extra {
                let kinship = match extra.same_build(&group.kept) {
                    Some(true) => "the same build (same build ID)",
                    Some(false) => "a different build (another build ID)",
                    None => "not compared (no build ID)",
                };
                finding = finding.with_note(describe(ctx, extra, kinship));
            }
            out.push(
                finding
                    .with_help(
                        "keep one copy: with pip-installed frameworks use the nvidia-* wheels and a base without \
                         the toolkit's libraries (or the reverse), and do not copy libraries next to programs",
                    )
                    .with_source(ctx.content.library_source.clone()),
            );
        }
    }
}

/// `/path (1.2 MB, layer 3 made by …; also as …): kinship`, one copy as a note says it.
fn describe(ctx: &ImageContext<'_>, copy: &LibraryCopy, kinship: &str) -> String {
    let aliases = if copy.aliases.is_empty() {
        String::new()
    } else {
        format!(
            "; the same file also as {}",
            copy.aliases
                .iter()
                .map(|alias| alias.rsplit('/').next().unwrap_or(alias))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    format!(
        "{} ({}, {}{aliases}): {kinship}",
        copy.path,
        human_bytes(copy.size),
        ctx.image.describe_layer(copy.layer)
    )
}
