//! CU102 cuda-toolkit-copied-whole: `COPY --from=… /usr/local/cuda` (or
//! `/usr/local/cuda-X.Y`, or all of `/usr/local` from a CUDA devel stage)
//! into a stage of the final image carries the whole toolkit, about 5 GiB,
//! which undoes the point of a multi-stage build.

use crate::checks::dockerfile::support::{base_facts, shipped_stages};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::ast::Command;
use crate::dockerfile::model::{DependencyKind, DependencyTarget, Stage};
use crate::knowledge::images::BaseImageFacts;

pub static META: RuleMeta = RuleMeta {
    code: "CU102",
    name: "cuda-toolkit-copied-whole",
    category: Category::Size,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The whole CUDA toolkit directory is copied into the final image",
    doc: Doc::Page,
};

pub struct CudaToolkitCopiedWhole;

impl DockerfileRule for CudaToolkitCopiedWhole {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let Some(dir) = ctx.knowledge.images.toolkit_dir.as_ref() else {
            return;
        };
        // Only stages whose files end up in the target image matter.
        for stage in shipped_stages(ctx.model) {
            for index in stage.instructions.clone() {
                let Some(instruction) = ctx.dockerfile.instructions.get(index) else {
                    continue;
                };
                let copy = match &instruction.command {
                    Command::Copy(copy) | Command::Add(copy) => copy,
                    _ => continue,
                };
                let Some(from) = &copy.from else {
                    continue;
                };
                for source in &copy.sources {
                    let Some(pattern) = dir.matching(&source.text) else {
                        continue;
                    };
                    // All of /usr/local is only the toolkit when it comes
                    // from a CUDA devel image (Python images keep their
                    // interpreter there).
                    let whole_prefix = !pattern.contains("cuda");
                    let facts = source_facts(ctx, stage, index);
                    if whole_prefix && !facts.as_ref().is_some_and(|f| f.devel_sized) {
                        continue;
                    }
                    out.push(
                        Diagnostic::at(
                            &META,
                            source.span,
                            format!(
                                "copies `{}` from `{}` whole: that is the entire CUDA toolkit, ≈{:.1} GiB, into the final image",
                                source.text, from.text, dir.size_gb
                            ),
                        )
                        .with_help(
                            "copy only the shared libraries the program loads (e.g. `/usr/local/cuda/lib64/libcudart.so.*`), or start this stage from the matching `-runtime-` image, which already has them",
                        )
                        .with_note(format!(
                            "of that, {} MiB are static `.a` archives only a linker uses ({})",
                            dir.static_archives_mib, dir.source
                        )),
                    );
                }
            }
        }
    }
}

/// What the knowledge says about the stage or image a COPY at `instruction`
/// reads from.
fn source_facts(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    instruction: usize,
) -> Option<BaseImageFacts> {
    let dependency = stage
        .dependencies
        .iter()
        .find(|d| d.instruction == instruction && d.kind == DependencyKind::Copy)?;
    match &dependency.target {
        DependencyTarget::Stage(index) => {
            let source = ctx.model.stages.get(*index)?;
            base_facts(ctx, source)
        }
        DependencyTarget::Image(image) => ctx.knowledge.images.classify(image),
        _ => None,
    }
}
