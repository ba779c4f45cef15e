//! CU205 on-demand-plugin-unresolvable: a CUDA-related plugin that nothing loads at start (an optional
//! transport such as NVSHMEM's MPI bootstrap or cuFile's RDMA plugin, opened with `dlopen` when that
//! feature is chosen) NEEDs a library the loader cannot find. Only that feature fails, and only when
//! asked for: information, so that a user who does need it knows what to install.

use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::knowledge::image_loading::{ImageLoading, PluginRole};

pub struct OnDemandPluginUnresolvable;

static META: RuleMeta = RuleMeta {
    code: "CU205",
    name: "on-demand-plugin-unresolvable",
    category: Category::Correctness,
    default_severity: Severity::Info,
    fix: FixAvailability::None,
    summary: "A CUDA plugin loaded only on demand NEEDs a library the loader cannot find",
    doc: Doc::Page,
};

impl ImageRule for OnDemandPluginUnresolvable {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        let loading = ImageLoading::embedded();
        let missing = super::by_object(
            super::on_demand_unresolved(ctx)
                .filter(|need| match loading.plugin(&need.object) {
                    Some(plugin) => plugin.role == PluginRole::Optional,
                    None => super::cuda_related(ctx, &need.object),
                })
                .map(|need| (need.object.as_str(), need.layer, need.needed.as_str())),
        );
        for ((object, layer), names) in missing {
            let list = super::name_list(&names);
            let finding = match loading.plugin(object) {
                Some(plugin) => ctx
                    .finding_at(
                        &META,
                        layer,
                        object,
                        format!(
                            "`{object}` ({}) needs {list}, which the loader cannot find: {}",
                            plugin.feature, plugin.consequence
                        ),
                    )
                    .with_source(plugin.source.clone()),
                None => ctx.finding_at(
                    &META,
                    layer,
                    object,
                    format!(
                        "`{object}` needs {list}, which the loader cannot find; nothing in the image loads it \
                         at start, so only the feature that opens it on demand fails"
                    ),
                ),
            };
            out.push(finding.with_help(
                "if you use that feature, install the library it needs; otherwise nothing to do",
            ));
        }
    }
}
