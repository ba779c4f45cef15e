//! Image rules (`CU2xx`): checks over a built image, one file each. They read the [`ScannedImage`]
//! (config, layers, merged filesystem, inventory, unresolved libraries, content index) and report
//! findings at [`crate::diagnostic::Location::Image`] (a layer and a path); the engine applies
//! selection, severity overrides and sorting exactly as for Dockerfile rules.

pub mod cu201_cupti_unresolvable;
pub mod cu202_shared_library_unresolvable;
pub mod cu203_profiler_without_cupti;
pub mod cu210_devel_content_in_image;
pub mod cu211_duplicate_cuda_libraries;
pub mod cu212_wasted_layer_bytes;
pub mod cu220_driver_libraries_shipped;
pub mod cu221_driver_requirement_unsatisfied;
pub mod cu222_multiple_cuda_runtimes;
pub mod cu223_require_check_disabled_in_image;
pub mod cu229_debug_setting_in_image;
pub mod require;

use crate::checks::RuleMeta;
use crate::config::Settings;
use crate::diagnostic::Diagnostic;
use crate::image::scan::ScannedImage;
use crate::knowledge::image_content::ImageContent;
use crate::knowledge::Knowledge;

/// What an image rule gets to look at.
pub struct ImageContext<'a> {
    pub image: &'a ScannedImage,
    pub knowledge: &'a Knowledge,
    pub content: &'a ImageContent,
    pub settings: &'a Settings,
}

impl ImageContext<'_> {
    /// A finding about `path` as written by layer `layer`, naming the layer and its history line.
    pub fn finding_at(
        &self,
        meta: &'static RuleMeta,
        layer: usize,
        path: &str,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic::in_image(
            meta,
            Some(self.image.layer_name(layer)),
            Some(path.to_owned()),
            message,
        )
        .with_note(self.image.describe_layer(layer))
    }

    /// A finding about the image as a whole (its config).
    pub fn finding_on_image(
        &self,
        meta: &'static RuleMeta,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic::in_image(meta, None, None, message)
    }
}

/// The DT_NEEDED entries the loader cannot resolve that are faults of the image: not a name the
/// ELF reader could not read (never reported as missing), not of an object built for another
/// machine (never loaded here), not of an object a launcher loads with its own search path, and not
/// a library another package of the same Python packages directory loads first.
pub fn faulty_unresolved<'a>(
    ctx: &'a ImageContext<'_>,
) -> impl Iterator<Item = &'a crate::image::linkage::UnresolvedNeed> + 'a {
    ctx.image.unresolved.iter().filter(move |need| {
        !need.needed.is_empty()
            && ctx.image.runs_here(&need.object)
            && !ctx.content.is_launcher_loaded(&need.object)
            && !ctx
                .image
                .provided_by_sibling_package(&need.object, &need.needed)
    })
}

/// A check over one built image.
pub trait ImageRule: Sync {
    fn meta(&self) -> &'static RuleMeta;
    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>);
}

/// Every image rule, in code order.
pub static RULES: &[&dyn ImageRule] = &[
    &cu201_cupti_unresolvable::CuptiUnresolvable,
    &cu202_shared_library_unresolvable::SharedLibraryUnresolvable,
    &cu203_profiler_without_cupti::ProfilerWithoutCupti,
    &cu210_devel_content_in_image::DevelContentInImage,
    &cu211_duplicate_cuda_libraries::DuplicateCudaLibraries,
    &cu212_wasted_layer_bytes::WastedLayerBytes,
    &cu220_driver_libraries_shipped::DriverLibrariesInImage,
    &cu221_driver_requirement_unsatisfied::DriverRequirementUnsatisfied,
    &cu222_multiple_cuda_runtimes::MultipleCudaRuntimes,
    &cu223_require_check_disabled_in_image::RequireCheckDisabled,
    &cu229_debug_setting_in_image::DebugSettingInImage,
];

/// `1.5 GB`, `12 kB`, `512 B` (decimal units, as docker prints them).
pub fn human_bytes(bytes: u64) -> String {
    crate::image::command::human_bytes(bytes)
}
