//! The requirement files a pip/uv install reads (`-r requirements.txt`,
//! `-c constraints.txt`), followed to where the Dockerfile put them and read
//! from the build context, so that the CUDA rules judge the requirements a
//! file holds as if they were on the command line.
//!
//! A file named by a RUN is found in the image's filesystem as the build
//! left it: its path is resolved against the stage's `WORKDIR` (of the
//! stages it is built on too) and the RUN's own `cd`s, and then traced to
//! the instruction that put it there: a bind mount of the RUN
//! (`--mount=type=bind,source=…`), else the last `COPY`/`ADD` whose
//! destination holds it (a file, a directory copied whole, a wildcard
//! source; variables in its words and in WORKDIR take the stage's ARG and
//! ENV values, and one without a known value makes the COPY unknown). Only a file that comes from the build context
//! ([`crate::context_files`]) or from a `COPY <<EOF` heredoc is read; one
//! copied from another stage or image, downloaded, created by a RUN,
//! edited by a RUN after the copy (`sed -i … requirements.txt`), or absent
//! leaves the install unjudged, as if no file had been read. So does one
//! whose nested `-r`/`-c` files cannot all be read, a constraint file that
//! names torch or a package that decides torch's CUDA, or such a
//! requirement behind an environment marker cudalint does not evaluate
//! (`; python_version >= "3.9"`).
//!
//! What the files say becomes words of the install (requirements, and
//! the index options `--index-url`, `--extra-index-url`, `--find-links`,
//! `--pre`), each located at the RUN's word that names the file, and each
//! remembering its file and line ([`FileOrigin`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::checks::dockerfile::stack::chain;
use crate::checks::DockerfileContext;
use crate::context_files::{clean, ContextFiles};
use crate::diagnostic::Related;
use crate::dockerfile::ast::{Command, CopyCommand, Word};
use crate::dockerfile::model::{RunStep, Stage};
use crate::dockerfile::packages::{requested, PackageInstall, RequestedPackage};
use crate::dockerfile::requirements_file::{self, Loaded, Marker, MarkerEnv};
use crate::knowledge::resolution::normalize;
use crate::source::{SourceFile, Span};

/// Where a word added from a requirements file was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileOrigin {
    /// The file as the messages name it: its path in the build context,
    /// quoted (`` `requirements/prod.txt` ``), or `the COPY heredoc on line N`.
    pub file: String,
    /// 1-based line in the file.
    pub line: usize,
    /// The line in the context file, for a related location (none for a
    /// heredoc, which is in the Dockerfile).
    pub related: Option<Related>,
}

/// An install with its requirement files read into it.
#[derive(Clone, Debug)]
pub struct Expanded {
    /// The command's install, with the files' requirements added to its
    /// packages, their index options to its options and `index_urls`, and
    /// no requirement or constraint file left.
    pub install: PackageInstall,
    origins: Vec<(Span, String, FileOrigin)>,
}

impl Expanded {
    /// Where the word `text` at `span` came from, if from a file.
    pub fn origin(&self, span: Span, text: &str) -> Option<&FileOrigin> {
        self.origins
            .iter()
            .find(|(s, t, _)| *s == span && t == text)
            .map(|(_, _, origin)| origin)
    }
}

/// Global options of a requirements file that decide where packages come
/// from, with whether each names an index URL.
const INDEX_OPTIONS: &[&str] = &[
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
];

/// The installs read so far in one lint, by stage, RUN instruction and
/// command, so that the rules and their guards (which ask about every
/// earlier install) read and trace each install's files once.
#[derive(Debug, Default)]
pub struct Memo {
    expanded: Mutex<HashMap<InstallKey, Option<Arc<Expanded>>>>,
}

/// An install: its stage, its RUN's instruction and its command's index.
type InstallKey = (usize, usize, usize);

/// `install` (a command of `step`, in `stage`) with its requirement and
/// constraint files read in, or `None` when it names none, or not all of
/// them can be read and trusted (the module's rules).
pub fn expand(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    step: &RunStep,
    install: &PackageInstall,
) -> Option<Arc<Expanded>> {
    if !install.manager.is_python()
        || (install.requirement_files.is_empty() && install.constraint_files.is_empty())
    {
        return None;
    }
    let key = (stage.index, step.instruction, install.command);
    if let Some(known) = ctx
        .memo
        .requirements
        .expanded
        .lock()
        .ok()
        .and_then(|memo| memo.get(&key).cloned())
    {
        return known;
    }
    let expanded = read_in(ctx, stage, step, install).map(Arc::new);
    if let Ok(mut memo) = ctx.memo.requirements.expanded.lock() {
        memo.insert(key, expanded.clone());
    }
    expanded
}

