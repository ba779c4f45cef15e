//! CU134 arch-list-misses-target-gpu: with a fleet (`--gpu`, `[target]
//! gpus`), an architecture list the build compiles with has neither SASS a
//! target GPU runs nor PTX it can JIT-compile, so the code built with it
//! fails there with "no kernel image is available for execution on the
//! device". The lists are the model's (`dockerfile::arch_lists`, the same
//! CU132 reads); the fleet and the compatibility rules are
//! `knowledge::gpus`, the same CU230 judges images by.

use std::collections::BTreeMap;

use crate::checks::dockerfile::build_steps::built_stages;
use crate::checks::dockerfile::cuda_facts::{stage_cuda, StageCuda};
use crate::checks::dockerfile::cuda_stages::arch_lists_read;
use crate::checks::dockerfile::support::stage_instructions;
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::arch_lists::{self, ArchList, Origin, Target, Variant};
use crate::knowledge::gpus::{Gpus, Reach, TargetGpu};
use crate::knowledge::toolkits::{ArchSupport, ToolkitKnowledge};
use crate::knowledge::Version;

static META: RuleMeta = RuleMeta {
    code: "CU134",
    name: "arch-list-misses-target-gpu",
    category: Category::Compatibility,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "The architectures the build compiles for reach none of a target GPU",
    doc: Doc::Page,
};

pub struct ArchListMissesTargetGpu;

/// One architecture a list ships code for.
struct Code {
    arch: u32,
    reach: Reach,
    sass: bool,
    ptx: bool,
}

fn reach(variant: Variant) -> Reach {
    match variant {
        Variant::Plain => Reach::Plain,
        Variant::ArchSpecific => Reach::ArchSpecific,
        Variant::Family => Reach::Family,
    }
}

/// The code `lists` ship, or `None` when it is not known here: a special
/// value (`all`, `native`), a name `rules/gpus.toml` does not expand, or no
/// architecture at all.
fn shipped(lists: &[&ArchList]) -> Option<Vec<Code>> {
    let mut codes = Vec::new();
    for entry in lists.iter().flat_map(|list| &list.entries) {
        match &entry.target {
            Target::Special(_) => return None,
            Target::Arch { arch, variant } => {
                if entry.sass || entry.ptx {
                    codes.push(Code {
                        arch: *arch,
                        reach: reach(*variant),
                        sass: entry.sass,
                        ptx: entry.ptx,
                    });
                }
            }
            // A PyTorch name stands for a list (`Volta` is `7.0+PTX`).
            Target::Named(name) => {
                let list = Gpus::embedded().torch_arch_names.expand(name)?;
                for entry in arch_lists::parse_torch(list) {
                    if let Target::Arch { arch, variant } = entry.target {
                        codes.push(Code {
                            arch,
                            reach: reach(variant),
                            sass: entry.sass,
                            ptx: entry.ptx,
                        });
                    }
                }
            }
        }
    }
    (!codes.is_empty()).then_some(codes)
}

fn reaches(codes: &[Code], gpu: &TargetGpu) -> bool {
    codes.iter().any(|code| {
        (code.sass && Gpus::runs_sass(gpu.capability, code.arch, code.reach))
            || (code.ptx && Gpus::jits_ptx(gpu.capability, code.arch, code.reach))
    })
}

