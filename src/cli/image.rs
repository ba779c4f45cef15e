//! `cudalint image REF…`: reads each image (progress on a TTY), lints it with the image rules
//! (`crate::image_lint`), and prints one report of them all in any output format. An image that
//! cannot be read is a failed input (exit 2); the others are still reported.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context};
use clap::Args;

use super::image_list::{self, Shard, JOB_COMPLETION_INDEX};
use super::{exit_for, print_report, resolve, CommonArgs, Findings, ReportArgs, EXIT_ERROR};
use crate::diagnostic::Diagnostic;
use crate::engine::{self, Engine};
use crate::image::cache::LayerCache;
use crate::image::confirm;
use crate::image::source::LoadOptions;
use crate::image_lint::{load_and_lint, platform_of, ImageLinted};
use crate::render::FailedInput;
use crate::source::SourceFile;

#[derive(Debug, Args)]
pub(super) struct ImageCommandArgs {
    #[command(flatten)]
    image: ImageArgs,
    #[command(flatten)]
    report: ReportArgs,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Debug, Args)]
pub struct ImageArgs {
    /// Images: docker-archive:PATH[:TAG], oci-archive:PATH[:TAG], oci:DIR[:TAG], rootfs:DIR,
    /// docker-daemon:NAME, registry:[HOST/]REPO[:TAG][@DIGEST] (or docker://…), a path (tar or
    /// directory), or an image name or ID in the Docker engine. Several are scanned into one report;
    /// one that cannot be read is reported and the others go on. The engine is reached through
    /// DOCKER_HOST, the docker context or /var/run/docker.sock; a unix:// socket only from Unix hosts
    /// (on Windows: npipe:// or tcp://, a registry, or an archive).
    #[arg(value_name = "REF", required_unless_present = "from_file")]
    pub refs: Vec<String>,
    /// Also scan the references listed in FILE, one a line (`#` comments, blank lines skipped;
    /// `-` reads standard input). Each image is scanned once however often it is named.
    #[arg(long, value_name = "FILE")]
    pub from_file: Option<PathBuf>,
    /// Scan only shard I of N (numbered from 0) of the images: a reference belongs to shard
    /// sha256(reference) mod N, so N processes given the same list scan each image exactly once.
    #[arg(long, value_name = "I/N", value_parser = Shard::parse)]
    pub shard: Option<Shard>,
    /// As --shard, with I taken from $JOB_COMPLETION_INDEX (set in each pod of a Kubernetes
    /// Indexed Job of N completions).
    #[arg(long, value_name = "N", conflicts_with = "shard", value_parser = clap::value_parser!(u64).range(1..))]
    pub shard_count: Option<u64>,
    /// Image config JSON for a rootfs: source (env, labels, history).
    #[arg(long, value_name = "FILE")]
    pub image_config: Option<PathBuf>,
    /// The Dockerfile the image was built from: findings also point at the instruction that made
    /// their layer (with --build-arg/--target as the build used).
    #[arg(long, value_name = "FILE")]
    pub dockerfile: Option<PathBuf>,
    /// Do not read or write the layer cache ($XDG_CACHE_HOME/cudalint, bounded by
    /// CUDALINT_CACHE_MAX_BYTES, default 2G).
    #[arg(long)]
    pub no_cache: bool,
    /// No progress bar, nor the line that says how many images a shard takes.
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub registry: super::registry::RegistryArgs,
}

/// `cudalint image`: lints the images and prints one report of them all.
pub(super) fn run(args: ImageCommandArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let resolved = resolve(&args.common, args.report.failure_threshold)?;
    let run = lint_images(&args.image, &resolved.engine)?;
    let mut diagnostics: Vec<Diagnostic> = run
        .linted
        .iter()
        .flat_map(|linted| linted.diagnostics.iter().cloned())
        .collect();
    engine::sort_diagnostics(&mut diagnostics);
    let summaries: Vec<_> = run
        .linted
        .iter()
        .map(|linted| linted.summary.clone())
        .collect();
    let inputs: Vec<String> = summaries
        .iter()
        .map(|summary| summary.reference.clone())
        .collect();
    let sources: Vec<SourceFile> = run.dockerfile.into_iter().collect();
    let findings = Findings {
        diagnostics: &diagnostics,
        sources: &sources,
        inputs: &inputs,
        failed_inputs: &run.failed,
        images: &summaries,
    };
    print_report(&args.report, &resolved.engine, &findings, out)?;
    Ok(if !run.failed.is_empty() {
        ExitCode::from(EXIT_ERROR)
    } else {
        exit_for(&diagnostics, resolved.threshold)
    })
}

/// What reading and linting the images gave.
pub struct ImageRun {
    pub linted: Vec<ImageLinted>,
    pub failed: Vec<FailedInput>,
    /// The `--dockerfile`, for snippets of related locations.
    pub dockerfile: Option<SourceFile>,
}

/// mimalloc's `mi_option_purge_delay` (15 in its v2 and v3 headers; the bindings name no constant).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

static PROGRESS: std::sync::OnceLock<indicatif::ProgressBar> = std::sync::OnceLock::new();

fn layer_done(_bytes: u64) {
    if let Some(bar) = PROGRESS.get() {
        bar.inc(1);
    }
}

