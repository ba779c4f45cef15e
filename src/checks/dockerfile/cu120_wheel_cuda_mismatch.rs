//! CU120 wheel-cuda-mismatch: a pip/conda install pins a CUDA build that
//! differs from the CUDA of the stage's base image.

use crate::checks::dockerfile::cuda_facts::{
    cuda_tag, stage_cuda, stage_pins, StageCuda, StagePin,
};
use crate::checks::{Category, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};

pub struct WheelCudaMismatch;

static META: RuleMeta = RuleMeta {
    code: "CU120",
    name: "wheel-cuda-mismatch",
    category: Category::Compatibility,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "A pip/conda package is built for a different CUDA than the base image",
    doc: include_str!("../../../docs/rules/CU120.md"),
};

fn major_mismatch(pin: &StagePin, base: &StageCuda) -> Diagnostic {
    let (wanted, have) = (pin.pin.cuda, base.version.major_minor());
    if pin.pin.system {
        return Diagnostic::at(
            &META,
            pin.span,
            format!(
                "`{}` uses the image's own CUDA {wanted}, but {} provides CUDA {have}",
                pin.text, base.origin
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
            "`{}` installs a CUDA {wanted} build, but {} provides CUDA {have}",
            pin.text, base.origin
        ),
    )
    .with_help(format!(
        "install the build for CUDA {have} (PyTorch: `{}`), or start from a CUDA {wanted} base image",
        cuda_tag(have)
    ))
    .with_note(format!(
        "the image ends up with two CUDA majors: the package runs on its own CUDA {wanted} libraries, the base's CUDA {have} is dead weight, and extensions built with the base's nvcc (e.g. `torch.utils.cpp_extension`) fail because torch requires the same CUDA major"
    ))
    .with_note(format!("source: {}", pin.pin.source))
}

fn minor_mismatch(pin: &StagePin, base: &StageCuda) -> Diagnostic {
    let (wanted, have) = (pin.pin.cuda, base.version.major_minor());
    let mut diagnostic = Diagnostic::at(
        &META,
        pin.span,
        format!(
            "`{}` is built for CUDA {wanted}, but {} provides CUDA {have}",
            pin.text, base.origin
        ),
    )
    .with_help(format!(
        "pin the build for CUDA {have} (PyTorch: `{}`) or use a CUDA {wanted} base image",
        cuda_tag(have)
    ))
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
                    major_mismatch(&pin, &base)
                } else if wanted.written >= 2
                    && !pin.pin.system
                    && wanted.minor() != base.version.minor()
                {
                    minor_mismatch(&pin, &base)
                } else {
                    continue;
                };
                reported.push(key);
                out.push(diagnostic);
            }
        }
    }
}
