//! CU136 export-dies-with-run: a RUN that does nothing but `export
//! NAME=value`. Each RUN is its own shell, so the variable is gone
//! when the RUN ends: a later `pip install` or `make` builds without the
//! `FORCE_CUDA`, `TORCH_CUDA_ARCH_LIST` or `CUDA_HOME` the line meant to set.
//! Where the RUN is nothing but exports, the (unsafe) fix writes them as an
//! `ENV`.

use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Edit, Fix, FixSafety, Severity};
use crate::dockerfile::ast::{Instruction, ShellOrExec, Word};
use crate::dockerfile::model::{Reach, RunStep, ShellCommand};
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU136",
    name: "export-dies-with-run",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::Sometimes,
    summary: "A RUN exports a variable and ends: the variable is gone before the next instruction",
    doc: Doc::Page,
};

pub struct ExportDiesWithRun;

/// Docker's reference: each RUN runs in a new shell, and `ENV` is what
/// persists a variable into later instructions.
const SOURCE: &str = "https://docs.docker.com/reference/dockerfile/#env (ENV sets a variable for every later instruction of the stage; each RUN runs its command in a new shell, whose exports end with it)";

/// The `NAME=value` words of an `export` command, when it is one.
fn exported(command: &ShellCommand) -> Option<Vec<&Word>> {
    let (program, rest) = command.words.split_first()?;
    if program.text != "export" {
        return None;
    }
    let pairs: Vec<&Word> = rest
        .iter()
        .filter(|w| !w.text.starts_with('-'))
        .filter(|w| {
            w.text.split_once('=').is_some_and(|(name, _)| {
                !name.is_empty()
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !name.starts_with(|c: char| c.is_ascii_digit())
            })
        })
        .collect();
    (!pairs.is_empty()).then_some(pairs)
}

impl DockerfileRule for ExportDiesWithRun {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        for stage in &ctx.model.stages {
            for run in &stage.runs {
                check_run(ctx, run, out);
            }
        }
    }
}

fn check_run(ctx: &DockerfileContext<'_>, run: &RunStep, out: &mut Vec<Diagnostic>) {
    // Only a RUN that is nothing but exports: anything after an export may
    // read the variable (a program reads its environment), and an export
    // after other work is often a reset (`… && export DEBIAN_FRONTEND=dialog`).
    if run.commands.is_empty() || !run.commands.iter().all(|c| exported(c).is_some()) {
        return;
    }
    let dead: Vec<(&ShellCommand, Vec<&Word>)> = run
        .commands
        .iter()
        .filter(|c| c.reach == Reach::Runs)
        .filter_map(|c| Some((c, exported(c)?)))
        .collect();
    let Some(instruction) = ctx.dockerfile.instructions.get(run.instruction) else {
        return;
    };
    let fix = (dead.len() == run.commands.len())
        .then(|| to_env(ctx, instruction, &dead))
        .flatten();
    for (command, pairs) in &dead {
        let names: Vec<String> = pairs
            .iter()
            .filter_map(|w| w.text.split_once('='))
            .map(|(name, _)| format!("`{name}`"))
            .collect();
        let (subject, verb) = match names.len() {
            1 => (names.join(""), "is"),
            _ => (names.join(", "), "are"),
        };
        let mut diagnostic = Diagnostic::at(
            &META,
            command.span,
            format!(
                "{subject} {verb} exported by a RUN that does nothing else: the shell ends with the RUN, so later instructions run without {}",
                if names.len() == 1 { "it" } else { "them" }
            ),
        )
        .with_help(
            "set it with `ENV` (it then holds for every later instruction and in the image), or export it in the RUN that needs it (`RUN export X=1 && make`)",
        )
        .with_note("each RUN starts a new shell from the image's environment; only `ENV` and `ARG` reach later instructions")
        .with_source(SOURCE);
        if let Some(fix) = &fix {
            diagnostic = diagnostic.with_fix(fix.clone());
        }
        out.push(diagnostic);
    }
}

/// `RUN export A=1 && export B=2` as `ENV A=1 B=2`: only for a shell-form
/// RUN without flags or here-documents whose every command is such an
/// export, and whose values ENV reads the same way (no command
/// substitution, no continuation inside a pair). Unsafe: it does what the
/// line meant, so later RUNs change (`FORCE_CUDA=1` turns a CUDA build on)
/// and the shipped image keeps the variable.
fn to_env(
    ctx: &DockerfileContext<'_>,
    instruction: &Instruction,
    dead: &[(&ShellCommand, Vec<&Word>)],
) -> Option<Fix> {
    let ShellOrExec::Shell(_) = run_command(instruction)? else {
        return None;
    };
    if !instruction.flags.is_empty() || !instruction.heredocs.is_empty() {
        return None;
    }
    let text = &ctx.source.text;
    let mut pairs = Vec::new();
    for (_, words) in dead {
        for word in words {
            let raw = text.get(word.span.start..word.span.end)?;
            if raw.contains(['`', '\n', '\\'])
                || raw.contains("$(")
                || !raw.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            {
                return None;
            }
            pairs.push(raw);
        }
    }
    Some(Fix {
        description: "write the exports as an `ENV`".to_string(),
        safety: FixSafety::Unsafe,
        edits: vec![Edit {
            span: Span::new(instruction.keyword_span.start, instruction.span.end),
            replacement: format!("ENV {}", pairs.join(" ")),
        }],
    })
}

fn run_command(instruction: &Instruction) -> Option<&ShellOrExec> {
    match &instruction.command {
        crate::dockerfile::ast::Command::Run(run) => Some(&run.command),
        _ => None,
    }
}
