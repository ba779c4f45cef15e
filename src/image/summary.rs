//! What `cudalint image` shows of an image besides its findings: the layers (bytes added and wasted,
//! the history line that made each), the CUDA inventory, the libraries the loader cannot find, the
//! minimum driver of each CUDA runtime, and the size breakdown. Built once from a [`ScannedImage`];
//! the JSON and HTML formats serialise it, and [`write_text`] prints it for the text format.

use std::io::{self, Write};

use serde::Serialize;

use super::config::ImageConfig;
use super::content::{DuplicateGroup, SizeBreakdown};
use super::fs::DeadCopy;
use super::gpu::{self, GpuCodeEntry};
use super::inventory::Inventory;
use super::linkage::UnresolvedNeed;
use super::report::LayerReport;
use super::scan::ScannedImage;
use crate::knowledge::image_loading::PluginRole;
use crate::knowledge::Knowledge;
use crate::units::human_bytes;

/// The least driver a CUDA runtime in the image needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuntimeDriver {
    pub path: String,
    /// The CUDA release (`12.9`).
    pub cuda: String,
    /// Its minimum Linux driver (`575.51.03`).
    pub min_driver: String,
    pub source: String,
}

/// A plugin that nothing loads at start, with the NEEDs the loader cannot find.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OnDemandPlugin {
    pub path: String,
    /// What the data says it serves, when it knows the plugin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feature: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<crate::knowledge::image_loading::PluginRole>,
    pub unresolved: Vec<String>,
}

/// How an object whose NEEDs do not all resolve gets loaded, which decides what the missing
/// libraries break. The report groups those objects by it, as the findings (CU201/CU202 at start,
/// CU204 backends, CU205 on demand) already are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadedWhen {
    /// Loaded when a program starts or a package is imported: that program or import fails.
    AtStart,
    /// A framework's GPU backend plugin: the framework runs on the CPU without it.
    Backend,
    /// Opened only when a feature asks for it (a plugin, an optional extension module): only that
    /// feature fails.
    OnDemand,
    /// Loaded after a package it imports first, which already provides every name it misses.
    ThroughDependency,
    /// Built for another machine or class: never loaded on this image's platform.
    OtherMachine,
}

/// An object with NEEDs the loader cannot find, and how it is loaded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnresolvedObject {
    pub object: String,
    pub loaded: LoadedWhen,
}

/// The start-time view as the report shows it.
#[derive(Clone, Debug, Serialize)]
pub struct StartupSummary {
    /// Programs and Python extension modules (and framework preloads): the roots of the load trees.
    pub roots: usize,
    /// Objects loaded at start.
    pub objects: usize,
    pub preloads: Vec<super::startup::PreloadSite>,
    pub on_demand_plugins: Vec<OnDemandPlugin>,
}

/// Everything shown of one image.
#[derive(Clone, Debug, Serialize)]
pub struct ImageSummary {
    pub reference: String,
    pub config: ImageConfig,
    pub layers: Vec<LayerReport>,
    pub files: usize,
    pub bytes_added: u64,
    pub bytes_wasted: u64,
    pub breakdown: SizeBreakdown,
    /// Bytes of CUDA development content per category, in the data file's order.
    pub devel_bytes: Vec<(String, u64)>,
    pub duplicates: Vec<DuplicateGroup>,
    pub dead_copies: Vec<DeadCopy>,
    pub inventory: Inventory,
    pub runtime_drivers: Vec<RuntimeDriver>,
    pub unresolved_libraries: Vec<UnresolvedNeed>,
    /// Each object of `unresolved_libraries` once, in path order, with how it is loaded.
    pub unresolved_objects: Vec<UnresolvedObject>,
    /// Every object with GPU code: its SASS and PTX targets, PTX ISA versions and compression.
    pub gpu_code: Vec<GpuCodeEntry>,
    /// The GPUs of `rules/gpus.toml` some library loaded at start has no kernel for.
    pub no_kernel_for: Vec<String>,
    /// What loads at start: how many programs and extension modules, how many objects, the
    /// frameworks' preloads, and the plugins loaded only on demand whose NEEDs do not all resolve.
    pub startup: StartupSummary,
    /// Layer cache hits and misses while reading this image (null with `--no-cache`).
    pub cache: Option<super::cache::CacheStats>,
}

