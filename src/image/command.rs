//! `cudalint image REF…`: reads each image (progress on a TTY), lints it with the image rules, and
//! hands the findings and summaries to the CLI, which renders them in any output format. An image
//! that cannot be read is a failed input (exit 2); the others are still reported.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;

use super::cache::LayerCache;
use super::confirm;
use super::lint::{load_and_lint, platform_of, ImageLinted};
use super::source::LoadOptions;
use crate::diagnostic::Diagnostic;
use crate::engine::Engine;
use crate::render::FailedInput;
use crate::source::SourceFile;

#[derive(Debug, Args)]
pub struct ImageArgs {
    /// Images: docker-archive:PATH[:TAG], oci-archive:PATH[:TAG], oci:DIR[:TAG], rootfs:DIR,
    /// docker-daemon:NAME, a path (tar or directory), or an image name or ID in the Docker engine.
    /// The engine is reached through DOCKER_HOST, the docker context or /var/run/docker.sock; a
    /// unix:// socket only from Unix hosts (on Windows: npipe:// or tcp://, or an archive).
    #[arg(value_name = "REF", required = true)]
    pub refs: Vec<String>,
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
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
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
    for reference in &args.refs {
        if show_progress {
            let bar = PROGRESS
                .get_or_init(|| indicatif::ProgressBar::new_spinner().with_message("layers read"));
            bar.reset();
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
