//! CU120 wheel-cuda-mismatch: a pip/conda install pins a CUDA build that
//! differs from the CUDA of the stage's base image.

use crate::checks::dockerfile::cuda_facts::{
    cuda_tag, stage_cuda, stage_pins, StageCuda, StagePin,
};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::knowledge::resolution::normalize;
use crate::knowledge::Version;
use crate::prediction::Prediction;

pub struct WheelCudaMismatch;

static META: RuleMeta = RuleMeta {
    code: "CU120",
    name: "wheel-cuda-mismatch",
    category: Category::Compatibility,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "A pip/conda package is built for a different CUDA than the base image",
    doc: Doc::Page,
};

/// `https://download.pytorch.org/whl/cuXYZ`, the index of PyTorch's CUDA
/// X.Y builds.
const TORCH_INDEX: &str = "https://download.pytorch.org/whl/";

/// What to install instead for a base of CUDA `have`, naming only builds
/// that exist: for a torch requirement with a release the data covers,
/// the index of that release's `have` build, or the releases that have
/// one; otherwise the generic advice.
fn build_advice(ctx: &DockerfileContext<'_>, pin: &StagePin, have: Version) -> String {
    let packages = &ctx.knowledge.packages;
    let tag = cuda_tag(have);
    let release = torch_release(&pin.text);
    match release.and_then(|release| Some((release, packages.torch_builds(release)?))) {
        Some((release, builds)) if builds.cuda.contains(&have.major_minor()) => format!(
            "install torch {release} from its CUDA {have} build: `--index-url {TORCH_INDEX}{tag}` (`--index-url` replaces PyPI; `--extra-index-url` does not pin the build)"
        ),
        Some((release, builds)) => {
            let published = builds
                .cuda
                .iter()
                .map(|cuda| format!("`{}`", cuda_tag(*cuda)))
                .collect::<Vec<_>>()
                .join(", ");
            let newest = match packages.newest_torch_build(have) {
                Some(last) => format!("; the newest torch with a `{tag}` build is {last}"),
                None => format!("; no torch release in cudalint's data has a `{tag}` build"),
            };
            format!(
                "torch {release} was published for {published} only{newest}: pick a release and `--index-url {TORCH_INDEX}cuXYZ` that match the base, or a base image of the wheel's CUDA"
            )
        }
        None if is_torch(&pin.text) => match packages.newest_torch_build(have) {
            Some(last) => format!(
                "pin a torch release that has a CUDA {have} build (the newest is {last}) and install it with `--index-url {TORCH_INDEX}{tag}`, or start from a base image of the wheel's CUDA"
            ),
            None => format!(
                "no torch release in cudalint's data has a `{tag}` build: start from a base image of the wheel's CUDA"
            ),
        },
        None if pins_torch(ctx, &pin.text) => format!(
            "start from a CUDA {} base image, the CUDA of PyPI's build of the torch this release pins (its PyPI wheels are built against that torch)",
            pin.pin.cuda
        ),
        None => match packages.build_for_major(&pin.text, have.major()) {
            Some(other) => format!(
                "install {other}, built for CUDA {}, or start from a base image of the package's CUDA",
                have.major()
            ),
            None if from_pytorch(ctx, &pin.text) => format!(
                "install the build for CUDA {have} (`--index-url {TORCH_INDEX}{tag}` where the release has one), or start from a base image of the package's CUDA"
            ),
            None => format!(
                "install a build of the package for CUDA {} where its project publishes one, or start from a CUDA {} base image",
                have.major(),
                pin.pin.cuda
            ),
        },
    }
}

/// A requirement of a package whose releases pin torch (vLLM).
fn pins_torch(ctx: &DockerfileContext<'_>, spec: &str) -> bool {
    ctx.memo
        .requirement_terms(spec)
        .is_some_and(|(name, _, _)| ctx.knowledge.resolution.has_torch_pins(&name))
}

/// A pin whose other CUDA builds are on PyTorch's index: the index URL itself,
/// or a requirement of torch or its companions (torchvision, torchaudio).
fn from_pytorch(ctx: &DockerfileContext<'_>, text: &str) -> bool {
    is_index_url(ctx, text)
        || ctx
            .memo
            .requirement_terms(text)
            .is_some_and(|(name, _, _)| {
                name == "torch" || ctx.knowledge.resolution.is_torch_companion(&name)
            })
}

/// A pin that is a PyTorch index or wheel URL (`rules/packages.toml` `index_urls`).
fn is_index_url(ctx: &DockerfileContext<'_>, text: &str) -> bool {
    text.contains("://") && ctx.knowledge.packages.classify_index_url(text).is_some()
}

/// A requirement of torch without an exact release (`torch`, `torch>=2`).
fn is_torch(spec: &str) -> bool {
    let spec = spec.trim_matches(['"', '\'']);
    spec == "torch"
        || spec
            .strip_prefix("torch")
            .is_some_and(|rest| rest.starts_with(['>', '<', '~', '!', '=', ' ']))
}

/// The torch release (`2.6`) a `torch==2.6.0` requirement names.
fn torch_release(spec: &str) -> Option<Version> {
    let version = spec.trim_matches(['"', '\'']).strip_prefix("torch==")?;
    let public = version.split('+').next().unwrap_or(version);
    Version::parse(public).map(|v| v.major_minor())
}