impl ImageSummary {
    pub fn new(image: &ScannedImage, knowledge: &Knowledge) -> ImageSummary {
        let content = crate::knowledge::image_content::ImageContent::embedded();
        let devel_bytes = content
            .devel_categories()
            .iter()
            .map(|category| {
                let bytes = image
                    .content
                    .devel
                    .iter()
                    .filter(|file| file.category == category.name)
                    .map(|file| file.size)
                    .sum();
                (category.name.clone(), bytes)
            })
            .collect();
        let mut runtime_drivers: Vec<RuntimeDriver> = Vec::new();
        for library in image.inventory.cuda_runtimes() {
            let Some(cuda) = library.cuda_release() else {
                continue;
            };
            if let Some(release) = knowledge.toolkits.release_for(cuda) {
                runtime_drivers.push(RuntimeDriver {
                    path: library.path.clone(),
                    cuda: cuda.to_string(),
                    min_driver: release.driver.to_string(),
                    source: release.source.clone(),
                });
            }
        }
        let loading = crate::knowledge::image_loading::ImageLoading::embedded();
        let mut on_demand_plugins: Vec<OnDemandPlugin> = Vec::new();
        for need in &image.unresolved {
            if need.needed.is_empty()
                || image.loaded_at_start(&need.object)
                || image.startup.provided_by_dependency(
                    &image.report.fs,
                    &need.object,
                    &need.needed,
                )
            {
                continue;
            }
            match on_demand_plugins.last_mut() {
                Some(plugin) if plugin.path == need.object => {
                    plugin.unresolved.push(need.needed.clone())
                }
                _ => {
                    let known = loading.plugin(&need.object);
                    on_demand_plugins.push(OnDemandPlugin {
                        path: need.object.clone(),
                        feature: known.map(|plugin| plugin.feature.clone()),
                        role: known.map(|plugin| plugin.role),
                        unresolved: vec![need.needed.clone()],
                    });
                }
            }
        }
        let startup = StartupSummary {
            roots: image.startup.roots,
            objects: image.startup.objects_at_start(),
            preloads: image.startup.preloads.clone(),
            on_demand_plugins,
        };
        let report = &image.report;
        let gpu_objects = gpu::gpu_objects(&report.fs);
        let at_start: Vec<&gpu::GpuObject> = gpu_objects
            .iter()
            .filter(|object| image.loaded_at_start(&object.path))
            .collect();
        let no_kernel_for = gpu::no_kernel_for(&at_start, crate::knowledge::gpus::Gpus::embedded());
        ImageSummary {
            reference: report.reference.clone(),
            config: report.config.clone(),
            layers: report.layers.clone(),
            files: report.fs.files_with_ownership().count(),
            bytes_added: report.bytes_added(),
            bytes_wasted: report.bytes_wasted(),
            breakdown: image.content.breakdown.clone(),
            devel_bytes,
            duplicates: image.content.duplicates.clone(),
            dead_copies: report.fs.dead_copies().to_vec(),
            inventory: image.inventory.clone(),
            runtime_drivers,
            unresolved_libraries: image.unresolved.clone(),
            unresolved_objects: unresolved_objects(image),
            gpu_code: gpu_objects.iter().map(GpuCodeEntry::new).collect(),
            no_kernel_for,
            startup,
            cache: None,
        }
    }
}

/// Each object with unresolved NEEDs once (the list is sorted by object), with how it is loaded.
fn unresolved_objects(image: &ScannedImage) -> Vec<UnresolvedObject> {
    let loading = crate::knowledge::image_loading::ImageLoading::embedded();
    let mut objects: Vec<UnresolvedObject> = Vec::new();
    for (index, need) in image.unresolved.iter().enumerate() {
        if index > 0 && image.unresolved[index - 1].object == need.object {
            continue;
        }
        let object = need.object.as_str();
        let provided = |need: &UnresolvedNeed| {
            need.needed.is_empty()
                || image
                    .startup
                    .provided_by_dependency(&image.report.fs, object, &need.needed)
        };
        let loaded = if !image.runs_here(object) {
            LoadedWhen::OtherMachine
        } else if image.loaded_at_start(object) {
            LoadedWhen::AtStart
        } else if loading
            .plugin(object)
            .is_some_and(|plugin| plugin.role == PluginRole::Backend)
        {
            LoadedWhen::Backend
        } else if image.unresolved[index..]
            .iter()
            .take_while(|other| other.object == need.object)
            .all(provided)
        {
            LoadedWhen::ThroughDependency
        } else {
            LoadedWhen::OnDemand
        };
        objects.push(UnresolvedObject {
            object: need.object.clone(),
            loaded,
        });
    }
    objects
}

