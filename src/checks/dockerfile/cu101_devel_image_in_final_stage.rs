//! CU101 devel-image-in-final-stage: the image the build produces stands on
//! a devel base (nvcc, headers, static libraries, Nsight) although the final
//! stage compiles nothing. A runtime base is several GiB smaller.

use crate::checks::dockerfile::cuda_stages::{
    is_base_or_build_environment, ptxas_user_installs, runs_ptxas, shipped_image_compiles,
};
use crate::checks::dockerfile::cupti_use::{cupti_use, CuptiProvided};
use crate::checks::dockerfile::runtime_env;
use crate::checks::dockerfile::support::{shipped_stages, span_text};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Edit, Fix, FixSafety, Severity};
use crate::dockerfile::model::{BaseImage, Stage};
use crate::knowledge::images::{BaseImageFacts, Variant};
use crate::knowledge::packages::PackageKnowledge;
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU101",
    name: "devel-image-in-final-stage",
    category: Category::Size,
    default_severity: Severity::Warning,
    fix: FixAvailability::Sometimes,
    summary: "The final image is built on a CUDA devel image but compiles nothing",
    doc: Doc::Page,
};

pub struct DevelImageInFinalStage;

impl DockerfileRule for DevelImageInFinalStage {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let chain = shipped_stages(ctx.model);
        let (Some(root), Some(target)) = (chain.first(), chain.last()) else {
            return;
        };
        let BaseImage::Image(image) = &root.base else {
            return;
        };
        let images = &ctx.knowledge.images;
        let Some(facts) = images.classify(image) else {
            return;
        };
        if !facts.devel_sized {
            return;
        }
        // A stage of the shipped image may need the compiler (and tools
        // that JIT-compile at run time need it in the image): then devel is
        // right, or at least deliberate.
        if shipped_image_compiles(ctx, &chain, &images.build_signals) {
            return;
        }
        // A file with no start command of its own (or only a shell) that
        // installs a toolkit or toolchain builds a base for other builds or
        // a build environment: the toolkit is its product, not dead weight.
        if is_base_or_build_environment(ctx, &chain) {
            return;
        }
        let stage_name = stage_label(target);
        // NGC framework images have no runtime variant to switch to, and
        // leaving them replaces NGC's own build of the framework: that is a
        // rebuild to test, not a finding with advice that keeps the image.
        if is_ngc_framework(&image.text) {
            return;
        }
        let saving = "; a runtime base leaves out nvcc, the headers, the static libraries and Nsight (several GiB uncompressed)";
        let message = if std::ptr::eq(*target, *root) {
            format!(
                "{stage_name} runs on the devel image `{}` but builds nothing{saving}",
                image.text
            )
        } else {
            format!(
                "{stage_name} inherits the devel image `{}` (through {}) but builds nothing{saving}",
                image.text,
                chain_text(&chain)
            )
        };
        let twin = runtime_twin(ctx, &facts, image.tag.as_deref());
        // XLA (TensorFlow, JAX) runs ptxas where it runs: a runtime base needs
        // nvcc's package back, which is still far smaller than devel.
        let ptxas =
            (runs_ptxas(ctx, &chain) && !brings_own_ptxas(ctx, &chain)).then(|| match facts.cuda {
                Some(cuda) => format!("`cuda-nvcc-{}-{}`", cuda.major(), cuda.minor()),
                None => "the CUDA `cuda-nvcc` package".to_string(),
            });
        let help = match (&twin, facts.family.as_str()) {
            (Some(tag), _) if ptxas.is_some() => format!(
                "start the final stage from `{}`, install {} there (XLA runs its ptxas at run time), and COPY what a devel build stage produced",
                with_tag(&image.text, image.tag.as_deref(), tag),
                ptxas.as_deref().unwrap_or_default()
            ),
            (Some(tag), _) => format!(
                "start the final stage from `{}` and COPY what a devel build stage produced",
                with_tag(&image.text, image.tag.as_deref(), tag)
            ),
            (None, "nvidia/cuda") => "start the final stage from the matching `-runtime-` tag and COPY the built artifacts from a devel build stage".into(),
            (None, _) if facts.variant == Some(Variant::Devel) && facts.family == "pytorch/pytorch" => {
                "use the `-runtime` tag of the same PyTorch image, and build extensions in a separate stage".into()
            }
            _ => "build in a separate stage and ship on a runtime base (e.g. `nvidia/cuda:<version>-runtime-<os>` plus the framework's pip wheels)".into(),
        };
        let mut diagnostic = Diagnostic::at(&META, root.base_span, message)
            .with_help(help)
            .with_note(format!("devel facts: {}", facts.source));
        if let Some(runtime) = images.variant(Variant::Runtime) {
            if !runtime.has_cupti {
                // The fact is the note; where it comes from (a mirror of
                // NVIDIA's image sources, a `dpkg-query` run) is a source,
                // shown with `--show-sources`.
                diagnostic = diagnostic
                    .with_note(
                        "runtime images have no nvcc and no CUPTI; pip-installed torch brings its own CUPTI",
                    )
                    .with_source(runtime.source.clone());
            }
        }
        if let (Some(tag), true) = (twin, std::ptr::eq(*target, *root)) {
            if let Some(mut fix) = fix_to_runtime(ctx, root, image.tag.as_deref(), &tag) {
                // Runtime images have no CUPTI: an image that uses the devel
                // base's copy would lose it (CU110 then fires).
                if let Some(reason) = cupti_loss(ctx, &chain) {
                    fix.safety = FixSafety::Unsafe;
                    fix.description
                        .push_str(&format!(" (runtime images lack CUPTI, and {reason})"));
                }
                if let Some(package) = &ptxas {
                    fix.safety = FixSafety::Unsafe;
                    fix.description.push_str(&format!(
                        " (runtime images lack ptxas, which XLA runs: install {package})"
                    ));
                }
                diagnostic = diagnostic.with_fix(fix);
            }
        }
        out.push(diagnostic);
    }
}

