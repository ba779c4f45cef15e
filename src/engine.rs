//! The lint engine: reads an input, parses and models it, runs every enabled
//! rule, and then — in this one place — applies suppressions, rule
//! selection and severity overrides, fills in origins and line/columns, and
//! sorts. Rules only ever report at their default severity (cargo-deny's
//! single sink), so what the user sees never depends on which rule ran.

use std::io::Read;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::checks::dockerfile::{cu001_syntax_error, cu005_unknown_rule_in_suppression, RULES};
use crate::checks::image::{ImageContext, RULES as IMAGE_RULES};
use crate::checks::{DockerfileContext, DockerfileRule};
use crate::config::{RuleSelection, Settings};
use crate::diagnostic::{Diagnostic, Location, Severity};
use crate::dockerfile::ast::{Dockerfile, ParseError};
use crate::dockerfile::model::BuildOptions;
use crate::image::scan::ScannedImage;
use crate::knowledge::Knowledge;
use crate::rule_meta::{Category, Doc, FixAvailability, RuleMeta};
use crate::source::{SourceFile, Span};
use crate::suppress::Suppressions;

/// Reported when a rule panics: the run goes on, and the crash is a finding
/// (never silence) that names the rule.
pub static INTERNAL_ERROR: RuleMeta = RuleMeta {
    code: "CU000",
    name: "internal-error",
    category: Category::Structure,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "A rule crashed; its findings for this file are missing",
    doc: Doc::Page,
};

/// The name a finding's origin gets for standard input.
pub const STDIN_NAME: &str = "<stdin>";

/// Something to lint. Images will join as another variant, with findings at
/// [`Location::Image`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A Dockerfile on disk.
    Path(PathBuf),
    /// A Dockerfile read from standard input (`-`).
    Stdin,
}

impl Input {
    /// The input a command-line argument names (`-` is standard input).
    pub fn from_arg(arg: impl AsRef<Path>) -> Input {
        let arg = arg.as_ref();
        if arg.as_os_str() == "-" {
            Input::Stdin
        } else {
            Input::Path(arg.to_path_buf())
        }
    }

    /// The name findings carry as their origin.
    pub fn name(&self) -> String {
        match self {
            Input::Path(path) => path.display().to_string(),
            Input::Stdin => STDIN_NAME.to_string(),
        }
    }
}

/// Why an input could not be linted at all.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {path}: it is a directory")]
    Directory { path: PathBuf },
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read standard input")]
    Stdin(#[source] std::io::Error),
    #[error("cannot lint {name}: it is larger than {} MiB, the most cudalint reads", MAX_INPUT_BYTES >> 20)]
    TooLarge { name: String },
}

impl InputError {
    /// Why the input could not be linted, without its name (which reports
    /// print beside it): `it is a directory`, the operating system's error.
    pub fn reason(&self) -> String {
        match self {
            InputError::Directory { .. } => "it is a directory".to_owned(),
            InputError::Read { source, .. } | InputError::Stdin(source) => source.to_string(),
            InputError::TooLarge { .. } => format!(
                "it is larger than {} MiB, the most cudalint reads",
                MAX_INPUT_BYTES >> 20
            ),
        }
    }
}

/// The largest input read. Real Dockerfiles are kilobytes; the cap keeps
/// `/dev/zero`, a runaway pipe or a misnamed disk image from exhausting
/// memory, and bounds the work on the rest.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// The findings for one input, and its text (for snippets and fixes).
#[derive(Clone, Debug)]
pub struct Linted {
    pub source: SourceFile,
    pub diagnostics: Vec<Diagnostic>,
}

/// What the engine needs besides the rules: which rules, at which severity,
/// for which build, against which knowledge.
#[derive(Clone, Debug, Default)]
pub struct EngineOptions {
    pub selection: RuleSelection,
    pub settings: Settings,
    pub build: BuildOptions,
    pub knowledge: Knowledge,
    /// The build context requirement files are read from (`--context`,
    /// `cudalint build CONTEXT`); `None`: each Dockerfile's own directory,
    /// and none for standard input.
    pub context: Option<PathBuf>,
    /// How many threads run the rules over a large file ([`RuleThreads`]).
    pub rule_threads: RuleThreads,
}

/// How many threads run the rules over one file. A file of at least
/// [`PARALLEL_FROM_INSTRUCTIONS`] instructions has its rules shared among
/// the threads (each takes the next rule not yet run); a smaller one is
/// checked on the caller's thread, where starting a thread would cost more
/// than its rules. The findings are the same either way, in the same order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleThreads(pub usize);

