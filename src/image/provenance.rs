//! Which Dockerfile instruction made which layer (`cudalint image --dockerfile FILE`, and
//! `cudalint build`): the layer-making instructions of the target stage's chain are paired with the
//! image's layers from the last one backwards, each history line matched to the nearest earlier
//! instruction of its kind (`RUN`, `COPY`, `ADD`, `WORKDIR`), so layers of the base image (which the
//! Dockerfile does not build) stay unpaired. Both builders' history lines are read: the classic
//! builder's `/bin/sh -c #(nop) COPY …` and BuildKit's `COPY … # buildkit`.

use std::collections::BTreeMap;

use super::scan::ScannedImage;
use crate::diagnostic::{Diagnostic, Location, Related};
use crate::dockerfile::ast::Instruction;
use crate::dockerfile::model::BuildOptions;
use crate::source::{SourceFile, Span};

/// The instruction that made each layer the Dockerfile built, by layer index.
pub fn layer_instructions(
    image: &ScannedImage,
    dockerfile: &SourceFile,
    build: &BuildOptions,
) -> BTreeMap<usize, Span> {
    let mut made_by = BTreeMap::new();
    let Ok((parsed, _)) = crate::dockerfile::parse_syntax(&dockerfile.text) else {
        return made_by;
    };
    let model = crate::dockerfile::build_model(&parsed, build);
    let Some(target) = model.target else {
        return made_by;
    };
    let mut chain = model.ancestry(target);
    chain.reverse();
    let instructions: Vec<&Instruction> = chain
        .iter()
        .filter_map(|&index| model.stages.get(index))
        .flat_map(|stage| {
            parsed
                .instructions
                .get(stage.instructions.clone())
                .unwrap_or_default()
        })
        .filter(|instruction| layer_kind(&instruction.keyword).is_some())
        .collect();
    let history = image.report.config.layer_history(image.report.layers.len());
    let mut remaining = instructions.iter().rev().peekable();
    for (layer, entry) in history.iter().enumerate().rev() {
        let Some(entry) = entry else { break };
        let wanted = history_kind(&entry.created_by);
        // The nearest earlier instruction of the same kind; none left: the base image's layers.
        let found = loop {
            match remaining.next() {
                Some(instruction) if layer_kind(&instruction.keyword) == Some(wanted) => {
                    break Some(instruction)
                }
                Some(_) => continue,
                None => break None,
            }
        };
        match found {
            Some(instruction) => {
                made_by.insert(layer, instruction.span);
            }
            None => break,
        }
        if remaining.peek().is_none() {
            break;
        }
    }
    made_by
}

/// Adds to each image finding at a layer the instruction that made it.
pub fn link(
    findings: &mut [Diagnostic],
    image: &ScannedImage,
    dockerfile: &SourceFile,
    made_by: &BTreeMap<usize, Span>,
) {
    let layer_of: BTreeMap<String, usize> = (0..image.report.layers.len())
        .map(|index| (image.layer_name(index), index))
        .collect();
    for finding in findings {
        let Location::Image {
            layer: Some(layer), ..
        } = &finding.location
        else {
            continue;
        };
        let Some(&index) = layer_of.get(layer) else {
            continue;
        };
        let Some(&span) = made_by.get(&index) else {
            continue;
        };
        finding.related.push(Related {
            origin: dockerfile.name.clone(),
            span,
            start: dockerfile.line_col(span.start),
            end: dockerfile.line_col(span.end),
            message: format!("layer {} was made by this instruction", index + 1),
        });
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LayerKind {
    Run,
    Copy,
    Add,
    Workdir,
}

fn layer_kind(keyword: &str) -> Option<LayerKind> {
    match keyword {
        "run" => Some(LayerKind::Run),
        "copy" => Some(LayerKind::Copy),
        "add" => Some(LayerKind::Add),
        "workdir" => Some(LayerKind::Workdir),
        _ => None,
    }
}

/// The kind of instruction a history line records.
fn history_kind(created_by: &str) -> LayerKind {
    let text = created_by.trim();
    let text = text
        .strip_prefix("/bin/sh -c #(nop)")
        .map(str::trim_start)
        .unwrap_or(text);
    let first = text.split_whitespace().next().unwrap_or("");
    match first {
        "COPY" => LayerKind::Copy,
        "ADD" => LayerKind::Add,
        "WORKDIR" => LayerKind::Workdir,
        _ => LayerKind::Run,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_lines_of_both_builders() {
        assert_eq!(
            history_kind("/bin/sh -c #(nop) COPY file:ab12 in /bin/busybox "),
            LayerKind::Copy
        );
        assert_eq!(
            history_kind("COPY bin/busybox /bin/busybox # buildkit"),
            LayerKind::Copy
        );
        assert_eq!(
            history_kind("/bin/sh -c #(nop) ADD file:ab12 in / "),
            LayerKind::Add
        );
        assert_eq!(history_kind("/bin/sh -c apt-get update"), LayerKind::Run);
        assert_eq!(
            history_kind("RUN /bin/sh -c pip install torch # buildkit"),
            LayerKind::Run
        );
        assert_eq!(
            history_kind("/bin/sh -c #(nop) WORKDIR /app"),
            LayerKind::Workdir
        );
        assert_eq!(history_kind("|1 X=1 /bin/sh -c make"), LayerKind::Run);
    }
}