/// The text report of one image before its findings: layers, inventory, minimum drivers,
/// unresolved libraries.
pub fn write_text(summary: &ImageSummary, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", summary.reference)?;
    writeln!(
        out,
        "{:>5}  {:>10}  {:>10}  {:>7}  created by",
        "layer", "added", "wasted", "files"
    )?;
    for layer in &summary.layers {
        let created_by = layer.created_by.as_deref().unwrap_or("").replace('\n', " ");
        let created_by: String = created_by.chars().take(80).collect();
        writeln!(
            out,
            "{:>5}  {:>10}  {:>10}  {:>7}  {}",
            layer.index + 1,
            human_bytes(layer.usage.bytes_added),
            human_bytes(layer.usage.bytes_wasted),
            layer.usage.files_added,
            created_by
        )?;
        for name in &layer.clamped_names {
            writeln!(
                out,
                "       note: entry {name:?} points outside the root; read as inside it"
            )?;
        }
    }
    writeln!(
        out,
        "total  {:>10}  {:>10}  {} layers, {} files\n",
        human_bytes(summary.bytes_added),
        human_bytes(summary.bytes_wasted),
        summary.layers.len(),
        summary.files
    )?;
    write!(out, "{}", super::inventory::render_text(&summary.inventory))?;
    write!(
        out,
        "{}",
        gpu::render_text(&gpu::families(&summary.gpu_code), &summary.no_kernel_for)
    )?;
    for runtime in &summary.runtime_drivers {
        writeln!(
            out,
            "CUDA {} runtime needs driver >= {} ({})",
            runtime.cuda, runtime.min_driver, runtime.path
        )?;
    }
    if summary.unresolved_libraries.is_empty() {
        writeln!(
            out,
            "shared libraries: every DT_NEEDED resolves in the image or from the host driver"
        )?;
    } else {
        writeln!(
            out,
            "shared libraries the loader cannot find (each object on its own, as ldd):"
        )?;
        for need in &summary.unresolved_libraries {
            writeln!(
                out,
                "  {} needs {} (layer {})",
                need.object,
                need.needed,
                need.layer + 1
            )?;
        }
    }
    write_startup_line(summary, out)?;
    for preload in &summary.startup.preloads {
        writeln!(
            out,
            "  {} preloads {} libraries by path in {}",
            preload.name,
            preload.files.len(),
            preload.site
        )?;
    }
    if !summary.startup.on_demand_plugins.is_empty() {
        writeln!(
            out,
            "plugins loaded only on demand, with libraries the loader cannot find:"
        )?;
        for plugin in &summary.startup.on_demand_plugins {
            writeln!(
                out,
                "  {} ({}) needs {}",
                plugin.path,
                plugin.feature.as_deref().unwrap_or("unknown feature"),
                plugin.unresolved.join(", ")
            )?;
        }
    }
    writeln!(out)
}

/// `loaded at start: 5,012 objects from 1,204 programs and modules; 12 plugins on demand`.
fn write_startup_line(summary: &ImageSummary, out: &mut dyn Write) -> io::Result<()> {
    let startup = &summary.startup;
    writeln!(
        out,
        "loaded at start: {} objects, from {} programs, Python extension modules and preloads; {} plugins loaded only on demand miss a library",
        startup.objects,
        startup.roots,
        startup.on_demand_plugins.len()
    )
}

/// The short text report of one image after its size breakdown (without `--verbose`): the minimum
/// driver of each CUDA runtime and what loads at start. The inventory is `--verbose`'s.
pub fn write_text_brief(summary: &ImageSummary, out: &mut dyn Write) -> io::Result<()> {
    for layer in &summary.layers {
        for name in &layer.clamped_names {
            writeln!(
                out,
                "note: layer {}: entry {name:?} points outside the root; read as inside it",
                layer.index + 1
            )?;
        }
    }
    for runtime in &summary.runtime_drivers {
        writeln!(
            out,
            "CUDA {} runtime needs driver >= {} ({})",
            runtime.cuda, runtime.min_driver, runtime.path
        )?;
    }
    write_startup_line(summary, out)?;
    if !summary.gpu_code.is_empty() && !summary.no_kernel_for.is_empty() {
        writeln!(
            out,
            "GPU code: no kernel for: {}",
            summary.no_kernel_for.join(", ")
        )?;
    }
    writeln!(
        out,
        "{} layers, {} files; --verbose lists the layers, the CUDA libraries and the plugins\n",
        summary.layers.len(),
        summary.files
    )
}

/// The size breakdown that ends the text report of one image.
pub fn write_text_breakdown(summary: &ImageSummary, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "\n{}: size breakdown", summary.reference)?;
    let total = summary.breakdown.total.max(1) as f64;
    for (name, bytes) in summary.breakdown.parts() {
        writeln!(
            out,
            "  {name:<19} {:>10}  {:>5.1}%",
            human_bytes(bytes),
            100.0 * bytes as f64 / total
        )?;
    }
    writeln!(
        out,
        "  {:<19} {:>10}",
        "total",
        human_bytes(summary.breakdown.total)
    )?;
    Ok(())
}