/// [`expand`], uncached.
fn read_in(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    step: &RunStep,
    install: &PackageInstall,
) -> Option<Expanded> {
    // Without a build context only a heredoc's file can be read.
    let files = ctx.build_context;
    let cwd = cwd_at(ctx, stage, step, install.command)?;
    let machine = match ctx.model.platform.arch.as_str() {
        "arm64" => "aarch64",
        "amd64" => "x86_64",
        other => other,
    };
    let env = MarkerEnv { machine };
    let mut names: HashMap<String, (String, Option<SourceFile>)> = HashMap::new();
    let mut read = |path: &str| -> Option<String> {
        let (label, text, source) =
            match provenance(ctx, files, stage, step, install.command, path)? {
                Found::Context(rel) => {
                    let files = files?;
                    let text = files.read(&rel)?;
                    let source = SourceFile::new(files.display(&rel), text.as_str());
                    (format!("`{rel}`"), text.to_string(), Some(source))
                }
                Found::Heredoc { text, line } => {
                    (format!("the COPY heredoc on line {line}"), text, None)
                }
            };
        names.insert(path.to_string(), (label, source));
        Some(text)
    };
    // Each top-level file's words go at the RUN word that names it.
    let mut loaded = Loaded::default();
    let mut spans: Vec<(usize, usize, Span)> = Vec::new();
    for (list, constraint) in [
        (&install.requirement_files, false),
        (&install.constraint_files, true),
    ] {
        for file in list {
            let word = naming_word(install, file)?;
            let (before_reqs, before_opts) = (loaded.requirements.len(), loaded.options.len());
            requirements_file::load(&join(&cwd, file), constraint, env, &mut read, &mut loaded);
            spans.push((before_reqs, before_opts, word.span));
        }
    }
    if !loaded.complete() {
        return None;
    }
    let decides_torch = |text: &str| decides_torch(ctx, text);
    if loaded
        .constraints
        .iter()
        .any(|c| decides_torch(&c.item.text))
        || loaded
            .requirements
            .iter()
            .any(|r| r.item.marker == Marker::Unknown && decides_torch(&r.item.text))
        || loaded.options.iter().any(|o| o.item.option == "--no-index")
    {
        return None;
    }
    let span_of = |index: usize, of_options: bool| {
        spans
            .iter()
            .rev()
            .find(|(reqs, opts, _)| {
                if of_options {
                    *opts <= index
                } else {
                    *reqs <= index
                }
            })
            .map_or(install.span, |(_, _, span)| *span)
    };
    let origin = |file: &str, line: usize, range: Option<(usize, usize)>, what: String| {
        let (label, source) = names.get(file).cloned().unwrap_or_default();
        let related = match (source, range) {
            (Some(source), Some((start, end))) => Some(Related {
                origin: source.name.clone(),
                span: Span::new(start, end),
                start: source.line_col(start),
                end: source.line_col(end),
                message: what,
            }),
            _ => None,
        };
        FileOrigin {
            file: label,
            line,
            related,
        }
    };
    let mut expanded = install.clone();
    expanded.requirement_files.clear();
    expanded.constraint_files.clear();
    let mut origins = Vec::new();
    for (index, requirement) in loaded.requirements.iter().enumerate() {
        let item = &requirement.item;
        if item.marker == Marker::Unknown {
            // Not torch's (checked above): whether it installs does not matter here.
            continue;
        }
        let word = Word {
            text: item.text.clone(),
            span: span_of(index, false),
        };
        let package = if item.is_location {
            RequestedPackage {
                word: word.clone(),
                name: item.text.clone(),
                constraint: None,
                is_location: true,
            }
        } else {
            requested(install.manager, &word)
        };
        origins.push((
            word.span,
            word.text.clone(),
            origin(
                &requirement.file,
                item.line,
                Some((item.start, item.end)),
                format!("`{}` is required here", item.text),
            ),
        ));
        expanded.packages.push(package);
    }
    for (index, option) in loaded.options.iter().enumerate() {
        let item = &option.item;
        let span = span_of(index, true);
        let value = item
            .value
            .as_deref()
            .map(|v| v.strip_prefix('=').unwrap_or(v).to_string());
        match (item.option.as_str(), value) {
            (name, Some(url)) if INDEX_OPTIONS.contains(&name) => {
                expanded.options.push(Word {
                    text: name.to_string(),
                    span,
                });
                expanded.options.push(Word {
                    text: url.clone(),
                    span,
                });
                origins.push((
                    span,
                    url.clone(),
                    origin(
                        &option.file,
                        item.line,
                        Some((item.start, item.end)),
                        format!("`{name}` is set here"),
                    ),
                ));
                if !expanded.index_urls.contains(&url) {
                    expanded.index_urls.push(url);
                }
            }
            ("--pre", _) => expanded.options.push(Word {
                text: "--pre".to_string(),
                span,
            }),
            _ => {}
        }
    }
    Some(Expanded {
        install: expanded,
        origins,
    })
}

