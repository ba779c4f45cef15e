//! pip's requirements-file format (`pip install -r FILE`), read as far as it
//! decides which packages and indexes an install uses: one requirement per
//! line, `#` comments, `\` line continuations, nested `-r`/`--requirement`
//! and `-c`/`--constraint` files (relative to the file that names them,
//! to a bounded depth), and the global options a file may carry
//! (`-i`/`--index-url`, `--extra-index-url`, `--no-index`, `-f`/
//! `--find-links`, `--pre`). Written from pip's `req/req_file.py`
//! (pypa/pip@24.3 `src/pip/_internal/req/req_file.py`: `join_lines`,
//! `ignore_comments`, `break_args_options`, `handle_option_line`); uv reads
//! the same format (astral-sh/uv `crates/uv-requirements-txt`).
//!
//! What is not followed: `${VAR}` references stay as written (pip expands
//! them from the environment at install time); per-requirement options
//! (`--hash`, `--config-settings`) are dropped; `-e`/`--editable` lines,
//! URLs and local paths are kept as locations, never judged. Environment
//! markers (`; sys_platform == "linux"`) are evaluated only where they name
//! the platform (`sys_platform`, `platform_system`, `os_name`,
//! `platform_machine`) with `==`/`!=`, joined by `and`; any other marker
//! (`python_version`, `or`, parentheses) makes the requirement's fate
//! unknown ([`Requirement::marker`] is then `Marker::Unknown`).
//!
//! The module reads no files itself: [`load`] asks a caller-given reader
//! for each file, so the build context's confinement and size bounds stay
//! with the caller.

/// How deep `-r`/`-c` files may nest before the rest is left unread (pip
/// itself has no bound; a file including itself would loop).
pub const MAX_DEPTH: usize = 8;

/// One requirement line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// The requirement as written, without marker and per-requirement
    /// options: `torch>=2.1`, `jax[cuda12]==0.4.30`, `./wheels/x.whl`.
    pub text: String,
    /// 1-based line in its file (the first line of a continued one).
    pub line: usize,
    /// Byte range of the requirement text in its file.
    pub start: usize,
    pub end: usize,
    /// `-e`/`--editable`, a URL or a local path: installed from a
    /// location, not resolved from an index.
    pub is_location: bool,
    pub marker: Marker,
}

/// What an environment marker says for a Linux image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    /// No marker, or one that holds on Linux for the platform given.
    Applies,
    /// One that does not hold (`sys_platform == "darwin"`): pip skips it.
    Skipped,
    /// One this module does not evaluate (`python_version >= "3.8"`).
    Unknown,
}

/// A global option line: the option as written (`--extra-index-url`) and
/// its value, if it takes one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionLine {
    pub option: String,
    pub value: Option<String>,
    pub line: usize,
    /// Byte range of the option and its value in its file.
    pub start: usize,
    pub end: usize,
}

/// One line of a requirements file that matters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    Requirement(Requirement),
    /// `-r FILE` (`constraint: false`) or `-c FILE`.
    Include {
        path: String,
        constraint: bool,
        line: usize,
    },
    /// `--index-url`, `--extra-index-url`, `--no-index`, `--find-links`,
    /// `--pre`, and the other options pip accepts in a file.
    Option(OptionLine),
}

/// Options that apply to the whole install, with whether each takes a
/// value (pip's `SUPPORTED_OPTIONS`).
const GLOBAL_OPTIONS: &[(&str, bool)] = &[
    ("-i", true),
    ("--index-url", true),
    ("--extra-index-url", true),
    ("--no-index", false),
    ("-f", true),
    ("--find-links", true),
    ("--pre", false),
    ("--prefer-binary", false),
    ("--require-hashes", false),
    ("--trusted-host", true),
    ("--use-feature", true),
    ("--only-binary", true),
    ("--no-binary", true),
    ("-Z", false),
    ("--always-unzip", false),
];

/// The platform markers are evaluated for: Linux and the machine
/// (`x86_64`, `aarch64`).
#[derive(Clone, Copy, Debug)]
pub struct MarkerEnv<'a> {
    pub machine: &'a str,
}

impl Default for MarkerEnv<'_> {
    fn default() -> Self {
        MarkerEnv { machine: "x86_64" }
    }
}