fn with_resolution(
    ctx: &DockerfileContext<'_>,
    mut diagnostic: Diagnostic,
    pin: &StagePin,
) -> Diagnostic {
    if let Some(resolution) = &pin.resolution {
        diagnostic.notes.insert(0, resolution.clone());
    }
    if let Some(related) = pin.from_file.as_ref().and_then(|o| o.related.clone()) {
        diagnostic.related.push(related);
    }
    if let Some(prediction) = prediction(ctx, pin) {
        diagnostic = diagnostic.with_prediction(prediction);
    }
    diagnostic
}

/// What the built image holds if the finding is right: the pinned package as a build for the
/// pin's CUDA. An index URL of PyTorch's pins torch; a variant that uses the image's own CUDA
/// (`pin.system`) brings no CUDA build to check. A package that pins torch
/// (vLLM) stands for the torch it pulls in.
fn prediction(ctx: &DockerfileContext<'_>, pin: &StagePin) -> Option<Prediction> {
    if pin.pin.system {
        return None;
    }
    let package = if is_index_url(ctx, &pin.text) {
        "torch".to_string()
    } else {
        let (name, _, _) = ctx.memo.requirement_terms(&pin.text)?;
        match normalize(&name).as_str() {
            "pytorch" | "pytorch-cuda" => "torch".to_string(),
            name if ctx.knowledge.resolution.has_torch_pins(name) => "torch".to_string(),
            name => name.to_string(),
        }
    };
    Some(Prediction::WheelCuda {
        package,
        cuda: pin.pin.cuda,
    })
}

fn major_mismatch(ctx: &DockerfileContext<'_>, pin: &StagePin, base: &StageCuda) -> Diagnostic {
    let (wanted, have) = (pin.pin.cuda, base.version.major_minor());
    if pin.pin.system {
        return Diagnostic::at(
            &META,
            pin.span,
            format!(
                "{} uses the image's own CUDA {wanted}, but {} provides CUDA {have}",
                pin.named(),
                base.origin
            ),
        )
        .with_help(format!(
            "use the extra for CUDA {} or a CUDA {wanted}.x base image",
            have.major()
        ))
        .with_note("this variant ships no CUDA libraries, so it cannot find the CUDA it was built for and the GPU backend fails to load")
        .with_note(format!("source: {}", pin.pin.source));
    }
    Diagnostic::at(
        &META,
        pin.span,
        format!(
            "{} installs a CUDA {wanted} build, but {} provides CUDA {have}",
            pin.named(),
            base.origin
        ),
    )
    .with_help(build_advice(ctx, pin, have))
    .with_note(format!(
        "a CUDA {wanted} base instead crosses a CUDA major: it raises the minimum host driver, can drop GPU architectures the old major built for, and may need other pins (cuDNN, CUDA wheels) moved with it"
    ))
    .with_note(format!(
        "the image ends up with two CUDA majors: the package runs on its own CUDA {wanted} libraries, the base's CUDA {have} is dead weight, and extensions built with the base's nvcc (e.g. `torch.utils.cpp_extension`) fail because torch requires the same CUDA major"
    ))
    .with_note(format!("source: {}", pin.pin.source))
}

fn minor_mismatch(ctx: &DockerfileContext<'_>, pin: &StagePin, base: &StageCuda) -> Diagnostic {
    let (wanted, have) = (pin.pin.cuda, base.version.major_minor());
    let mut diagnostic = Diagnostic::at(
        &META,
        pin.span,
        format!(
            "{} is built for CUDA {wanted}, but {} provides CUDA {have}",
            pin.named(),
            base.origin
        ),
    )
    .with_help(build_advice(ctx, pin, have))
    .with_note(format!(
        "the package brings its own CUDA {wanted} libraries, so the base's CUDA {have} libraries are dead weight, and extensions built with the base's nvcc target {have} while the package runs {wanted}"
    ))
    .with_note(format!("source: {}", pin.pin.source));
    diagnostic.severity = Severity::Info;
    diagnostic
}

impl DockerfileRule for WheelCudaMismatch {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        for stage in &ctx.model.stages {
            let Some(base) = stage_cuda(ctx, stage) else {
                continue;
            };
            // One finding per CUDA version per RUN: a torch pin, its
            // torchvision pin and the index URL all say the same thing.
            let mut reported: Vec<(usize, String)> = Vec::new();
            for pin in stage_pins(ctx, stage) {
                let key = (pin.run, pin.pin.cuda.to_string());
                if reported.contains(&key) {
                    continue;
                }
                let wanted = pin.pin.cuda;
                let diagnostic = if wanted.major() != base.version.major() {
                    with_resolution(ctx, major_mismatch(ctx, &pin, &base), &pin)
                } else if wanted.written >= 2
                    && !pin.pin.system
                    && wanted.minor() > base.version.minor()
                {
                    // A wheel for an older minor of the same major runs on
                    // the newer base (minor-version compatibility); often
                    // no build for the base's minor exists. A newer one
                    // raises the driver floor above what the base states.
                    with_resolution(ctx, minor_mismatch(ctx, &pin, &base), &pin)
                } else {
                    continue;
                };
                reported.push(key);
                out.push(diagnostic);
            }
        }
    }
}