/// Whether an install before command `command` of RUN `run` of `stage`
/// (earlier commands of that RUN, earlier RUNs, the stages it is built on)
/// brings torch (`brings_torch`, asked with its requirement files read), or
/// reads a requirement file that cannot be read, so that it may have. pip
/// keeps an installed torch that satisfies a file's requirement, so a
/// requirement read from a file is judged only where this is false.
pub fn torch_may_be_installed_before(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    run: usize,
    command: usize,
    brings_torch: &dyn Fn(&PackageInstall) -> bool,
) -> bool {
    for s in chain(ctx, stage) {
        let own = s.index == stage.index;
        for (index, step) in s.runs.iter().enumerate() {
            if own && index > run {
                break;
            }
            for install in &step.installs {
                if own && index == run && install.command >= command {
                    continue;
                }
                let reads_files =
                    !install.requirement_files.is_empty() || !install.constraint_files.is_empty();
                match expand(ctx, s, step, install) {
                    Some(expanded) if brings_torch(&expanded.install) => return true,
                    Some(_) => {}
                    None if reads_files && install.manager.is_python() => return true,
                    None if brings_torch(install) => return true,
                    None => {}
                }
            }
        }
    }
    false
}

/// Whether a requirement names torch or a package that decides its CUDA
/// (a torch companion or pinner, a requirement with a CUDA build).
fn decides_torch(ctx: &DockerfileContext<'_>, text: &str) -> bool {
    let Some((name, _, _)) = ctx.memo.requirement_terms(text) else {
        return false;
    };
    let resolution = &ctx.knowledge.resolution;
    let name = normalize(&name);
    name == "torch"
        || name == "pytorch"
        || resolution.is_torch_companion(&name)
        || resolution.has_torch_pins(&name)
        || resolution.pins_torch(&name)
        || ctx
            .knowledge
            .packages
            .classify_requirement(text, true)
            .is_some()
}

/// The option word of `install` that names `file` (`-r FILE`'s value, or
/// `--requirement=FILE`).
fn naming_word<'i>(install: &'i PackageInstall, file: &str) -> Option<&'i Word> {
    install.options.iter().find(|word| {
        word.text == file
            || (word.text.starts_with('-')
                && word
                    .text
                    .split_once('=')
                    .is_some_and(|(_, value)| value == file))
    })
}

/// `path` made absolute against `cwd` and cleaned.
fn join(cwd: &str, path: &str) -> String {
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{cwd}/{path}")
    };
    format!("/{}", clean(&joined).unwrap_or_default())
}

/// Whether `path` is `dir` or under it; the rest (`""` for `dir` itself).
fn under<'p>(path: &'p str, dir: &str) -> Option<&'p str> {
    let dir = dir.trim_end_matches('/');
    if path == dir {
        return Some("");
    }
    path.strip_prefix(dir)?.strip_prefix('/')
}

fn basename(path: &str) -> &str {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path)
}

/// The working directory of command `command` of `step`: the last WORKDIR
/// of the stage and the stages it is built on (relative ones joined; `/`
/// where none is set, as for NVIDIA's images), then the RUN's own `cd`s.
/// `None` where a `cd` goes somewhere unknown (`cd $DIR`, `cd -`).
fn cwd_at(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    step: &RunStep,
    command: usize,
) -> Option<String> {
    let mut cwd = workdir_before(ctx, stage, step.instruction);
    for shell in step.commands.iter().take(command) {
        let words = shell.program_words();
        if words.first().map(|w| w.text.as_str()) != Some("cd") {
            continue;
        }
        let dir = words.get(1)?.text.as_str();
        if dir.contains('$') || dir.starts_with(['-', '~']) {
            return None;
        }
        cwd = join(&cwd, dir);
    }
    Some(cwd)
}

