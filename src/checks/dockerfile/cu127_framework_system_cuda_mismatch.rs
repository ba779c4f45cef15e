//! CU127 framework-system-cuda-mismatch: a framework whose wheel loads the
//! image's own CUDA and cuDNN (TensorFlow without `[and-cuda]`, ONNX
//! Runtime GPU) is installed on a base whose CUDA or cuDNN major is not the
//! one that release was built for. The libraries are looked up by SONAME
//! (`libcudart.so.12`, `libcudnn.so.8`), are not found, and the framework
//! runs on the CPU without an error. On a base with no CUDA at all
//! (`python:3.11-slim`, `ubuntu:22.04`) a wheel whose name says it is a GPU
//! build (`onnxruntime-gpu`, `paddlepaddle-gpu`, `cupy-cuda12x`) finds none
//! of its libraries, unless the image brings CUDA itself.

use crate::checks::dockerfile::cuda_facts::{as_of, stage_cuda, StageCuda};
use crate::checks::dockerfile::stack::{
    base_cudnn, chain_brings_cuda_otherwise, chain_installs, distro_python_os, installs_cudnn,
};
use crate::checks::dockerfile::support::root_image;
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::model::Stage;
use crate::dockerfile::packages::{PackageInstall, RequestedPackage};
use crate::knowledge::images::parse_cuda_tag;
use crate::knowledge::packages::{PackageKnowledge, SpecCuda};
use crate::knowledge::resolution::{normalize, FrameworkBuild, SystemFramework};
use crate::prediction::Prediction;

pub static META: RuleMeta = RuleMeta {
    code: "CU127",
    name: "framework-system-cuda-mismatch",
    category: Category::Compatibility,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "A framework that loads the image's CUDA/cuDNN was built for another major than the base provides, or needs libraries the base lacks",
    doc: Doc::Page,
};

pub struct FrameworkSystemCudaMismatch;

impl DockerfileRule for FrameworkSystemCudaMismatch {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        for stage in &ctx.model.stages {
            let Some(base) = stage_cuda(ctx, stage) else {
                judge_without_cuda(ctx, stage, out);
                continue;
            };
            let installs = chain_installs(ctx, stage);
            // CUDA wheels elsewhere in the image (torch's, `nvidia-*`) may be
            // loaded first and satisfy the SONAMEs: then it depends on the
            // program, not on the file.
            if installs.iter().any(|i| brings_cuda_wheels(ctx, i)) {
                continue;
            }
            let has_cudnn = installs.iter().any(|i| installs_cudnn(i));
            let variant = runtime_only_variant(ctx, stage, &installs);
            let python_os = distro_python_os(ctx, stage);
            let mut seen: Vec<String> = Vec::new();
            for run in &stage.runs {
                for install in run.installs.iter().filter(|i| i.manager.is_python()) {
                    let other_index = from_other_index(stage, install);
                    for package in install.packages.iter().filter(|p| !p.is_location) {
                        let Some(build) = resolve(ctx, package, python_os.as_deref()) else {
                            continue;
                        };
                        // Another index may hold other builds of a release;
                        // a name or version that carries its CUDA
                        // (`cupy-cuda12x`, `==2.6.1.post117`) is the same
                        // build wherever it comes from.
                        if other_index && build.release.is_some() && build.label.is_none() {
                            continue;
                        }
                        if seen.contains(&package.name) {
                            continue;
                        }
                        let cudnn = if has_cudnn {
                            None
                        } else {
                            base_cudnn(ctx, stage)
                        };
                        let found = judge(ctx, package, &build, &base, cudnn, variant);
                        if let Some(diagnostic) = found {
                            seen.push(package.name.clone());
                            out.push(diagnostic);
                        }
                    }
                }
            }
        }
    }
}

