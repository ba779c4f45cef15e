//! CU104 package-cache-left-behind: a package install in the shipped image
//! (apt, pip, uv, conda/mamba, dnf/yum, apk) leaves its download cache in the
//! layer, and no removal in the same RUN, no cache-off switch and no cache
//! mount keeps it out.

use crate::checks::dockerfile::package_cache::{CacheEvidence, Fill};
use crate::checks::dockerfile::support::shipped_stages;
use crate::checks::{Category, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Edit, Fix, FixSafety, Severity};
use crate::dockerfile::ast::{Command, ShellOrExec};
use crate::dockerfile::model::RunStep;
use crate::knowledge::cupti::{CacheFix, CacheManager};
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU104",
    name: "package-cache-left-behind",
    category: Category::Size,
    default_severity: Severity::Warning,
    fix: FixAvailability::Sometimes,
    summary: "A package install leaves its download cache in the shipped image",
    doc: include_str!("../../../docs/rules/CU104.md"),
};

pub struct PackageCacheLeftBehind;

impl DockerfileRule for PackageCacheLeftBehind {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let stages = shipped_stages(ctx.model);
        let mut evidence = CacheEvidence::new(ctx, &stages);
        for step in stages.iter().flat_map(|stage| &stage.runs) {
            // One command appended at the end cleans every install of the RUN.
            let mut appended_for: Vec<&str> = Vec::new();
            for fill in evidence.fills(step) {
                let manager = fill.manager;
                if evidence.kept_out(step, &fill) {
                    continue;
                }
                if manager.fix == CacheFix::AppendCommand {
                    if appended_for.contains(&manager.name.as_str()) {
                        continue;
                    }
                    appended_for.push(manager.name.as_str());
                }
                let Some(command) = step.commands.get(fill.position) else {
                    continue;
                };
                let program = fill
                    .subcommand
                    .and_then(|sub| ctx.source.text.get(command.span.start..sub.span.end))
                    .unwrap_or(manager.name.as_str());
                let mut finding = Diagnostic::at(
                    &META,
                    command.span,
                    format!(
                        "`{program}` leaves its cache ({}) in this layer: {}",
                        manager.cache, manager.size_hint
                    ),
                )
                .with_help(manager.help.clone())
                .with_note(format!("source: {}", manager.source));
                if let Some(fix) = fix(ctx, manager, step, &fill) {
                    finding = finding.with_fix(fix);
                }
                out.push(finding);
            }
        }
    }
}

fn fix(
    ctx: &DockerfileContext<'_>,
    manager: &CacheManager,
    step: &RunStep,
    fill: &Fill<'_>,
) -> Option<Fix> {
    match manager.fix {
        CacheFix::InsertFlag => {
            let sub = fill.subcommand?;
            // Only where the word really is written there (not built by
            // continuation joins or variables).
            if ctx.source.text.get(sub.span.start..sub.span.end)? != sub.text {
                return None;
            }
            Some(Fix {
                description: format!("add `{}`", manager.fix_text),
                safety: FixSafety::Safe,
                edits: vec![Edit {
                    span: Span::new(sub.span.end, sub.span.end),
                    replacement: format!(" {}", manager.fix_text),
                }],
            })
        }
        CacheFix::AppendCommand => {
            let instruction = ctx.dockerfile.instructions.get(step.instruction)?;
            let Command::Run(run) = &instruction.command else {
                return None;
            };
            let ShellOrExec::Shell(script) = &run.command else {
                return None;
            };
            if !instruction.heredocs.is_empty() {
                return None;
            }
            let trimmed = script.text.trim_end();
            // A trailing comment would swallow the appended command, and a
            // trailing operator would make it a syntax error.
            if trimmed.is_empty()
                || trimmed.contains('#')
                || trimmed.ends_with([';', '&', '|', '\\'])
            {
                return None;
            }
            let end = script.file_span(0, trimmed.len()).end;
            Some(Fix {
                description: format!("append `&& {}`", manager.fix_text),
                safety: FixSafety::Safe,
                edits: vec![Edit {
                    span: Span::new(end, end),
                    replacement: format!(" && {}", manager.fix_text),
                }],
            })
        }
        CacheFix::None => None,
    }
}
