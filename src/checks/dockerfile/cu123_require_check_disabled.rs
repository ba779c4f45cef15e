//! CU123 require-check-disabled: the shipped image turns off the NVIDIA
//! Container Toolkit's driver check (`NVIDIA_DISABLE_REQUIRE` true in Go
//! `ParseBool` terms) or empties `NVIDIA_REQUIRE_CUDA`.

use crate::checks::dockerfile::runtime_env;
use crate::checks::dockerfile::support::{base_facts, shipped_stages};
use crate::checks::{Category, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::model::Stage;
use crate::knowledge::images::Variant;

pub static META: RuleMeta = RuleMeta {
    code: "CU123",
    name: "require-check-disabled",
    category: Category::Compatibility,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The NVIDIA Container Toolkit's driver requirement check is turned off",
    doc: include_str!("../../../docs/rules/CU123.md"),
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
        if !states_requirement || is_nvml_tool_image(ctx, &chain) {
            return;
        }
        // The expanded value where the model knows it, else the literal.
        let value_of = |setting: &runtime_env::Setting<'_>| -> Option<String> {
            if !setting.value.contains('$') {
                return Some(setting.value.to_string());
            }
            target
                .env
                .iter()
                .find(|(k, _)| k == setting.key)
                .map(|(_, v)| v.clone())
                .filter(|v| !v.contains('$'))
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
