//! CU212 wasted-layer-bytes: bytes a layer adds that a later layer deletes or overwrites (a `chmod`
//! or `chown` in a later RUN copies the whole file) still ship in the earlier layer. One finding per
//! layer whose wasted bytes reach `[image] wasted-bytes`, and one for the image when its wasted bytes
//! reach `[image] wasted-share` of all its bytes (dive's `.dive-ci` gates). Each dead copy is counted
//! once, however many later layers rewrite the path.

use std::collections::BTreeMap;

use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::image::fs::DeadCopy;
use crate::units::human_bytes;

pub struct WastedLayerBytes;

static META: RuleMeta = RuleMeta {
    code: "CU212",
    name: "wasted-layer-bytes",
    category: Category::Size,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "A layer ships bytes that a later layer deletes or overwrites",
    doc: Doc::Page,
};

/// How many dead copies a finding names.
const LISTED_COPIES: usize = 3;

impl ImageRule for WastedLayerBytes {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        let thresholds = &ctx.settings.image;
        let mut by_layer: BTreeMap<usize, Vec<&DeadCopy>> = BTreeMap::new();
        for copy in ctx.image.report.fs.dead_copies() {
            by_layer.entry(copy.layer).or_default().push(copy);
        }
        for (layer, mut copies) in by_layer {
            let wasted: u64 = copies.iter().map(|copy| copy.size).sum();
            if wasted == 0 || wasted < thresholds.wasted_bytes {
                continue;
            }
            copies.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| a.path.cmp(&b.path)));
            let largest = copies[0];
            let mut finding = ctx.finding_at(
                &META,
                layer,
                &largest.path,
                format!(
                    "layer {} ships {} in {} files that later layers delete or overwrite",
                    layer + 1,
                    human_bytes(wasted),
                    copies.len()
                ),
            );
            for copy in copies.iter().take(LISTED_COPIES) {
                finding = finding.with_note(format!(
                    "{} ({}) {} by {}",
                    copy.path,
                    human_bytes(copy.size),
                    if copy.deleted {
                        "deleted"
                    } else {
                        "overwritten"
                    },
                    ctx.image.describe_layer(copy.by_layer)
                ));
            }
            out.push(finding.with_help(
                "delete files in the same RUN that creates them, set modes and owners with `COPY --chmod/--chown` \
                 instead of a later chmod/chown, and do not write a file in one layer to replace it in the next",
            ));
        }
        let wasted: u64 = ctx.image.report.bytes_wasted();
        let total = ctx.image.report.bytes_added();
        if total > 0 && wasted > 0 && wasted as f64 >= thresholds.wasted_share * total as f64 {
            out.push(
                ctx.finding_on_image(
                    &META,
                    format!(
                        "{} of the image's {} ({:.0}%) are wasted: added by one layer and deleted or overwritten by a later one",
                        human_bytes(wasted),
                        human_bytes(total),
                        100.0 * wasted as f64 / total as f64
                    ),
                )
                .with_note(format!(
                    "reported from [image] wasted-share = {} of the image's bytes",
                    thresholds.wasted_share
                )),
            );
        }
    }
}
