//! CU132 cuda-arch-unsupported: an architecture list (`TORCH_CUDA_ARCH_LIST`,
//! `CUDAARCHS`, `CMAKE_CUDA_ARCHITECTURES`, nvcc `-gencode`/`-arch`) names
//! a GPU architecture the stage's CUDA toolkit cannot build.

use crate::checks::dockerfile::cuda_facts::{stage_cuda, StageCuda};
use crate::checks::dockerfile::cuda_stages::{stage_builds_native_code, Evidence};
use crate::checks::dockerfile::support::stage_instructions;
use crate::checks::{Category, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::ast::{Command, Instruction};
use crate::dockerfile::model::{BaseImage, Reach, Stage};
use crate::knowledge::toolkits::{ArchSupport, Architecture, ToolkitKnowledge};
use crate::source::Span;

pub struct CudaArchUnsupported;

static META: RuleMeta = RuleMeta {
    code: "CU132",
    name: "cuda-arch-unsupported",
    category: Category::Compatibility,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "A CUDA architecture list names an architecture the toolkit cannot build",
    doc: include_str!("../../../docs/rules/CU132.md"),
};

/// Variables whose value is an architecture list, read by PyTorch's
/// extension builder and by CMake.
const ARCH_VARIABLES: &[&str] = &[
    "TORCH_CUDA_ARCH_LIST",
    "CUDAARCHS",
    "CMAKE_CUDA_ARCHITECTURES",
];
const CMAKE_DEFINE: &str = "CMAKE_CUDA_ARCHITECTURES";
/// nvcc options whose value names architectures.
const NVCC_ARCH_OPTIONS: &[&str] = &[
    "-gencode",
    "--generate-code",
    "-arch",
    "--gpu-architecture",
    "-code",
    "--gpu-code",
];

/// One architecture list as written, and where.
struct ArchList<'t> {
    /// What set it: `ENV TORCH_CUDA_ARCH_LIST`, `nvcc -gencode`, …
    setting: String,
    value: &'t str,
    span: Span,
}

fn check_list(
    toolkits: &ToolkitKnowledge,
    cuda: &StageCuda,
    list: &ArchList<'_>,
) -> Option<Diagnostic> {
    let mut bad: Vec<(&str, &Architecture, bool)> = Vec::new();
    for token in list
        .value
        .split([';', ',', ' ', '\t', '=', '[', ']', '"', '\''])
    {
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

/// `-gencode=arch=…`, `-arch=sm_80` or `-arch sm_80`: the option's value and
/// the index of the word holding it.
fn option_value<'w>(words: &[&'w str], index: usize, option: &str) -> Option<(&'w str, usize)> {
    let word = words.get(index)?;
    if *word == option {
        return words.get(index + 1).map(|value| (*value, index + 1));
    }
    word.strip_prefix(option)?
        .strip_prefix('=')
        .map(|value| (value, index))
}

fn run_lists(stage: &Stage) -> Vec<ArchList<'_>> {
    let mut lists = Vec::new();
    // A list in a shell branch the build does not take, or may not take
    // (its condition is not known here), is no finding for this build.
    let unconditional = stage
        .runs
        .iter()
        .flat_map(|run| &run.commands)
        .filter(|command| command.reach == Reach::Runs);
    for command in unconditional {
        for (name, value) in &command.assignments {
            if ARCH_VARIABLES.contains(&name.as_str()) {
                lists.push(ArchList {
                    setting: format!("`{name}=`"),
                    value,
                    span: command.span,
                });
            }
        }
        let words: Vec<&str> = command.words.iter().map(|w| w.text.as_str()).collect();
        let is_nvcc = words
            .first()
            .is_some_and(|w| w.rsplit('/').next() == Some("nvcc"));
        for (index, word) in command.words.iter().enumerate() {
            let text = word.text.as_str();
            // `export VAR=…`, `env VAR=… cmd`, `-DCMAKE_CUDA_ARCHITECTURES=…`.
            let assignment = text.strip_prefix("-D").unwrap_or(text);
            if let Some((name, value)) = assignment.split_once('=') {
                let name = name.split(':').next().unwrap_or(name);
                let is_define =
                    text.starts_with("-D") || words.get(index.wrapping_sub(1)) == Some(&"-D");
                if (is_define && name == CMAKE_DEFINE)
                    || (!text.starts_with('-') && ARCH_VARIABLES.contains(&name))
                {
                    lists.push(ArchList {
                        setting: format!("`{name}`"),
                        value,
                        span: word.span,
                    });
                    continue;
                }
            }
            if !is_nvcc {
                continue;
            }
            for option in NVCC_ARCH_OPTIONS {
                if let Some((value, at)) = option_value(&words, index, option) {
                    let span = command.words.get(at).map_or(word.span, |w| w.span);
                    lists.push(ArchList {
                        setting: format!("nvcc `{option}`"),
                        value,
                        span,
                    });
                }
            }
        }
    }
    lists
}

