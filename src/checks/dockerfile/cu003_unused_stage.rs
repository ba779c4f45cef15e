//! CU003 unused-stage: a stage that none of the targets the project
//! declares needs, directly or through other stages.
//!
//! Every stage nothing depends on may be a target someone builds
//! (`--target server`, a CI matrix), so without declared targets
//! (`--target`, or `targets = [...]` in `.cudalint.toml`) the rule says
//! nothing. A reference written with variables (`FROM base-${BACKEND}`,
//! `COPY --from=build-$TARGETARCH`) can name any stage whose name it can
//! spell once its variables take other values, so all those stages count as
//! used: a `--build-arg` or another platform picks them.

use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::ast::Command;
use crate::dockerfile::model::{BuildModel, DependencyKind, DependencyTarget, Stage};
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU003",
    name: "unused-stage",
    category: Category::Structure,
    default_severity: Severity::Info,
    fix: FixAvailability::None,
    summary: "A build stage is used by none of the targets the project declares",
    doc: Doc::Page,
};

/// Most `stage × variable reference` pairs matched; past it every stage
/// counts as used, so a hostile file costs linear time and no finding.
const MAX_PATTERN_PAIRS: usize = 1 << 20;

pub struct UnusedStage;

impl DockerfileRule for UnusedStage {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let model = ctx.model;
        let declared = declared_targets(ctx);
        if declared.is_empty() {
            return;
        }
        let used = reachable_from(ctx, &declared);
        // With only `--target`, the stages after it are the file's other
        // targets, left out by that choice; `targets = [...]` names them all.
        let judged = match (ctx.settings.targets.is_empty(), model.target) {
            (true, Some(target)) => target,
            _ => model.stages.len(),
        };
        let names = declared
            .iter()
            .filter_map(|&i| model.stages.get(i))
            .map(stage_label)
            .collect::<Vec<_>>()
            .join(", ");
        for stage in model.stages.iter().take(judged) {
            if used.get(stage.index).copied().unwrap_or(true) {
                continue;
            }
            out.push(
                Diagnostic::at(
                    &META,
                    stage_span(ctx, stage),
                    format!(
                        "{} is used by none of the targets the project builds ({names})",
                        stage_label(stage)
                    ),
                )
                .with_help(
                    "remove the stage, reference it with `COPY --from=` / `FROM` if a target needs it, \
                     or list it in `targets = [...]` in .cudalint.toml if it is built on its own",
                ),
            );
        }
    }
}

/// The stages the project builds: `targets = [...]` and `--target`.
/// Names that are no stage are left out (CU002 is about references).
fn declared_targets(ctx: &DockerfileContext<'_>) -> Vec<usize> {
    let model = ctx.model;
    let mut declared: Vec<usize> = ctx
        .settings
        .targets
        .iter()
        .filter_map(|name| model.stage_by_name(name).map(|s| s.index))
        .collect();
    if model.target_requested {
        declared.extend(model.target);
    }
    declared.sort_unstable();
    declared.dedup();
    declared
}

/// Which stages the `targets` need, by a walk over stage dependencies
/// (each stage is visited once) plus every stage a variable reference can
/// name.
fn reachable_from(ctx: &DockerfileContext<'_>, targets: &[usize]) -> Vec<bool> {
    let model = ctx.model;
    let patterns = variable_references(ctx);
    if patterns.len().saturating_mul(model.stages.len()) > MAX_PATTERN_PAIRS {
        return vec![true; model.stages.len()];
    }
    let mut used = vec![false; model.stages.len()];
    let mut pending = targets.to_vec();
    while let Some(index) = pending.pop() {
        let Some(stage) = model.stages.get(index) else {
            continue;
        };
        if std::mem::replace(&mut used[index], true) {
            continue;
        }
        pending.extend(stage.stage_dependencies());
        for (from, pattern) in patterns.iter().filter(|(from, _)| from.stage == index) {
            pending.extend(
                model
                    .stages
                    .iter()
                    .filter(|other| other.index != index)
                    .filter(|other| !from.earlier_only || other.index < index)
                    .filter(|other| other.name.as_deref().is_some_and(|n| pattern.matches(n)))
                    .map(|other| other.index),
            );
        }
    }
    used
}

