//! CU131 cuda-image-eol: the base image's CUDA release is end-of-life (no
//! more rebuilds or security fixes, tags deleted after six months) or its
//! tags were already deleted (the pull fails).

use crate::checks::dockerfile::cuda_stages::pulled_images;
use crate::checks::{Category, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::model::ImageRef;
use crate::knowledge::images::{parse_cuda_tag, EolBasis, EolInfo, ReleaseStatus};
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU131",
    name: "cuda-image-eol",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The CUDA base image release is end-of-life or deleted",
    doc: include_str!("../../../docs/rules/CU131.md"),
};

pub struct CudaImageEol;

impl DockerfileRule for CudaImageEol {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        for (image, span) in pulled_images(ctx) {
            report(ctx, image, span, out);
        }
    }
}

fn report(ctx: &DockerfileContext<'_>, image: &ImageRef, span: Span, out: &mut Vec<Diagnostic>) {
    let images = &ctx.knowledge.images;
    let canonical = images.canonicalize(image);
    if !images.is_nvidia_cuda(&canonical.repository) {
        return;
    }
    let Some(tag) = canonical
        .tag
        .as_deref()
        .and_then(|t| parse_cuda_tag(t).ok())
    else {
        return;
    };
    let Some(eol) = images.eol(tag.version) else {
        return;
    };
    let mut diagnostic = Diagnostic::at(&META, span, message(image, &eol))
        .with_help(help(&eol))
        .with_note(format!("source: {}", eol.source));
    if let (ReleaseStatus::Eol, Some(months)) = (eol.status, eol.deletion_after_months) {
        diagnostic = diagnostic.with_note(format!(
            "NVIDIA deletes EOL tags from Docker Hub and NGC {months} months after EOL, and only the latest point release of a CUDA version is supported"
        ));
    }
    out.push(diagnostic);
}

fn message(image: &ImageRef, eol: &EolInfo) -> String {
    let why = match (&eol.basis, &eol.since) {
        (EolBasis::Superseded { by }, _) => format!(" (superseded by {by})"),
        (_, Some(since)) => format!(" since {since}"),
        _ => String::new(),
    };
    match eol.status {
        ReleaseStatus::Removed => format!(
            "`{}`: CUDA {} images were deleted from the registry, so the pull fails",
            image.text, eol.version
        ),
        _ => format!(
            "`{}`: CUDA {} images are end-of-life{why}: no more rebuilds or security fixes, and the tag is due for deletion",
            image.text, eol.version
        ),
    }
}

fn help(eol: &EolInfo) -> String {
    let alternatives: Vec<String> = eol
        .supported_alternatives
        .iter()
        .map(|v| v.to_string())
        .collect();
    match (&eol.basis, alternatives.is_empty()) {
        (EolBasis::Superseded { by }, _) => {
            format!("move to CUDA {by}, the supported point release")
        }
        (_, false) => format!(
            "move to a supported CUDA image release: {}",
            alternatives.join(", ")
        ),
        (_, true) => "move to a supported CUDA image release".into(),
    }
}
