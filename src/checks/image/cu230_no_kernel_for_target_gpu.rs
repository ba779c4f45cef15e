//! CU230 no-kernel-for-target-gpu: with a fleet (`--gpu`, `[target] gpus`), a library that carries
//! GPU code has neither SASS a target GPU runs nor PTX the driver can compile for it, so its kernels
//! fail with `no kernel image is available for execution on the device`. One finding per library
//! family; a library loaded only on demand (a plugin, or a library something NEEDs) is a warning that
//! says so, and one that nothing in the image loads is information.

use super::gpu_fleet::{self, Loaded};
use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::image::gpu::{coverage, Coverage};
use crate::knowledge::gpus::{Gpus, TargetGpu};

pub struct NoKernelForTargetGpu;

static META: RuleMeta = RuleMeta {
    code: "CU230",
    name: "no-kernel-for-target-gpu",
    category: Category::Compatibility,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "A library's GPU code has no SASS and no PTX for a target GPU",
    doc: Doc::Page,
};

fn what(object: &Loaded) -> String {
    let sass = object.object.code.sass();
    let ptx = object.object.code.ptx();
    format!(
        "it carries {} and {}",
        if sass.is_empty() {
            "no SASS".to_owned()
        } else {
            format!("SASS {}", sass.join(" "))
        },
        if ptx.is_empty() {
            "no PTX".to_owned()
        } else {
            format!("PTX {}", ptx.join(" "))
        }
    )
}

impl ImageRule for NoKernelForTargetGpu {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        let targets = gpu_fleet::targets(ctx);
        if targets.is_empty() {
            return;
        }
        let rules = &Gpus::embedded().compatibility;
        for (family, objects) in gpu_fleet::families(ctx) {
            let missing = |object: &Loaded| -> Vec<&TargetGpu> {
                targets
                    .iter()
                    .filter(|gpu| coverage(&object.object.code, gpu.capability) == Coverage::None)
                    .collect()
            };
            // Objects loaded at start first, then those opened on demand: they decide the severity.
            let Some((first, failing)) = objects
                .iter()
                .filter(|object| object.at_start)
                .chain(objects.iter().filter(|object| object.on_demand))
                .chain(
                    objects
                        .iter()
                        .filter(|object| !object.at_start && !object.on_demand),
                )
                .map(|object| (object, missing(object)))
                .find(|(_, failing)| !failing.is_empty())
            else {
                continue;
            };
            let path = &first.object.path;
            let gpus = if failing.len() == 1 {
                "that GPU"
            } else {
                "those GPUs"
            };
            let when = if first.at_start {
                format!("on {gpus} its kernels fail")
            } else if first.on_demand {
                format!(
                    "it is loaded only on demand (nothing loads it at start), and on {gpus} the feature that loads it fails"
                )
            } else {
                format!(
                    "nothing in the image loads it (no object NEEDs it and no known feature opens it), so only a program that links it fails on {gpus}"
                )
            };
            let mut finding = ctx
                .finding_at(
                    &META,
                    first.object.layer,
                    path,
                    format!(
                        "`{path}` has no kernel for {}: {}; {when} with `no kernel image is available for execution on the device`",
                        gpu_fleet::list(&failing),
                        what(first),
                    ),
                )
                .with_help(format!(
                    "install a build of {family} made for the fleet's GPUs (its SASS list, or PTX of an older architecture), or run on GPUs it was built for"
                ))
                .with_note(rules.sass.clone())
                .with_note(rules.ptx.clone())
                .with_source(rules.sass_source.clone())
                .with_source(rules.ptx_source.clone())
                .with_source(Gpus::embedded().products_source.clone());
            let others = objects.len() - 1;
            if others > 0 {
                finding = finding.with_note(format!(
                    "{others} other object(s) of the {family} family carry GPU code too"
                ));
            }
            if first.on_demand {
                finding.severity = Severity::Warning;
            } else if !first.at_start {
                finding.severity = Severity::Info;
            }
            out.push(finding);
        }
    }
}
