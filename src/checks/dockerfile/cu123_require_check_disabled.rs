//! CU123 require-check-disabled: the shipped image turns off the NVIDIA
//! Container Toolkit's driver check (`NVIDIA_DISABLE_REQUIRE` true in Go
//! `ParseBool` terms), empties `NVIDIA_REQUIRE_CUDA`, or states a check
//! weaker than its CUDA: a hand-written `cuda>=` below the image's CUDA
//! where minor-version compatibility does not cover the gap, or a CUDA
//! installed from NVIDIA's repository on another base with neither
//! `CUDA_VERSION` nor `NVIDIA_REQUIRE_CUDA` (then nothing is checked).

use crate::checks::dockerfile::runtime_env;
use crate::checks::dockerfile::support::{base_facts, root_image, shipped_stages};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::model::{Reach, Stage};
use crate::knowledge::build::BuildFacts;
use crate::knowledge::images::Variant;
use crate::knowledge::Version;

pub static META: RuleMeta = RuleMeta {
    code: "CU123",
    name: "require-check-disabled",
    category: Category::Compatibility,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The NVIDIA Container Toolkit's driver requirement check is turned off",
    doc: Doc::Page,
};

pub struct RequireCheckDisabled;

/// An NVML-only tool image, as NVIDIA's Kubernetes tools (device plugin,
/// GPU feature discovery, DCGM exporter, MIG manager) are built: on the
/// `base` variant (cudart and compat only, no CUDA libraries to call) with
/// no Python or conda packages that could bring CUDA code. Such a tool
/// talks to the driver through NVML, which the requirement does not
/// protect, so disabling it harms nothing.
fn is_nvml_tool_image(ctx: &DockerfileContext<'_>, chain: &[&Stage]) -> bool {
    let Some(target) = chain.last() else {
        return false;
    };
    let on_base_variant =
        base_facts(ctx, target).is_some_and(|facts| facts.variant == Some(Variant::Base));
    let installs_python = chain
        .iter()
        .flat_map(|stage| &stage.runs)
        .flat_map(|run| &run.installs)
        .any(|install| install.manager.is_python() || install.manager.is_conda());
    on_base_variant && !installs_python
}

impl DockerfileRule for RequireCheckDisabled {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let runtime = &ctx.knowledge.cupti.runtime;
        let chain = shipped_stages(ctx.model);
        let Some(target) = chain.last() else { return };
        let settings = runtime_env::settings(ctx, &chain);
        // NVIDIA_DISABLE_REQUIRE only turns off requirements the image
        // states: on an image that is no CUDA image (a DCGM exporter or
        // device plugin on distroless or plain Ubuntu, using only NVML)
        // and sets no requirement itself, there is nothing to turn off.
        let states_requirement = base_facts(ctx, target).is_some_and(|f| f.cuda.is_some())
            || runtime_env::last_env(&settings, &runtime.require_cuda_var).is_some()
            || runtime_env::last_env(&settings, &runtime.legacy_version_var).is_some();
        if is_nvml_tool_image(ctx, &chain) {
            return;
        }
        if !states_requirement {
            out.extend(unchecked_hand_built_cuda(ctx, &chain));
            return;
        }
        // The expanded value where the model knows it, else the literal.
        let value_of = |setting: &runtime_env::Setting<'_>| -> Option<String> {
            if !setting.value.contains('$') {
                return Some(setting.value.to_string());
            }
            target
                .env_value(setting.key)
                .filter(|v| !v.contains('$'))
                .map(str::to_string)
        };
        let insufficient = runtime.error("insufficient-driver");
        let consequence = insufficient.map_or_else(String::new, |e| {
            format!(
                "; on a host driver older than the image's CUDA, programs then fail at their first CUDA call with error {} {} (\"{}\")",
                e.code, e.name, e.text
            )
        });

        if let Some(setting) = runtime_env::last_env(&settings, &runtime.disable_require_var) {
            if value_of(setting).is_some_and(|v| runtime.parses_true(&v)) {
                out.push(
                    Diagnostic::at(
                        &META,
                        setting.span,
                        format!(
                            "`{}` turns off every NVIDIA_REQUIRE_* check, so the container starts on any driver instead of being refused with a clear `requirement error`{consequence}",
                            runtime.disable_require_var
                        ),
                    )
                    .with_help("remove it; to run on an older driver, use an image built for an older CUDA, or rely on forward compatibility on data-center GPUs")
                    .with_note(format!("source: {}", runtime.source)),
                );
            }
        }

        if let Some(setting) = runtime_env::last_env(&settings, &runtime.require_cuda_var) {
            let image_cuda = runtime_env::last_env(&settings, &runtime.legacy_version_var)
                .and_then(&value_of)
                .and_then(|v| Version::parse(v.trim()))
                .or_else(|| {
                    base_facts(ctx, target)
                        .filter(|f| !f.is_unknown("cuda"))
                        .and_then(|f| f.cuda)
                });
            let stated = value_of(setting).and_then(|v| stated_cuda(&v));
            if let (Some(image), Some(stated)) = (image_cuda, stated) {
                if understates(ctx, stated, image) {
                    out.push(
                        Diagnostic::at(
                            &META,
                            setting.span,
                            format!(
                                "`{}` asks only for `cuda>={}`, but the image's CUDA is {}: the NVIDIA Container Toolkit then starts it on drivers too old for CUDA {}{consequence}",
                                runtime.require_cuda_var,
                                stated,
                                image,
                                image.major_minor()
                            ),
                        )
                        .with_help(format!(
                            "require the image's own CUDA: `cuda>={}` (as NVIDIA's images set it), or remove the line and keep the base image's value",
                            image.major_minor()
                        ))
                        .with_note(format!("source: {}", runtime.source)),
                    );
                }
            }
            if value_of(setting).is_some_and(|v| v.trim().is_empty()) {
                let version_cleared = runtime_env::last_env(&settings, &runtime.legacy_version_var)
                    .is_some_and(|s| s.value.trim().is_empty());
                let what = if version_cleared {
                    format!(
                        "with `{}` also empty, no CUDA requirement is checked at all{consequence}",
                        runtime.legacy_version_var
                    )
                } else {
                    format!(
                        "while `{}` is set the toolkit treats the image as legacy and checks only `cuda>=<its major.minor>`, dropping the `brand=…,driver>=N` alternatives that let it start on older data-center driver branches",
                        runtime.legacy_version_var
                    )
                };
                out.push(
                    Diagnostic::at(
                        &META,
                        setting.span,
                        format!("`{}` is emptied: {what}", runtime.require_cuda_var),
                    )
                    .with_help("leave NVIDIA_REQUIRE_CUDA as the base image sets it")
                    .with_note(format!("source: {}", runtime.source)),
                );
            }
        }
    }
}

