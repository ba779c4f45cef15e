//! CU223 require-check-disabled-in-image: the image config sets `NVIDIA_DISABLE_REQUIRE` to a true value (Go
//! `strconv.ParseBool` terms), so the NVIDIA Container Toolkit starts the container on any driver
//! instead of refusing it with a clear requirement error. Quiet on an image that states no CUDA
//! requirement and holds no CUDA runtime (an NVML-only tool has nothing to protect).

use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};

pub struct RequireCheckDisabled;

static META: RuleMeta = RuleMeta {
    code: "CU223",
    name: "require-check-disabled-in-image",
    category: Category::Compatibility,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The image turns off the NVIDIA Container Toolkit's driver requirement check",
    doc: Doc::Page,
};

impl ImageRule for RequireCheckDisabled {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        let runtime = &ctx.knowledge.cupti.runtime;
        let config = &ctx.image.report.config;
        let Some(value) = config.env_var(&runtime.disable_require_var) else {
            return;
        };
        if !runtime.parses_true(value) {
            return;
        }
        let states_requirement = config
            .env_var(&runtime.require_cuda_var)
            .is_some_and(|v| !v.trim().is_empty())
            || config.env_var(&runtime.legacy_version_var).is_some();
        let has_runtime = ctx.image.inventory.cuda_runtimes().next().is_some();
        if !states_requirement && !has_runtime {
            return;
        }
        let consequence = runtime
            .error("insufficient-driver")
            .map_or_else(String::new, |e| {
                format!(
                    "; on a host driver older than the image's CUDA, programs then fail at their first CUDA call with error {} {} (\"{}\")",
                    e.code, e.name, e.text
                )
            });
        let mut finding = ctx
            .finding_on_image(
                &META,
                format!(
                    "the image config sets `{}={value}`: every NVIDIA_REQUIRE_* check is off, so the container starts on any driver{consequence}",
                    runtime.disable_require_var
                ),
            )
            .with_help("remove it from the image (ENV in the Dockerfile); to run on an older driver, use an image built for an older CUDA")
            .with_source(runtime.source.clone());
        if let Some(require) = config.env_var(&runtime.require_cuda_var) {
            finding = finding.with_note(format!(
                "the requirement it turns off: {}={require}",
                runtime.require_cuda_var
            ));
        }
        out.push(finding);
    }
}
