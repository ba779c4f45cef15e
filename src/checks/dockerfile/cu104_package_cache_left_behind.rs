//! CU104 package-cache-left-behind: an `apt-get`, `pip` or `conda`/`mamba`
//! install in the shipped image leaves its download cache in the layer, and
//! no removal in the same RUN, no cache-off switch and no cache mount keeps
//! it out.

use crate::checks::dockerfile::shipped::{self, Invocation};
use crate::checks::{Category, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Edit, Fix, FixSafety, Severity};
use crate::dockerfile::ast::{Command, Instruction, ShellOrExec};
use crate::dockerfile::model::{RunStep, ShellCommand};
use crate::knowledge::cupti::{CacheFix, CacheManager, Hygiene};
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

fn diagnostic(manager: &CacheManager, install: &ShellCommand, program: &str) -> Diagnostic {
    Diagnostic::at(
        &META,
        install.span,
        format!(
            "`{program}` leaves its cache ({}) in this layer: {}",
            manager.cache, manager.size_hint
        ),
    )
    .with_help(match manager.name.as_str() {
        "apt" => "end the same RUN with `rm -rf /var/lib/apt/lists/*`, or mount a cache: `RUN --mount=type=cache,target=/var/lib/apt …`".to_string(),
        "pip" => "add `--no-cache-dir`, set `ENV PIP_NO_CACHE_DIR=1`, or mount a cache: `RUN --mount=type=cache,target=/root/.cache/pip …`".to_string(),
        _ => format!("end the same RUN with `{program} clean -afy`, or mount a cache on the pkgs directory (`--mount=type=cache,target=/opt/conda/pkgs`)"),
    })
    .with_note(format!("source: {}", manager.source))
}

impl DockerfileRule for PackageCacheLeftBehind {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let hygiene = &ctx.knowledge.cupti.hygiene;
        let chain = shipped::target_chain(ctx.model);
        let settings = shipped::settings(ctx, &chain);
        // `pip config set global.no-cache-dir …` holds for later RUNs.
        let mut configured_off: Vec<&str> = Vec::new();
        for (stage, index, instruction) in shipped::chain_instructions(ctx, &chain) {
            let Some(step) = shipped::run_step(stage, index) else {
                continue;
            };
            let mut apt_reported = false;
            for (position, command) in step.commands.iter().enumerate() {
                let Some(invocation) = shipped::invocation(command, hygiene) else {
                    continue;
                };
                let manager = invocation.manager;
                if is_config_off(&invocation) {
                    configured_off.push(manager.name.as_str());
                    continue;
                }
                let Some(install_at) = invocation.subcommand_is(&manager.install) else {
                    continue;
                };
                if configured_off.contains(&manager.name.as_str())
                    || step
                        .cache_mount_targets
                        .iter()
                        .any(|t| manager.is_covered_by_mount(t))
                    || turned_off(&settings, step, position, &invocation, install_at)
                    || cleaned_later(hygiene, manager, step, position)
                {
                    continue;
                }
                if manager.fix == CacheFix::AppendCommand {
                    // One removal at the end fixes every install of the RUN.
                    if apt_reported {
                        continue;
                    }
                    apt_reported = true;
                }
                let program = command
                    .words
                    .get(install_at)
                    .map(|w| w.span)
                    .and_then(|end| ctx.source.text.get(command.span.start..end.end))
                    .unwrap_or(manager.name.as_str());
                let mut finding = diagnostic(manager, command, program);
                if let Some(fix) = fix(ctx, manager, instruction, &invocation, install_at) {
                    finding = finding.with_fix(fix);
                }
                out.push(finding);
            }
        }
    }
}

fn is_config_off(invocation: &Invocation<'_>) -> bool {
    let words = &invocation.command.words;
    let at = invocation.subcommand;
    let is = |offset: usize, text: &str| words.get(at + offset).is_some_and(|w| w.text == text);
    is(0, "config")
        && is(1, "set")
        && words.get(at + 2).is_some_and(|key| {
            let key = key.text.split('=').next().unwrap_or("");
            invocation.manager.no_cache_config.iter().any(|k| k == key)
        })
}

/// The install runs with its cache off: a flag, the command's own
/// assignment, an `export` earlier in the RUN, or an ENV/ARG before it.
fn turned_off(
    settings: &[shipped::Setting<'_>],
    step: &RunStep,
    position: usize,
    invocation: &Invocation<'_>,
    install_at: usize,
) -> bool {
    let manager = invocation.manager;
    let args = shipped::install_args(manager, invocation.words_after(install_at));
    if manager.no_cache_flags.iter().any(|f| args.has_flag(f)) {
        return true;
    }
    let Some(var) = manager.no_cache_env.as_deref() else {
        return false;
    };
    // An unknown value (a variable, an ARG without default) may well turn it
    // off; staying quiet is the safe side.
    let disables = |value: &str| value.contains('$') || manager.env_disables(value);
    if let Some((_, value)) = invocation
        .command
        .assignments
        .iter()
        .find(|(k, _)| k == var)
    {
        return disables(value);
    }
    let exported = step.commands.iter().take(position).rev().find_map(|c| {
        let export = c.words.first().is_some_and(|w| w.text == "export");
        c.words.iter().skip(1).filter(|_| export).find_map(|w| {
            w.text
                .split_once('=')
                .filter(|(k, _)| *k == var)
                .map(|(_, v)| v.to_string())
        })
    });
    if let Some(value) = exported {
        return disables(&value);
    }
    settings
        .iter()
        .rev()
        .find(|s| s.instruction < step.instruction && s.key == var)
        .is_some_and(|s| disables(s.value))
}

/// A removal or clean of the cache after the install, in the same RUN.
fn cleaned_later(
    hygiene: &Hygiene,
    manager: &CacheManager,
    step: &RunStep,
    position: usize,
) -> bool {
    step.commands.iter().skip(position + 1).any(|command| {
        if shipped::rm_target(command, hygiene, |t| manager.is_removed_by(t)).is_some() {
            return true;
        }
        shipped::invocation(command, hygiene).is_some_and(|inv| {
            inv.manager.name == manager.name && inv.subcommand_is(&manager.clean).is_some()
        })
    })
}

fn fix(
    ctx: &DockerfileContext<'_>,
    manager: &CacheManager,
    instruction: &Instruction,
    invocation: &Invocation<'_>,
    install_at: usize,
) -> Option<Fix> {
    match manager.fix {
        CacheFix::InsertFlag => {
            let install = invocation.command.words.get(install_at)?;
            // Only where the word really is written there (not built by
            // continuation joins or variables).
            if ctx.source.text.get(install.span.start..install.span.end)? != install.text {
                return None;
            }
            Some(Fix {
                description: format!("add `{}`", manager.fix_text),
                safety: FixSafety::Safe,
                edits: vec![Edit {
                    span: Span::new(install.span.end, install.span.end),
                    replacement: format!(" {}", manager.fix_text),
                }],
            })
        }
        CacheFix::AppendCommand => {
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