/// The most threads [`RuleThreads::available`] takes: one rule (CU120 on a
/// file of many pip installs) is a quarter of the work, so more would wait
/// on it.
const MAX_RULE_THREADS: usize = 4;

/// The size from which a file's rules run on several threads: a language
/// server lints a large file on every pause in typing, and each rule walks
/// every instruction.
pub const PARALLEL_FROM_INSTRUCTIONS: usize = 500;

impl RuleThreads {
    /// As many as the machine has cores, up to [`MAX_RULE_THREADS`].
    pub fn available() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        RuleThreads(cores.clamp(1, MAX_RULE_THREADS))
    }
}

impl Default for RuleThreads {
    fn default() -> Self {
        RuleThreads::available()
    }
}

/// Runs a fixed set of rules with fixed options over inputs.
pub struct Engine {
    rules: Vec<&'static dyn DockerfileRule>,
    metas: Vec<&'static RuleMeta>,
    options: EngineOptions,
}

/// Every rule's metadata, the engine's own [`INTERNAL_ERROR`] first.
pub fn all_rule_metas() -> Vec<&'static RuleMeta> {
    std::iter::once(&INTERNAL_ERROR)
        .chain(RULES.iter().map(|rule| rule.meta()))
        .chain(IMAGE_RULES.iter().map(|rule| rule.meta()))
        .collect()
}

impl Engine {
    /// An engine running every registered rule.
    pub fn new(options: EngineOptions) -> Self {
        Engine::with_rules(options, RULES.to_vec())
    }

    /// An engine running `rules` (tests use this to add their own rules).
    pub fn with_rules(options: EngineOptions, rules: Vec<&'static dyn DockerfileRule>) -> Self {
        let mut metas: Vec<&'static RuleMeta> = vec![&INTERNAL_ERROR];
        metas.extend(rules.iter().map(|rule| rule.meta()));
        metas.extend(IMAGE_RULES.iter().map(|rule| rule.meta()));
        // CU001 and CU005 are made by the engine itself, so they must be
        // known even to an engine built with a custom rule list.
        for meta in [
            &cu001_syntax_error::META,
            &cu005_unknown_rule_in_suppression::META,
        ] {
            if !metas.iter().any(|known| known.code == meta.code) {
                metas.push(meta);
            }
        }
        Engine {
            rules,
            metas,
            options,
        }
    }

    /// Metadata of every rule this engine knows, for renderers.
    pub fn rule_metas(&self) -> &[&'static RuleMeta] {
        &self.metas
    }

    pub fn options(&self) -> &EngineOptions {
        &self.options
    }