/// For each stage, whether it or a stage built on it (which inherits its
/// ENV) shows a build: an arch list in a stage that compiles nothing is
/// read by nothing and breaks no build. The arch variables themselves do
/// not count as compiling here, and neither does a plain install of a
/// project (`pip install .`, most often pure Python): the finding says a
/// build fails, so the build must show itself ([`Evidence::Shown`]). One
/// pass over the stages, children before parents (a parent always comes
/// earlier).
fn lists_read(ctx: &DockerfileContext<'_>) -> Vec<bool> {
    let mut signals = ctx.knowledge.images.build_signals.clone();
    signals
        .env
        .retain(|name| !ARCH_VARIABLES.contains(&name.as_str()));
    let stages = &ctx.model.stages;
    let mut read: Vec<bool> = stages
        .iter()
        .map(|stage| stage_builds_native_code(ctx, stage, &signals, Evidence::Shown))
        .collect();
    for stage in stages.iter().rev() {
        if let BaseImage::Stage(parent) = stage.base {
            if parent < stage.index && read.get(stage.index).copied().unwrap_or(false) {
                if let Some(flag) = read.get_mut(parent) {
                    *flag = true;
                }
            }
        }
    }
    read
}

/// Whether the ENV (or, `env` false, ARG) instruction at `at` is the
/// stage's last of its kind to set `name`: the resolved value is the
/// stage's final one, so only the last setting reports it.
fn last_setting(instructions: &[Instruction], at: usize, name: &str, env: bool) -> bool {
    !instructions.iter().skip(at + 1).any(|i| match &i.command {
        Command::Env(pairs) if env => pairs.iter().any(|kv| kv.key == name),
        Command::Arg(args) if !env => args.iter().any(|a| a.name == name),
        _ => false,
    })
}

impl DockerfileRule for CudaArchUnsupported {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let toolkits = &ctx.knowledge.toolkits;
        let read_by_stage = lists_read(ctx);
        for stage in &ctx.model.stages {
            let Some(cuda) = stage_cuda(ctx, stage) else {
                continue;
            };
            let instructions = stage_instructions(ctx, stage);
            let mut lists = Vec::new();
            let read = read_by_stage.get(stage.index).copied().unwrap_or(true);
            // ENV and ARG values as the build resolves them (`--build-arg`
            // overrides, expanded references), at the end of the stage.
            for (at, instruction) in instructions.iter().enumerate() {
                match &instruction.command {
                    Command::Env(pairs) if read => {
                        for pair in pairs.iter().filter(|kv| {
                            ARCH_VARIABLES.contains(&kv.key.as_str())
                                && last_setting(instructions, at, &kv.key, true)
                        }) {
                            if let Some(value) = stage.env_value(&pair.key) {
                                lists.push(ArchList {
                                    setting: format!("`ENV {}`", pair.key),
                                    value,
                                    span: pair.span,
                                });
                            }
                        }
                    }
                    Command::Arg(args) if read => {
                        for arg in args.iter().filter(|a| {
                            ARCH_VARIABLES.contains(&a.name.as_str())
                                && last_setting(instructions, at, &a.name, false)
                                // ENV of the same name shadows the ARG.
                                && stage.env_value(&a.name).is_none()
                        }) {
                            if let Some(value) = stage.arg_value(&arg.name) {
                                lists.push(ArchList {
                                    setting: format!("`ARG {}`", arg.name),
                                    value,
                                    span: arg.span,
                                });
                            }
                        }
                    }
                    _ => {}
                }
            }
            lists.extend(run_lists(stage));
            // A value still holding `$VAR` is not known here.
            for list in lists.iter().filter(|l| !l.value.contains('$')) {
                out.extend(check_list(toolkits, &cuda, list));
            }
        }
    }
}
