//! The command line: arguments, merging flags over `.cudalint.toml`,
//! choosing the output, and exit codes (0 clean, 1 findings at or above the
//! failure threshold, 2 could not lint). `main.rs` only calls [`main_with`].

use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use crate::config::{self, Config, FailureThreshold};
use crate::diagnostic::Diagnostic;
use crate::discover;
use crate::dockerfile::model::BuildOptions;
use crate::dockerfile::platform::Platform;
use crate::engine::{self, Engine, EngineOptions, Input, RuleThreads};
use crate::fix::{self, FixOptions};
use crate::knowledge::Knowledge;
use crate::plugin;
use crate::render::{self, FailedInput, Format, Report};
use crate::rule_meta::{Category, FixAvailability, RuleMeta};
use crate::source::SourceFile;

mod image;
mod image_list;
mod registry;

/// Exit status when findings reach the failure threshold.
const EXIT_FINDINGS: u8 = 1;
/// Exit status when something could not be linted (bad input, config, usage).
const EXIT_ERROR: u8 = 2;

/// Lints CUDA packaging in Dockerfiles and built container images.
///
/// `cudalint Dockerfile` is short for `cudalint lint Dockerfile`; `cudalint image REF` checks a built
/// image (engine, docker-archive, OCI, rootfs); `cudalint build` lints, builds and checks the result.
#[derive(Debug, Parser)]
#[command(
    name = "cudalint",
    version,
    about,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    lint: LintArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Lint Dockerfiles (the default command).
    Lint(LintArgs),
    /// Apply automatic fixes (prints a diff unless --write).
    Fix(FixArgs),
    /// List every rule: code, name, category, severity, fix.
    Rules,
    /// What the knowledge says about a base image, each fact with its source.
    Facts(crate::facts::FactsArgs),
    /// Inspect built images: what shipped, what the loader cannot find, where the bytes go.
    Image(image::ImageCommandArgs),
    /// Lint a Dockerfile, build it through the Docker engine, check the image.
    Build(BuildArgs),
    /// Show a rule's documentation.
    Explain {
        /// A rule code (`CU002`) or name (`unknown-stage-reference`).
        rule: String,
    },
    /// Install this binary as the Docker CLI plugin `docker cudalint`.
    InstallPlugin(InstallPluginArgs),
    /// Serve the Language Server Protocol on stdin/stdout, for editors
    /// (see docs/editors.md).
    #[command(alias = "lsp")]
    Server,
    /// Print a shell completion script.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Args)]