/// The instructions before `index` in `stage` and its parents, in build
/// order.
fn instructions_before(ctx: &DockerfileContext<'_>, stage: &Stage, index: usize) -> Vec<usize> {
    chain(ctx, stage)
        .into_iter()
        .flat_map(|s| {
            s.instructions
                .clone()
                .filter(move |&at| s.index != stage.index || at < index)
        })
        .collect()
}

fn workdir_before(ctx: &DockerfileContext<'_>, stage: &Stage, index: usize) -> String {
    let mut cwd = "/".to_string();
    for at in instructions_before(ctx, stage, index) {
        if let Some(Command::Workdir(word)) =
            ctx.dockerfile.instructions.get(at).map(|i| &i.command)
        {
            cwd = join(&cwd, &workdir_text(ctx, stage, at, &word.text));
        }
    }
    cwd
}

/// Where a file the RUN reads came from.
enum Found {
    /// A file of the build context, by its path from the root.
    Context(String),
    /// The body of a `COPY <<EOF` heredoc, and the COPY's line.
    Heredoc { text: String, line: usize },
}

/// Where file `path` (absolute, in the image) that command `command` of
/// `step` reads came from, if from the build context or a heredoc.
fn provenance(
    ctx: &DockerfileContext<'_>,
    files: Option<&ContextFiles>,
    stage: &Stage,
    step: &RunStep,
    command: usize,
    path: &str,
) -> Option<Found> {
    let instruction = ctx.dockerfile.instructions.get(step.instruction)?;
    // A bind mount of the RUN hides what is in the image under it.
    if let Command::Run(run) = &instruction.command {
        for mount in run.mounts.iter().rev() {
            if mount.kind != "bind" {
                continue;
            }
            let Some(target) = mount.target.as_deref() else {
                continue;
            };
            let Some(rest) = under(path, &join("/", target)) else {
                continue;
            };
            if mount.from.is_some() {
                return None;
            }
            let source = mount.source.as_deref().unwrap_or(".");
            return Some(Found::Context(clean(&format!("{source}/{rest}"))?));
        }
    }
    let mut cwd_at_copy: Vec<(usize, String)> = Vec::new();
    let mut cwd = "/".to_string();
    for at in instructions_before(ctx, stage, step.instruction) {
        match ctx.dockerfile.instructions.get(at).map(|i| &i.command) {
            Some(Command::Workdir(word)) => {
                cwd = join(&cwd, &workdir_text(ctx, stage, at, &word.text))
            }
            Some(Command::Copy(_) | Command::Add(_)) => cwd_at_copy.push((at, cwd.clone())),
            _ => {}
        }
    }
    for (at, cwd) in cwd_at_copy.iter().rev() {
        let Some(instruction) = ctx.dockerfile.instructions.get(*at) else {
            continue;
        };
        let (copy, add) = match &instruction.command {
            Command::Copy(copy) => (copy, false),
            Command::Add(copy) => (copy, true),
            _ => continue,
        };
        let owner = chain(ctx, stage)
            .into_iter()
            .find(|s| s.instructions.contains(at))
            .unwrap_or(stage);
        // `--parents` keeps source paths, `--exclude` drops some: where
        // the file lands, or whether, is not modelled.
        let reshaped = copy
            .other_flags
            .iter()
            .any(|flag| matches!(flag.name.as_str(), "parents" | "exclude"));
        let words = expanded_words(copy, owner, ctx.dockerfile.escape).filter(|_| !reshaped);
        let copied = copied_here(files, copy, words, add, cwd, path);
        if !matches!(copied, Copied::No) && edited_after(ctx, stage, step, command, *at, path) {
            return None;
        }
        match copied {
            Copied::No => continue,
            Copied::Elsewhere => return None,
            Copied::Context(rel) => return Some(Found::Context(rel)),
            Copied::Heredoc(name) => {
                let body = instruction.heredocs.iter().find(|h| h.name == name)?;
                return Some(Found::Heredoc {
                    text: body.content.clone(),
                    line: instruction.start_line,
                });
            }
        }
    }
    None
}