/// The framework build a requirement gets from PyPI, if the data knows
/// it. An unpinned one resolves to the newest release for the Python of
/// `python_os`, only known on a plain `nvidia/cuda` base running its
/// distribution's Python (another base may ship the framework already).
fn resolve<'k>(
    ctx: &'k DockerfileContext<'_>,
    package: &RequestedPackage,
    python_os: Option<&str>,
) -> Option<FrameworkBuild<'k>> {
    let (name, exact, open) = ctx.memo.requirement_terms(&package.word.text)?;
    let build = ctx
        .knowledge
        .resolution
        .framework_build(&name, exact, open, python_os)?;
    let extras = PackageKnowledge::requirement_extras(&package.word.text);
    let own = &build.entry.own_cuda_extras;
    if extras
        .iter()
        .any(|e| own.iter().any(|o| normalize(o) == *e))
    {
        return None;
    }
    // A build from the project's own pages whose version names its CUDA
    // (`==2.6.1.post117`).
    let version = package.word.text.trim_matches(['"', '\'']).split_once("==");
    if let Some((cuda, label)) = version.and_then(|(_, v)| build.entry.labelled_cuda(v)) {
        return Some(FrameworkBuild {
            cuda,
            label: Some(label),
            ..build
        });
    }
    Some(build)
}

fn judge(
    ctx: &DockerfileContext<'_>,
    package: &RequestedPackage,
    build: &FrameworkBuild<'_>,
    base: &StageCuda,
    cudnn: Option<Option<u32>>,
    variant: Option<&str>,
) -> Option<Diagnostic> {
    let entry = build.entry;
    let release = match (build.release, build.newest) {
        (Some(release), Some(list)) => format!(
            "names no exact release, so pip installs the newest for the image's Python, {} {release} (as of {}), which",
            entry.package,
            as_of(ctx, list)
        ),
        (Some(release), None) => match &build.label {
            Some(label) => format!(
                "{} {release} (`{label}`, a build from the project's own pages)",
                entry.package
            ),
            None => format!("{} {release}", entry.package),
        },
        // The name carries the CUDA (`cupy-cuda11x`): every release.
        (None, _) => format!("every {} release", normalize(&package.name)),
    };
    let library = entry.library();
    let (wanted, have) = (build.cuda, base.version);
    // CUDA 10 and older name their runtime by major and minor
    // (`libcudart.so.10.1`); from 11 on, by major only.
    let sonames_differ = wanted.major() != have.major()
        || (wanted.major() < 11 && wanted.written >= 2 && wanted.minor() != have.minor());
    let soname = if wanted.major() < 11 {
        format!("{}.{}", wanted.major(), wanted.minor())
    } else {
        wanted.major().to_string()
    };
    let (message, help, missing) = if sonames_differ {
        (
            format!(
                "`{}`: {release} loads CUDA {} libraries (`{library}.so.{soname}`), but {} provides CUDA {have}",
                package.word.text,
                wanted,
                base.origin
            ),
            match &entry.instead {
                // What the data names for the base's CUDA (the package
                // whose name carries it, another index's build).
                Some(instead) => format!(
                    "install {} instead, or use a CUDA {}.x base image",
                    instead.replace("{major}", &have.major().to_string()),
                    wanted.major()
                ),
                _ => format!(
                    "pin a release built for CUDA {} (see the release's CUDA requirements), or use a CUDA {}.x base image",
                    have.major(),
                    wanted.major()
                ),
            },
            format!("{library}.so.{soname}"),
        )
    } else if let Some((variant, libraries)) = variant.and_then(|variant| {
        let libraries = ctx.knowledge.resolution.base_variant_libraries.as_ref()?;
        libraries
            .lacks(variant, library)
            .then_some((variant, libraries))
    }) {
        (
            format!(
                "`{}`: {release} loads `{library}.so.{soname}`, but {} is a `{variant}` image, which holds only {}, and the image installs no other CUDA library",
                package.word.text,
                base.origin,
                libraries.libraries.join(", ")
            ),
            format!(
                "use the base image's `runtime` variant (same tag with `runtime` for `{variant}`), or install the CUDA libraries (`cuda-libraries-{}-{}`)",
                have.major(),
                have.minor()
            ),
            format!("{library}.so.{soname}"),
        )
    } else {
        // A framework whose cuDNN is optional (CuPy) is not judged by it,
        // nor a build from the project's pages (its cuDNN is not the data's).
        if build.label.is_some() {
            return None;
        }
        let wanted_cudnn = entry.cudnn?;
        match cudnn {
            Some(Some(major)) if major != wanted_cudnn => (
                format!(
                    "`{}`: {release} loads cuDNN {} (`libcudnn.so.{}`), but {} ships cuDNN {major}",
                    package.word.text, wanted_cudnn, wanted_cudnn, base.origin
                ),
                format!(
                    "pin a release built for cuDNN {major}, or a base image tag with cuDNN {}",
                    wanted_cudnn
                ),
                format!("libcudnn.so.{wanted_cudnn}"),
            ),
            Some(None) => (
                format!(
                    "`{}`: {release} loads cuDNN {} (`libcudnn.so.{}`), but {} has no cuDNN and the image installs none",
                    package.word.text, wanted_cudnn, wanted_cudnn, base.origin
                ),
                format!(
                    "use the base image's `-cudnn` tag, or install cuDNN {} in the image",
                    wanted_cudnn
                ),
                format!("libcudnn.so.{wanted_cudnn}"),
            ),
            _ => return None,
        }
    };
    Some(
        Diagnostic::at(&META, package.word.span, message)
            .with_help(help)
            .with_note(format!(
                "the wheel brings no CUDA of its own: it opens the image's libraries by SONAME, and when they are missing {}",
                entry.consequence()
            ))
            .with_note(format!("source: {}", entry.source))
            .with_prediction(Prediction::SonameMissing {
                package: normalize(&package.name),
                soname: missing,
            }),
    )
}

