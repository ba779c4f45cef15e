//! CU122 driver-libraries-in-image: the image installs NVIDIA driver
//! userspace (apt/dnf packages or the `.run` installer), which shadows the
//! driver libraries the container toolkit mounts from the host.

use crate::checks::dockerfile::support::shipped_stages;
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::ast::Word;
use crate::dockerfile::model::{ShellCommand, Stage};
use crate::knowledge::packages::{Consequence, DriverMatch};
use crate::paths::basename;
use crate::source::Span;

pub struct DriverLibrariesInImage;

static META: RuleMeta = RuleMeta {
    code: "CU122",
    name: "driver-libraries-in-image",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The image installs NVIDIA driver libraries that shadow the host driver",
    doc: Doc::Page,
};

/// Package-manager invocations that `package_installs` does not model but
/// that install driver userspace all the same: the words naming what they
/// install. `dpkg -i`/`rpm -i`/`rpm -U` take package files; `dnf module
/// install` takes module specs; a `.run` installer is run directly or
/// through `sh` (the flag says the words are installer files).
fn unmodelled_installs(command: &ShellCommand) -> (Vec<&Word>, bool) {
    let words = command.program_words();
    let Some(program) = words.first() else {
        return (Vec::new(), false);
    };
    let args = words.get(1..).unwrap_or_default();
    let specs = match basename(&program.text) {
        "dpkg" | "rpm" => {
            let installs = args.iter().any(|w| {
                w.text == "--install"
                    || w.text == "--upgrade"
                    || (!w.text.starts_with("--")
                        && (w.text.starts_with("-i") || w.text.starts_with("-U")))
            });
            if installs {
                operands(args)
            } else {
                Vec::new()
            }
        }
        "dnf" | "dnf5" | "yum" | "microdnf" => {
            let operands = operands(args);
            let verbs: Vec<&str> = operands.iter().take(2).map(|w| w.text.as_str()).collect();
            if verbs == ["module", "install"] {
                operands.into_iter().skip(2).collect()
            } else {
                Vec::new()
            }
        }
        "sh" | "bash" | "dash" => return (operands(args).into_iter().take(1).collect(), true),
        _ => return (vec![program], true),
    };
    (specs, false)
}

fn operands(words: &[Word]) -> Vec<&Word> {
    words.iter().filter(|w| !w.text.starts_with('-')).collect()
}

fn finding(
    name: &str,
    span: Span,
    found: &DriverMatch<'_>,
    consequence: &Consequence,
) -> Diagnostic {
    Diagnostic::at(
        &META,
        span,
        format!("`{name}` puts NVIDIA driver libraries (libcuda, libnvidia-ml) into the image"),
    )
    .with_help("remove it: the NVIDIA Container Toolkit mounts the host's matching driver libraries at run time; install only toolkit packages (e.g. `cuda-toolkit-X-Y` rather than `cuda`)")
    // Notes say the facts; their sources (error strings checked on a real
    // system, the issue that reports the mismatch) show with `--show-sources`.
    .with_note(consequence.text.clone())
    .with_note(format!("matched the driver package pattern `{}`", found.entry.pattern))
    .with_source(consequence.source.clone())
    .with_source(found.entry.source.clone())
}

/// Whether the file builds a driver container, whose job is to ship the
/// driver (and build its kernel module): a RUN of any stage shows one of
/// the knowledge's signs (kernel headers, `/lib/modules`, a `.run`
/// installer building only the kernel module).
fn is_driver_container(ctx: &DockerfileContext<'_>) -> bool {
    let signals = &ctx.knowledge.packages.driver_container.signals;
    signals.found_in_any(
        ctx.model
            .stages
            .iter()
            .flat_map(|stage| &stage.runs)
            .flat_map(|run| &run.commands)
            .flat_map(|command| &command.words)
            .map(|word| word.text.as_str()),
    )
}

impl DockerfileRule for DriverLibrariesInImage {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        // Only stages that become the image matter: a builder stage's
        // driver packages never reach a GPU host. Without a target (an
        // unknown `--target`), every stage might.
        let stages: Vec<&Stage> = if ctx.model.target.is_some() {
            shipped_stages(ctx.model)
        } else {
            ctx.model.stages.iter().collect()
        };
        let packages = &ctx.knowledge.packages;
        let consequence = &packages.driver_consequence;
        if is_driver_container(ctx) {
            return;
        }
        for stage in stages {
            for step in &stage.runs {
                let mut found: Vec<(Span, DriverMatch<'_>)> = Vec::new();
                for install in &step.installs {
                    if !install.manager.is_system() {
                        continue;
                    }
                    for package in &install.packages {
                        // A package file keeps its name before the first `_`.
                        let spec = if package.is_location {
                            &package.word.text
                        } else {
                            &package.name
                        };
                        found.extend(
                            packages
                                .classify_driver_spec(spec)
                                .map(|m| (package.word.span, m)),
                        );
                    }
                }
                for command in &step.commands {
                    let (words, installers) = unmodelled_installs(command);
                    for word in words {
                        let classified = if installers {
                            packages.classify_driver_installer(&word.text)
                        } else {
                            packages.classify_driver_spec(&word.text)
                        };
                        found.extend(classified.map(|m| (word.span, m)));
                    }
                }
                found.sort_by_key(|(span, _)| span.start);
                for (span, m) in &found {
                    out.push(finding(&m.name, *span, m, consequence));
                }
            }
        }
    }
}
