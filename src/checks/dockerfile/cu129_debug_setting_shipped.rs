//! CU129 debug-setting-shipped: the shipped image's environment keeps a CUDA
//! debugging switch on (`CUDA_LAUNCH_BLOCKING=1`, `NCCL_DEBUG=TRACE` with
//! `NCCL_DEBUG_SUBSYS` naming CALL …), which costs speed on every run. The
//! switches, the values that turn them on, the companion setting some need and
//! what each costs are data (`rules/build.toml` `debug_env`); settings that
//! only log at start (`NCCL_DEBUG=INFO`, `NCCL_DEBUG=TRACE` alone) and build
//! stages that are not shipped stay quiet. `cudalint image` reads the same from the image config (CU229).

use crate::checks::dockerfile::runtime_env::{self, Setting};
use crate::checks::dockerfile::support::shipped_stages;
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Edit, Fix, FixSafety, Severity};
use crate::dockerfile::ast::Command;
use crate::knowledge::build::{BuildFacts, DebugSetting};
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU129",
    name: "debug-setting-shipped",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::Sometimes,
    summary: "The shipped image keeps a CUDA debugging switch on that slows every run",
    doc: Doc::Page,
};

pub struct DebugSettingShipped;

fn finding(setting: &Setting<'_>, value: &str, debug: &DebugSetting) -> Diagnostic {
    Diagnostic::at(
        &META,
        setting.span,
        format!(
            "the shipped image sets `{}={value}`: {}",
            setting.key, debug.cost
        ),
    )
    .with_help(format!(
        "remove it from the image and set it only on the run you debug (`docker run -e {}={value} …`)",
        setting.key
    ))
    .with_note("a debugging switch in the image's ENV is on in every container started from it")
    .with_source(debug.source.clone())
}

impl DockerfileRule for DebugSettingShipped {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let facts = BuildFacts::embedded();
        let chain = shipped_stages(ctx.model);
        let Some(target) = chain.last() else { return };
        let settings = runtime_env::settings(ctx, &chain);
        for debug in &facts.debug_env {
            let Some(setting) = runtime_env::last_env(&settings, &debug.name) else {
                continue;
            };
            let Some(value) = setting.value_in(target) else {
                continue;
            };
            let env = |name: &str| {
                runtime_env::last_env(&settings, name).and_then(|s| s.value_in(target))
            };
            if facts.debug_setting(&debug.name, &value, env).is_none() {
                continue;
            }
            let mut diagnostic = finding(setting, &value, debug);
            if let Some(fix) = removal(ctx, setting) {
                diagnostic = diagnostic.with_fix(fix);
            }
            out.push(diagnostic);
        }
    }
}

/// Remove the setting: the whole ENV line when it is the instruction's only
/// pair, else the pair. Unsafe: the image then runs without the switch,
/// which is the point, but a person decides.
fn removal(ctx: &DockerfileContext<'_>, setting: &Setting<'_>) -> Option<Fix> {
    let instruction = ctx.dockerfile.instructions.get(setting.instruction)?;
    let Command::Env(pairs) = &instruction.command else {
        return None;
    };
    let span = if pairs.len() == 1 {
        // From the keyword to the end of its line, newline included.
        let text = &ctx.source.text;
        let end = text
            .get(instruction.span.end..)
            .and_then(|rest| rest.find('\n'))
            .map_or(text.len(), |at| instruction.span.end + at + 1);
        Span::new(instruction.span.start, end)
    } else {
        // The pair and the blank before it.
        let before = ctx.source.text.get(..setting.span.start)?;
        let blank = before.len() - before.trim_end_matches([' ', '\t']).len();
        Span::new(setting.span.start - blank, setting.span.end)
    };
    Some(Fix {
        description: format!("remove `{}` from the image", setting.key),
        safety: FixSafety::Unsafe,
        edits: vec![Edit {
            span,
            replacement: String::new(),
        }],
    })
}
