//! `cudalint image REF…`: reads each image and prints its layers (bytes added, bytes wasted, the
//! history line that made each) and totals, as text or JSON. Image rules plug in on the
//! [`ImageReport`] later.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, ValueEnum};
use serde_json::json;

use super::cache::LayerCache;
use super::facts::FsView;
use super::report::ImageReport;
use super::source::{ImageSource, LoadOptions, Platform};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ImageFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct ImageArgs {
    /// Images: docker-archive:PATH[:TAG], oci-archive:PATH[:TAG], oci:DIR[:TAG], rootfs:DIR,
    /// docker-daemon:NAME, a path (tar or directory), or an image name or ID in the Docker engine.
    #[arg(value_name = "REF", required = true)]
    pub refs: Vec<String>,
    #[arg(long, value_enum, default_value_t = ImageFormat::Text)]
    pub format: ImageFormat,
    /// Platform to pick from a multi-platform index, as os/arch[/variant] [default: this host's].
    #[arg(long, value_name = "OS/ARCH")]
    pub platform: Option<String>,
    /// Image config JSON for a rootfs: source (env, labels, history).
    #[arg(long, value_name = "FILE")]
    pub image_config: Option<PathBuf>,
    /// Do not read or write the layer cache ($XDG_CACHE_HOME/cudalint, bounded by
    /// CUDALINT_CACHE_MAX_BYTES, default 2G).
    #[arg(long)]
    pub no_cache: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// mimalloc's `mi_option_purge_delay` (15 in its v2 and v3 headers; the bindings name no constant).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

static PROGRESS: std::sync::OnceLock<indicatif::ProgressBar> = std::sync::OnceLock::new();

fn layer_done(_bytes: u64) {
    if let Some(bar) = PROGRESS.get() {
        bar.inc(1);
    }
}

/// Runs `cudalint image`.
pub fn run(args: ImageArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    // Layers are read on worker threads and their entries freed on this one as the merged filesystem
    // grows; with mimalloc's default 10 ms purge delay those pages linger, and a 500,000-file image
    // peaked at 170-220 MB instead of 130 MB (scripts/bench-image). Purge at once.
    // SAFETY: sets one of mimalloc's documented options; any value is valid for it.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    let platform = args.platform.as_deref().map(Platform::parse).transpose()?;
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let cache = if args.no_cache {
        None
    } else {
        LayerCache::from_env()?.map(Arc::new)
    };
    let options = LoadOptions {
        platform,
        image_config: args.image_config.clone(),
        on_layer: show_progress.then_some(layer_done as fn(u64)),
        cache: cache.clone(),
    };
    let mut reports = Vec::new();
    let mut cache_stats = Vec::new();
    for reference in &args.refs {
        let source = ImageSource::parse(reference)?;
        if show_progress {
            let bar = PROGRESS
                .get_or_init(|| indicatif::ProgressBar::new_spinner().with_message("layers read"));
            bar.reset();
        }
        let before = cache.as_ref().map(|cache| cache.stats());
        let image = source
            .load(&options)
            .with_context(|| format!("cannot read image {reference}"))?;
        cache_stats.push(
            cache
                .as_ref()
                .zip(before)
                .map(|(cache, before)| cache.stats() - before),
        );
        if let Some(bar) = PROGRESS.get() {
            bar.finish_and_clear();
        }
        reports.push(ImageReport::build(reference, image));
    }
    match args.format {
        ImageFormat::Text => {
            for report in &reports {
                write_text(report, out)?;
            }
        }
        ImageFormat::Json => {
            let images: Vec<_> = reports
                .iter()
                .zip(&cache_stats)
                .map(|(report, stats)| {
                    let mut image = to_json(report);
                    image["cache"] = json!(stats);
                    image
                })
                .collect();
            serde_json::to_writer_pretty(&mut *out, &json!({ "images": images }))?;
            writeln!(out)?;
        }
    }
    if let Some(error) = cache.and_then(|cache| cache.write_error()) {
        eprintln!("note: the layer cache was not fully written: {error}");
    }
    Ok(ExitCode::SUCCESS)
}

fn to_json(report: &ImageReport) -> serde_json::Value {
    let inventory =
        super::inventory::inventory(&report.fs, &report.config.env, &report.config.labels);
    let unresolved = super::linkage::unresolved_needs(
        &report.fs,
        &report.config.env,
        report.config.working_dir.as_deref(),
    );
    json!({
        "inventory": inventory,
        "unresolved_libraries": unresolved,
        "reference": report.reference,
        "config": report.config,
        "layers": report.layers,
        "files": report.fs.walk().filter(|(_, node)| node.kind == super::facts::NodeKind::File).count(),
        "bytes_added": report.bytes_added(),
        "bytes_wasted": report.bytes_wasted(),
        "dead_copies": report.fs.dead_copies(),
    })
}

fn write_text(report: &ImageReport, out: &mut dyn Write) -> anyhow::Result<()> {
    writeln!(out, "{}", report.reference)?;
    writeln!(
        out,
        "{:>5}  {:>10}  {:>10}  {:>7}  created by",
        "layer", "added", "wasted", "files"
    )?;
    for layer in &report.layers {
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
        "total  {:>10}  {:>10}  {} layers\n",
        human_bytes(report.bytes_added()),
        human_bytes(report.bytes_wasted()),
        report.layers.len()
    )?;
    let inventory =
        super::inventory::inventory(&report.fs, &report.config.env, &report.config.labels);
    write!(out, "{}", super::inventory::render_text(&inventory))?;
    let unresolved = super::linkage::unresolved_needs(
        &report.fs,
        &report.config.env,
        report.config.working_dir.as_deref(),
    );
    if unresolved.is_empty() {
        writeln!(
            out,
            "shared libraries: every DT_NEEDED resolves in the image or from the host driver\n"
        )?;
    } else {
        writeln!(out, "shared libraries the loader cannot find:")?;
        for need in &unresolved {
            writeln!(
                out,
                "  {} needs {} (layer {})",
                need.object,
                need.needed,
                need.layer + 1
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// `1.5 GB`, `12 kB`, `512 B` (decimal units, as docker prints them).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
