//! Helpers several Dockerfile rules share: which base image a stage really
//! stands on, what the knowledge says about it, which stages ship, and
//! which paths a command removes.

use crate::checks::DockerfileContext;
use crate::dockerfile::ast::{Instruction, Word};
use crate::dockerfile::model::{BaseImage, BuildModel, ImageRef, ShellCommand, Stage};
use crate::knowledge::images::BaseImageFacts;
use crate::paths::basename;
use crate::source::Span;

/// The image at the root of `stage`'s `FROM <stage>` chain, if it is an image.
pub fn root_image<'m>(ctx: &DockerfileContext<'m>, stage: &'m Stage) -> Option<&'m ImageRef> {
    // The model records each stage's root: a walk per stage would be
    // quadratic on a long chain.
    match &ctx.model.stages.get(stage.root)?.base {
        BaseImage::Image(image) => Some(image),
        _ => None,
    }
}

/// Knowledge facts about the image `stage` ultimately builds on.
pub fn base_facts(ctx: &DockerfileContext<'_>, stage: &Stage) -> Option<BaseImageFacts> {
    root_image(ctx, stage).and_then(|image| ctx.knowledge.images.classify(image))
}

/// The stages that make up the shipped image: the target stage and the
/// stages it is built `FROM`, root first. Builders it only copies from are
/// not part of it.
pub fn shipped_stages(model: &BuildModel) -> Vec<&Stage> {
    let Some(target) = model.target else {
        return Vec::new();
    };
    let mut stages: Vec<&Stage> = model
        .ancestry(target)
        .into_iter()
        .filter_map(|index| model.stages.get(index))
        .collect();
    stages.reverse();
    stages
}

/// A path that `command` deletes and `matches` accepts: an argument of
/// `rm`, or a starting point of `find … -delete` / `find … -exec rm`.
pub fn rm_target(command: &ShellCommand, matches: impl Fn(&str) -> bool) -> Option<&Word> {
    let words = command.program_words();
    let (program, args) = words.split_first()?;
    let paths: &[Word] = match basename(&program.text) {
        "rm" => args,
        "find" => {
            let deletes = args.iter().enumerate().any(|(at, w)| {
                w.text == "-delete"
                    || (w.text == "-exec"
                        && args
                            .get(at + 1)
                            .is_some_and(|next| basename(&next.text) == "rm"))
            });
            if !deletes {
                return None;
            }
            // The starting points come before the first expression word.
            let end = args
                .iter()
                .position(|w| w.text.starts_with(['-', '(', '!']))
                .unwrap_or(args.len());
            args.get(..end)?
        }
        _ => return None,
    };
    paths
        .iter()
        .filter(|w| !w.text.starts_with('-'))
        .find(|w| matches(&w.text))
}

/// The file text under `span` (empty if the span is out of range).
pub fn span_text<'a>(ctx: &DockerfileContext<'a>, span: Span) -> &'a str {
    ctx.source.text.get(span.start..span.end).unwrap_or("")
}

/// The instructions of `stage`, from its `FROM` to the next stage's.
pub fn stage_instructions<'a>(ctx: &DockerfileContext<'a>, stage: &Stage) -> &'a [Instruction] {
    ctx.dockerfile
        .instructions
        .get(stage.instructions.clone())
        .unwrap_or_default()
}
