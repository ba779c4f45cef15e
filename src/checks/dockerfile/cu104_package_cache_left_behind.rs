//! CU104 package-cache-left-behind: a package install in the shipped image
//! (apt, pip, uv, conda/mamba, dnf/yum, apk) leaves its download cache in the
//! layer, and no removal in the same RUN, no cache-off switch and no cache
//! mount keeps it out.

use crate::checks::dockerfile::runtime_env::{self, Setting};
use crate::checks::dockerfile::support::{self, shipped_stages};
use crate::checks::{Category, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Edit, Fix, FixSafety, Severity};
use crate::dockerfile::ast::{Command, ShellOrExec, Word};
use crate::dockerfile::model::{RunStep, ShellCommand};
use crate::dockerfile::packages::package_installs;
use crate::dockerfile::shell::command_start;
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

/// A command of a RUN that fills a manager's cache.
struct Fill<'a> {
    manager: &'a CacheManager,
    /// Index of the command in the RUN.
    position: usize,
    /// The subcommand word (`install`, `add`, `sync`), where flags go.
    subcommand: Option<&'a Word>,
    /// The command itself turns the cache off (`--no-cache-dir`).
    flagged_off: bool,
}

impl DockerfileRule for PackageCacheLeftBehind {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let hygiene = &ctx.knowledge.cupti.hygiene;
        let stages = shipped_stages(ctx.model);
        let settings = runtime_env::settings(ctx, &stages);
        // `pip config set global.no-cache-dir …` holds for later RUNs.
        let mut configured_off: Vec<&str> = Vec::new();
        for step in stages.iter().flat_map(|stage| &stage.runs) {
            for command in &step.commands {
                for manager in &hygiene.managers {
                    let configs = manager
                        .no_cache_config
                        .iter()
                        .map(|key| format!("config set {key}"));
                    if subcommand_among(command, manager, configs).is_some() {
                        configured_off.push(manager.name.as_str());
                    }
                }
            }
            // One command appended at the end cleans every install of the RUN.
            let mut appended_for: Vec<&str> = Vec::new();
            for fill in fills(hygiene, step) {
                let manager = fill.manager;
                if fill.flagged_off
                    || configured_off.contains(&manager.name.as_str())
                    || step
                        .cache_mount_targets
                        .iter()
                        .any(|t| manager.is_covered_by_mount(t))
                    || env_turns_off(&settings, step, fill.position, manager)
                    || cleaned_later(manager, step, fill.position)
                {
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

/// The commands of `step` that fill a cache: the model's package installs,
/// and the other cache-filling subcommands a manager lists.
fn fills<'a>(hygiene: &'a Hygiene, step: &'a RunStep) -> Vec<Fill<'a>> {
    let mut found: Vec<Fill<'a>> = Vec::new();
    for install in package_installs(&step.commands) {
        let Some(manager) = hygiene.for_installs_by(install.manager.name()) else {
            continue;
        };
        let Some(command) = step.commands.get(install.command) else {
            continue;
        };
        let last_word = install.subcommand.rsplit(' ').next().unwrap_or("");
        found.push(Fill {
            manager,
            position: install.command,
            subcommand: command
                .words
                .iter()
                .skip(command_start(&command.words))
                .find(|w| w.text == last_word),
            flagged_off: install.no_cache && !manager.no_cache_flags.is_empty()
                || manager.no_cache_flags.iter().any(|f| install.has_option(f)),
        });
    }
    for (position, command) in step.commands.iter().enumerate() {
        if found.iter().any(|f| f.position == position) {
            continue;
        }
        for manager in &hygiene.managers {
            if let Some(sub) =
                subcommand_among(command, manager, manager.also_fills.iter().cloned())
            {
                let flagged_off = command.words.iter().any(|w| {
                    manager.no_cache_flags.iter().any(|f| {
                        w.text == *f
                            || w.text
                                .strip_prefix(f.as_str())
                                .is_some_and(|r| r.starts_with('='))
                    })
                });
                found.push(Fill {
                    manager,
                    position,
                    subcommand: Some(sub),
                    flagged_off,
                });
                break;
            }
        }
    }
    found.sort_by_key(|f| f.position);
    found
}

/// Where `command` runs `manager` (its program, or `python -m <module>`)
/// with one of `subcommands` (`"cache purge"`: several words), the
/// subcommand's last word. Options between the words are skipped.
fn subcommand_among<'c>(
    command: &'c ShellCommand,
    manager: &CacheManager,
    subcommands: impl Iterator<Item = String>,
) -> Option<&'c Word> {
    let words = command.words.get(command_start(&command.words)..)?;
    let (program, rest) = words.split_first()?;
    let program = program.text.rsplit('/').next().unwrap_or("");
    let rest = if manager.is_program(program) {
        rest
    } else if manager.is_module_runner(program) {
        let module = manager.module.as_deref()?;
        let at = rest
            .iter()
            .position(|w| !w.text.starts_with('-') || w.text == "-m")?;
        if rest.get(at)?.text != "-m" || rest.get(at + 1)?.text != module {
            return None;
        }
        rest.get(at + 2..)?
    } else {
        return None;
    };
    let mut plain = rest.iter().filter(|w| !w.text.starts_with('-'));
    let first: Vec<&Word> = plain.by_ref().take(3).collect();
    for sub in subcommands {
        let expected: Vec<&str> = sub.split_whitespace().collect();
        let key_only = |w: &Word| w.text.split('=').next().unwrap_or("").to_string();
        let matches = expected.len() <= first.len()
            && expected
                .iter()
                .zip(&first)
                .all(|(e, w)| w.text == *e || key_only(w) == *e);
        if matches {
            return first.get(expected.len().checked_sub(1)?).copied();
        }
    }
    None
}

/// The install runs with its cache off through the manager's variable: the
/// command's own assignment, an `export` earlier in the RUN, or an ENV/ARG
/// before it.
fn env_turns_off(
    settings: &[Setting<'_>],
    step: &RunStep,
    position: usize,
    manager: &CacheManager,
) -> bool {
    let Some(var) = manager.no_cache_env.as_deref() else {
        return false;
    };
    // An unknown value (a variable, an ARG without default) may well turn it
    // off; staying quiet is the safe side.
    let disables = |value: &str| value.contains('$') || manager.env_disables(value);
    let Some(command) = step.commands.get(position) else {
        return false;
    };
    if let Some((_, value)) = command.assignments.iter().find(|(k, _)| k == var) {
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
fn cleaned_later(manager: &CacheManager, step: &RunStep, position: usize) -> bool {
    step.commands.iter().skip(position + 1).any(|command| {
        support::rm_target(command, |t| manager.is_removed_by(t)).is_some()
            || subcommand_among(command, manager, manager.clean.iter().cloned()).is_some()
    })
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