/// The logical lines of `text`: continuations joined, comments removed,
/// each with its 1-based first line and the byte offset of each of its
/// characters in `text` (for spans).
fn logical_lines(text: &str) -> Vec<(usize, String, Vec<usize>)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut offsets: Vec<usize> = Vec::new();
    let mut first_line = 0;
    let mut at = 0;
    for (index, raw) in text.split_inclusive('\n').enumerate() {
        let line_start = at;
        at += raw.len();
        let body = raw.trim_end_matches(['\n', '\r']);
        if current.is_empty() {
            first_line = index + 1;
        }
        // pip's `join_lines`: a comment line ends a continuation.
        if !current.is_empty() && body.trim_start().starts_with('#') {
            let line = strip_comment(&current);
            offsets.truncate(line.len());
            out.push((first_line, line, std::mem::take(&mut offsets)));
            current.clear();
            continue;
        }
        let (content, continued) = match body.strip_suffix('\\') {
            Some(rest) => (rest, true),
            None => (body, false),
        };
        for (offset, ch) in content.char_indices() {
            current.push(ch);
            for _ in 0..ch.len_utf8() {
                offsets.push(line_start + offset);
            }
        }
        if !continued {
            let line = strip_comment(&current);
            offsets.truncate(line.len());
            out.push((first_line, line, std::mem::take(&mut offsets)));
            current.clear();
        }
    }
    if !current.is_empty() {
        let line = strip_comment(&current);
        offsets.truncate(line.len());
        out.push((first_line, line, offsets));
    }
    out
}

/// pip's `COMMENT_RE`: `#` at the start or after whitespace, to the end.
fn strip_comment(line: &str) -> String {
    let mut previous_space = true;
    for (at, ch) in line.char_indices() {
        if ch == '#' && previous_space {
            return line[..at].trim_end().to_string();
        }
        previous_space = ch.is_whitespace();
    }
    line.trim_end().to_string()
}

/// Every entry of one file's text, in order.
pub fn parse(text: &str, env: MarkerEnv<'_>) -> Vec<Entry> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut entries = Vec::new();
    for (line, logical, offsets) in logical_lines(text) {
        let trimmed = logical.trim_start();
        if trimmed.is_empty() {
            continue;
        }
        let lead = logical.len() - trimmed.len();
        if trimmed.starts_with('-') {
            entries.extend(option_entry(trimmed, lead, line, &offsets));
            continue;
        }
        entries.push(Entry::Requirement(requirement(
            trimmed, lead, line, &offsets, false, env,
        )));
    }
    entries
}

/// An option line: an include, an editable requirement or a global option.
fn option_entry(text: &str, lead: usize, line: usize, offsets: &[usize]) -> Option<Entry> {
    let (option, value, value_at) = split_option(text);
    let include = |constraint: bool| {
        value.map(|path| Entry::Include {
            path: path.to_string(),
            constraint,
            line,
        })
    };
    match option {
        "-r" | "--requirement" => include(false),
        "-c" | "--constraint" => include(true),
        "-e" | "--editable" => {
            let value = value?;
            let at = lead + value_at;
            let start = offsets.get(at).copied().unwrap_or_default();
            let end = offsets
                .get(at + value.len() - 1)
                .map_or(start, |last| last + 1);
            Some(Entry::Requirement(Requirement {
                text: value.to_string(),
                line,
                start,
                end,
                is_location: true,
                marker: Marker::Applies,
            }))
        }
        _ => {
            let takes_value = GLOBAL_OPTIONS
                .iter()
                .find(|(name, _)| *name == option)
                .map(|(_, takes)| *takes);
            let start = offsets.get(lead).copied().unwrap_or_default();
            let end = offsets
                .get(lead + text.trim_end().len().saturating_sub(1))
                .map_or(start, |last| last + 1);
            Some(Entry::Option(OptionLine {
                option: option.to_string(),
                value: value
                    .filter(|_| takes_value != Some(false))
                    .map(str::to_string),
                line,
                start,
                end,
            }))
        }
    }
}