/// What to add, and where the stage's toolkit cannot build it, that a
/// GPU needs an image built with another toolkit.
fn help(
    missed: &[&TargetGpu],
    setting: &str,
    cuda: Option<&StageCuda>,
    toolkits: &ToolkitKnowledge,
) -> String {
    let mut addable = Vec::new();
    let mut other = Vec::new();
    for gpu in missed {
        let arch = format!("sm_{}", gpu.capability.arch());
        let support = cuda.and_then(|cuda| {
            let wanted = Version::parse(&gpu.capability.to_string())?;
            Some((cuda, toolkits.arch_support(cuda.version, wanted)))
        });
        match support {
            Some((cuda, ArchSupport::Dropped(entry))) => other.push(format!(
                "{arch} needs a CUDA older than {} (the stage has CUDA {}, {})",
                entry.removed.map_or_else(String::new, |v| v.to_string()),
                cuda.version.major_minor(),
                cuda.origin
            )),
            Some((cuda, ArchSupport::NotYet(entry))) => other.push(format!(
                "{arch} needs CUDA {} or newer (the stage has CUDA {}, {})",
                entry.added.map_or_else(String::new, |v| v.to_string()),
                cuda.version.major_minor(),
                cuda.origin
            )),
            _ => addable.push(arch),
        }
    }
    let mut parts = Vec::new();
    if !addable.is_empty() {
        // Some kernels need a newer architecture (sm_80's async copies, sm_90's TMA), and an
        // unknown base may carry a CUDA that cannot build an old one: the advice says both.
        let toolkit = if cuda.is_none() {
            "the base image's CUDA (which cudalint does not know)"
        } else {
            "the stage's CUDA"
        };
        parts.push(format!(
            "add {} to {setting}, or PTX for an architecture at or below it, where {toolkit} and the \
             code's kernels support it; where they do not, this image is not for that GPU: keep it out \
             of the fleet that runs it",
            addable.join(", ")
        ));
    }
    if !other.is_empty() {
        parts.push(format!("build another image for: {}", other.join("; ")));
    }
    parts.join("; ")
}

/// The fleet (the CLI has already rejected unknown names).
fn targets(ctx: &DockerfileContext<'_>) -> Vec<TargetGpu> {
    Gpus::embedded().targets(&ctx.settings.target_gpus)
}

impl DockerfileRule for ArchListMissesTargetGpu {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let fleet = targets(ctx);
        if fleet.is_empty() {
            return;
        }
        let compatibility = &Gpus::embedded().compatibility;
        let read_by_stage = arch_lists_read(ctx);
        for stage in built_stages(ctx) {
            let read = read_by_stage.get(stage.index).copied().unwrap_or(true);
            let cuda = stage_cuda(ctx, stage);
            let lists = arch_lists::stage_lists(stage_instructions(ctx, stage), stage);
            // The options of one nvcc command make one build; every other
            // list is one build's list.
            let mut groups: BTreeMap<(usize, usize, usize), Vec<&ArchList>> = BTreeMap::new();
            for (index, list) in lists
                .iter()
                .enumerate()
                .filter(|(_, l)| l.is_known() && (read || l.origin == Origin::Run))
            {
                let key = match (list.command, list.variable) {
                    (Some((run, command)), None) => (run, command, usize::MAX),
                    _ => (usize::MAX, usize::MAX, index),
                };
                groups.entry(key).or_default().push(list);
            }
            for group in groups.values() {
                let Some(codes) = shipped(group) else {
                    continue;
                };
                let missed: Vec<&TargetGpu> =
                    fleet.iter().filter(|gpu| !reaches(&codes, gpu)).collect();
                let Some(first) = group.first() else {
                    continue;
                };
                if missed.is_empty() {
                    continue;
                }
                let names: Vec<&str> = missed.iter().map(|gpu| gpu.label.as_str()).collect();
                let values: Vec<&str> = group.iter().map(|l| l.value.as_str()).collect();
                let setting = first.setting.as_str();
                out.push(
                    Diagnostic::at(
                        &META,
                        first.span,
                        format!(
                            "{setting} (`{}`) builds no code that {} can run: neither SASS for its architecture nor PTX it can JIT-compile, so the kernels built here fail there with \"no kernel image is available for execution on the device\"",
                            values.join(" "),
                            names.join(", ")
                        ),
                    )
                    .with_help(help(&missed, setting, cuda.as_ref(), &ctx.knowledge.toolkits))
                    .with_note(compatibility.sass.clone())
                    .with_note(compatibility.ptx.clone())
                    .with_source(compatibility.sass_source.clone())
                    .with_source(compatibility.ptx_source.clone()),
                );
            }
        }
    }
}