/// What one COPY/ADD did to `path`.
enum Copied {
    /// Nothing: it does not write there.
    No,
    /// Wrote it from somewhere not read (another stage, a URL, an archive).
    Elsewhere,
    Context(String),
    /// Wrote the heredoc of this name.
    Heredoc(String),
}

/// The COPY/ADD words with the stage's ARG and ENV values substituted
/// (`COPY requirements.txt $APP_HOME/`); `None` for a word that keeps a
/// variable with no known value.
fn expanded_words(
    copy: &CopyCommand,
    stage: &Stage,
    escape: char,
) -> Option<(Vec<String>, String)> {
    let expand = |text: &str| expand_text(stage, text, escape);
    let sources = copy
        .sources
        .iter()
        .map(|source| expand(&source.text))
        .collect::<Option<Vec<_>>>()?;
    Some((sources, expand(&copy.dest.text)?))
}

/// `text` with the stage's ARG and ENV values (as at the stage's end)
/// substituted; `None` when a variable has no known value.
fn expand_text(stage: &Stage, text: &str, escape: char) -> Option<String> {
    use crate::dockerfile::expand::{expand_vars, VarScope};
    if !text.contains('$') {
        return Some(text.to_string());
    }
    let mut scope = VarScope::new();
    for (name, value) in &stage.args {
        scope.set(name, value.clone());
    }
    for (name, value) in &stage.env {
        scope.set(name, Some(value.clone()));
    }
    let expansion = expand_vars(text, &scope, escape);
    (!expansion.unresolved && expansion.unset.is_empty() && expansion.error.is_none())
        .then_some(expansion.text)
}

/// A WORKDIR's directory, its variables substituted where known (as
/// written otherwise: a RUN's relative paths and a COPY's relative
/// destination then still agree).
fn workdir_text(ctx: &DockerfileContext<'_>, stage: &Stage, at: usize, text: &str) -> String {
    let owner = chain(ctx, stage)
        .into_iter()
        .find(|s| s.instructions.contains(&at))
        .unwrap_or(stage);
    expand_text(owner, text, ctx.dockerfile.escape).unwrap_or_else(|| text.to_string())
}

fn copied_here(
    files: Option<&ContextFiles>,
    copy: &CopyCommand,
    words: Option<(Vec<String>, String)>,
    add: bool,
    cwd: &str,
    path: &str,
) -> Copied {
    let Some((sources, dest_text)) = words else {
        // A variable with no known value: where it writes, or what, is
        // unknown. A source of the file's name, a directory or a wildcard
        // may have written it.
        let may_write = copy.sources.iter().any(|source| {
            source.text.contains('$')
                || basename(&source.text) == basename(path)
                || source.text.ends_with('/')
                || source.text == "."
                || source.text.contains(['*', '?', '['])
        });
        return if may_write {
            Copied::Elsewhere
        } else {
            Copied::No
        };
    };
    let dest = join(cwd, &dest_text);
    let dest_is_dir = dest_text.ends_with('/') || sources.len() > 1;
    let as_file = |source: &str| {
        (!dest_is_dir && path == dest) || under(path, &dest) == Some(basename(source))
    };
    for text in sources.iter().rev() {
        let text = text.as_str();
        if let Some(name) = text.strip_prefix("<<") {
            let name = name.trim_start_matches('-').trim_matches(['"', '\'']);
            if as_file(name) {
                return Copied::Heredoc(name.to_string());
            }
            continue;
        }
        let remote = add
            && (text.contains("://")
                || [".tar", ".tgz", ".gz", ".bz2", ".xz", ".zst"]
                    .iter()
                    .any(|ext| text.ends_with(ext)));
        if copy.from.is_some() || remote {
            if as_file(text) || under(path, &dest).is_some_and(|rest| !rest.is_empty()) {
                return Copied::Elsewhere;
            }
            continue;
        }
        let Some(rel) = clean(text) else {
            continue;
        };
        let Some(files) = files else {
            // No context to look into: whether this source writes the
            // file is unknown.
            if as_file(&rel) || under(path, &dest).is_some_and(|rest| !rest.is_empty()) {
                return Copied::Elsewhere;
            }
            continue;
        };
        if rel.contains(['*', '?', '[']) {
            // A wildcard in the last component copies each match into dest.
            let (dir, pattern) = rel.rsplit_once('/').unwrap_or(("", &rel));
            if dir.contains(['*', '?', '[']) {
                continue;
            }
            let Some(name) = under(path, &dest).filter(|rest| !rest.contains('/')) else {
                continue;
            };
            if !name.is_empty() && glob_matches(pattern, name) {
                let candidate = if dir.is_empty() {
                    name.to_string()
                } else {
                    format!("{dir}/{name}")
                };
                if files.is_file(&candidate) {
                    return Copied::Context(candidate);
                }
            }
            continue;
        }
        if files.is_dir(&rel) {
            // A directory's contents go into dest.
            if let Some(rest) = under(path, &dest).filter(|rest| !rest.is_empty()) {
                return Copied::Context(if rel.is_empty() {
                    rest.to_string()
                } else {
                    format!("{rel}/{rest}")
                });
            }
            continue;
        }
        if as_file(&rel) {
            // Absent from the context: the copy fails or copies something
            // cudalint cannot see; either way nothing to read.
            return if files.is_file(&rel) {
                Copied::Context(rel)
            } else {
                Copied::Elsewhere
            };
        }
    }
    Copied::No
}

