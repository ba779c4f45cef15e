//! CU106 source-copied-before-dependencies: `COPY . …` (the whole build
//! context) comes before the heavy dependency install of its stage
//! (`pip install -r requirements.txt`, torch by name, `conda env create`,
//! `uv sync`), which needs only the requirements or lock file: every edit
//! to any source file then re-runs the install. The dependency commands and
//! heavy packages are data (`rules/build.toml`); the RUN reading is
//! `build_steps`.

use crate::checks::dockerfile::build_steps::{built_stages, dependency_install, heavy_install};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::ast::{Command, CopyCommand, Word};
use crate::dockerfile::model::{BaseImage, Stage};
use crate::knowledge::build::BuildFacts;

pub static META: RuleMeta = RuleMeta {
    code: "CU106",
    name: "source-copied-before-dependencies",
    category: Category::Size,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The source tree is copied before the dependency install, so every edit reinstalls",
    doc: Doc::Page,
};

pub struct SourceCopiedBeforeDependencies;

/// The context-root source of a `COPY`/`ADD` from the build context.
fn whole_context(copy: &CopyCommand) -> Option<&Word> {
    if copy.from.is_some() {
        return None;
    }
    copy.sources
        .iter()
        .find(|w| matches!(w.text.as_str(), "." | "./" | "./."))
}

/// What a RUN installs that makes it a dependency install: `(span of the
/// instruction's start line, what, size note)`.
fn dependency_step(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    index: usize,
    facts: &BuildFacts,
) -> Option<(String, Option<String>)> {
    let step = stage.runs.iter().find(|run| run.instruction == index)?;
    let heavy = heavy_install(step, facts);
    if let Some((_, text)) = dependency_install(ctx, step, facts) {
        return Some((
            format!("`{text}`"),
            heavy.and_then(|h| {
                h.facts
                    .size
                    .clone()
                    .map(|s| format!("`{}`: {s}", h.package))
            }),
        ));
    }
    let heavy = heavy?;
    // Named heavy packages need no file from the context at all.
    let size = heavy
        .facts
        .size
        .clone()
        .map(|s| format!("`{}`: {s}", heavy.package));
    Some((
        format!("the install of `{}` ({})", heavy.package, heavy.facts.what),
        size,
    ))
}

/// Whether a stage (or one it is built `FROM`) installs dependencies before
/// instruction `before`: then the install after the copy is a second one.
fn installs_before(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    before: usize,
    facts: &BuildFacts,
) -> bool {
    let mut current = Some(stage);
    let mut seen = 0;
    while let Some(s) = current {
        let earlier = s
            .runs
            .iter()
            .filter(|r| r.instruction < before || !std::ptr::eq(s, stage));
        for step in earlier {
            if dependency_install(ctx, step, facts).is_some()
                || heavy_install(step, facts).is_some()
            {
                return true;
            }
        }
        seen += 1;
        current = match s.base {
            BaseImage::Stage(parent) if seen < ctx.model.stages.len() => {
                ctx.model.stages.get(parent)
            }
            _ => None,
        };
    }
    false
}

impl DockerfileRule for SourceCopiedBeforeDependencies {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let facts = BuildFacts::embedded();
        for stage in built_stages(ctx) {
            let indexes: Vec<usize> = stage.instructions.clone().collect();
            for (position, &at) in indexes.iter().enumerate() {
                let Some(instruction) = ctx.dockerfile.instructions.get(at) else {
                    continue;
                };
                let (Command::Copy(copy) | Command::Add(copy)) = &instruction.command else {
                    continue;
                };
                let Some(source) = whole_context(copy) else {
                    continue;
                };
                if installs_before(ctx, stage, at, facts) {
                    continue;
                }
                let later = indexes.get(position + 1..).unwrap_or_default();
                let Some((install_at, (what, size))) = later
                    .iter()
                    .find_map(|&i| dependency_step(ctx, stage, i, facts).map(|d| (i, d)))
                else {
                    continue;
                };
                let line = ctx
                    .dockerfile
                    .instructions
                    .get(install_at)
                    .map_or(0, |i| i.start_line);
                let mut finding = Diagnostic::at(
                    &META,
                    source.span,
                    format!(
                        "`{} {} {}` copies the whole build context before {what} on line {line}: any edit to any file re-runs that install",
                        instruction.keyword.to_ascii_uppercase(),
                        source.text,
                        copy.dest.text
                    ),
                )
                .with_help("copy only the requirements or lock files first (`COPY requirements.txt .`), install, then `COPY . …`")
                .with_source(facts.dependency_installs.source.clone());
                if let Some(size) = size {
                    finding = finding.with_note(format!("each re-run installs {size}"));
                }
                out.push(finding);
            }
        }
    }
}