/// Where a variable reference is written.
struct ReferenceSite {
    stage: usize,
    /// `FROM` can only name a stage defined before it.
    earlier_only: bool,
}

/// Every stage reference written with a variable, by the stage it is in.
fn variable_references(ctx: &DockerfileContext<'_>) -> Vec<(ReferenceSite, NamePattern)> {
    let model: &BuildModel = ctx.model;
    let mut found = Vec::new();
    for stage in &model.stages {
        let from_word = ctx
            .dockerfile
            .instructions
            .get(stage.from_instruction)
            .and_then(|instruction| match &instruction.command {
                Command::From(from) => Some(from.image.text.as_str()),
                _ => None,
            });
        if let Some(word) = from_word.filter(|w| w.contains('$')) {
            found.push((
                ReferenceSite {
                    stage: stage.index,
                    earlier_only: true,
                },
                NamePattern::of(word),
            ));
        }
        for dependency in &stage.dependencies {
            let written_with_variable = dependency.kind != DependencyKind::From
                && (dependency.target == DependencyTarget::Unresolved
                    || dependency.reference.contains('$'));
            if written_with_variable {
                found.push((
                    ReferenceSite {
                        stage: stage.index,
                        earlier_only: false,
                    },
                    NamePattern::of(&dependency.reference),
                ));
            }
        }
    }
    found
}

/// A reference as written, with each `$VAR` / `${…}` standing for any text.
struct NamePattern {
    /// Lower-cased literal runs between the variables.
    parts: Vec<String>,
}

impl NamePattern {
    fn of(written: &str) -> NamePattern {
        let mut parts = vec![String::new()];
        let mut chars = written.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '$' {
                if let Some(last) = parts.last_mut() {
                    last.extend(c.to_lowercase());
                }
                continue;
            }
            if chars.peek() == Some(&'{') {
                let mut depth = 0usize;
                for inner in chars.by_ref() {
                    match inner {
                        '{' => depth += 1,
                        '}' => {
                            depth = depth.saturating_sub(1);
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
            } else {
                while chars
                    .peek()
                    .is_some_and(|n| n.is_ascii_alphanumeric() || *n == '_')
                {
                    chars.next();
                }
            }
            parts.push(String::new());
        }
        NamePattern { parts }
    }

    /// Whether the variables can take values that spell `name` (lower-case).
    /// Literal runs are matched leftmost, which is exact for `*` globs.
    fn matches(&self, name: &str) -> bool {
        let Some((first, rest)) = self.parts.split_first() else {
            return false;
        };
        let Some(mut remaining) = name.strip_prefix(first.as_str()) else {
            return false;
        };
        let Some((last, middle)) = rest.split_last() else {
            return remaining.is_empty();
        };
        for part in middle {
            match remaining.find(part.as_str()) {
                Some(at) => remaining = &remaining[at + part.len()..],
                None => return false,
            }
        }
        remaining.ends_with(last.as_str())
    }
}

fn stage_label(stage: &Stage) -> String {
    match &stage.name {
        Some(name) => format!("stage `{name}`"),
        None => format!("stage {} (unnamed)", stage.index),
    }
}

/// The stage's `AS name` word when it has one, else its FROM image word.
fn stage_span(ctx: &DockerfileContext<'_>, stage: &Stage) -> Span {
    let name_span = ctx
        .dockerfile
        .instructions
        .get(stage.from_instruction)
        .and_then(|instruction| match &instruction.command {
            Command::From(from) => from.stage_name.as_ref().map(|word| word.span),
            _ => None,
        });
    name_span.unwrap_or(stage.base_span)
}

#[cfg(test)]
mod tests {
    use super::NamePattern;

    #[test]
    fn variables_match_any_text() {
        let p = NamePattern::of("base-${BACKEND:-cuda}");
        assert!(p.matches("base-cuda"));
        assert!(p.matches("base-rocm"));
        assert!(!p.matches("runtime-cuda"));
        let p = NamePattern::of("runtime-$TARGETARCH-slim");
        assert!(p.matches("runtime-arm64-slim"));
        assert!(!p.matches("runtime-arm64"));
        let p = NamePattern::of("builder");
        assert!(p.matches("builder"));
        assert!(!p.matches("builder2"));
        assert!(NamePattern::of("${IMAGE}").matches("anything"));
    }
}