    /// Read `input` and lint it.
    pub fn lint_input(&self, input: &Input) -> Result<Linted, InputError> {
        let bytes = read_bytes(input)?;
        let context = match (&self.options.context, input) {
            (Some(dir), _) => Some(dir.clone()),
            (None, Input::Path(path)) => Some(match path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
                _ => PathBuf::from("."),
            }),
            (None, Input::Stdin) => None,
        };
        Ok(self.lint_bytes_in(input.name(), &bytes, context.as_deref()))
    }

    /// Lint a Dockerfile's raw bytes. Bytes BuildKit would not read as
    /// text (invalid UTF-8, NUL) are a CU001 finding at the first bad byte;
    /// the returned source then holds the text with replacement characters
    /// so the finding can still be shown.
    pub fn lint_bytes(&self, name: String, bytes: &[u8]) -> Linted {
        self.lint_bytes_in(name, bytes, self.options.context.as_deref())
    }

    /// [`Engine::lint_bytes`] with requirement files read from the build
    /// context `context` (none: they are not read).
    pub fn lint_bytes_in(&self, name: String, bytes: &[u8], context: Option<&Path>) -> Linted {
        self.lint_bytes_keeping_syntax(name, bytes, context).0
    }

    /// [`Engine::lint_bytes_in`], handing back the syntax tree the rules
    /// read (none when the file does not parse), for callers that answer
    /// more questions about the same text: the language server's hover
    /// reads it instead of parsing the document again.
    pub fn lint_bytes_keeping_syntax(
        &self,
        name: String,
        bytes: &[u8],
        context: Option<&Path>,
    ) -> (Linted, Option<Dockerfile>) {
        let source = SourceFile::new(name, String::from_utf8_lossy(bytes).into_owned());
        let parsed = crate::dockerfile::parse_syntax_bytes(bytes);
        let diagnostics = self.lint_parsed(&source, &parsed, context);
        let linted = Linted {
            source,
            diagnostics,
        };
        (linted, parsed.ok().map(|(dockerfile, _)| dockerfile))
    }

    /// Lint a Dockerfile's text; findings come back final: suppressed,
    /// re-graded, located and sorted.
    pub fn lint_source(&self, source: &SourceFile) -> Vec<Diagnostic> {
        self.lint_parsed(
            source,
            &crate::dockerfile::parse_syntax(&source.text),
            self.options.context.as_deref(),
        )
    }

    /// Run every enabled image rule over a scanned image; findings come back final: selected,
    /// re-graded, named after the image and sorted. (Images have no inline suppressions; the
    /// configuration's rule selection applies.)
    pub fn lint_image(&self, image: &ScannedImage) -> Vec<Diagnostic> {
        let ctx = ImageContext {
            image,
            knowledge: &self.options.knowledge,
            content: crate::knowledge::image_content::ImageContent::embedded(),
            settings: &self.options.settings,
        };
        let mut raw = Vec::new();
        for rule in IMAGE_RULES {
            if self.options.selection.is_enabled(rule.meta().code) {
                guarded(
                    rule.meta(),
                    "image",
                    |found| rule.check(&ctx, found),
                    &mut raw,
                );
            }
        }
        let selection = &self.options.selection;
        let mut findings: Vec<Diagnostic> = raw
            .into_iter()
            .filter(|d| d.code == INTERNAL_ERROR.code || selection.is_enabled(d.code))
            .map(|mut d| {
                d.severity = selection.severity_of(d.code, d.severity);
                d.origin = image.reference().to_owned();
                d
            })
            .collect();
        sort_diagnostics(&mut findings);
        findings
    }

    /// A file BuildKit's parser rejects is one CU001 and nothing else: there
    /// is no tree to check. An instruction BuildKit's instruction checks
    /// reject (`COPY` with one argument, an unknown flag, a bad `--mount`)
    /// is a CU001 of its own, and the rules still check the whole file: the
    /// parser keeps such an instruction typed as far as it goes (a `COPY`
    /// without destination has no sources, a bad flag is left out, a bad
    /// mount is dropped), so no rule reads more into it than is written.
    fn lint_parsed(
        &self,
        source: &SourceFile,
        parsed: &Result<(Dockerfile, Vec<ParseError>), ParseError>,
        context: Option<&Path>,
    ) -> Vec<Diagnostic> {
        let mut raw = Vec::new();
        let suppressions = match parsed {
            Err(error) => {
                raw.push(
                    Diagnostic::at(
                        &cu001_syntax_error::META,
                        clamp(error.span, source),
                        error.message.clone(),
                    )
                    .with_help("BuildKit rejects this file; fix the syntax first"),
                );
                Suppressions::default()
            }
            Ok((dockerfile, instruction_errors)) => {
                for error in instruction_errors {
                    raw.push(
                        Diagnostic::at(&cu001_syntax_error::META, clamp(error.span, source), error.message.clone())
                            .with_help("BuildKit rejects this instruction; the rest of the file is still checked"),
                    );
                }
                let knowledge = &self.options.knowledge;
                let model = crate::dockerfile::build_model_with(
                    dockerfile,
                    &self.options.build,
                    &|image| knowledge.images.image_env(image),
                );
                let context_files = context.and_then(crate::context_files::ContextFiles::open);
                let memo = crate::checks::dockerfile::lint_memo::LintMemo::default();
                let ctx = DockerfileContext {
                    source,
                    dockerfile,
                    model: &model,
                    knowledge: &self.options.knowledge,
                    settings: &self.options.settings,
                    build_context: context_files.as_ref(),
                    memo: &memo,
                };
                self.run_rules(&ctx, &mut raw);
                let suppressions = Suppressions::collect(dockerfile, &self.metas);
                for unknown in &suppressions.unknown {
                    raw.push(
                        Diagnostic::at(
                            &cu005_unknown_rule_in_suppression::META,
                            unknown.span,
                            format!("suppression names unknown rule `{}`", unknown.name),
                        )
                        .with_help("use a rule code or name from `cudalint rules`"),
                    );
                }
                suppressions
            }
        };
        self.finish(source, raw, &suppressions)
    }

    /// The one sink every finding passes through.
    fn finish(
        &self,
        source: &SourceFile,
        raw: Vec<Diagnostic>,
        suppressions: &Suppressions,
    ) -> Vec<Diagnostic> {
        let selection = &self.options.selection;
        let mut findings: Vec<Diagnostic> = raw
            .into_iter()
            .filter(|d| d.code == INTERNAL_ERROR.code || selection.is_enabled(d.code))
            .filter(|d| d.code == INTERNAL_ERROR.code || !suppressions.suppresses(d))
            .map(|mut d| {
                d.severity = selection.severity_of(d.code, d.severity);
                d.origin.clone_from(&source.name);
                if let Location::Source { span, start, end } = &mut d.location {
                    *span = clamp(*span, source);
                    *start = Some(source.line_col(span.start));
                    *end = Some(source.line_col(span.end));
                }
                d
            })
            .collect();
        sort_diagnostics(&mut findings);
        findings
    }
}