/// Why switching the shipped image to a runtime base, which has no CUPTI,
/// would break it: the first thing in it that needs CUPTI (what CU110 would
/// then report), or a loader-path entry naming the directory where devel
/// images keep CUPTI (where CU111's fix points). `None` when nothing does,
/// or the image installs CUPTI itself.
fn cupti_loss(ctx: &DockerfileContext<'_>, chain: &[&Stage]) -> Option<String> {
    let usage = cupti_use(ctx, chain);
    if usage.provided == Some(CuptiProvided::Installed) {
        return None;
    }
    if let Some(first) = usage.needs.first() {
        return Some(match usage.needs.len() - 1 {
            0 => first.description.clone(),
            more => format!("{} (and {more} more)", first.description),
        });
    }
    let cupti = &ctx.knowledge.cupti;
    let settings = runtime_env::settings(ctx, chain);
    cupti.runtime.loader_vars.iter().find_map(|var| {
        runtime_env::effective_path(&settings, var)
            .iter()
            .find(|entry| cupti.library_path.is_right_dir(entry.text))
            .map(|entry| format!("`{}` on {var} is where devel images keep it", entry.text))
    })
}

/// Whether every XLA package the shipped image pip-installs comes with an
/// extra that installs NVIDIA's nvcc wheel (`tensorflow[and-cuda]`,
/// `jax[cuda12]`): its ptxas is the package's own, not the base image's.
fn brings_own_ptxas(ctx: &DockerfileContext<'_>, chain: &[&Stage]) -> bool {
    let mut xla = ptxas_user_installs(ctx, chain)
        .map(|(package, user)| {
            PackageKnowledge::requirement_extras(&package.word.text)
                .iter()
                .any(|extra| {
                    user.own_ptxas_extras
                        .iter()
                        .any(|own| own.eq_ignore_ascii_case(extra))
                })
        })
        .peekable();
    xla.peek().is_some() && xla.all(|own| own)
}

/// NGC's registry namespace: its framework images (PyTorch, TensorFlow,
/// JAX, Triton server, NeMo…) are published only as full devel-sized images.
const NGC_PREFIX: &str = "nvcr.io/nvidia/";

/// An NGC image other than NGC's copy of `nvidia/cuda` (which has runtime tags).
fn is_ngc_framework(reference: &str) -> bool {
    reference
        .strip_prefix(NGC_PREFIX)
        .is_some_and(|repository| {
            !repository.starts_with("cuda:") && !repository.starts_with("cuda@")
        })
}

/// `reference` with its tag replaced by `tag`.
fn with_tag(reference: &str, old: Option<&str>, tag: &str) -> String {
    match old.and_then(|old| reference.strip_suffix(old)) {
        Some(prefix) => format!("{prefix}{tag}"),
        None => tag.to_string(),
    }
}

fn stage_label(stage: &Stage) -> String {
    match &stage.name {
        Some(name) => format!("the final stage `{name}`"),
        None => "the final stage".into(),
    }
}

fn chain_text(chain: &[&Stage]) -> String {
    // `chain` is root first; name the target's parents, nearest first.
    chain
        .iter()
        .rev()
        .skip(1)
        .map(|s| match &s.name {
            Some(name) => format!("`{name}`"),
            None => format!("stage {}", s.index),
        })
        .collect::<Vec<_>>()
        .join(" → ")
}

/// The published runtime tag for an nvidia/cuda devel tag.
fn runtime_twin(
    ctx: &DockerfileContext<'_>,
    facts: &BaseImageFacts,
    tag: Option<&str>,
) -> Option<String> {
    if facts.family != "nvidia/cuda" {
        return None;
    }
    ctx.knowledge.images.runtime_twin(tag?)
}

/// Replace the devel tag in the FROM word: Safe when the word is literal,
/// Unsafe when it is built from ARGs (another value could name a tag whose
/// runtime twin does not exist).
fn fix_to_runtime(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    tag: Option<&str>,
    twin: &str,
) -> Option<Fix> {
    let tag = tag?;
    let raw = span_text(ctx, stage.base_span);
    if raw.contains('@') {
        // A digest pins the devel image's content; a new tag would not match it.
        return None;
    }
    if !raw.contains('$') {
        let start = stage.base_span.end.checked_sub(tag.len())?;
        if !raw.ends_with(tag) {
            return None;
        }
        return Some(Fix {
            description: format!("use the runtime image tag `{twin}`"),
            safety: FixSafety::Safe,
            edits: vec![Edit {
                span: Span::new(start, stage.base_span.end),
                replacement: twin.to_string(),
            }],
        });
    }
    // `nvidia/cuda:${CUDA}-devel-ubuntu22.04`: change the literal `devel`.
    let mut hits = raw.match_indices("-devel");
    let (offset, _) = hits.next()?;
    if hits.next().is_some() {
        return None;
    }
    let start = stage.base_span.start + offset + 1;
    Some(Fix {
        description: "use the runtime variant of the ARG-built image tag".into(),
        safety: FixSafety::Unsafe,
        edits: vec![Edit {
            span: Span::new(start, start + "devel".len()),
            replacement: "runtime".into(),
        }],
    })
}
