//! `cudalint build`: in one command what a careful engineer does by hand around `docker build`.
//!
//! 1. Lint the Dockerfile for the build that will really run (its build arguments, target and
//!    platform), and stop before building when the findings reach the failure threshold, unless
//!    `--no-fail-fast`.
//! 2. Build through the engine API: the context sent as Docker's CLI sends it
//!    ([`context`], honouring `.dockerignore` with Docker's semantics, [`dockerignore`]), the
//!    engine's output copied live to stderr, its error text the message when the build fails
//!    ([`engine`]).
//! 3. Inspect the built image with the image rules (`crate::image_lint`), each image finding linked
//!    to the instruction that made its layer; the report covers the Dockerfile and the image.
//!
//! The command line (`cli.rs`) resolves configuration and prints the [`Outcome`]; the exit status
//! is `lint`'s: 0 clean, 1 findings at or above the threshold, 2 could not build. The image stays
//! tagged either way.

pub mod context;
pub mod dockerignore;
pub mod engine;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::config::FailureThreshold;
use crate::diagnostic::Diagnostic;
use crate::engine::{Engine, Input};
use crate::image::summary::ImageSummary;
use crate::render::FailedInput;
use crate::source::SourceFile;

use context::{BuildContext, DockerfilePlace};
use engine::{BuildRequest, EngineClient};

/// The name `docker build` looks for in the context, and the one it falls back to.
const DEFAULT_DOCKERFILE: &str = "Dockerfile";
const FALLBACK_DOCKERFILE: &str = "dockerfile";

/// The context directory and the Dockerfile, found the way `docker build` finds them: `-f` is
/// relative to the current directory, the default is `CONTEXT/Dockerfile` (or `dockerfile`), and
/// `-f -` reads standard input.
#[derive(Debug)]
pub struct Plan {
    context_dir: PathBuf,
    /// The Dockerfile as reports name it (the path as the user gave it).
    dockerfile_name: String,
    dockerfile_bytes: Vec<u8>,
    place: DockerfilePlace,
}

impl Plan {
    pub fn locate(context: &Path, file: Option<&Path>) -> anyhow::Result<Plan> {
        if context.as_os_str() == "-" {
            bail!("cudalint build takes a directory as the build context, not a tar on standard input");
        }
        let context_dir = std::fs::canonicalize(context)
            .with_context(|| format!("cannot use {} as the build context", context.display()))?;
        if !context_dir.is_dir() {
            bail!("the build context {} is not a directory", context.display());
        }
        let given = match file {
            Some(file) => file.to_path_buf(),
            None => {
                let default = context.join(DEFAULT_DOCKERFILE);
                let fallback = context.join(FALLBACK_DOCKERFILE);
                if default.symlink_metadata().is_err() && fallback.symlink_metadata().is_ok() {
                    fallback
                } else {
                    default
                }
            }
        };
        let input = Input::from_arg(&given);
        let dockerfile_bytes = crate::engine::read_bytes(&input).map_err(|error| {
            anyhow::anyhow!("cannot read the Dockerfile: {error}: {}", error.reason())
        })?;
        let dockerfile_name = input.name();
        let dockerfile_name = dockerfile_name
            .strip_prefix("./")
            .unwrap_or(&dockerfile_name)
            .to_string();
        let place = match input {
            Input::Stdin => DockerfilePlace::Outside(dockerfile_bytes.clone()),
            Input::Path(path) => {
                let real = std::fs::canonicalize(&path)
                    .with_context(|| format!("cannot find the Dockerfile {}", path.display()))?;
                match real.strip_prefix(&context_dir) {
                    Ok(inside) => match inside.to_str() {
                        Some(relative) if !relative.is_empty() => {
                            DockerfilePlace::InContext(relative.to_string())
                        }
                        _ => DockerfilePlace::Outside(dockerfile_bytes.clone()),
                    },
                    Err(_) => DockerfilePlace::Outside(dockerfile_bytes.clone()),
                }
            }
        };
        Ok(Plan {
            context_dir,
            dockerfile_name,
            dockerfile_bytes,
            place,
        })
    }
}