/// Sort findings the same way on every run: origin, line, column, code,
/// message. Findings without a line (image, whole file) come first.
pub fn sort_diagnostics(findings: &mut [Diagnostic]) {
    findings.sort_by(|a, b| {
        (&a.origin, a.start(), a.code, &a.message).cmp(&(&b.origin, b.start(), b.code, &b.message))
    });
}

/// Run one rule, turning a panic into a finding so that a bug in one rule
/// neither kills the run nor silently drops the file's other findings.
impl Engine {
    /// Every enabled rule over one file, findings in rule order.
    fn run_rules(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let enabled: Vec<&dyn DockerfileRule> = self
            .rules
            .iter()
            .copied()
            .filter(|rule| self.options.selection.is_enabled(rule.meta().code))
            .collect();
        let threads = if ctx.dockerfile.instructions.len() >= PARALLEL_FROM_INSTRUCTIONS {
            self.options.rule_threads.0.min(enabled.len())
        } else {
            1
        };
        if threads <= 1 {
            for rule in enabled {
                run_rule(rule, ctx, out);
            }
            return;
        }
        // Each thread takes the next rule; the findings go back in rule order.
        let next = AtomicUsize::new(0);
        let work = || {
            let mut done: Vec<(usize, Vec<Diagnostic>)> = Vec::new();
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(rule) = enabled.get(index) else {
                    return done;
                };
                let mut found = Vec::new();
                run_rule(*rule, ctx, &mut found);
                done.push((index, found));
            }
        };
        let mut done = std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
            let mut done = work();
            for helper in helpers {
                // A rule's panic is caught in `guarded`; anything else is the
                // engine's own bug and goes on as it would on one thread.
                done.extend(
                    helper
                        .join()
                        .unwrap_or_else(|panic| panic::resume_unwind(panic)),
                );
            }
            done
        });
        done.sort_by_key(|(index, _)| *index);
        for (_, mut found) in done {
            out.append(&mut found);
        }
    }
}

fn run_rule(rule: &dyn DockerfileRule, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
    guarded(rule.meta(), "file", |found| rule.check(ctx, found), out);
}

/// Runs `check` (one rule over one input) and keeps its findings; a panic becomes one CU000 that
/// names the rule and says that its findings for this `input` (a file, an image) are missing.
fn guarded(
    meta: &RuleMeta,
    input: &str,
    check: impl FnOnce(&mut Vec<Diagnostic>),
    out: &mut Vec<Diagnostic>,
) {
    let mut found = Vec::new();
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| check(&mut found)));
    match outcome {
        Ok(()) => out.append(&mut found),
        Err(payload) => {
            let reason = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            let mut crash = Diagnostic::at(
                &INTERNAL_ERROR,
                Span::default(),
                format!(
                    "rule {} ({}) crashed: {reason}; its findings for this {input} are missing",
                    meta.code, meta.name
                ),
            )
            .with_help(format!(
                "please report this bug with the {input} that triggers it"
            ));
            crash.location = Location::File;
            out.push(crash);
        }
    }
}

/// Keep a span inside the text and on character boundaries, so a rule's
/// off-by-one can never make rendering or fixing panic.
fn clamp(span: Span, source: &SourceFile) -> Span {
    let text = &source.text;
    let floor = |mut offset: usize| {
        offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    };
    let start = floor(span.start);
    Span::new(start, floor(span.end).max(start))
}

/// The bytes of `input`.
/// The bytes of `input`, at most [`MAX_INPUT_BYTES`] of them.
pub fn read_bytes(input: &Input) -> Result<Vec<u8>, InputError> {
    match input {
        Input::Stdin => read_bounded(std::io::stdin().lock(), input, InputError::Stdin),
        Input::Path(path) => {
            if path.is_dir() {
                return Err(InputError::Directory { path: path.clone() });
            }
            let read_error = |source| InputError::Read {
                path: path.clone(),
                source,
            };
            let file = std::fs::File::open(path).map_err(read_error)?;
            read_bounded(file, input, read_error)
        }
    }
}

/// Read to the end, refusing more than [`MAX_INPUT_BYTES`] without reading
/// (or waiting for) the rest.
fn read_bounded(
    reader: impl Read,
    input: &Input,
    io_error: impl FnOnce(std::io::Error) -> InputError,
) -> Result<Vec<u8>, InputError> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io_error)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(InputError::TooLarge { name: input.name() });
    }
    Ok(bytes)
}