/// A COPY source's wildcard (`*`, `?`; a `[` class is taken as unknown).
fn glob_matches(pattern: &str, name: &str) -> bool {
    use crate::wildcard::{matches, Wild};
    if pattern.contains('[') {
        return false;
    }
    matches(
        pattern.chars().map(|c| match c {
            '*' => Wild::AnyRun,
            '?' => Wild::AnyChar,
            c => Wild::Char(c),
        }),
        name,
    )
}

/// Whether a RUN after the COPY at instruction `copied_at`, up to command
/// `command` of `step`, names the file other than in a package install:
/// `sed -i '/torch/d' requirements.txt`, `echo torch >> requirements.txt`
/// (a redirection is no word of the command, so the RUN's text is
/// searched). What the file holds at install time is then not what the
/// context holds.
fn edited_after(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    step: &RunStep,
    command: usize,
    copied_at: usize,
    path: &str,
) -> bool {
    let name = basename(path);
    let edits = |run: &RunStep, upto: Option<usize>| {
        let Some(instruction) = ctx.dockerfile.instructions.get(run.instruction) else {
            return false;
        };
        let start = instruction.span.start;
        let end = upto.unwrap_or(instruction.span.end).max(start);
        let Some(text) = ctx.source.text.get(start..end) else {
            return true;
        };
        mentions(text, name).any(|offset| {
            let at = start + offset;
            !run.installs
                .iter()
                .any(|install| install.span.start <= at && at < install.span.end)
        })
    };
    let upto = step
        .installs
        .iter()
        .find(|install| install.command == command)
        .map(|install| install.span.start);
    chain(ctx, stage)
        .into_iter()
        .flat_map(|s| s.runs.iter())
        .filter(|run| run.instruction > copied_at && run.instruction < step.instruction)
        .any(|run| edits(run, None))
        || edits(step, upto)
}

/// Offsets of `name` in `text` as a whole path component (not inside
/// `dev-requirements.txt` or `requirements.txt.bak`).
fn mentions<'t>(text: &'t str, name: &'t str) -> impl Iterator<Item = usize> + 't {
    let part = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    text.match_indices(name).filter_map(move |(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        (!before.is_some_and(part) && !after.is_some_and(part)).then_some(at)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_and_nest() {
        assert_eq!(join("/", "requirements.txt"), "/requirements.txt");
        assert_eq!(join("/app", "./reqs/../r.txt"), "/app/r.txt");
        assert_eq!(join("/app", "/tmp/r.txt"), "/tmp/r.txt");
        assert_eq!(under("/app/reqs/a.txt", "/app/"), Some("reqs/a.txt"));
        assert_eq!(under("/app", "/app"), Some(""));
        assert_eq!(under("/apple", "/app"), None);
        assert!(glob_matches("requirements*.txt", "requirements-gpu.txt"));
        let found: Vec<usize> = mentions(
            "sed -i x requirements.txt; cat dev-requirements.txt requirements.txt.bak >> /app/requirements.txt",
            "requirements.txt",
        )
        .collect();
        assert_eq!(found, vec![9, 81]);
        assert!(!glob_matches("requirements*.txt", "setup.py"));
    }
}
