//! The Dockerfile syntax tree, in BuildKit's two layers.
//!
//! Layer 1 is BuildKit's `parser.Node`: a keyword, its flags, its argument
//! words, JSON-or-not, heredocs. Layer 2 is BuildKit's `instructions`
//! package: a typed [`Command`] per instruction. Every piece keeps a byte
//! [`Span`] into the original file, and comments are kept as trivia so that
//! suppressions and fixes can use them.

use crate::source::Span;

/// A parsed Dockerfile.
#[derive(Clone, Debug, Default)]
pub struct Dockerfile {
    /// Parser directives (`# syntax=`, `# escape=`, `# check=`), top of file only.
    pub directives: Vec<Directive>,
    /// The escape character in force (`\` unless `# escape=` says otherwise).
    pub escape: char,
    pub instructions: Vec<Instruction>,
    /// Every comment line that is not a directive, in file order.
    pub comments: Vec<Comment>,
    /// Things BuildKit warns about but accepts (e.g. empty continuation lines).
    pub warnings: Vec<ParseWarning>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    /// Lower-cased name: `syntax`, `escape` or `check`.
    pub name: String,
    pub value: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment {
    /// The text after `#`, trimmed.
    pub text: String,
    /// The whole comment, `#` included, without the line ending.
    pub span: Span,
    /// 1-based line of the comment.
    pub line: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseWarning {
    pub message: String,
    pub span: Span,
}

/// A located parse failure (BuildKit rejects the file).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParseError {
    pub message: String,
    pub span: Span,
}

/// One instruction (layer 1 and layer 2 together).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// The keyword as written (`from`, `Run`…), lower-cased.
    pub keyword: String,
    pub keyword_span: Span,
    /// From the keyword to the end of the instruction's last line, heredoc
    /// bodies included (no trailing line ending).
    pub span: Span,
    /// 1-based first and last line, as BuildKit's `StartLine`/`EndLine`.
    pub start_line: usize,
    pub end_line: usize,
    /// `--name[=value]` flags in order, repeats kept.
    pub flags: Vec<Flag>,
    /// The argument words exactly as BuildKit's `Node.Next` chain holds them.
    pub args: Vec<Word>,
    /// Exec (JSON array) form.
    pub json: bool,
    /// The logical line after the keyword and flags, continuations joined the
    /// way BuildKit joins them, with a map back to file offsets.
    pub rest: MappedText,
    pub heredocs: Vec<Heredoc>,
    /// BuildKit's `Original`: the logical line as one string.
    pub original: String,
    /// The typed view.
    pub command: Command,
}

/// A `--name` or `--name=value` flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flag {
    pub name: String,
    pub value: Option<String>,
    pub span: Span,
}

/// An argument word and where it came from. For words BuildKit builds from
/// several places (JSON strings with escapes, joined continuations) the span
/// covers the whole source of the word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    pub span: Span,
}

/// A here-document attached to RUN/COPY/ADD.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heredoc {
    /// The delimiter word (quotes removed).
    pub name: String,
    /// The body, as BuildKit gives it (ends with a newline; with `<<-`,
    /// leading tabs removed).
    pub content: String,
    /// False when the delimiter was quoted (no variable expansion).
    pub expand: bool,
    /// `<<-`: leading tabs stripped.
    pub chomp: bool,
    /// The body lines in the file, terminator excluded.
    pub body_span: Span,
}

/// Text built from a file by joining pieces (continuation lines), with a map
/// from each text offset back to a file offset.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MappedText {
    pub text: String,
    /// `(text_offset, file_offset)` at the start of each contiguous piece,
    /// sorted by `text_offset`. Empty text has no pieces.
    pub pieces: Vec<(usize, usize)>,
}

impl MappedText {
    /// Text taken verbatim from the file at `file_offset`.
    pub fn contiguous(text: impl Into<String>, file_offset: usize) -> Self {
        let text = text.into();
        let pieces = if text.is_empty() {
            Vec::new()
        } else {
            vec![(0, file_offset)]
        };
        MappedText { text, pieces }
    }