/// A stage on a base known to have no CUDA at all: each GPU-named
/// framework it installs loads libraries that are not there, unless the
/// chain installs CUDA (NVIDIA's wheels, torch, apt/conda CUDA packages).
fn judge_without_cuda(ctx: &DockerfileContext<'_>, stage: &Stage, out: &mut Vec<Diagnostic>) {
    let Some(policy) = ctx.knowledge.resolution.no_cuda_base.as_ref() else {
        return;
    };
    let Some(image) = root_image(ctx, stage) else {
        return;
    };
    let canonical = ctx.knowledge.images.canonicalize(image);
    if !ctx.knowledge.cupti.base_without_cuda(&canonical.repository) {
        return;
    }
    let installs = chain_installs(ctx, stage);
    let brings_cuda = installs.iter().any(|install| {
        brings_cuda_wheels(ctx, install)
            || ((install.manager.is_system() || install.manager.is_conda())
                && install.packages.iter().any(|p| {
                    p.distribution().is_some_and(|name| {
                        policy.brings_cuda(&name.to_ascii_lowercase(), install.manager.is_conda())
                    })
                }))
    });
    if brings_cuda || chain_brings_cuda_otherwise(ctx, stage) {
        return;
    }
    let mut seen: Vec<String> = Vec::new();
    for run in &stage.runs {
        for install in run.installs.iter().filter(|i| i.manager.is_python()) {
            for package in install.packages.iter().filter(|p| !p.is_location) {
                let Some((name, exact, open)) = ctx.memo.requirement_terms(&package.word.text)
                else {
                    continue;
                };
                if !policy.judges(&name, exact.is_some()) || seen.contains(&name) {
                    continue;
                }
                let resolution = &ctx.knowledge.resolution;
                let pinned = resolution.framework_build(&name, exact, open, None);
                let entry = match &pinned {
                    Some(build) => build.entry,
                    None if exact.is_none() => {
                        match resolution
                            .system_frameworks
                            .iter()
                            .find(|f| f.cuda_of(&normalize(&name)).is_some())
                        {
                            Some(entry) => entry,
                            None => continue,
                        }
                    }
                    None => continue,
                };
                let extras = PackageKnowledge::requirement_extras(&package.word.text);
                if extras
                    .iter()
                    .any(|e| entry.own_cuda_extras.iter().any(|o| normalize(o) == *e))
                {
                    continue;
                }
                // Another index may hold another CUDA build of the release
                // (ONNX Runtime's CUDA 12 feed): then which CUDA is not said.
                let named = pinned.as_ref().filter(|build| {
                    !(from_other_index(stage, install)
                        && build.release.is_some()
                        && build.label.is_none())
                });
                seen.push(name.clone());
                out.push(without_cuda_diagnostic(
                    package,
                    &image.text,
                    named,
                    entry,
                    &policy.source,
                ));
            }
        }
    }
}