struct LintArgs {
    /// Dockerfiles to lint, or directories to search for them (Dockerfile,
    /// Containerfile, *.Dockerfile, Dockerfile.*; .gitignore is honoured);
    /// `-` reads standard input.
    #[arg(value_name = "FILE|DIR", required = true)]
    files: Vec<PathBuf>,
    /// The build context the Dockerfiles are built with, where the
    /// requirement files they install (`pip install -r`) are read
    /// [default: each Dockerfile's directory; none for `-`].
    #[arg(long, value_name = "DIR")]
    context: Option<PathBuf>,
    #[command(flatten)]
    report: ReportArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// `cudalint build CONTEXT`: lint the Dockerfile, build it through the
/// Docker engine, check the built image; one report for both.
#[derive(Debug, Args)]
struct BuildArgs {
    /// The build context: a directory, sent with its .dockerignore applied.
    #[arg(value_name = "CONTEXT")]
    context: PathBuf,
    /// Name and tag the image, as `docker build -t` [default: the engine's
    /// image ID only].
    #[arg(short = 't', long = "tag", value_name = "NAME[:TAG]")]
    tag: Option<String>,
    /// The Dockerfile, relative to the current directory [default:
    /// CONTEXT/Dockerfile]; `-` reads standard input.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    file: Option<PathBuf>,
    /// Build even when the Dockerfile's findings reach the failure threshold.
    #[arg(long)]
    no_fail_fast: bool,
    #[command(flatten)]
    report: ReportArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// How `lint` and `build` print their report and judge it.
#[derive(Debug, Args)]
struct ReportArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Lowest severity that makes the exit status 1 [default: warning].
    #[arg(long, value_enum)]
    failure_threshold: Option<FailureThreshold>,
    /// Colour the text output: auto means when stdout is a terminal and
    /// NO_COLOR is unset.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    /// Print every note and the sources of each finding's facts in text
    /// output (JSON and SARIF always carry them).
    #[arg(long)]
    show_sources: bool,
    /// Text output of images: the whole inventory before the findings (layers, CUDA libraries,
    /// pip packages, every unresolved library, the plugins loaded only on demand). JSON and HTML
    /// always carry it.
    #[arg(long, short = 'v')]
    verbose: bool,
}

#[derive(Debug, Args)]
struct FixArgs {
    /// Dockerfiles to fix; `-` reads standard input.
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    /// Print a unified diff of the fixes (the default without --write).
    #[arg(long)]
    diff: bool,
    /// Write the fixed files back (for `-`, print the fixed text).
    #[arg(long)]
    write: bool,
    /// Also apply fixes that may change behaviour.
    #[arg(long)]
    unsafe_fixes: bool,
    /// Lowest severity of remaining findings that makes the exit status 1.
    #[arg(long, value_enum)]
    failure_threshold: Option<FailureThreshold>,
    #[command(flatten)]
    common: CommonArgs,
}

/// Options `lint`, `fix` and `build` share: configuration and the build
/// being linted.
#[derive(Debug, Args)]
struct CommonArgs {
    /// Use this configuration file instead of looking for .cudalint.toml.
    #[arg(long, value_name = "FILE", conflicts_with = "no_config")]
    config: Option<PathBuf>,
    /// Ignore every .cudalint.toml.
    #[arg(long)]
    no_config: bool,
    /// A build argument, as `docker build --build-arg` (repeatable).
    #[arg(long = "build-arg", value_name = "KEY=VALUE", value_parser = parse_build_arg)]
    build_args: Vec<(String, String)>,
    /// The stage being built, as `docker build --target`.
    #[arg(long, value_name = "STAGE")]
    target: Option<String>,
    /// The platform built for, as `docker build --platform` (default: this
    /// machine's; for `cudalint build`, the engine's); `TARGETARCH` and
    /// friends follow it.
    #[arg(long, value_name = "OS/ARCH[/VARIANT]", value_parser = Platform::parse)]
    platform: Option<Platform>,
    #[command(flatten)]
    fleet: TargetFleetArgs,
    /// Extra knowledge file layered over the built-in facts (repeatable).
    #[arg(long, value_name = "FILE")]
    knowledge: Vec<PathBuf>,
    /// Do not run this rule, by code or name (repeatable).
    #[arg(long, value_name = "RULE")]
    ignore: Vec<String>,
}

#[derive(Debug, Args)]
struct InstallPluginArgs {
    /// Into $DOCKER_CONFIG/cli-plugins or ~/.docker/cli-plugins (the default).
    #[arg(long, conflicts_with = "system")]
    user: bool,
    /// Into /usr/local/lib/docker/cli-plugins, for every user.
    #[arg(long)]
    system: bool,
    /// Copy the binary instead of linking to it.
    #[arg(long)]
    copy: bool,
}

/// The hosts the image will run on; over `.cudalint.toml`'s `[target]`.
/// One struct so every command that judges an image for its fleet (`lint`,
/// `fix`, and later `image` and `build`) takes the same flags.
#[derive(Debug, Args)]
struct TargetFleetArgs {
    /// Driver version of the hosts the image runs on, or `host` for this
    /// machine's driver.
    #[arg(long, value_name = "VERSION|host")]
    driver: Option<String>,
    /// A GPU of those hosts: a product name (`V100`, `H100`, `RTX 5090`), an
    /// architecture (`sm_90`) or a compute capability (`9.0`) (repeatable;
    /// replaces the configuration's `gpus`).
    #[arg(long = "gpu", value_name = "GPU")]
    gpus: Vec<String>,
}

impl TargetFleetArgs {
    /// Put the flags over the configuration's `[target]` in `settings`.
    fn apply(&self, settings: &mut config::Settings) -> anyhow::Result<()> {
        if let Some(driver) = &self.driver {
            settings.target_driver = Some(if driver == "host" {
                crate::knowledge::toolkits::host_driver_version()
                    .map_err(|reason| anyhow::anyhow!("--driver host: {reason}"))?
            } else {
                driver.clone()
            });
        }
        let from = if self.gpus.is_empty() {
            "[target] gpus"
        } else {
            settings.target_gpus = self.gpus.clone();
            "--gpu"
        };
        let fleet = crate::knowledge::gpus::Gpus::embedded();
        for gpu in &settings.target_gpus {
            fleet
                .parse_target(gpu)
                .map_err(|reason| anyhow::anyhow!("{from}: {reason}"))?;
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// `KEY=VALUE`; a bare `KEY` takes its value from the environment, as
/// `docker build --build-arg KEY` does.
fn parse_build_arg(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some(("", _)) => Err("the build argument name is empty".into()),
        Some((key, value)) => Ok((key.to_string(), value.to_string())),
        None => std::env::var(text)
            .map(|value| (text.to_string(), value))
            .map_err(|_| format!("expected KEY=VALUE, and `{text}` is not set in the environment")),
    }
}

/// Parse `args` and run; usage errors print clap's message and give 2
/// (help and version give 0). Errors are for the caller to print.
pub fn main_with(args: impl IntoIterator<Item = OsString>) -> anyhow::Result<ExitCode> {
    let mut command = Cli::command().version(version_line());
    let args = match plugin::classify(args.into_iter().collect()) {
        plugin::Invocation::Metadata => {
            println!("{}", serde_json::to_string_pretty(&plugin::metadata())?);
            return Ok(ExitCode::SUCCESS);
        }
        plugin::Invocation::Run { args, as_plugin } => {
            if as_plugin {
                command = command.bin_name(format!("docker {}", plugin::PLUGIN_NAME));
            }
            args
        }
    };
    let parsed = command
        .try_get_matches_from(args)
        .and_then(|matches| Cli::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(error) => {
            error.print()?;
            // clap uses 2 for usage errors already; keep it explicit.
            return Ok(if error.use_stderr() {
                ExitCode::from(EXIT_ERROR)
            } else {
                ExitCode::SUCCESS
            });
        }
    };
    // The server owns stdin and stdout for the protocol.
    if matches!(cli.command, Some(Command::Server)) {
        return Ok(crate::server::run());
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let code = run(cli, &mut out)?;
    out.flush()?;
    Ok(code)
}

/// What `--version` prints after the name: the release (Cargo.toml's, the
/// one the wheels, archives, image labels and action carry) and the date the
/// built-in knowledge was last checked, since a linter's advice is only as
/// current as its catalogue.
fn version_line() -> &'static str {
    static LINE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LINE.get_or_init(|| {
        let release = env!("CARGO_PKG_VERSION");
        match Knowledge::embedded()
            .ok()
            .and_then(|knowledge| knowledge.checked)
        {
            Some(checked) => format!("{release} (knowledge checked {checked})"),
            None => release.to_string(),
        }
    })
}

/// Run a parsed command line, writing results to `out`.
pub fn run(cli: Cli, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    match cli.command {
        None => lint(cli.lint, out),
        Some(Command::Lint(args)) => lint(args, out),
        Some(Command::Fix(args)) => fix(args, out),
        Some(Command::Rules) => {
            print_rules(&engine::all_rule_metas(), out)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Image(args)) => image::run(args, out),
        Some(Command::Build(args)) => build(args, out),
        Some(Command::Explain { rule }) => explain(&rule, out),
        Some(Command::Facts(args)) => {
            let knowledge = load_knowledge(&args.knowledge)?;
            crate::facts::run(&args, &knowledge, out)
        }
        Some(Command::InstallPlugin(args)) => install_plugin(&args, out),
        Some(Command::Server) => Ok(crate::server::run()),
        Some(Command::Completions { shell }) => {
            clap_complete::generate(shell, &mut Cli::command(), "cudalint", out);
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Configuration file, then flags over it.
struct Resolved {
    engine: Engine,
    threshold: FailureThreshold,
}

fn resolve(common: &CommonArgs, threshold: Option<FailureThreshold>) -> anyhow::Result<Resolved> {
    resolve_in(common, threshold, None)
}

/// [`resolve`] for Dockerfiles built with the build context `context`.
fn resolve_in(
    common: &CommonArgs,
    threshold: Option<FailureThreshold>,
    context: Option<PathBuf>,
) -> anyhow::Result<Resolved> {
    let rules = engine::all_rule_metas();
    let config = if common.no_config {
        Config::default()
    } else if let Some(path) = &common.config {
        config::load(path, &rules)?
    } else {
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        match config::discover(&cwd) {
            Some(path) => config::load(&path, &rules)?,
            None => Config::default(),
        }
    };

    let mut selection = config.rules;
    for name in &common.ignore {
        match config::find_rule(&rules, name) {
            Some(meta) => selection.disable.push(meta.code),
            None => bail!("--ignore: {}", config::unknown_rule_message(name)),
        }
    }
    let mut settings = config.settings;
    common.fleet.apply(&mut settings)?;
    settings
        .knowledge_files
        .extend(common.knowledge.iter().cloned());
    let knowledge = load_knowledge(&settings.knowledge_files)?;

    let options = EngineOptions {
        selection,
        settings,
        build: BuildOptions {
            build_args: common.build_args.clone(),
            target: common.target.clone(),
            platform: common.platform.clone(),
        },
        knowledge,
        context,
        rule_threads: RuleThreads::available(),
    };
    Ok(Resolved {
        engine: Engine::new(options),
        threshold: threshold
            .or(config.failure_threshold)
            .unwrap_or(FailureThreshold::DEFAULT),
    })
}

/// The embedded knowledge with the user's files over it (see the
/// `knowledge` module for how entries are layered).
fn load_knowledge(files: &[PathBuf]) -> anyhow::Result<Knowledge> {
    Ok(Knowledge::load(files)?)
}

fn lint(args: LintArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    if let Some(dir) = &args.context {
        if !dir.is_dir() {
            bail!("--context: {} is not a directory", dir.display());
        }
    }
    let resolved = resolve_in(
        &args.common,
        args.report.failure_threshold,
        args.context.clone(),
    )?;
    let mut sources: Vec<SourceFile> = Vec::new();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut inputs: Vec<String> = Vec::new();
    let mut failed_inputs: Vec<FailedInput> = Vec::new();
    for input in lint_inputs(&args.files, &mut failed_inputs) {
        match resolved.engine.lint_input(&input) {
            Ok(linted) => {
                inputs.push(linted.source.name.clone());
                diagnostics.extend(linted.diagnostics);
                sources.push(linted.source);
            }
            Err(error) => {
                // The other files are still linted and reported; the
                // failure goes into the report too, so that output read
                // without stderr does not look like a clean run.
                eprintln!("cudalint: error: {}", error_chain(&error));
                failed_inputs.push(FailedInput {
                    name: input.name(),
                    message: error.reason(),
                });
            }
        }
    }
    engine::sort_diagnostics(&mut diagnostics);
    let findings = Findings {
        diagnostics: &diagnostics,
        sources: &sources,
        inputs: &inputs,
        failed_inputs: &failed_inputs,
        images: &[],
    };
    print_report(&args.report, &resolved.engine, &findings, out)?;
    Ok(if !failed_inputs.is_empty() {
        ExitCode::from(EXIT_ERROR)
    } else {
        exit_for(&diagnostics, resolved.threshold)
    })
}

/// What a report shows.
struct Findings<'a> {
    diagnostics: &'a [Diagnostic],
    sources: &'a [SourceFile],
    inputs: &'a [String],
    failed_inputs: &'a [FailedInput],
    /// What was read of each image linted (none for Dockerfiles).
    images: &'a [crate::image::summary::ImageSummary],
}

/// Render `findings` as `args` asks, with the rules `engine` knows and the
/// knowledge-age notice.
fn print_report(
    args: &ReportArgs,
    engine: &Engine,
    findings: &Findings<'_>,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let options = engine.options();
    let notices: Vec<String> = crate::knowledge::freshness::stale_notice(
        &options.knowledge,
        crate::knowledge::clock::today(),
    )
    .into_iter()
    .collect();
    if args.format == Format::Text {
        for notice in &notices {
            eprintln!("cudalint: warning: {notice}");
        }
        if args.verbose {
            for summary in findings.images {
                crate::image::summary::write_text(summary, out)?;
            }
        }
    }
    let report = Report {
        diagnostics: findings.diagnostics,
        rules: engine.rule_metas(),
        sources: findings.sources,
        inputs: findings.inputs,
        failed_inputs: findings.failed_inputs,
        tool_version: env!("CARGO_PKG_VERSION"),
        show_sources: args.show_sources,
        doc_url_base: options.settings.doc_url_base.as_deref(),
        notices: &notices,
        images: findings.images,
    };
    render::render(args.format, &report, out, use_color(args.color))?;
    if args.format == Format::Text {
        for summary in findings.images {
            crate::image::summary::write_text_breakdown(summary, out)?;
            if args.verbose {
                writeln!(out)?;
            } else {
                crate::image::summary::write_text_brief(summary, out)?;
            }
        }
    }
    Ok(())
}

/// `cudalint build`: the Dockerfile is linted for the platform the engine
/// builds for (its own, without `--platform`), then built, then the image
/// is checked; see `crate::build`.
fn build(mut args: BuildArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let plan = crate::build::Plan::locate(&args.context, args.file.as_deref())?;
    let client = crate::build::engine::EngineClient::connect()?;
    let request = crate::build::engine::BuildRequest {
        tag: args.tag.clone(),
        build_args: args.common.build_args.clone(),
        target: args.common.target.clone(),
        platform: args.common.platform.clone(),
    };
    if args.common.platform.is_none() {
        args.common.platform.clone_from(&client.platform);
    }
    let resolved = resolve(&args.common, args.report.failure_threshold)?;
    let stderr = io::stderr();
    let mut log = stderr.lock();
    let options = crate::build::Options {
        request,
        threshold: resolved.threshold,
        no_fail_fast: args.no_fail_fast,
        log: &mut log,
    };
    let outcome = crate::build::run(&plan, &resolved.engine, &client, options)?;
    drop(log);
    for failed in &outcome.failed_inputs {
        eprintln!("cudalint: error: {}", failed.message);
    }
    let findings = Findings {
        diagnostics: &outcome.diagnostics,
        sources: &outcome.sources,
        inputs: &outcome.inputs,
        failed_inputs: &outcome.failed_inputs,
        images: &outcome.images,
    };
    print_report(&args.report, &resolved.engine, &findings, out)?;
    Ok(if !outcome.failed_inputs.is_empty() {
        ExitCode::from(EXIT_ERROR)
    } else {
        exit_for(&outcome.diagnostics, resolved.threshold)
    })
}

/// The inputs that `files` name, each once: a directory stands for the
/// Dockerfiles found under it. A directory that cannot be walked, or holds none, is a
/// failed input (exit 2): `cudalint src/` passing with nothing linted would
/// hide a typo in a CI configuration.
fn lint_inputs(files: &[PathBuf], failed_inputs: &mut Vec<FailedInput>) -> Vec<Input> {
    let mut inputs = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut add = |input: Input, inputs: &mut Vec<Input>| match &input {
        Input::Path(path) if !seen.insert(path.clone()) => {}
        _ => inputs.push(input),
    };
    for file in files {
        let input = Input::from_arg(file);
        if !matches!(&input, Input::Path(path) if path.is_dir()) {
            add(input, &mut inputs);
            continue;
        }
        let message = match discover::find_dockerfiles(file) {
            Ok(found) if !found.is_empty() => {
                for path in found {
                    add(Input::Path(path), &mut inputs);
                }
                continue;
            }
            Ok(_) => format!(
                "it is a directory with no Dockerfile in it (looked for {})",
                discover::DOCKERFILE_NAMES
            ),
            Err(error) => format!("cannot search the directory: {error}"),
        };
        eprintln!("cudalint: error: {}: {message}", input.name());
        failed_inputs.push(FailedInput {
            name: input.name(),
            message,
        });
    }
    inputs
}

fn fix(args: FixArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let resolved = resolve(&args.common, args.failure_threshold)?;
    let options = FixOptions {
        unsafe_fixes: args.unsafe_fixes,
    };
    let mut remaining = Vec::new();
    for file in &args.files {
        let input = Input::from_arg(file);
        let bytes = engine::read_bytes(&input)?;
        let Ok(text) = String::from_utf8(bytes) else {
            bail!("{} is not valid UTF-8; cannot fix it", input.name());
        };
        let source = SourceFile::new(input.name(), text);
        let outcome = fix::fix_source(&resolved.engine, &source, options);
        if args.diff || !args.write {
            out.write_all(fix::unified_diff(&source.name, &source.text, &outcome.text).as_bytes())?;
        }
        if args.write {
            match &input {
                // A pipe expects the whole file back, fixed or not.
                Input::Stdin => out.write_all(outcome.text.as_bytes())?,
                Input::Path(path) if outcome.applied > 0 => std::fs::write(path, &outcome.text)
                    .with_context(|| format!("cannot write {}", path.display()))?,
                Input::Path(_) => {}
            }
        }
        let unfixed_note = if outcome.remaining.iter().any(|d| {
            d.fix
                .as_ref()
                .is_some_and(|f| f.safety == crate::diagnostic::FixSafety::Unsafe)
        }) && !args.unsafe_fixes
        {
            " (more with --unsafe-fixes)"
        } else {
            ""
        };
        let verb = if args.write { "fixed" } else { "would fix" };
        eprintln!(
            "{}: {verb} {} finding(s), {} remaining{unfixed_note}",
            source.name,
            outcome.applied,
            outcome.remaining.len()
        );
        remaining.extend(outcome.remaining);
    }
    Ok(exit_for(&remaining, resolved.threshold))
}

fn install_plugin(args: &InstallPluginArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let scope = if args.system {
        plugin::PluginScope::System
    } else {
        plugin::PluginScope::User
    };
    let mode = if args.copy {
        plugin::InstallMode::Copy
    } else {
        plugin::InstallMode::Symlink
    };
    let binary = std::env::current_exe().context("cannot find this program's own path")?;
    let installed = plugin::install(&binary, &plugin::plugin_dir(scope)?, mode)?;
    let how = match mode {
        plugin::InstallMode::Symlink => "linked to",
        plugin::InstallMode::Copy => "copied from",
    };
    writeln!(
        out,
        "installed {} ({how} {}); try `docker cudalint --help`",
        installed.display(),
        binary.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

fn exit_for(diagnostics: &[Diagnostic], threshold: FailureThreshold) -> ExitCode {
    if diagnostics
        .iter()
        .any(|d| threshold.is_reached_by(d.severity))
    {
        ExitCode::from(EXIT_FINDINGS)
    } else {
        ExitCode::SUCCESS
    }
}

fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        // https://no-color.org: a set, non-empty NO_COLOR turns colour off.
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && io::stdout().is_terminal()
        }
    }
}

/// An error and its causes on one line, `outer: inner: root`.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

fn category_name(category: Category) -> &'static str {
    match category {
        Category::Structure => "structure",
        Category::Size => "size",
        Category::Compatibility => "compatibility",
        Category::Correctness => "correctness",
    }
}

fn fix_name(fix: FixAvailability) -> &'static str {
    match fix {
        FixAvailability::None => "-",
        FixAvailability::Sometimes => "sometimes",
        FixAvailability::Always => "always",
    }
}

fn print_rules(rules: &[&'static RuleMeta], out: &mut dyn Write) -> io::Result<()> {
    let name_width = rules.iter().map(|r| r.name.len()).max().unwrap_or(4).max(4);
    writeln!(
        out,
        "{:<5}  {:<name_width$}  {:<13}  {:<8}  {:<9}  SUMMARY",
        "CODE", "NAME", "CATEGORY", "SEVERITY", "FIX"
    )?;
    for rule in rules {
        writeln!(
            out,
            "{:<5}  {:<name_width$}  {:<13}  {:<8}  {:<9}  {}",
            rule.code,
            rule.name,
            category_name(rule.category),
            rule.default_severity.as_str(),
            fix_name(rule.fix),
            rule.summary
        )?;
    }
    Ok(())
}

fn explain(rule: &str, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let rules = engine::all_rule_metas();
    let Some(meta) = config::find_rule(&rules, rule) else {
        bail!("{}", config::unknown_rule_message(rule));
    };
    writeln!(
        out,
        "{} {} ({}, {}, fix: {})\n",
        meta.code,
        meta.name,
        meta.default_severity,
        category_name(meta.category),
        fix_name(meta.fix)
    )?;
    out.write_all(meta.doc().as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// Whether `error` is, somewhere in its chain, a closed pipe (`cudalint … |
/// head`): that is the reader's choice, not a failure.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// The exit status for an error that stopped the run.
pub fn error_exit_code() -> ExitCode {
    ExitCode::from(EXIT_ERROR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fleet_flags_replace_the_configured_target() {
        let cli = Cli::try_parse_from([
            "cudalint",
            "--driver",
            "550.54.15",
            "--gpu",
            "sm_80",
            "--gpu",
            "sm_90",
            "Dockerfile",
        ])
        .unwrap();
        let mut settings = config::Settings {
            target_driver: Some("535.104.05".into()),
            target_gpus: vec!["sm_70".into()],
            ..config::Settings::default()
        };
        cli.lint.common.fleet.apply(&mut settings).unwrap();
        assert_eq!(settings.target_driver.as_deref(), Some("550.54.15"));
        assert_eq!(settings.target_gpus, ["sm_80", "sm_90"]);

        let cli = Cli::try_parse_from(["cudalint", "Dockerfile"]).unwrap();
        cli.lint.common.fleet.apply(&mut settings).unwrap();
        assert_eq!(settings.target_driver.as_deref(), Some("550.54.15"));
        assert_eq!(settings.target_gpus, ["sm_80", "sm_90"]);
    }
}