    /// File offset of a text offset (the end maps past the last piece).
    pub fn file_offset(&self, text_offset: usize) -> usize {
        match self.pieces.binary_search_by_key(&text_offset, |&(t, _)| t) {
            Ok(i) => self.pieces[i].1,
            Err(0) => self.pieces.first().map_or(0, |p| p.1),
            Err(i) => {
                let (t, f) = self.pieces[i - 1];
                f + (text_offset - t)
            }
        }
    }

    /// File span of a text range.
    pub fn file_span(&self, start: usize, end: usize) -> Span {
        let file_start = self.file_offset(start);
        let file_end = if end > start {
            self.file_offset(end - 1) + 1
        } else {
            file_start
        };
        Span::new(file_start, file_end.max(file_start))
    }
}

/// A shell-form or exec-form command line (RUN, CMD, ENTRYPOINT, HEALTHCHECK).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShellOrExec {
    /// Shell form: the script text (continuations joined), handed to the
    /// stage's SHELL. Heredoc bodies are in [`Instruction::heredocs`].
    Shell(MappedText),
    /// Exec form: the JSON array's strings.
    Exec(Vec<Word>),
}

/// `KEY=value` (or legacy `KEY value`) in ENV and LABEL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyValue {
    pub key: String,
    /// The value with quotes and escapes processed as BuildKit does before
    /// expansion (variables are NOT expanded here).
    pub value: String,
    pub span: Span,
}

/// One `ARG name[=default]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgDecl {
    pub name: String,
    pub default: Option<String>,
    pub span: Span,
}

/// `RUN --mount=…`, parsed into its key=value fields (csv, as BuildKit).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// `bind` (default), `cache`, `tmpfs`, `secret`, `ssh`.
    pub kind: String,
    /// `from=` (a stage name, index, image or named context).
    pub from: Option<String>,
    pub target: Option<String>,
    pub source: Option<String>,
    /// Every field as written, in order (`type`, `target`, `id`, `sharing`…).
    pub fields: Vec<(String, Option<String>)>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FromCommand {
    /// The image reference as written (not yet expanded).
    pub image: Word,
    /// `AS name`, lower-cased as BuildKit does.
    pub stage_name: Option<Word>,
    pub platform: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunCommand {
    pub command: ShellOrExec,
    pub mounts: Vec<Mount>,
    pub network: Option<String>,
    pub security: Option<String>,
}

/// COPY and ADD.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyCommand {
    /// Sources; a heredoc source is written `<<EOF` here and its body is in
    /// [`Instruction::heredocs`].
    pub sources: Vec<Word>,
    pub dest: Word,
    /// `--from=` value and the flag's span.
    pub from: Option<Word>,
    pub link: bool,
    pub chown: Option<String>,
    pub chmod: Option<String>,
    /// ADD only: `--checksum`, `--keep-git-dir`; COPY: `--parents`, `--exclude`.
    pub other_flags: Vec<Flag>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HealthcheckCommand {
    None,
    Check {
        test: ShellOrExec,
        /// `--interval`, `--timeout`, `--start-period`, `--start-interval`, `--retries`.
        options: Vec<Flag>,
    },
}

/// The typed view of an instruction (BuildKit's `instructions` package).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    From(FromCommand),
    Run(RunCommand),
    Copy(CopyCommand),
    Add(CopyCommand),
    Env(Vec<KeyValue>),
    Arg(Vec<ArgDecl>),
    Label(Vec<KeyValue>),
    Cmd(ShellOrExec),
    Entrypoint(ShellOrExec),
    Shell(Vec<Word>),
    Workdir(Word),
    User(Word),
    Expose(Vec<Word>),
    Volume(Vec<Word>),
    StopSignal(Word),
    Healthcheck(HealthcheckCommand),
    Maintainer(Word),
    /// The trigger instruction, parsed in full.
    Onbuild(Box<Instruction>),
    /// A keyword BuildKit's parser accepts but does not know (it fails later,
    /// at conversion time); kept so the file can still be linted.
    Unknown,
}