/// `--opt value`, `--opt=value`, `-rfile`, `-r file`: the option, its value
/// and the value's offset in `text`.
fn split_option(text: &str) -> (&str, Option<&str>, usize) {
    let text = text.trim_end();
    if let Some(rest) = text.strip_prefix("--") {
        let name_end = rest
            .find(|c: char| c == '=' || c.is_whitespace())
            .map_or(text.len(), |at| at + 2);
        let option = &text[..name_end];
        let after = &text[name_end..];
        let value = after
            .strip_prefix('=')
            .unwrap_or(after)
            .split_whitespace()
            .next()
            .filter(|v| !v.is_empty());
        let value_at = value.map_or(text.len(), |v| {
            text.len() - after.len() + after.find(v).unwrap_or(0)
        });
        return (option, value, value_at);
    }
    // A short option: `-r file`, `-rfile`, `-r=file` is not pip's syntax
    // but is accepted by optparse as a value `=file`; keep it simple.
    let option = text.get(..2).unwrap_or(text);
    let after = text.get(2..).unwrap_or("");
    let value = after.split_whitespace().next();
    let value_at = value.map_or(text.len(), |v| 2 + after.find(v).unwrap_or(0));
    (option, value, value_at)
}

/// A requirement line: text, marker and per-requirement options split.
fn requirement(
    text: &str,
    lead: usize,
    line: usize,
    offsets: &[usize],
    editable: bool,
    env: MarkerEnv<'_>,
) -> Requirement {
    // Per-requirement options (`--hash=…`) start at ` --`/` -`.
    let without_options = match text.find(" -") {
        Some(at) => &text[..at],
        None => text,
    };
    let (spec, marker) = match without_options.split_once(';') {
        Some((spec, marker)) => (spec.trim_end(), evaluate_marker(marker, env)),
        None => (without_options.trim_end(), Marker::Applies),
    };
    let start = offsets.get(lead).copied().unwrap_or_default();
    let end = offsets
        .get(lead + spec.len().saturating_sub(1))
        .map_or(start, |last| last + 1);
    let is_location = editable
        || spec.contains("://")
        || spec.starts_with(['.', '/', '~'])
        || spec.starts_with("git+")
        || spec.contains('@')
        || spec.ends_with(".whl")
        || spec.ends_with(".tar.gz")
        || spec.ends_with(".zip");
    Requirement {
        text: spec.to_string(),
        line,
        start,
        end,
        is_location,
        marker,
    }
}

/// A marker of platform comparisons joined by `and`, evaluated for Linux on
/// `env.machine`; anything else is unknown.
fn evaluate_marker(marker: &str, env: MarkerEnv<'_>) -> Marker {
    if marker.contains('(') || marker.contains(" or ") {
        return Marker::Unknown;
    }
    let mut result = Marker::Applies;
    for clause in marker.split(" and ") {
        let clause = clause.trim();
        let Some((var, op, value)) = ["==", "!="].iter().find_map(|op| {
            let (var, value) = clause.split_once(op)?;
            Some((var.trim(), *op, value.trim().trim_matches(['"', '\''])))
        }) else {
            return Marker::Unknown;
        };
        let actual = match var {
            "sys_platform" => "linux",
            "platform_system" => "Linux",
            "os_name" => "posix",
            "platform_machine" => env.machine,
            _ => return Marker::Unknown,
        };
        if (actual == value) != (op == "==") {
            result = Marker::Skipped;
        }
    }
    result
}

/// A requirement with the file it came from (as the reader was asked for it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sourced<T> {
    pub file: String,
    pub item: T,
}

/// Everything an install's `-r`/`-c` files say, nested files included.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Loaded {
    /// Requirements to install, in order (markers that skip them on Linux
    /// already dropped).
    pub requirements: Vec<Sourced<Requirement>>,
    /// Requirements of constraint files (they bound versions, install nothing).
    pub constraints: Vec<Sourced<Requirement>>,
    /// Global options, in order.
    pub options: Vec<Sourced<OptionLine>>,
    /// Files named but not read (absent, unreadable, outside the context,
    /// nested too deep): what they hold is unknown.
    pub unread: Vec<String>,
    /// Every file read, with its text, in the order read.
    pub files: Vec<(String, String)>,
}

impl Loaded {
    /// Whether every file named was read.
    pub fn complete(&self) -> bool {
        self.unread.is_empty()
    }
}

