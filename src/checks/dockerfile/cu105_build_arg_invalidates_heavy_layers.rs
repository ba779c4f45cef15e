//! CU105 build-arg-invalidates-heavy-layers: an `ARG` whose value changes on
//! every build (a commit, a build date, a build number: by its name, or by
//! its use in a per-build `LABEL`) is declared in a stage before a heavy
//! CUDA/ML install or compile that does not use it. BuildKit adds every ARG
//! with a value to the environment of each later RUN, so a new value misses
//! the cache of all of them. The names, labels and heavy packages are data
//! (`rules/build.toml`); the RUN reading is `build_steps`.

use crate::checks::dockerfile::build_steps::{
    built_stages, dependency_install, heavy_install, long_compile,
};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Edit, Fix, FixSafety, Severity};
use crate::dockerfile::ast::{ArgDecl, Command, Instruction};
use crate::dockerfile::model::Stage;
use crate::knowledge::build::BuildFacts;
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU105",
    name: "build-arg-invalidates-heavy-layers",
    category: Category::Size,
    default_severity: Severity::Warning,
    fix: FixAvailability::Sometimes,
    summary: "A per-build ARG is declared before heavy installs, so every build re-runs them",
    doc: Doc::Page,
};

pub struct BuildArgInvalidatesHeavyLayers;

/// Whether `text` refers to variable `name` (`$NAME`, `${NAME…}`).
fn refers_to(text: &str, name: &str) -> bool {
    text.match_indices('$').any(|(at, _)| {
        let after = text.get(at + 1..).unwrap_or("");
        let after = after.strip_prefix('{').unwrap_or(after);
        after
            .strip_prefix(name)
            .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
    })
}

fn instruction_uses(instruction: &Instruction, name: &str) -> bool {
    refers_to(&instruction.original, name)
}

/// Why `decl` changes per build, or `None`.
fn volatile_reason(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    decl: &ArgDecl,
    facts: &BuildFacts,
) -> Option<String> {
    if !facts.is_placeholder_default(decl.default.as_deref()) {
        return None;
    }
    if facts.is_volatile_name(&decl.name) {
        return Some("its name says it changes per build".into());
    }
    stage.instructions.clone().find_map(|at| {
        let Command::Label(pairs) = &ctx.dockerfile.instructions.get(at)?.command else {
            return None;
        };
        pairs
            .iter()
            .find(|kv| facts.is_volatile_label(&kv.key) && refers_to(&kv.value, &decl.name))
            .map(|kv| format!("it fills the per-build label `{}`", kv.key))
    })
}

/// A heavy step of `stage`: its RUN's line and what it does.
fn heavy_step(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    index: usize,
    facts: &BuildFacts,
) -> Option<String> {
    let step = stage.runs.iter().find(|run| run.instruction == index)?;
    if let Some(install) = heavy_install(step, facts) {
        return Some(format!(
            "installs `{}` ({})",
            install.package, install.facts.what
        ));
    }
    if let Some(compile) = long_compile(ctx, stage, step, facts) {
        return Some(format!("compiles {}", compile.what));
    }
    dependency_install(ctx, step, facts).map(|(_, text)| format!("runs `{text}`"))
}

impl DockerfileRule for BuildArgInvalidatesHeavyLayers {
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
                let Command::Arg(decls) = &instruction.command else {
                    continue;
                };
                for decl in decls {
                    let Some(reason) = volatile_reason(ctx, stage, decl, facts) else {
                        continue;
                    };
                    // The instructions after it, up to the first that needs
                    // it to build (a LABEL only records it: the RUNs after
                    // a LABEL use still re-run for nothing).
                    let later = indexes.get(position + 1..).unwrap_or_default();
                    let uses = |i: usize| {
                        ctx.dockerfile
                            .instructions
                            .get(i)
                            .filter(|ins| instruction_uses(ins, &decl.name))
                            .map(|ins| matches!(ins.command, Command::Label(_)))
                    };
                    let first_use = later.iter().copied().find(|&i| uses(i) == Some(false));
                    let any_use = later.iter().copied().find(|&i| uses(i).is_some());
                    let before_use = later.iter().copied().take_while(|&i| Some(i) != first_use);
                    let mut heavy = before_use
                        .filter_map(|i| heavy_step(ctx, stage, i, facts).map(|what| (i, what)));
                    let Some((heavy_at, what)) = heavy.next() else {
                        continue;
                    };
                    let more = heavy.count();
                    let line = ctx
                        .dockerfile
                        .instructions
                        .get(heavy_at)
                        .map_or(0, |i| i.start_line);
                    let also = match more {
                        0 => String::new(),
                        1 => " and 1 more heavy RUN".into(),
                        n => format!(" and {n} more heavy RUNs"),
                    };
                    let mut finding = Diagnostic::at(
                        &META,
                        decl.span,
                        format!(
                            "`ARG {}` changes on every build ({reason}) and is declared before the RUN on line {line}, which {what}{also}: each later RUN has it in its environment, so every new value re-runs them",
                            decl.name
                        ),
                    )
                    .with_help(format!(
                        "declare `ARG {}` after the heavy steps, just before the instruction that uses it",
                        decl.name
                    ))
                    .with_note("BuildKit adds every ARG with a value to the environment of each later RUN of the stage, and the environment is part of the RUN's cache key")
                    .with_source(facts.volatile_args.source.clone());
                    // The ARG moves to just before its first use of any kind;
                    // a LABEL that reads it before the heavy step would have
                    // to move too: no fix then.
                    if decls.len() == 1 && any_use.is_none_or(|u| u > heavy_at) {
                        if let Some(fix) =
                            move_down(ctx, instruction, any_use, indexes.last().copied())
                        {
                            finding = finding.with_fix(fix);
                        }
                    }
                    out.push(finding);
                }
            }
        }
    }
}

/// Move the ARG line to just before its first use (or to the stage's end).
/// Unsafe: a script a RUN runs may read the value from its environment.
fn move_down(
    ctx: &DockerfileContext<'_>,
    arg: &Instruction,
    first_use: Option<usize>,
    last: Option<usize>,
) -> Option<Fix> {
    let text = &ctx.source.text;
    let line_end = |from: usize| {
        text.get(from..)
            .and_then(|rest| rest.find('\n'))
            .map_or(text.len(), |at| from + at + 1)
    };
    let line_start = |at: usize| {
        text.get(..at)
            .and_then(|t| t.rfind('\n'))
            .map_or(0, |n| n + 1)
    };
    let arg_start = line_start(arg.span.start);
    if text
        .get(arg_start..arg.span.start)
        .is_some_and(|p| !p.trim().is_empty())
    {
        return None;
    }
    let removal = Span::new(arg_start, line_end(arg.span.end));
    let line = text.get(arg.span.start..arg.span.end)?.trim_end();
    let (at, insertion) = match first_use.and_then(|i| ctx.dockerfile.instructions.get(i)) {
        Some(user) => (line_start(user.span.start), format!("{line}\n")),
        None => {
            let last = ctx.dockerfile.instructions.get(last?)?;
            let end = line_end(last.span.end);
            let newline = if text.get(..end)?.ends_with('\n') {
                ""
            } else {
                "\n"
            };
            (end, format!("{newline}{line}\n"))
        }
    };
    if at <= removal.end {
        return None;
    }
    Some(Fix {
        description: "declare the ARG after the heavy steps".into(),
        safety: FixSafety::Unsafe,
        edits: vec![
            Edit {
                span: removal,
                replacement: String::new(),
            },
            Edit {
                span: Span::new(at, at),
                replacement: insertion,
            },
        ],
    })
}
