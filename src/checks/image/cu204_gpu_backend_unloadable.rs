//! CU204 gpu-backend-unloadable: a plugin that is the reason its package is installed (ONNX Runtime's
//! CUDA provider, JAX's CUDA plugin; `role = "backend"` in `rules/image-loading.toml`) NEEDs a library
//! the loader cannot find. The package imports and runs, but its GPU backend cannot load, so the work
//! silently runs on the CPU.

use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::knowledge::image_loading::{ImageLoading, PluginRole};

pub struct GpuBackendUnloadable;

static META: RuleMeta = RuleMeta {
    code: "CU204",
    name: "gpu-backend-unloadable",
    category: Category::Correctness,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "A framework's GPU backend plugin NEEDs a library the loader cannot find: it runs on the CPU",
    doc: Doc::Page,
};

impl ImageRule for GpuBackendUnloadable {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        let loading = ImageLoading::embedded();
        let missing = super::by_object(
            super::on_demand_unresolved(ctx)
                .filter(|need| {
                    loading
                        .plugin(&need.object)
                        .is_some_and(|plugin| plugin.role == PluginRole::Backend)
                })
                .map(|need| (need.object.as_str(), need.layer, need.needed.as_str())),
        );
        for ((object, layer), names) in missing {
            let Some(plugin) = loading.plugin(object) else {
                continue;
            };
            let list = super::name_list(&names);
            out.push(
                ctx.finding_at(
                    &META,
                    layer,
                    object,
                    format!(
                        "`{object}` ({}) needs {list}, which the loader cannot find in the image: {}",
                        plugin.feature, plugin.consequence
                    ),
                )
                .with_note(
                    "the package still imports: nothing fails at start, the GPU is just never used",
                )
                .with_help(
                    "install the CUDA libraries of the framework's build (the nvidia-* wheels of its CUDA \
                     major, or a CUDA base image of that major), or a build of the framework for the CUDA \
                     the image has",
                )
                .with_source(plugin.source.clone()),
            );
        }
    }
}