/// The `cuda>=X.Y` of a requirement string (`cuda>=10.0 brand=tesla,driver>=384`).
fn stated_cuda(value: &str) -> Option<Version> {
    value
        .split_whitespace()
        .find_map(|term| term.strip_prefix("cuda>="))
        .and_then(Version::parse)
}

/// Whether a requirement of `stated` lets the image of CUDA `image` start on
/// a driver that cannot run it: another major, or a lower minor of a major
/// without minor-version compatibility (CUDA 10 and older need the driver
/// of their own release).
fn understates(ctx: &DockerfileContext<'_>, stated: Version, image: Version) -> bool {
    if stated.major_minor() >= image.major_minor() {
        return false;
    }
    stated.major() < image.major()
        || ctx
            .knowledge
            .toolkits
            .minor_compat_floor(image.major())
            .is_none()
}

/// The CUDA `M.m` of an NVIDIA repository package (`cuda-cudart-11-8`,
/// `cuda-toolkit-12-4`, `cuda-11-8`).
fn repository_cuda(package: &str) -> Option<Version> {
    let rest = package.strip_prefix("cuda-")?;
    let mut parts = rest.rsplitn(3, '-');
    let (minor, major) = (parts.next()?, parts.next()?);
    let numeric = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    (numeric(minor) && numeric(major))
        .then(|| Version::parse(&format!("{major}.{minor}")))
        .flatten()
}

/// A CUDA installed from NVIDIA's repository (`apt-get install
/// cuda-cudart-11-8`) on a base that is no CUDA image, in an image that
/// sets neither NVIDIA_REQUIRE_CUDA nor CUDA_VERSION: the toolkit then
/// checks nothing and starts it on any driver.
fn unchecked_hand_built_cuda(ctx: &DockerfileContext<'_>, chain: &[&Stage]) -> Option<Diagnostic> {
    let runtime = &ctx.knowledge.cupti.runtime;
    let plain = &BuildFacts::embedded().hand_built_cuda;
    let root = chain.last().and_then(|stage| root_image(ctx, stage))?;
    let on_plain_os = root.registry.as_deref().is_none_or(|r| r == "docker.io")
        && plain.os_repositories.contains(&root.repository);
    if !on_plain_os {
        return None;
    }
    let (install, version) = chain
        .iter()
        .flat_map(|stage| &stage.runs)
        .flat_map(|step| {
            step.installs.iter().filter(move |install| {
                install.manager.is_system()
                    && step
                        .commands
                        .get(install.command)
                        .is_some_and(|c| c.reach != Reach::Skipped)
            })
        })
        .flat_map(|install| &install.packages)
        .find_map(|package| repository_cuda(&package.name).map(|v| (package, v)))?;
    let insufficient = runtime.error("insufficient-driver");
    let consequence = insufficient.map_or_else(String::new, |e| {
        format!(
            "; on a driver older than CUDA {version} needs, programs fail at their first CUDA call with error {} {} (\"{}\")",
            e.code, e.name, e.text
        )
    });
    Some(
        Diagnostic::at(
            &META,
            install.word.span,
            format!(
                "`{}` installs CUDA {version} from NVIDIA's repository, but the image sets neither `{}` nor `{}`: the NVIDIA Container Toolkit checks no driver requirement and starts it on any driver{consequence}",
                install.word.text, runtime.require_cuda_var, runtime.legacy_version_var
            ),
        )
        .with_help(format!(
            "state the requirement as NVIDIA's images do: `ENV CUDA_VERSION={version}` and `ENV {}=\"cuda>={version}\"`",
            runtime.require_cuda_var
        ))
        .with_note(format!("source: {}", runtime.source))
        .with_source(plain.source.clone()),
    )
}