/// What `cudalint build` found, for the report and the exit status.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The Dockerfile's text (for snippets).
    pub sources: Vec<SourceFile>,
    /// Dockerfile findings, then the image's.
    pub diagnostics: Vec<Diagnostic>,
    /// The Dockerfile, and the image once built.
    pub inputs: Vec<String>,
    /// The build, when it failed, with the engine's message.
    pub failed_inputs: Vec<FailedInput>,
    /// What was read of the built image (layers, CUDA inventory, size breakdown).
    pub images: Vec<ImageSummary>,
}

/// The options of one `cudalint build` run besides the Dockerfile and the engine.
pub struct Options<'a> {
    pub request: BuildRequest,
    pub threshold: FailureThreshold,
    pub no_fail_fast: bool,
    /// Where the engine's build output goes (stderr).
    pub log: &'a mut dyn Write,
}

/// Lint, build and inspect. Errors that stop the command before the engine builds anything (an
/// unreadable context, a bad `.dockerignore`) are returned; a build the engine ran and failed is a
/// failed input of the outcome, so the Dockerfile's findings are still reported.
pub fn run(
    plan: &Plan,
    lint_engine: &Engine,
    client: &EngineClient,
    options: Options<'_>,
) -> anyhow::Result<Outcome> {
    // Requirement files are read from the context the engine is sent.
    let linted = lint_engine.lint_bytes_in(
        plan.dockerfile_name.clone(),
        &plan.dockerfile_bytes,
        Some(&plan.context_dir),
    );
    let mut outcome = Outcome {
        inputs: vec![linted.source.name.clone()],
        diagnostics: linted.diagnostics,
        sources: vec![linted.source],
        ..Outcome::default()
    };
    let blocking = outcome
        .diagnostics
        .iter()
        .filter(|diagnostic| options.threshold.is_reached_by(diagnostic.severity))
        .count();
    if blocking > 0 && !options.no_fail_fast {
        writeln!(
            options.log,
            "cudalint: not building: {blocking} finding(s) in {} at or above the failure threshold \
             (--no-fail-fast builds anyway)",
            plan.dockerfile_name
        )?;
        return Ok(outcome);
    }

    let context = BuildContext::scan(&plan.context_dir, plan.place.clone())?;
    writeln!(
        options.log,
        "cudalint: sending the build context to the Docker engine at {}: {} entries, {}",
        client.endpoint,
        context.entries().len(),
        crate::units::human_bytes_binary(context.content_bytes())
    )?;
    let image_name = match &options.request.tag {
        Some(tag) => tag.clone(),
        None => format!("the image of {}", plan.dockerfile_name),
    };
    let id = match client.build(&context, &options.request, options.log) {
        Ok(id) => id,
        Err(error) => {
            outcome.failed_inputs.push(FailedInput {
                name: image_name,
                message: format!("{error:#}"),
            });
            return Ok(outcome);
        }
    };

    // The image just built, from the engine that built it: by its tag (what the user reads in the
    // report), else by its ID; `docker-daemon:` so that a file named like the tag is never read
    // instead.
    let reference = format!(
        "docker-daemon:{}",
        options.request.tag.as_deref().unwrap_or(&id)
    );
    writeln!(options.log, "cudalint: checking the image {reference}")?;
    match crate::image_lint::scan_and_lint(&reference, lint_engine, outcome.sources.first()) {
        Ok(linted) => {
            // The Dockerfile's predictions (CU113, CU120, CU127, CU128), confirmed or cleared by what was built.
            for finding in &mut outcome.diagnostics {
                crate::image::confirm::annotate(
                    finding,
                    &linted.inventory,
                    &linted.summary.reference,
                );
            }
            outcome.inputs.push(linted.summary.reference.clone());
            outcome.diagnostics.extend(linted.diagnostics);
            outcome.images.push(linted.summary);
        }
        Err(error) => outcome.failed_inputs.push(FailedInput {
            name: reference,
            message: format!("built, but cannot be checked: {error:#}"),
        }),
    }
    Ok(outcome)
}
