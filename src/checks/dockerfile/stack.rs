//! What a stage's image holds besides its own RUNs, for the rules about
//! mixed CUDA stacks (CU109, CU113, CU127, CU128): the chain of stages it
//! is built on, every package install along it, and the cuDNN of its base.

use crate::paths::basename;

use crate::checks::dockerfile::support::{base_facts, root_image, stage_instructions};
use crate::checks::DockerfileContext;
use crate::dockerfile::ast::Command;
use crate::dockerfile::model::Stage;
use crate::dockerfile::packages::PackageInstall;
use crate::knowledge::images::{glob_matches, parse_cuda_tag};

/// `stage` and the stages it is built `FROM`, root first.
pub fn chain<'m>(ctx: &DockerfileContext<'m>, stage: &Stage) -> Vec<&'m Stage> {
    let mut stages: Vec<&Stage> = ctx
        .model
        .ancestry(stage.index)
        .into_iter()
        .filter_map(|index| ctx.model.stages.get(index))
        .collect();
    stages.reverse();
    stages
}

/// Every package install of the chain, in build order.
pub fn chain_installs<'m>(ctx: &DockerfileContext<'m>, stage: &Stage) -> Vec<&'m PackageInstall> {
    chain(ctx, stage)
        .into_iter()
        .flat_map(|s| &s.runs)
        .flat_map(|run| &run.installs)
        .collect()
}

/// The cuDNN major of the stage's `nvidia/cuda` base: the tag's numbered
/// flavour (`cudnn8`), or the knowledge's major for the unnumbered `cudnn`
/// flavour. `Some(None)`: a known `nvidia/cuda` tag without cuDNN; `None`:
/// not known.
pub fn base_cudnn(ctx: &DockerfileContext<'_>, stage: &Stage) -> Option<Option<u32>> {
    let image = root_image(ctx, stage)?;
    let images = &ctx.knowledge.images;
    let canonical = images.canonicalize(image);
    if !images.is_nvidia_cuda(&canonical.repository) {
        return None;
    }
    let tag = parse_cuda_tag(canonical.tag.as_deref()?).ok()?;
    match tag.flavour.as_deref() {
        None => Some(None),
        Some("cudnn") => Some(Some(
            ctx.knowledge.resolution.unnumbered_cudnn.as_ref()?.major,
        )),
        Some(_) => tag.cudnn_major().map(Some),
    }
}

/// Whether an install puts cuDNN into the image (`libcudnn9-cuda-12`,
/// `nvidia-cudnn-cu12`, conda `cudnn`).
pub fn installs_cudnn(install: &PackageInstall) -> bool {
    install.packages.iter().any(|p| {
        p.distribution()
            .is_some_and(|name| name.to_ascii_lowercase().contains("cudnn"))
    })
}

/// The tag OS of the stage's plain `nvidia/cuda` base when the image runs
/// that OS's own Python (no versioned interpreter, conda, pyenv or
/// deadsnakes anywhere in the chain, and pip not run by a versioned
/// `pythonX.Y`): what an unpinned requirement's newest release depends on.
/// Found once per stage and lint ([`crate::checks::dockerfile::lint_memo`]):
/// it reads every word of
/// every RUN of the chain.
pub fn distro_python_os(ctx: &DockerfileContext<'_>, stage: &Stage) -> Option<String> {
    ctx.memo
        .distro_python_os(stage.index, || find_distro_python_os(ctx, stage))
}

/// [`distro_python_os`], uncached.
fn find_distro_python_os(ctx: &DockerfileContext<'_>, stage: &Stage) -> Option<String> {
    let facts = base_facts(ctx, stage)?;
    if facts.family != "nvidia/cuda" {
        return None;
    }
    let os = facts.os?;
    let other = &ctx.knowledge.resolution.other_python;
    let chain = chain(ctx, stage);
    let runs = || chain.iter().flat_map(|s| &s.runs);
    let versioned_package = runs().flat_map(|run| &run.installs).any(|install| {
        install.manager.is_conda()
            || (install.manager.is_system()
                && install
                    .packages
                    .iter()
                    .any(|p| other.packages.iter().any(|g| glob_matches(g, &p.name))))
    });
    let words = || runs().flat_map(|run| &run.commands).flat_map(|c| &c.words);
    if versioned_package
        || words().any(|w| is_versioned_python(basename(&w.text)))
        || other.words.found_in_any(words().map(|w| w.text.as_str()))
    {
        return None;
    }
    Some(os)
}

/// `python3.11`, `python3.10`: an interpreter of a named minor.
pub fn is_versioned_python(program: &str) -> bool {
    program
        .strip_prefix("python3.")
        .is_some_and(|minor| !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether the chain puts CUDA into the image by other means than a
/// package install: a `COPY --from`/`ADD --from` of a path naming CUDA or
/// NVIDIA (`/usr/local/cuda-12.6/`, `…/nvidia/cublas/lib`), or a loader path
/// (`LD_LIBRARY_PATH`) that names one (libraries mounted or copied in).
pub fn chain_brings_cuda_otherwise(ctx: &DockerfileContext<'_>, stage: &Stage) -> bool {
    let names_cuda = |text: &str| {
        let lower = text.to_ascii_lowercase();
        lower.contains("cuda") || lower.contains("nvidia")
    };
    if stage.env_value("LD_LIBRARY_PATH").is_some_and(names_cuda) {
        return true;
    }
    chain(ctx, stage).into_iter().any(|s| {
        stage_instructions(ctx, s)
            .iter()
            .any(|instruction| match &instruction.command {
                Command::Copy(copy) | Command::Add(copy) => {
                    copy.from.is_some() && copy.sources.iter().any(|src| names_cuda(&src.text))
                }
                _ => false,
            })
    })
}
