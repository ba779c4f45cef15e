//! Image rules (`CU2xx`): checks over a built image, one file each. They read the [`ScannedImage`]
//! (config, layers, merged filesystem, inventory, unresolved libraries, content index) and report
//! findings at [`crate::diagnostic::Location::Image`] (a layer and a path); the engine applies
//! selection, severity overrides and sorting exactly as for Dockerfile rules.

pub mod cu201_cupti_unresolvable;
pub mod cu202_shared_library_unresolvable;
pub mod cu203_profiler_without_cupti;
pub mod cu204_gpu_backend_unloadable;
pub mod cu205_on_demand_plugin_unresolvable;
pub mod cu210_devel_content_in_image;
pub mod cu211_duplicate_cuda_libraries;
pub mod cu212_wasted_layer_bytes;
pub mod cu220_driver_libraries_shipped;
pub mod cu221_driver_requirement_unsatisfied;
pub mod cu222_multiple_cuda_runtimes;
pub mod cu223_require_check_disabled_in_image;
pub mod cu224_driver_stub_on_loader_path;
pub mod cu229_debug_setting_in_image;
pub mod cu230_no_kernel_for_target_gpu;
pub mod cu231_target_gpu_needs_ptx_jit;
pub mod cu232_ptx_newer_than_driver;
pub mod cu233_compressed_gpu_code_needs_driver;
pub mod gpu_fleet;
pub mod require;

use crate::checks::RuleMeta;
use crate::config::Settings;
use crate::diagnostic::Diagnostic;
use crate::image::facts::{Captured, FsView};
use crate::image::scan::ScannedImage;
use crate::knowledge::host_libraries::HostLibraries;
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

/// The DT_NEEDED entries that fail when the image's programs start or its Python packages are
/// imported (the start-time model in `image::startup`): each is a program or an import that fails.
pub fn start_failures<'a>(
    ctx: &'a ImageContext<'_>,
) -> impl Iterator<Item = &'a crate::image::startup::StartFailure> + 'a {
    ctx.image.startup.failures.iter()
}

/// The DT_NEEDED entries the loader cannot resolve in objects that nothing loads at start: plugins
/// that `dlopen` opens when a feature asks for them. Not a name the ELF reader could not read, not of
/// an object built for another machine, not of an object a launcher loads with its own search path.
pub fn on_demand_unresolved<'a>(
    ctx: &'a ImageContext<'_>,
) -> impl Iterator<Item = &'a crate::image::linkage::UnresolvedNeed> + 'a {
    ctx.image.unresolved.iter().filter(move |need| {
        !need.needed.is_empty()
            && ctx.image.runs_here(&need.object)
            && !ctx.content.is_launcher_loaded(&need.object)
            && !ctx.image.loaded_at_start(&need.object)
            && !ctx.image.startup.provided_by_dependency(
                &ctx.image.report.fs,
                &need.object,
                &need.needed,
            )
    })
}

/// Missing names grouped by the object (and its layer) that NEEDs them, in path order.
pub fn by_object<'a>(
    needs: impl Iterator<Item = (&'a str, usize, &'a str)>,
) -> std::collections::BTreeMap<(&'a str, usize), Vec<&'a str>> {
    let mut grouped: std::collections::BTreeMap<(&str, usize), Vec<&str>> = Default::default();
    for (object, layer, needed) in needs {
        grouped.entry((object, layer)).or_default().push(needed);
    }
    grouped
}

/// `` `a`, `b` ``: library names as a finding lists them.
pub fn name_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether the object at `path` is CUDA-related: a CUDA library, anything in the toolkit tree or the
/// pip `nvidia-*` wheels, or an object that links a CUDA library or the driver.
pub fn cuda_related(ctx: &ImageContext<'_>, path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    if ctx.content.cuda_library_stem(name).is_some() || ctx.content.is_cuda_runtime_path(path) {
        return true;
    }
    let Some(Captured::Elf(elf)) = ctx
        .image
        .report
        .fs
        .lstat(path)
        .and_then(|node| node.captured.as_deref())
    else {
        return false;
    };
    let host = HostLibraries::embedded();
    elf.needed.iter().any(|needed| {
        ctx.content.cuda_library_stem(needed).is_some() || host.group_of(needed).is_some()
    })
}

/// `import torch` for a root under `site-packages/torch/`, `the program /usr/bin/x` for a program:
/// what fails at start, as a person reads it.
pub fn what_fails(root: &str) -> String {
    let Some(site) = crate::image::startup::site_packages_of(root) else {
        return format!("the program `{root}`");
    };
    let relative = &root[site.len() + 1..];
    let package = relative.split('/').next().unwrap_or(relative);
    let package = package.split('.').next().unwrap_or(package);
    if !crate::knowledge::image_loading::ImageLoading::embedded().is_extension_module(root) {
        return format!("`import {package}` (through `{root}`)");
    }
    // An extension module is loaded by the import of its own dotted name; the top package's
    // import fails with it only when it loads that module, which not every package does (CuPy
    // imports `cupy_backends.cuda.libs.cublas` when it is first used).
    let mut parts: Vec<&str> = relative.split('/').collect();
    if let Some(file) = parts.last_mut() {
        *file = file.split('.').next().unwrap_or(file);
    }
    let module = parts.join(".");
    if module == package {
        format!("`import {module}` (through `{root}`)")
    } else {
        format!("`import {module}` (`{root}`), and any import of `{package}` that loads it,")
    }
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
    &cu204_gpu_backend_unloadable::GpuBackendUnloadable,
    &cu205_on_demand_plugin_unresolvable::OnDemandPluginUnresolvable,
    &cu210_devel_content_in_image::DevelContentInImage,
    &cu211_duplicate_cuda_libraries::DuplicateCudaLibraries,
    &cu212_wasted_layer_bytes::WastedLayerBytes,
    &cu220_driver_libraries_shipped::DriverLibrariesInImage,
    &cu221_driver_requirement_unsatisfied::DriverRequirementUnsatisfied,
    &cu222_multiple_cuda_runtimes::MultipleCudaRuntimes,
    &cu223_require_check_disabled_in_image::RequireCheckDisabled,
    &cu224_driver_stub_on_loader_path::DriverStubOnLoaderPath,
    &cu229_debug_setting_in_image::DebugSettingInImage,
    &cu230_no_kernel_for_target_gpu::NoKernelForTargetGpu,
    &cu231_target_gpu_needs_ptx_jit::TargetGpuNeedsPtxJit,
    &cu232_ptx_newer_than_driver::PtxNewerThanDriver,
    &cu233_compressed_gpu_code_needs_driver::CompressedGpuCodeNeedsDriver,
];
