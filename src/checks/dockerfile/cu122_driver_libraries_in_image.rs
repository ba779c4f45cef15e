//! CU122 driver-libraries-in-image: the image installs NVIDIA driver
//! userspace (apt/dnf packages or the `.run` installer), which shadows the
//! driver libraries the container toolkit mounts from the host.

use crate::checks::dockerfile::cuda_facts::image_stages;
use crate::checks::{Category, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::model::Stage;

pub struct DriverLibrariesInImage;

static META: RuleMeta = RuleMeta {
    code: "CU122",
    name: "driver-libraries-in-image",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The image installs NVIDIA driver libraries that shadow the host driver",
    doc: include_str!("../../../docs/rules/CU122.md"),
};

impl DockerfileRule for DriverLibrariesInImage {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        // Only stages that become the image matter: a builder stage's
        // driver packages never reach a GPU host. Without a target (an
        // unknown `--target`), every stage might.
        let stages: Vec<&Stage> = if ctx.model.target.is_some() {
            image_stages(ctx)
        } else {
            ctx.model.stages.iter().collect()
        };
        let packages = &ctx.knowledge.packages;
        let consequence = &packages.driver_consequence;
        for stage in stages {
            for step in &stage.runs {
                for command in &step.commands {
                    let words: Vec<&str> = command.words.iter().map(|w| w.text.as_str()).collect();
                    for found in packages.driver_installs_in_command(&words) {
                        let Some(word) = command.words.get(found.word) else {
                            continue;
                        };
                        out.push(
                            Diagnostic::at(
                                &META,
                                word.span,
                                format!(
                                    "`{}` puts NVIDIA driver libraries (libcuda, libnvidia-ml) into the image",
                                    found.name
                                ),
                            )
                            .with_help("remove it: the NVIDIA Container Toolkit mounts the host's matching driver libraries at run time; install only toolkit packages (e.g. `cuda-toolkit-X-Y` rather than `cuda`)")
                            .with_note(format!("{} ({})", consequence.text, consequence.source))
                            .with_note(format!("matched `{}`: {}", found.entry.pattern, found.entry.source)),
                        );
                    }
                }
            }
        }
    }
}
