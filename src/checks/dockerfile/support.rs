//! Helpers several Dockerfile rules share: which base image a stage really
//! stands on, and what the knowledge says about it.

use crate::checks::DockerfileContext;
use crate::dockerfile::model::{BaseImage, ImageRef, Stage};
use crate::knowledge::images::BaseImageFacts;
use crate::source::Span;

/// The image at the root of `stage`'s `FROM <stage>` chain, if it is an image.
pub fn root_image<'m>(ctx: &DockerfileContext<'m>, stage: &'m Stage) -> Option<&'m ImageRef> {
    let mut current = stage;
    // Each step goes to a strictly earlier stage, so this ends; the bound
    // guards against a malformed model all the same.
    for _ in 0..=ctx.model.stages.len() {
        match &current.base {
            BaseImage::Image(image) => return Some(image),
            BaseImage::Stage(index) if *index < current.index => {
                current = ctx.model.stages.get(*index)?;
            }
            _ => return None,
        }
    }
    None
}

/// Knowledge facts about the image `stage` ultimately builds on.
pub fn base_facts(ctx: &DockerfileContext<'_>, stage: &Stage) -> Option<BaseImageFacts> {
    root_image(ctx, stage).and_then(|image| ctx.knowledge.images.classify(image))
}

/// The stages whose filesystem is the shipped image: the target, then the
/// stages it is built `FROM`, nearest first. Empty without a target.
pub fn shipped_stages<'m>(ctx: &DockerfileContext<'m>) -> Vec<&'m Stage> {
    let Some(target) = ctx.model.target else {
        return Vec::new();
    };
    let stages = &ctx.model.stages;
    ctx.model
        .ancestry(target)
        .into_iter()
        .filter_map(|index| stages.get(index))
        .collect()
}

/// The file text under `span` (empty if the span is out of range).
pub fn span_text<'a>(ctx: &DockerfileContext<'a>, span: Span) -> &'a str {
    ctx.source.text.get(span.start..span.end).unwrap_or("")
}