/// The directory part of a slash path (`a/b/c.txt` → `a/b`, `c.txt` → ``).
fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// `included` relative to the file `from` (pip joins it to the including
/// file's directory unless it is absolute or a URL), `.` and `..` applied.
pub fn relative_to(from: &str, included: &str) -> String {
    if included.starts_with('/') || included.contains("://") {
        return included.to_string();
    }
    let joined = match parent(from) {
        // `/requirements.txt` lies in `/`, `requirements.txt` in `.`.
        "" if from.starts_with('/') => format!("/{included}"),
        "" => included.to_string(),
        dir => format!("{dir}/{included}"),
    };
    // `a/../b` is `b`; a `..` at the start stays (the reader refuses it).
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "." => {}
            ".." if parts
                .last()
                .is_some_and(|last| !last.is_empty() && *last != "..") =>
            {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    parts.join("/")
}

/// Read `path` and the files it includes through `read`, which returns a
/// file's text or `None` when it cannot be read. `constraint` says whether
/// `path` is itself a constraint file (its requirements, nested ones
/// included, are then constraints).
pub fn load(
    path: &str,
    constraint: bool,
    env: MarkerEnv<'_>,
    read: &mut dyn FnMut(&str) -> Option<String>,
    into: &mut Loaded,
) {
    load_at(path, constraint, env, read, into, 0);
}

fn load_at(
    path: &str,
    constraint: bool,
    env: MarkerEnv<'_>,
    read: &mut dyn FnMut(&str) -> Option<String>,
    into: &mut Loaded,
    depth: usize,
) {
    if into.files.iter().any(|(file, _)| file == path) {
        // Read already (two files include it, or it includes itself): its
        // requirements are in.
        return;
    }
    if depth >= MAX_DEPTH {
        into.unread.push(path.to_string());
        return;
    }
    let Some(text) = read(path) else {
        into.unread.push(path.to_string());
        return;
    };
    let entries = parse(&text, env);
    into.files.push((path.to_string(), text));
    for entry in entries {
        match entry {
            Entry::Requirement(requirement) if requirement.marker == Marker::Skipped => {}
            Entry::Requirement(requirement) => {
                let sourced = Sourced {
                    file: path.to_string(),
                    item: requirement,
                };
                if constraint {
                    into.constraints.push(sourced);
                } else {
                    into.requirements.push(sourced);
                }
            }
            Entry::Include {
                path: included,
                constraint: nested,
                ..
            } => {
                let target = relative_to(path, &included);
                load_at(&target, constraint || nested, env, read, into, depth + 1);
            }
            Entry::Option(option) => into.options.push(Sourced {
                file: path.to_string(),
                item: option,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requirements(text: &str) -> Vec<(String, usize, Marker)> {
        parse(text, MarkerEnv::default())
            .into_iter()
            .filter_map(|entry| match entry {
                Entry::Requirement(r) => Some((r.text, r.line, r.marker)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn lines_comments_and_continuations() {
        let text = "# pinned\ntorch>=2.1  # the model\nnumpy==1.26.4 \\\n  ; python_version >= \"3.9\"\n\ntransformers\\\n==4.40.0\nurl#fragment-is-not-a-comment\n";
        assert_eq!(
            requirements(text),
            vec![
                ("torch>=2.1".into(), 2, Marker::Applies),
                ("numpy==1.26.4".into(), 3, Marker::Unknown),
                ("transformers==4.40.0".into(), 6, Marker::Applies),
                ("url#fragment-is-not-a-comment".into(), 8, Marker::Applies),
            ]
        );
    }

    #[test]
    fn spans_point_at_the_requirement() {
        let text = "numpy\n  torch==2.3.1 --hash=sha256:abc\n";
        let entries = parse(text, MarkerEnv::default());
        let Entry::Requirement(torch) = &entries[1] else {
            panic!("{entries:?}")
        };
        assert_eq!(&text[torch.start..torch.end], "torch==2.3.1");
        assert_eq!(torch.line, 2);
    }

    #[test]
    fn options_and_includes() {
        let text = "--extra-index-url https://download.pytorch.org/whl/cu121\n-i=https://x\n--index-url=https://download.pytorch.org/whl/cu118\n--pre\n-r base.txt\n-rdev.txt\n--constraint c.txt\n-e ./src\n-f https://data.pyg.org/whl/torch-2.1.0+cu121.html\n";
        let entries = parse(text, MarkerEnv::default());
        let options: Vec<(String, Option<String>)> = entries
            .iter()
            .filter_map(|e| match e {
                Entry::Option(o) => Some((o.option.clone(), o.value.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            options,
            vec![
                (
                    "--extra-index-url".into(),
                    Some("https://download.pytorch.org/whl/cu121".into())
                ),
                ("-i".into(), Some("=https://x".into())),
                (
                    "--index-url".into(),
                    Some("https://download.pytorch.org/whl/cu118".into())
                ),
                ("--pre".into(), None),
                (
                    "-f".into(),
                    Some("https://data.pyg.org/whl/torch-2.1.0+cu121.html".into())
                ),
            ]
        );
        let includes: Vec<(String, bool)> = entries
            .iter()
            .filter_map(|e| match e {
                Entry::Include {
                    path, constraint, ..
                } => Some((path.clone(), *constraint)),
                _ => None,
            })
            .collect();
        assert_eq!(
            includes,
            vec![
                ("base.txt".into(), false),
                ("dev.txt".into(), false),
                ("c.txt".into(), true)
            ]
        );
        assert!(entries.iter().any(|e| matches!(e,
            Entry::Requirement(r) if r.text == "./src" && r.is_location)));
    }

    #[test]
    fn markers_for_linux() {
        let text = "pywin32; sys_platform == 'win32'\ntorch; platform_system == \"Linux\" and platform_machine == \"x86_64\"\ntriton; platform_machine != 'x86_64'\nx; python_version < '3.9' or sys_platform == 'linux'\n";
        assert_eq!(
            requirements(text),
            vec![
                ("pywin32".into(), 1, Marker::Skipped),
                ("torch".into(), 2, Marker::Applies),
                ("triton".into(), 3, Marker::Skipped),
                ("x".into(), 4, Marker::Unknown),
            ]
        );
        let arm = parse(
            "triton; platform_machine != 'x86_64'",
            MarkerEnv { machine: "aarch64" },
        );
        assert!(matches!(&arm[0], Entry::Requirement(r) if r.marker == Marker::Applies));
    }

    #[test]
    fn locations_are_marked() {
        let found: Vec<bool> = parse(
            "git+https://github.com/x/y\n./wheels/a.whl\nflash-attn @ https://x/f.whl\ntorch\n",
            MarkerEnv::default(),
        )
        .into_iter()
        .map(|e| matches!(e, Entry::Requirement(r) if r.is_location))
        .collect();
        assert_eq!(found, vec![true, true, true, false]);
    }

    #[test]
    fn nested_files_relative_to_their_includer_and_bounded() {
        let files = [
            (
                "reqs/prod.txt",
                "-r base.txt\n-c ../constraints.txt\nvllm==0.6.3\n",
            ),
            ("reqs/base.txt", "numpy\n-r base.txt\n"),
            ("constraints.txt", "torch==2.4.0\n"),
        ];
        let mut read = |path: &str| {
            files
                .iter()
                .find(|(name, _)| *name == path)
                .map(|(_, text)| text.to_string())
        };
        let mut loaded = Loaded::default();
        load(
            "reqs/prod.txt",
            false,
            MarkerEnv::default(),
            &mut read,
            &mut loaded,
        );
        let names: Vec<&str> = loaded
            .requirements
            .iter()
            .map(|r| r.item.text.as_str())
            .collect();
        assert_eq!(names, vec!["numpy", "vllm==0.6.3"]);
        assert_eq!(loaded.constraints[0].item.text, "torch==2.4.0");
        assert_eq!(loaded.constraints[0].file, "constraints.txt");
        // base.txt including itself is read once, not followed forever.
        assert_eq!(loaded.files.len(), 3);
        assert!(loaded.complete());

        let mut none = |_: &str| None;
        let mut missing = Loaded::default();
        load(
            "requirements.txt",
            false,
            MarkerEnv::default(),
            &mut none,
            &mut missing,
        );
        assert_eq!(missing.unread, vec!["requirements.txt"]);
    }

    #[test]
    fn includes_resolve_against_the_includer() {
        assert_eq!(relative_to("/requirements.txt", "base.txt"), "/base.txt");
        assert_eq!(
            relative_to("/app/r/prod.txt", "../base.txt"),
            "/app/base.txt"
        );
        assert_eq!(relative_to("prod.txt", "base.txt"), "base.txt");
        assert_eq!(relative_to("/app/prod.txt", "/opt/c.txt"), "/opt/c.txt");
    }

    #[test]
    fn depth_is_bounded() {
        let mut read = |path: &str| {
            let n: usize = path.trim_end_matches(".txt").parse().ok()?;
            Some(format!("-r {}.txt\n", n + 1))
        };
        let mut loaded = Loaded::default();
        load("0.txt", false, MarkerEnv::default(), &mut read, &mut loaded);
        assert_eq!(loaded.files.len(), MAX_DEPTH);
        assert_eq!(loaded.unread.len(), 1);
    }
}
