//! CU110 cupti-missing: the shipped image has no CUPTI while something in it
//! needs it: torch installed with `--no-deps` or with its CUPTI wheel deleted
//! (`import torch` fails), a Kineto-enabled wheel built in a devel stage,
//! a GPU profiler plugin on a CUDA runtime base, or an `LD_LIBRARY_PATH`
//! entry meant for CUPTI. What needs CUPTI is found by `cupti_use`.

use crate::checks::dockerfile::cupti_use::{cupti_use, CuptiNeed};
use crate::checks::dockerfile::support::{self, shipped_stages};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::model::BaseImage;
use crate::knowledge::cupti::Need;
use crate::knowledge::Version;

fn message(need: &CuptiNeed, base_text: &str) -> String {
    format!(
        "{}, but the shipped image has no CUPTI (its base `{base_text}` ships none): `{}`",
        need.description, need.symptom
    )
}

fn help(ctx: &DockerfileContext<'_>, cuda: Option<Version>) -> String {
    let cupti = &ctx.knowledge.cupti;
    match cuda.and_then(|v| cupti.major(v.major()).map(|m| (m, v))) {
        Some((major, version)) => format!(
            "install CUPTI in the final stage (`apt-get install {}` or `pip install {}`), or build on the matching devel image",
            major.apt_package_for(version.minor()),
            major.pip_package
        ),
        None => "install CUPTI in the final stage (the `nvidia-cuda-cupti-cu12` / `nvidia-cuda-cupti` wheel, or NVIDIA's `cuda-cupti-X-Y` apt package)".to_string(),
    }
}

pub static META: RuleMeta = RuleMeta {
    code: "CU110",
    name: "cupti-missing",
    category: Category::Correctness,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "Something in the shipped image needs CUPTI, and the image has none",
    doc: Doc::Page,
};

pub struct CuptiMissing;

/// What the shipped image's base says about CUPTI.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Base {
    /// A known CUDA image without CUPTI (base, runtime, cudnn-runtime).
    CudaWithout,
    /// A known image without CUDA at all (or scratch).
    NoCuda,
}

impl DockerfileRule for CuptiMissing {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let cupti = &ctx.knowledge.cupti;
        let chain = shipped_stages(ctx.model);
        let (Some(root), Some(target)) = (chain.first(), chain.last()) else {
            return;
        };
        let facts = support::base_facts(ctx, target);
        let base = match (&facts, &root.base) {
            (Some(f), _) if f.has_cupti => return,
            (Some(f), _) if f.cuda.is_some() => Base::CudaWithout,
            (_, BaseImage::Scratch) => Base::NoCuda,
            (_, BaseImage::Image(image)) if cupti.base_without_cuda(&image.repository) => {
                Base::NoCuda
            }
            _ => return,
        };
        let usage = cupti_use(ctx, &chain);
        if usage.provided.is_some() {
            return;
        }
        let base_text = facts
            .as_ref()
            .map_or_else(|| target.base_text.clone(), |f| f.family.clone());
        for need in usage.needs {
            // Profilers only break where CUDA runs; without CUDA they have
            // nothing to trace.
            if need.need == Need::Profiler && base != Base::CudaWithout {
                continue;
            }
            out.push(
                Diagnostic::at(&META, need.span, message(&need, &base_text))
                    .with_help(help(ctx, facts.as_ref().and_then(|f| f.cuda)))
                    .with_note(format!("source: {}", need.source)),
            );
        }
    }
}