/// Reads and lints every image `args` names.
pub fn lint_images(args: &ImageArgs, engine: &Engine) -> anyhow::Result<ImageRun> {
    // Layers are read on worker threads and their entries freed on this one as the merged filesystem
    // grows; with mimalloc's default 10 ms purge delay those pages linger, and a 500,000-file image
    // peaked at 170-220 MB instead of 130 MB (scripts/bench-image). Purge at once.
    // SAFETY: sets one of mimalloc's documented options; any value is valid for it.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    let dockerfile = match &args.dockerfile {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--dockerfile: cannot read {}", path.display()))?;
            Some(SourceFile::new(path.display().to_string(), text))
        }
        None => None,
    };
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let cache = if args.no_cache {
        None
    } else {
        LayerCache::from_env()?.map(Arc::new)
    };
    let options = LoadOptions {
        platform: platform_of(engine),
        image_config: args.image_config.clone(),
        on_layer: show_progress.then_some(layer_done as fn(u64)),
        cache: cache.clone(),
        registry: args.registry.options(),
    };
    // The Dockerfile's findings that predict what the image holds (CU113, CU120, CU127, CU128), linted
    // once; each image confirms or clears them.
    // The Dockerfile's requirement files are read from its directory, the
    // build context of a plain `docker build -f DIR/Dockerfile DIR`.
    let context = args.dockerfile.as_deref().map(|path| match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    });
    let predicted: Vec<Diagnostic> = dockerfile
        .as_ref()
        .map(|source| {
            engine
                .lint_bytes_in(
                    source.name.clone(),
                    source.text.as_bytes(),
                    context.as_deref(),
                )
                .diagnostics
                .into_iter()
                .filter(|finding| finding.prediction.is_some())
                .collect()
        })
        .unwrap_or_default();
    let mut run = ImageRun {
        linted: Vec::new(),
        failed: Vec::new(),
        dockerfile,
    };
    for reference in &references(args)? {
        if show_progress {
            let bar = PROGRESS.get_or_init(indicatif::ProgressBar::new_spinner);
            bar.reset();
            bar.set_message(format!("{reference}: layers read"));
        }
        let before = cache.as_ref().map(|cache| cache.stats());
        let outcome = load_and_lint(reference, &options, engine, run.dockerfile.as_ref()).map(
            |mut linted| {
                linted.summary.cache = cache
                    .as_ref()
                    .zip(before)
                    .map(|(cache, before)| cache.stats() - before);
                linted
            },
        );
        if let Some(bar) = PROGRESS.get() {
            bar.finish_and_clear();
        }
        match outcome {
            Ok(mut linted) => {
                add_verdicts(&mut linted, &predicted);
                run.linted.push(linted);
            }
            Err(error) => {
                let message = format!("{error:#}");
                eprintln!("cudalint: error: {message}");
                let prefix = format!("cannot read image {reference}: ");
                run.failed.push(FailedInput {
                    name: reference.clone(),
                    message: message.strip_prefix(&prefix).unwrap_or(&message).to_owned(),
                });
            }
        }
    }
    if let Some(error) = cache.and_then(|cache| cache.write_error()) {
        eprintln!("note: the layer cache was not fully written: {error}");
    }
    Ok(run)
}

/// The images this run scans: the REFs, then those `--from-file` lists, each once; of them, with
/// `--shard` or `--shard-count`, this process's shard (see [`image_list`]).
fn references(args: &ImageArgs) -> anyhow::Result<Vec<String>> {
    let mut named = args.refs.clone();
    if let Some(path) = &args.from_file {
        named.extend(image_list::read_list(path)?);
    }
    let all = image_list::dedup(named);
    if all.is_empty() {
        let file = args.from_file.as_deref().unwrap_or(Path::new("-"));
        bail!(
            "no image to scan: --from-file {} lists no reference",
            file.display()
        );
    }
    let shard = match (args.shard, args.shard_count) {
        (Some(shard), _) => shard,
        (None, Some(count)) => {
            let index = std::env::var(JOB_COMPLETION_INDEX).ok();
            Shard::from_job_index(index.as_deref(), count)?
        }
        (None, None) => return Ok(all),
    };
    let total = all.len();
    let mut mine: Vec<String> = all
        .into_iter()
        .filter(|reference| shard.takes(reference))
        .collect();
    // Shards started at once on one cache, each walking its images in list order, would reach each
    // base (a list is often sorted by repository) at the same moment and all read it cold; each
    // starts a fraction index/count into its own list instead, where the others get later.
    let start = image_list::start_of(shard, mine.len());
    mine.rotate_left(start);
    if !args.quiet {
        eprintln!(
            "cudalint: shard {shard}: {} of the {total} images",
            mine.len()
        );
    }
    Ok(mine)
}

/// Adds to `linted` the predicting Dockerfile findings the image confirms or clears, each with its
/// verdict; a prediction the image cannot speak to stays out of the image's report.
fn add_verdicts(linted: &mut ImageLinted, predicted: &[Diagnostic]) {
    let image = linted.summary.reference.clone();
    for finding in predicted {
        let mut finding = finding.clone();
        if confirm::annotate(&mut finding, &linted.inventory, &image) {
            linted.diagnostics.push(finding);
        }
    }
}
