//! CU132 cuda-arch-unsupported: an architecture list (`TORCH_CUDA_ARCH_LIST`,
//! `CUDAARCHS`, `CMAKE_CUDA_ARCHITECTURES`, nvcc `-gencode`/`-arch`) names
//! a GPU architecture the stage's CUDA toolkit cannot build.

use crate::checks::dockerfile::cuda_facts::{stage_cuda, StageCuda};
use crate::checks::dockerfile::cuda_stages::arch_lists_read;
use crate::checks::dockerfile::support::stage_instructions;
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::arch_lists::{self, ArchList, Origin};
use crate::knowledge::toolkits::{ArchSupport, Architecture, ToolkitKnowledge};

pub struct CudaArchUnsupported;

static META: RuleMeta = RuleMeta {
    code: "CU132",
    name: "cuda-arch-unsupported",
    category: Category::Compatibility,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "A CUDA architecture list names an architecture the toolkit cannot build",
    doc: Doc::Page,
};

fn check_list<'l>(
    toolkits: &ToolkitKnowledge,
    cuda: &StageCuda,
    list: &'l ArchList,
) -> Option<Diagnostic> {
    let mut bad: Vec<(&'l str, &Architecture, bool)> = Vec::new();
    for entry in &list.entries {
        let token = entry.text.as_str();
        let Some(arch) = toolkits.parse_arch(token) else {
            continue;
        };
        match toolkits.arch_ref_support(cuda.version, &arch) {
            ArchSupport::NotYet(entry) => bad.push((token, entry, false)),
            ArchSupport::Dropped(entry) => bad.push((token, entry, true)),
            ArchSupport::Supported | ArchSupport::Unknown => {}
        }
    }
    let (first_token, first_entry, first_dropped) = *bad.first()?;
    let toolkit = cuda.version.major_minor();
    let reasons: Vec<String> = bad
        .iter()
        .map(
            |(token, entry, dropped)| match (dropped, entry.added, entry.removed) {
                (true, _, Some(removed)) => format!("`{token}` (dropped in CUDA {removed})"),
                (false, Some(added), _) => format!("`{token}` (added in CUDA {added})"),
                _ => format!("`{token}`"),
            },
        )
        .collect();
    let help = match (first_dropped, first_entry.added, first_entry.removed) {
        (true, _, Some(removed)) => format!(
            "remove `{first_token}` from the list, or build with a CUDA toolkit older than {removed}"
        ),
        (false, Some(added), _) => format!(
            "remove `{first_token}` from the list, or use a CUDA {added} or newer base image"
        ),
        _ => format!("remove `{first_token}` from the list"),
    };
    let mut diagnostic = Diagnostic::at(
        &META,
        list.span,
        format!(
            "{} names {} that CUDA {toolkit} ({}) cannot build; the CUDA build step fails",
            list.setting,
            reasons.join(", "),
            cuda.origin
        ),
    )
    .with_help(help);
    for (_, entry, _) in &bad {
        let unconfirmed = if entry.confirmed {
            ""
        } else {
            " (unconfirmed)"
        };
        diagnostic = diagnostic.with_note(format!(
            "sm_{}{}{unconfirmed}: {}",
            entry.arch.major(),
            entry.arch.minor(),
            entry.source
        ));
    }
    Some(diagnostic)
}

impl DockerfileRule for CudaArchUnsupported {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let toolkits = &ctx.knowledge.toolkits;
        let read_by_stage = arch_lists_read(ctx);
        for stage in &ctx.model.stages {
            let Some(cuda) = stage_cuda(ctx, stage) else {
                continue;
            };
            let read = read_by_stage.get(stage.index).copied().unwrap_or(true);
            // ENV and ARG lists count only where a build reads them; a
            // value still holding `$VAR` is not known here.
            let lists = arch_lists::stage_lists(stage_instructions(ctx, stage), stage);
            for list in lists
                .iter()
                .filter(|l| l.is_known() && (read || l.origin == Origin::Run))
            {
                out.extend(check_list(toolkits, &cuda, list));
            }
        }
    }
}
