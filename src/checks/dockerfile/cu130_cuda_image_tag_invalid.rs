//! CU130 cuda-image-tag-invalid: an `nvidia/cuda` or `pytorch/pytorch`
//! reference whose tag cannot exist (`latest`, no tag, no variant or OS, an
//! OS or variant never published for that CUDA version, a malformed tag).
//! The pull fails, so the build fails.

use crate::checks::dockerfile::cuda_stages::pulled_images;
use crate::checks::dockerfile::support::span_text;
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::model::ImageRef;
use crate::knowledge::images::{ImageKnowledge, ReleaseStatus, TagProblem};
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU130",
    name: "cuda-image-tag-invalid",
    category: Category::Correctness,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "A CUDA base image tag that does not exist in the registry",
    doc: Doc::Page,
};

pub struct CudaImageTagInvalid;

impl DockerfileRule for CudaImageTagInvalid {
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
    // An ARG that expanded to nothing leaves an empty tag, or an empty part
    // of one (`12.6.2-base-${CUDA_DIST}` with no default): a build argument
    // the build must pass, which is the ARG's business (CU004), not the image.
    let from_args = span_text(ctx, span).contains('$');
    if from_args
        && image
            .tag
            .as_deref()
            .is_none_or(|tag| tag.split('-').any(str::is_empty))
    {
        return;
    }
    // `ARG CUDA_VER=notset`: a default with no digit where the version goes
    // is a placeholder the build must override, not a tag anyone pulls.
    let placeholder = image
        .tag
        .as_deref()
        .and_then(|tag| tag.split('-').next())
        .is_some_and(|version| !version.bytes().any(|b| b.is_ascii_digit()));
    if from_args && placeholder {
        return;
    }
    for problem in images.validate_tag(image) {
        let mut diagnostic = Diagnostic::at(
            &META,
            span,
            format!("`{}` cannot be pulled: the image {problem}", image.text),
        )
        .with_help(help(images, &problem));
        if let Some(note) = note(images, image) {
            diagnostic = diagnostic.with_note(note);
        }
        out.push(diagnostic);
    }
}

fn help(images: &ImageKnowledge, problem: &TagProblem) -> String {
    match problem {
        TagProblem::NoTag
        | TagProblem::Latest
        | TagProblem::MissingVariant
        | TagProblem::MissingOs => match example_tag(images) {
            Some(tag) => format!("pin a full tag, e.g. `{tag}` (version-variant-os)"),
            None => "pin a full tag: version, variant and OS".into(),
        },
        TagProblem::OsNotPublished { published, .. } => {
            format!("pick a published OS: {}", published.join(", "))
        }
        TagProblem::VariantNotPublished { published, .. } => {
            format!("pick a published variant: {}", published.join(", "))
        }
        TagProblem::UnknownVariant { known, .. } => {
            format!("the variant is one of: {}", known.join(", "))
        }
        TagProblem::Malformed { expected, .. } => format!("tags have the form `{expected}`"),
        TagProblem::VersionNotPublished { .. } => {
            let supported: Vec<String> = images
                .releases
                .iter()
                .filter(|r| r.status == ReleaseStatus::Supported)
                .map(|r| r.version.to_string())
                .collect();
            format!("supported CUDA image releases: {}", supported.join(", "))
        }
    }
}

/// A full tag of the newest supported release, runtime on its first OS.
fn example_tag(images: &ImageKnowledge) -> Option<String> {
    images
        .releases
        .iter()
        .filter(|r| r.status == ReleaseStatus::Supported && r.complete)
        .find_map(|r| {
            let os = r
                .os_names()
                .into_iter()
                .find(|os| r.publishes("runtime", os) == Some(true))?;
            Some(format!("{}-runtime-{os}", r.version))
        })
}

fn note(images: &ImageKnowledge, image: &ImageRef) -> Option<String> {
    let canonical = images.canonicalize(image);
    if !images.is_nvidia_cuda(&canonical.repository) {
        return None;
    }
    let release = canonical
        .tag
        .as_deref()
        .and_then(|t| crate::knowledge::images::parse_cuda_tag(t).ok())
        .and_then(|t| images.release(t.version));
    Some(match (release, images.policy.as_ref()) {
        (Some(release), _) => format!("published tags: {}", release.source),
        (None, Some(policy)) => format!("nvidia/cuda has no `latest` tag: {}", policy.source),
        (None, None) => images.nvidia_cuda_source.clone(),
    })
}
