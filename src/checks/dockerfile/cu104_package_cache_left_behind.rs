//! CU104 package-cache-left-behind: a package install in the shipped image
//! (apt, pip, uv, conda/mamba, dnf/yum, apk) leaves its download cache in the
//! layer, and no removal in the same RUN, no cache-off switch and no cache
//! mount keeps it out.

use crate::checks::dockerfile::package_cache::{self, CacheEvidence, Fill};
use crate::checks::dockerfile::support::shipped_stages;
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Edit, Fix, FixSafety, Severity};
use crate::dockerfile::ast::{Command, ShellOrExec};
use crate::dockerfile::model::RunStep;
use crate::dockerfile::packages::PackageManager;
use crate::knowledge::cupti::{CacheFix, CacheManager};
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU104",
    name: "package-cache-left-behind",
    category: Category::Size,
    default_severity: Severity::Warning,
    fix: FixAvailability::Sometimes,
    summary: "A package install leaves its download cache in the shipped image",
    doc: Doc::Page,
};

pub struct PackageCacheLeftBehind;

impl DockerfileRule for PackageCacheLeftBehind {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let stages = shipped_stages(ctx.model);
        let mut evidence = CacheEvidence::new(ctx, &stages);
        // Managers whose metadata an earlier RUN left in the image.
        let mut metadata_left: Vec<&str> = Vec::new();
        for step in stages.iter().flat_map(|stage| &stage.runs) {
            let mut left_here: Vec<&str> = Vec::new();
            // A RUN that cleans the cache (`dnf clean all`) leaves no
            // metadata for later installs: they download it again.
            metadata_left.retain(|name| {
                ctx.knowledge
                    .cupti
                    .hygiene
                    .managers
                    .iter()
                    .find(|m| m.name == *name)
                    .is_none_or(|m| !package_cache::cleans(m, step))
            });
            // One command appended at the end cleans every install of the RUN.
            let mut appended_for: Vec<&str> = Vec::new();
            for fill in evidence.fills(step) {
                let manager = fill.manager;
                if evidence.kept_out(step, &fill) {
                    continue;
                }
                if installs_local_files_without_deps(step, &fill) {
                    continue;
                }
                if manager.metadata_only {
                    left_here.push(manager.name.as_str());
                    // The metadata is already in an earlier layer: this
                    // install reads it and its packages are deleted.
                    if metadata_left.contains(&manager.name.as_str()) && !refreshes(step, &fill) {
                        continue;
                    }
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
                // The words up to the subcommand, as the shell sees them
                // (exec form and continuations written differently).
                let program = match fill.subcommand {
                    Some(sub) => command
                        .words
                        .iter()
                        .take_while(|w| w.span.start <= sub.span.start)
                        .map(|w| w.text.as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                    None => manager.name.clone(),
                };
                let mut finding = Diagnostic::at(
                    &META,
                    command.span,
                    format!(
                        "`{program}` leaves its cache ({}) in this layer: {}",
                        manager.cache, manager.size_hint
                    ),
                )
                .with_note(format!("source: {}", manager.source));
                let reuse = later_reuse(ctx, manager, step);
                finding = match reuse {
                    Some(line) => finding.with_help(format!(
                        "the install on line {line} reads these lists in a later RUN, so removing them here breaks it: run `apt-get update` in the RUN of each install and end that RUN with `{}`",
                        manager.fix_text
                    )),
                    None => finding.with_help(manager.help.clone()),
                };
                if let Some(mut fix) = fix(ctx, manager, step, &fill) {
                    if let Some(line) = reuse {
                        fix.safety = FixSafety::Unsafe;
                        fix.description.push_str(&format!(
                            " (breaks the install on line {line}, which reads these lists)"
                        ));
                    }
                    finding = finding.with_fix(fix);
                }
                out.push(finding);
            }
            metadata_left.extend(left_here);
        }
    }
}

/// A pip install of wheel or archive files already in the image, with
/// `--no-deps` or `--no-index` (`pip install --no-deps ./dist/x.whl`):
/// nothing is downloaded, so nothing is cached. Without them pip downloads
/// the wheel's dependencies (and uv unpacks even local wheels into its
/// cache), so those stay reported.
fn installs_local_files_without_deps(step: &RunStep, fill: &Fill<'_>) -> bool {
    step.installs
        .iter()
        .find(|install| install.command == fill.position)
        .is_some_and(|install| {
            install.manager == PackageManager::Pip
                && (install.no_deps || install.has_option("--no-index"))
                && install.requirement_files.is_empty()
                && install.index_urls.is_empty()
                && !install.packages.is_empty()
                && install.packages.iter().all(|p| {
                    let text = p.word.text.as_str();
                    p.is_location
                        && !text.contains("://")
                        && !text.starts_with("git+")
                        && (text.ends_with(".whl")
                            || text.ends_with(".tar.gz")
                            || text.ends_with(".zip"))
                })
        })
}

/// Whether a fill refreshes the metadata on purpose (`dnf makecache`,
/// `--refresh`), so that it writes it again whatever the image holds.
fn refreshes(step: &RunStep, fill: &Fill<'_>) -> bool {
    step.commands.get(fill.position).is_some_and(|command| {
        command.words.iter().any(|w| {
            matches!(
                w.text.as_str(),
                "makecache" | "--refresh" | "upgrade" | "update"
            )
        })
    })
}

/// The line of the first later install that reads `manager`'s cache from
/// `step`'s layer without filling it again in its own RUN (`apt-get install`
/// after an earlier RUN's `apt-get update`), in `step`'s stage or any stage
/// built on it.
fn later_reuse(
    ctx: &DockerfileContext<'_>,
    manager: &CacheManager,
    step: &RunStep,
) -> Option<usize> {
    if manager.reused_by.is_empty() {
        return None;
    }
    let model = ctx.model;
    let home = model
        .stages
        .iter()
        .find(|stage| {
            stage
                .runs
                .iter()
                .any(|run| run.instruction == step.instruction)
        })?
        .index;
    let refills = |run: &RunStep, before: usize| {
        run.commands
            .iter()
            .take(before)
            .any(|command| package_cache::fills_with(command, manager))
    };
    let reuse = model
        .stages
        .iter()
        .filter(|stage| model.ancestry(stage.index).contains(&home))
        .flat_map(|stage| &stage.runs)
        .filter(|run| run.instruction > step.instruction)
        .filter_map(|run| {
            run.installs
                .iter()
                .find(|install| {
                    manager
                        .reused_by
                        .iter()
                        .any(|m| m == install.manager.name())
                        && !refills(run, install.command)
                })
                .map(|install| install.span)
        })
        .min_by_key(|span| span.start)?;
    Some(ctx.source.line_col(reuse.start).line)
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
