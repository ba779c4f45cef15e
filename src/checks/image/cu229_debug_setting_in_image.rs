//! CU229 debug-setting-in-image: the image config keeps a CUDA debugging switch on
//! (`CUDA_LAUNCH_BLOCKING=1`, `NCCL_DEBUG=TRACE` …), so every container started from it runs
//! slower. The image-side twin of CU129, reading the same data (`rules/build.toml` `debug_env`)
//! from the config's `Env` instead of the Dockerfile's `ENV`.

use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::knowledge::build::BuildFacts;

pub struct DebugSettingInImage;

static META: RuleMeta = RuleMeta {
    code: "CU229",
    name: "debug-setting-in-image",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The image config keeps a CUDA debugging switch on that slows every run",
    doc: Doc::Page,
};

impl ImageRule for DebugSettingInImage {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        let facts = BuildFacts::embedded();
        let config = &ctx.image.report.config;
        for debug in &facts.debug_env {
            let Some(value) = config.env_var(&debug.name) else {
                continue;
            };
            let env = |name: &str| config.env_var(name).map(str::to_string);
            if facts.debug_setting(&debug.name, value, env).is_none() {
                continue;
            }
            out.push(
                ctx.finding_on_image(
                    &META,
                    format!("the image config sets `{}={value}`: {}", debug.name, debug.cost),
                )
                .with_help(format!(
                    "remove it from the image (ENV in the Dockerfile) and set it only on the run you debug (`docker run -e {}={value} …`)",
                    debug.name
                ))
                .with_note("a debugging switch in the image config is on in every container started from it")
                .with_source(debug.source.clone()),
            );
        }
    }
}