fn without_cuda_diagnostic(
    package: &RequestedPackage,
    image: &str,
    build: Option<&FrameworkBuild<'_>>,
    entry: &SystemFramework,
    policy_source: &str,
) -> Diagnostic {
    let library = entry.library();
    // The name or the pinned release says which CUDA (`cupy-cuda12x`,
    // `onnxruntime-gpu==1.18.1`); an open requirement's release depends
    // on the Python, which such a base does not say.
    let (loads, soname) = match build {
        Some(build) => {
            let major = build.cuda.major();
            let soname = if major < 11 {
                format!("{library}.so.{}.{}", major, build.cuda.minor())
            } else {
                format!("{library}.so.{major}")
            };
            (
                format!("loads CUDA {} libraries (`{soname}`)", build.cuda),
                Some(soname),
            )
        }
        None => (
            format!("loads the CUDA libraries of its build (`{library}.so.*`) from the system"),
            None,
        ),
    };
    let help = match entry.own_cuda_extras.first() {
        Some(extra) => format!(
            "install `{}[{extra}]`, whose extra brings NVIDIA's CUDA wheels (add the cuDNN extra where the release has one), or build on an `nvidia/cuda` runtime image of the CUDA the release was built for",
            normalize(&package.name)
        ),
        None => "build on an `nvidia/cuda` runtime image (with cuDNN where the framework needs it) of the CUDA the release was built for, or install that CUDA's libraries in the image".to_string(),
    };
    let diagnostic = Diagnostic::at(
        &META,
        package.word.span,
        format!(
            "`{}` {loads}, but the base image `{image}` has no CUDA at all and the image installs none",
            package.word.text
        ),
    )
    .with_help(help)
    .with_note(format!(
        "the wheel brings no CUDA of its own: it opens the image's libraries by SONAME, and when they are missing {}",
        entry.consequence()
    ))
    .with_note(format!("source: {}; {policy_source}", entry.source));
    match soname {
        Some(soname) => diagnostic.with_prediction(Prediction::SonameMissing {
            package: normalize(&package.name),
            soname,
        }),
        None => diagnostic,
    }
}

/// The variant of the stage's `nvidia/cuda` base when it holds only some
/// CUDA libraries (`base`: the runtime) and nothing in the stage's chain
/// installs the others (`rules/resolution.toml` `base_variant_libraries`).
fn runtime_only_variant(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    installs: &[&PackageInstall],
) -> Option<&'static str> {
    let libraries = ctx.knowledge.resolution.base_variant_libraries.as_ref()?;
    let image = root_image(ctx, stage)?;
    let images = &ctx.knowledge.images;
    let canonical = images.canonicalize(image);
    if !images.is_nvidia_cuda(&canonical.repository) {
        return None;
    }
    let variant = parse_cuda_tag(canonical.tag.as_deref()?)
        .ok()?
        .variant?
        .as_str();
    if !libraries.variants.iter().any(|v| v == variant) {
        return None;
    }
    let adds_libraries = installs.iter().any(|install| {
        install.manager.is_system()
            && install
                .packages
                .iter()
                .filter_map(|p| p.distribution())
                .any(|name| libraries.provided_by(name))
    });
    (!adds_libraries).then_some(variant)
}

/// Environment variables that point pip/uv at another index than PyPI.
const INDEX_ENV_VARS: &[&str] = &[
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
    "UV_INDEX_URL",
    "UV_EXTRA_INDEX_URL",
    "UV_INDEX",
    "UV_DEFAULT_INDEX",
];

/// An install that may take its packages from another index (a CUDA 12
/// feed of ONNX Runtime, a mirror with other builds): the PyPI facts do
/// not apply.
fn from_other_index(stage: &Stage, install: &PackageInstall) -> bool {
    // Looked up by name: a stage may set thousands of variables, and this
    // is asked per install.
    !install.index_urls.is_empty()
        || INDEX_ENV_VARS.iter().any(|var| {
            stage
                .env_value(var)
                .is_some_and(|value| !value.trim().is_empty())
        })
}

/// A pip/conda install of packages that bring NVIDIA's CUDA libraries:
/// torch (whose PyPI wheels depend on them), `nvidia-*` wheels, or any
/// requirement that pins a CUDA build (`jax[cuda12]`, `tensorflow[and-cuda]`).
fn brings_cuda_wheels(ctx: &DockerfileContext<'_>, install: &PackageInstall) -> bool {
    if !(install.manager.is_python() || install.manager.is_conda()) {
        return false;
    }
    install.packages.iter().any(|p| {
        let name = p.distribution().map(normalize).unwrap_or_default();
        name == "torch"
            || name == "pytorch"
            || name.starts_with("nvidia-")
            || matches!(
                ctx.knowledge.packages.classify_requirement(&p.word.text, false),
                Some(SpecCuda::Pin(pin)) if !pin.system
            )
    })
}
