//! CU003 unused-stage: a stage the target does not depend on, directly or
//! through other stages. BuildKit skips it, so it is dead code that still
//! costs readers (and legacy builders, which build every stage) time.

use crate::checks::{Category, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::ast::Command;
use crate::dockerfile::model::{BaseImage, BuildModel, DependencyTarget, Stage};
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU003",
    name: "unused-stage",
    category: Category::Structure,
    default_severity: Severity::Info,
    fix: FixAvailability::None,
    summary: "A build stage is not used by the target stage",
    doc: include_str!("../../../docs/rules/CU003.md"),
};

pub struct UnusedStage;

impl DockerfileRule for UnusedStage {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let model = ctx.model;
        // Without a known target (none, or `--target` names no stage) any
        // stage might be the one built.
        let Some(target) = model.target else {
            return;
        };
        let used = reachable_from(model, target);
        let target_name = model
            .stages
            .get(target)
            .map(stage_label)
            .unwrap_or_default();
        // Stages after an explicit `--target` are left out on purpose by
        // whoever picked that target; only earlier ones are dead weight.
        for stage in model.stages.iter().take(target) {
            if used.get(stage.index).copied().unwrap_or(true) {
                continue;
            }
            out.push(
                Diagnostic::at(
                    &META,
                    stage_span(ctx, stage),
                    format!(
                        "{} is not used by the build of {target_name}",
                        stage_label(stage)
                    ),
                )
                .with_help(
                    "remove the stage, or reference it with `COPY --from=` / `FROM` if the target needs it",
                ),
            );
        }
    }
}

/// Which stages `target` needs, by a walk over stage dependencies; each
/// stage is visited once, so this is linear in the model's size.
fn reachable_from(model: &BuildModel, target: usize) -> Vec<bool> {
    let mut used = vec![false; model.stages.len()];
    let mut pending = vec![target];
    while let Some(index) = pending.pop() {
        let Some(stage) = model.stages.get(index) else {
            continue;
        };
        if std::mem::replace(&mut used[index], true) {
            continue;
        }
        if let BaseImage::Stage(parent) = stage.base {
            pending.push(parent);
        }
        pending.extend(stage.dependencies.iter().filter_map(|d| match d.target {
            DependencyTarget::Stage(other) => Some(other),
            _ => None,
        }));
    }
    used
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
