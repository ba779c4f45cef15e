//! CUDA facts about a stage that the toolkit rules (CU120, CU121, CU132)
//! share: which CUDA the stage's base provides, which CUDA its pip/conda
//! installs pin, and which stages end up in the built image.

use crate::checks::dockerfile::support::{base_facts, root_image};
use crate::checks::DockerfileContext;
use crate::dockerfile::model::{BaseImage, Stage};
use crate::knowledge::packages::CudaPin;
use crate::knowledge::Version;
use crate::source::Span;

/// The environment variable NVIDIA's images (and hand-rolled ones) set to
/// the toolkit version (cuda-packaging.md §1.2).
const CUDA_VERSION_ENV: &str = "CUDA_VERSION";

/// The CUDA toolkit a stage stands on, and how we know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageCuda {
    pub version: Version,
    /// For messages: "the base image `nvidia/cuda:12.4.1-…`" or
    /// "`ENV CUDA_VERSION=12.4.1`".
    pub origin: String,
}

/// The base image's CUDA when the knowledge knows the image, else the
/// stage's `ENV CUDA_VERSION` (inherited from parent stages included).
pub fn stage_cuda(ctx: &DockerfileContext<'_>, stage: &Stage) -> Option<StageCuda> {
    let from_base = base_facts(ctx, stage).and_then(|facts| facts.cuda);
    if let (Some(version), Some(image)) = (from_base, root_image(ctx, stage)) {
        return Some(StageCuda {
            version,
            origin: format!("the base image `{}`", image.text),
        });
    }
    let (_, value) = stage.env.iter().find(|(key, _)| key == CUDA_VERSION_ENV)?;
    let version = Version::parse(value)?;
    Some(StageCuda {
        version,
        origin: format!("`ENV {CUDA_VERSION_ENV}={value}`"),
    })
}

/// A CUDA pin in one of a stage's RUN commands.
#[derive(Clone, Debug)]
pub struct StagePin {
    /// Index of the RUN step in `Stage::runs`.
    pub run: usize,
    /// The word that pins (a requirement, an index URL, a conda spec).
    pub text: String,
    pub span: Span,
    pub pin: CudaPin,
}

/// Every CUDA pin in the stage's own RUN commands, in order. The command's
/// environment is the stage's ENV plus its `VAR=value` prefixes, so a
/// `PIP_INDEX_URL` keeps bare pins from being read as PyPI builds.
pub fn stage_pins(ctx: &DockerfileContext<'_>, stage: &Stage) -> Vec<StagePin> {
    let mut pins = Vec::new();
    for (run, step) in stage.runs.iter().enumerate() {
        for command in &step.commands {
            let words: Vec<&str> = command.words.iter().map(|w| w.text.as_str()).collect();
            let mut env = stage.env.clone();
            env.extend(command.assignments.iter().cloned());
            for found in ctx.knowledge.packages.cuda_pins_in_command(&words, &env) {
                let Some(word) = command.words.get(found.word) else {
                    continue;
                };
                pins.push(StagePin {
                    run,
                    text: word.text.clone(),
                    span: word.span,
                    pin: found.pin,
                });
            }
        }
    }
    pins
}

/// The stages whose files make up the built image: the target stage and
/// the stages it builds `FROM`, target first. Empty when there is no target.
pub fn image_stages<'m>(ctx: &DockerfileContext<'m>) -> Vec<&'m Stage> {
    let mut chain = Vec::new();
    let mut next = ctx.model.target.and_then(|t| ctx.model.stages.get(t));
    while let Some(stage) = next {
        chain.push(stage);
        next = match stage.base {
            // Only strictly earlier stages: a malformed model cannot loop.
            BaseImage::Stage(parent) if parent < stage.index => ctx.model.stages.get(parent),
            _ => None,
        };
    }
    chain
}

/// `cu124` for CUDA 12.4: how PyTorch names builds, for help texts.
pub fn cuda_tag(cuda: Version) -> String {
    format!("cu{}{}", cuda.major(), cuda.minor())
}
