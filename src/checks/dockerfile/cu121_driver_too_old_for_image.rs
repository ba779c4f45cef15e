//! CU121 driver-too-old-for-image: the target driver (`--driver`) is older
//! than what the image's CUDA (base image and pinned wheels) needs.

use crate::checks::dockerfile::cuda_facts::{stage_cuda, stage_pins};
use crate::checks::dockerfile::support::shipped_stages;
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::knowledge::toolkits::{DriverVerdict, ToolkitKnowledge};
use crate::knowledge::Version;
use crate::source::Span;

pub struct DriverTooOldForImage;

static META: RuleMeta = RuleMeta {
    code: "CU121",
    name: "driver-too-old-for-image",
    category: Category::Compatibility,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "The target driver is too old for the image's CUDA",
    doc: Doc::Page,
};

/// One CUDA version the image needs, and where it comes from.
struct Demand {
    cuda: Version,
    what: String,
    span: Span,
    source: Option<String>,
}

fn finding(toolkits: &ToolkitKnowledge, demand: &Demand, driver: Version) -> Option<Diagnostic> {
    let limits = &toolkits.limits;
    let (cuda, what) = (demand.cuda, &demand.what);
    let fallback = toolkits
        .newest_release_for_driver(driver)
        .map(|r| format!(", or use an image and packages for CUDA {} or older (the newest release driver {driver} fully supports)", r.version.major_minor()))
        .unwrap_or_default();
    let mut diagnostic = match toolkits.driver_verdict(cuda, driver) {
        DriverVerdict::Satisfied | DriverVerdict::Unknown => return None,
        DriverVerdict::BelowFloor { floor, release } => {
            let required = release.map_or(floor.floor, |r| r.driver);
            let mut d = Diagnostic::at(
                &META,
                demand.span,
                format!(
                    "CUDA {cuda} ({what}) needs driver {} or newer even with minor-version compatibility; on driver {driver} CUDA will not start",
                    floor.floor
                ),
            )
            .with_help(format!("upgrade the host driver to {required} or newer{fallback}"))
            .with_note(limits.below_floor.clone())
            .with_source(limits.below_floor_source.clone())
            .with_source(floor.source.clone());
            if let Some(release) = release {
                d = d.with_source(release.source.clone());
            }
            d.with_source(limits.forward_compat_source.clone())
        }
        DriverVerdict::MinorCompat { release, floor } => {
            let mut d = Diagnostic::at(
                &META,
                demand.span,
                format!(
                    "CUDA {cuda} ({what}) needs driver {} ({}); driver {driver} runs it only through minor-version compatibility",
                    release.driver, release.label
                ),
            )
            .with_help(format!("upgrade the host driver to {} or newer{fallback}", release.driver))
            .with_note(limits.minor_compat.clone())
            .with_source(limits.minor_compat_source.clone())
            .with_source(release.source.clone())
            .with_source(floor.source.clone());
            d.severity = Severity::Warning;
            d
        }
    };
    if let Some(source) = &demand.source {
        diagnostic = diagnostic.with_source(source.clone());
    }
    Some(diagnostic)
}

impl DockerfileRule for DriverTooOldForImage {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let Some(driver) = ctx
            .settings
            .target_driver
            .as_deref()
            .and_then(Version::parse)
        else {
            return;
        };
        let stages = shipped_stages(ctx.model);
        let mut demands = Vec::new();
        if let (Some(root), Some(target)) = (stages.first(), stages.last()) {
            if let Some(base) = stage_cuda(ctx, target) {
                demands.push(Demand {
                    cuda: base.version,
                    what: base.origin,
                    span: root.base_span,
                    source: None,
                });
            }
        }
        // Parents first, so findings follow the file.
        for stage in stages.iter() {
            for pin in stage_pins(ctx, stage) {
                // A package that uses the image's CUDA adds no demand of its own.
                if !pin.pin.system {
                    demands.push(Demand {
                        cuda: pin.pin.cuda,
                        what: pin.named(),
                        span: pin.span,
                        source: Some(pin.pin.source),
                    });
                }
            }
        }
        let mut reported: Vec<Version> = Vec::new();
        for demand in &demands {
            if reported
                .iter()
                .any(|c| *c == demand.cuda && c.written == demand.cuda.written)
            {
                continue;
            }
            if let Some(diagnostic) = finding(&ctx.knowledge.toolkits, demand, driver) {
                reported.push(demand.cuda);
                out.push(diagnostic);
            }
        }
    }
}
