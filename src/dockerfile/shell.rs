//! RUN scripts split into simple shell commands, so rules can ask "is there
//! an `apt-get install` here, and with which words?" without re-parsing.
//!
//! This is a POSIX-shell word splitter, not an interpreter: quotes,
//! escapes, comments, operators, groups, redirections and here-documents
//! are understood; `$(…)` and backticks stay inside their word; `$VAR`
//! is replaced where the Dockerfile gives it a known value (so a rule sees
//! `torch==2.5.1`, not `torch==${TORCH_VERSION}`), and kept as written
//! otherwise; the script's own assignments count too, from the command
//! after them on ([`script_vars`](super::script_vars)). `sh -c '…'` strings
//! are split too, to a bounded depth.
//! Every word keeps the file span it came from.

use crate::dockerfile::ast::{Heredoc, Instruction, MappedText, RunCommand, ShellOrExec, Word};
use crate::dockerfile::expand::{expand_dollar_at, Layered, Vars};
use crate::dockerfile::model::{Reach, ShellCommand};
use crate::dockerfile::script_vars::{ScriptVars, ScriptWord, DECLARING_BUILTINS};
use crate::paths::basename;
use crate::source::Span;
use crate::wildcard::{self, Wild};

/// Deepest `sh -c "sh -c '…'"` nesting split.
const MAX_NESTING: usize = 4;
/// Expanded text allowed per script, beyond its own length; past it,
/// references are left as written.
const EXPANSION_BUDGET: usize = 1 << 20;

/// Programs that run their `-c` argument or stdin as a shell script.
const SHELLS: [&str; 6] = ["sh", "bash", "dash", "ash", "zsh", "ksh"];

/// Words that open or close compound commands; the command proper starts
/// after them (`if apt-get update; then …`).
const TRANSPARENT_KEYWORDS: [&str; 14] = [
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "esac",
    "time",
];
/// Compound-command headers whose own words are not a command.
const HEADER_KEYWORDS: [&str; 4] = ["for", "case", "select", "function"];

/// A `<<DELIM` redirection met while splitting, with the command it feeds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeredocUse {
    pub delimiter: String,
    /// The words of the command reading it (empty for a bare `<<EOF`).
    pub command_words: Vec<String>,
}

/// Split a shell script into simple commands.
pub fn split_script(script: &MappedText, vars: &dyn Vars) -> Vec<ShellCommand> {
    split_script_with_heredocs(script, vars).0
}

/// Split a script, also reporting the here-documents its commands read.
pub fn split_script_with_heredocs(
    script: &MappedText,
    vars: &dyn Vars,
) -> (Vec<ShellCommand>, Vec<HeredocUse>) {
    let mut splitter = Splitter {
        vars,
        commands: Vec::new(),
        heredocs: Vec::new(),
        budget: EXPANSION_BUDGET.saturating_add(script.text.len()),
        script_vars: ScriptVars::default(),
    };
    splitter.split(script, 0, Reach::Runs);
    (splitter.commands, splitter.heredocs)
}

/// The commands of one RUN: its shell-form script (or exec-form words) and
/// every here-document body that is run as a shell script.
pub fn split_run(
    instruction: &Instruction,
    run: &RunCommand,
    vars: &dyn Vars,
) -> Vec<ShellCommand> {
    match &run.command {
        ShellOrExec::Exec(words) => {
            let mut splitter = Splitter {
                vars,
                commands: Vec::new(),
                heredocs: Vec::new(),
                budget: EXPANSION_BUDGET,
                script_vars: ScriptVars::default(),
            };
            let parts: Vec<Part> = words
                .iter()
                .map(|w| Part {
                    // The string's text starts after the JSON opening quote.
                    pieces: MappedText::contiguous(w.text.clone(), w.span.start + 1).pieces,
                    word: w.clone(),
                    resolved: true,
                })
                .collect();
            splitter.emit(parts, Vec::new(), 0, Reach::Runs);
            splitter.commands
        }
        ShellOrExec::Shell(script) => {
            let (mut commands, uses) = split_script_with_heredocs(script, vars);
            for (k, heredoc_use) in uses.iter().enumerate() {
                let heredoc = instruction
                    .heredocs
                    .get(k)
                    .filter(|h| h.name == heredoc_use.delimiter)
                    .or_else(|| {
                        instruction
                            .heredocs
                            .iter()
                            .find(|h| h.name == heredoc_use.delimiter)
                    });
                if let Some(heredoc) = heredoc {
                    if heredoc_is_script(heredoc, &heredoc_use.command_words) {
                        let body = MappedText::contiguous(
                            heredoc.content.clone(),
                            heredoc.body_span.start,
                        );
                        commands.extend(split_script(&body, vars));
                    }
                }
            }
            commands
        }
    }
}

/// Whether the shell runs `heredoc`'s body as a script: `RUN <<EOF` alone
/// (unless a shebang names another interpreter), or a shell reading its
/// stdin (`RUN bash -e <<EOF`), but not `python3 <<EOF` or `cat <<EOF`.
fn heredoc_is_script(heredoc: &Heredoc, command_words: &[String]) -> bool {
    let Some(first) = command_words.first() else {
        return match heredoc
            .content
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("#!"))
        {
            Some(shebang) => shebang_is_shell(shebang),
            None => true,
        };
    };
    if !is_shell(first) {
        return false;
    }
    let mut rest = command_words.iter().skip(1);
    while let Some(word) = rest.next() {
        if word == "-s" || word == "--" {
            continue;
        }
        match word.strip_prefix('-').or_else(|| word.strip_prefix('+')) {
            Some(letters) if !letters.is_empty() && !letters.starts_with('-') => {
                if letters.contains('c') {
                    return false;
                }
                if letters.contains('o') {
                    rest.next();
                }
            }
            Some(_) => {}
            // A script file argument: the heredoc is that script's stdin.
            None => return false,
        }
    }
    true
}

fn shebang_is_shell(shebang: &str) -> bool {
    let mut parts = shebang.split_whitespace();
    let Some(program) = parts.next() else {
        return true;
    };
    let program = if basename(program) == "env" {
        match parts.find(|p| !p.starts_with('-')) {
            Some(p) => p,
            None => return false,
        }
    } else {
        program
    };
    is_shell(program)
}

fn is_shell(word: &str) -> bool {
    SHELLS.contains(&basename(word))
}

/// Index of the program word after wrappers such as `sudo -E`, `env X=1`,
/// `exec`, `nohup` or `command`.
pub fn command_start(words: &[Word]) -> usize {
    let mut i = 0;
    while let Some(word) = words.get(i) {
        let value_options: &[&str] = match basename(&word.text) {
            "sudo" => &["-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U"],
            "env" => &["-u", "-C", "-S"],
            "nice" => &["-n"],
            "exec" | "nohup" | "command" | "stdbuf" | "time" => &[],
            _ => return i,
        };
        let env = basename(&word.text) == "env";
        i += 1;
        while let Some(next) = words.get(i) {
            let text = next.text.as_str();
            if text == "--" {
                i += 1;
                break;
            }
            if value_options.contains(&text) {
                i += 2;
            } else if text.starts_with('-') || (env && text.contains('=')) {
                i += 1;
            } else {
                break;
            }
        }
    }
    i
}

/// The first allocation of a word's text: most words of a RUN (packages,
/// paths, options) fit.
const WORD_CAPACITY: usize = 32;

/// One word under construction, with the file offsets of its characters.
#[derive(Default)]
struct WordBuf {
    text: String,
    /// `(text_offset, file_offset)` pieces, as in [`MappedText`].
    pieces: Vec<(usize, usize)>,
    span: Option<Span>,
    /// Something was quoted (so even `""` is a word, and keywords are not).
    quoted: bool,
    /// Only unquoted digits so far (a redirection's fd number).
    digits_only: bool,
    /// Only unquoted name characters so far (an assignment's name).
    name_only: bool,
    /// Byte offset of the `=` of a `NAME=value` assignment.
    assign_eq: Option<usize>,
    /// Some part was kept as written: a command substitution, a variable
    /// without a known value.
    unresolved: bool,
}

impl WordBuf {
    fn new() -> Self {
        WordBuf {
            digits_only: true,
            name_only: true,
            ..Default::default()
        }
    }

    fn touch(&mut self, span: Span) {
        self.span = Some(self.span.map_or(span, |s| s.cover(span)));
    }

    /// Append `c`, which came from `file` offset.
    fn push(&mut self, c: char, file: usize, quoted: bool) {
        let contiguous = self
            .pieces
            .last()
            .is_some_and(|&(t, f)| f + (self.text.len() - t) == file);
        if !contiguous {
            self.pieces.push((self.text.len(), file));
        }
        if quoted {
            self.quoted = true;
            self.digits_only = false;
            self.name_only = false;
        } else {
            if !c.is_ascii_digit() {
                self.digits_only = false;
            }
            if c == '=' && self.name_only && !self.text.is_empty() && self.assign_eq.is_none() {
                self.assign_eq = Some(self.text.len());
            }
            let name_char = c.is_ascii_alphanumeric() || c == '_';
            if !name_char || (self.text.is_empty() && c.is_ascii_digit()) {
                self.name_only = false;
            }
        }
        if self.text.capacity() == 0 {
            // One allocation for most words rather than one per doubling.
            self.text.reserve(WORD_CAPACITY);
        }
        self.text.push(c);
        self.touch(Span::new(file, file + c.len_utf8()));
    }

    fn is_empty(&self) -> bool {
        self.text.is_empty() && !self.quoted
    }
}

/// A finished word and the map of its text back to the file.
struct Part {
    word: Word,
    /// Where the word's text lies in the file ([`MappedText::pieces`]),
    /// for a `sh -c` script split in turn.
    pieces: Vec<(usize, usize)>,
    /// Nothing in it was kept unexpanded.
    resolved: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Redirect {
    Plain,
    /// `<<` or `<<-` (`strip_tabs`).
    Heredoc {
        strip_tabs: bool,
    },
}

#[derive(Default)]
struct CommandBuf {
    words: Vec<Part>,
    assignments: Vec<(String, String)>,
    /// Per assignment: its value has nothing left unexpanded.
    assignments_resolved: Vec<bool>,
    /// The words of a `for` header, after `for`.
    for_header: Option<Vec<(String, bool)>>,
    heredocs: Vec<String>,
    /// Inside a `for …`/`case …` header, up to the next separator.
    skipping: bool,
    /// Preceded by `!`: its status is inverted.
    negated: bool,
}

/// An `if` or `case` the splitter is inside, and what is known of which of
/// its parts the build takes.
struct Branch {
    is_case: bool,
    /// Whether the commands of the current part run (as far as this
    /// compound alone decides).
    part: Reach,
    /// Between `if`/`elif` and `then`.
    in_condition: bool,
    /// Commands of the current condition so far.
    condition_commands: usize,
    /// The value of the condition's single command, when it is a test
    /// whose operands are known.
    condition: Option<bool>,
    /// Whether an earlier part of this `if` was taken (`None`: not known).
    earlier_taken: Option<bool>,
}

impl Branch {
    fn new_if() -> Self {
        Branch {
            is_case: false,
            part: Reach::Runs,
            in_condition: true,
            condition_commands: 0,
            condition: None,
            earlier_taken: Some(false),
        }
    }

    fn new_case() -> Self {
        Branch {
            is_case: true,
            part: Reach::Unknown,
            in_condition: false,
            condition_commands: 0,
            condition: None,
            earlier_taken: None,
        }
    }

    /// `then`: the body runs when no earlier part was taken and the
    /// condition holds.
    fn enter_body(&mut self) {
        let condition = if self.condition_commands == 1 {
            self.condition
        } else {
            None
        };
        self.part = match (self.earlier_taken, condition) {
            (Some(true), _) | (_, Some(false)) => Reach::Skipped,
            (Some(false), Some(true)) => Reach::Runs,
            _ => Reach::Unknown,
        };
        self.earlier_taken = match (self.earlier_taken, condition) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        };
        self.in_condition = false;
    }

    /// `elif` or `else`: what follows runs only if no earlier part was taken.
    fn enter_alternative(&mut self, condition: bool) {
        self.part = match self.earlier_taken {
            Some(true) => Reach::Skipped,
            Some(false) => Reach::Runs,
            None => Reach::Unknown,
        };
        self.in_condition = condition;
        self.condition_commands = 0;
        self.condition = None;
    }
}

/// The value of a `[ … ]`, `[[ … ]]` or `test …` command whose operands are
/// known (no `$` left after expansion): `-n`, `-z`, a lone string, `=`,
/// `==`, `!=` (in `[[ … ]]` the right side is a pattern: `*` and `?`), and
/// `!`. `None` for anything else.
fn test_value(words: &[&str]) -> Option<bool> {
    let (operands, patterns) = match words {
        ["[", inner @ .., "]"] | ["test", inner @ ..] => (inner, false),
        ["[[", inner @ .., "]]"] => (inner, true),
        _ => return None,
    };
    if operands.iter().any(|w| w.contains('$') || w.contains('`')) {
        return None;
    }
    let equal = |a: &str, b: &str| {
        if patterns {
            shell_pattern_matches(b, a)
        } else {
            Some(a == b)
        }
    };
    fn value(operands: &[&str], equal: &dyn Fn(&str, &str) -> Option<bool>) -> Option<bool> {
        match operands {
            [] => Some(false),
            ["!", rest @ ..] => value(rest, equal).map(|v| !v),
            ["-n", s] => Some(!s.is_empty()),
            ["-z", s] => Some(s.is_empty()),
            [s] => Some(!s.is_empty()),
            [a, "=" | "==", b] => equal(a, b),
            [a, "!=", b] => equal(a, b).map(|v| !v),
            _ => None,
        }
    }
    value(operands, &equal)
}

/// Whether `text` matches the shell pattern `pattern` (`*` any run, `?` one
/// character); `None` for bracket expressions and escapes, not handled here.
fn shell_pattern_matches(pattern: &str, text: &str) -> Option<bool> {
    if pattern.contains(['[', '\\']) {
        return None;
    }
    let tokens = pattern.chars().map(|c| match c {
        '*' => Wild::AnyRun,
        '?' => Wild::AnyChar,
        c => Wild::Char(c),
    });
    Some(wildcard::matches(tokens, text))
}

struct Splitter<'a> {
    vars: &'a dyn Vars,
    commands: Vec<ShellCommand>,
    heredocs: Vec<HeredocUse>,
    budget: usize,
    /// What the script has assigned so far, shadowing `vars`.
    script_vars: ScriptVars,
}

/// Per-script state of the character loop.
struct Cursor<'s> {
    script: &'s MappedText,
    pos: usize,
    word: WordBuf,
    command: CommandBuf,
    redirect: Option<Redirect>,
    /// Here-documents whose bodies start after the next newline.
    pending_bodies: Vec<(String, bool)>,
    /// The `if`s and `case`s open at this point, outermost first.
    branches: Vec<Branch>,
    /// The reach of the command whose `sh -c` string this script is.
    base: Reach,
    /// The command in progress follows `||`: it runs only if the one
    /// before failed.
    after_or: bool,
}

impl Cursor<'_> {
    /// Whether a command ending here runs.
    fn reach(&self) -> Reach {
        self.branches
            .iter()
            .fold(self.base, |reach, branch| reach.within(branch.part))
    }

    /// A compound-command keyword at the start of a command.
    fn keyword(&mut self, keyword: &str) {
        match keyword {
            "if" => self.branches.push(Branch::new_if()),
            "then" => {
                if let Some(branch) = self.branches.last_mut().filter(|b| b.in_condition) {
                    branch.enter_body();
                }
            }
            "elif" | "else" => {
                if let Some(branch) = self.branches.last_mut().filter(|b| !b.is_case) {
                    branch.enter_alternative(keyword == "elif");
                }
            }
            "fi" if self.branches.last().is_some_and(|b| !b.is_case) => {
                self.branches.pop();
            }
            "case" => self.branches.push(Branch::new_case()),
            "esac" if self.branches.last().is_some_and(|b| b.is_case) => {
                self.branches.pop();
            }
            "!" => self.command.negated = true,
            _ => {}
        }
    }
}

impl Cursor<'_> {
    fn text(&self) -> &str {
        &self.script.text
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.text()
            .get(self.pos + offset..)
            .and_then(|s| s.chars().next())
    }

    fn file(&self, pos: usize) -> usize {
        self.script.file_offset(pos)
    }

    /// Push the source character at `pos`.
    fn push_source(&mut self, pos: usize, c: char, quoted: bool) {
        let file = self.file(pos);
        self.word.push(c, file, quoted);
    }

    /// Push the source text `start..end` as written.
    fn push_raw(&mut self, start: usize, end: usize, quoted: bool) {
        let Some(raw) = self.script.text.get(start..end) else {
            return;
        };
        for (i, c) in raw.char_indices() {
            let file = self.script.file_offset(start + i);
            self.word.push(c, file, quoted);
        }
    }
}

impl Splitter<'_> {
    fn split(&mut self, script: &MappedText, depth: usize, base: Reach) {
        let mut cur = Cursor {
            script,
            pos: 0,
            word: WordBuf::new(),
            command: CommandBuf::default(),
            redirect: None,
            pending_bodies: Vec::new(),
            branches: Vec::new(),
            base,
            after_or: false,
        };
        while let Some(c) = cur.peek_at(0) {
            let start = cur.pos;
            match c {
                ' ' | '\t' | '\r' => {
                    self.finish_word(&mut cur);
                    cur.pos += 1;
                }
                '\n' => {
                    self.end_command(&mut cur, depth);
                    cur.pos += 1;
                    skip_heredoc_bodies(&mut cur);
                }
                '#' if cur.word.is_empty() => {
                    let rest = cur.text().get(start..).unwrap_or("");
                    cur.pos += rest.find('\n').unwrap_or(rest.len());
                }
                '&' if cur.peek_at(1) == Some('>') => {
                    self.finish_word(&mut cur);
                    cur.pos += 2;
                    if cur.peek_at(0) == Some('>') {
                        cur.pos += 1;
                    }
                    cur.redirect = Some(Redirect::Plain);
                }
                ';' | '&' | '|' | '(' | ')' => {
                    self.end_command(&mut cur, depth);
                    cur.pos += 1;
                    let next = cur.peek_at(0);
                    cur.after_or = (c, next) == ('|', Some('|'));
                    if let Some(next) = next {
                        let doubled = matches!(
                            (c, next),
                            ('&', '&') | ('|', '|') | (';', ';') | ('|', '&') | (';', '&')
                        );
                        if doubled {
                            cur.pos += 1;
                        }
                    }
                }
                '<' | '>' => {
                    if !cur.word.is_empty() && cur.word.digits_only {
                        cur.word = WordBuf::new();
                    } else {
                        self.finish_word(&mut cur);
                    }
                    cur.redirect = Some(read_redirect(&mut cur, c));
                }
                '\\' => {
                    match cur.peek_at(1) {
                        Some('\n') => {}
                        Some(next) => cur.push_source(start + 1, next, true),
                        None => cur.push_source(start, '\\', false),
                    }
                    cur.pos += 1 + cur.peek_at(1).map_or(0, char::len_utf8);
                }
                '\'' => {
                    let rest = cur.text().get(start + 1..).unwrap_or("");
                    let len = rest.find('\'').unwrap_or(rest.len());
                    cur.word.quoted = true;
                    cur.push_raw(start + 1, start + 1 + len, true);
                    cur.pos = (start + 2 + len).min(cur.text().len());
                    let quotes = Span::new(cur.file(start), cur.file(cur.pos - 1) + 1);
                    cur.word.touch(quotes);
                }
                '"' => self.double_quoted(&mut cur),
                '`' => {
                    let end = backtick_end(cur.text(), start);
                    cur.push_raw(start, end, false);
                    cur.word.unresolved = true;
                    cur.pos = end;
                }
                '$' => self.dollar(&mut cur, false),
                _ => {
                    cur.push_source(start, c, false);
                    cur.pos += c.len_utf8();
                }
            }
        }
        self.end_command(&mut cur, depth);
    }

    fn double_quoted(&mut self, cur: &mut Cursor<'_>) {
        let open = cur.pos;
        cur.word.quoted = true;
        cur.word
            .touch(Span::new(cur.file(open), cur.file(open) + 1));
        cur.pos += 1;
        while let Some(c) = cur.peek_at(0) {
            let at = cur.pos;
            match c {
                '"' => {
                    cur.word.touch(Span::new(cur.file(at), cur.file(at) + 1));
                    cur.pos += 1;
                    return;
                }
                '\\' => {
                    match cur.peek_at(1) {
                        Some('\n') => {}
                        Some(next @ ('$' | '`' | '"' | '\\')) => {
                            cur.push_source(at + 1, next, true)
                        }
                        _ => cur.push_source(at, '\\', true),
                    }
                    let skip = match cur.peek_at(1) {
                        Some(next @ ('\n' | '$' | '`' | '"' | '\\')) => next.len_utf8(),
                        _ => 0,
                    };
                    cur.pos += 1 + skip;
                }
                '$' => self.dollar(cur, true),
                '`' => {
                    let end = backtick_end(cur.text(), at);
                    cur.push_raw(at, end, true);
                    cur.word.unresolved = true;
                    cur.pos = end;
                }
                _ => {
                    cur.push_source(at, c, true);
                    cur.pos += c.len_utf8();
                }
            }
        }
    }

    /// A `$` outside single quotes.
    fn dollar(&mut self, cur: &mut Cursor<'_>, quoted: bool) {
        let start = cur.pos;
        match cur.peek_at(1) {
            Some('(') => {
                let end = paren_end(cur.text(), start + 2);
                cur.push_raw(start, end, quoted);
                cur.word.unresolved = true;
                cur.pos = end;
            }
            Some('\'') if !quoted => {
                let end = ansi_c_end(cur.text(), start + 2);
                cur.word.quoted = true;
                cur.push_raw(start + 2, end.saturating_sub(1).max(start + 2), true);
                cur.pos = end;
            }
            Some(c) if c == '{' || c.is_alphanumeric() || c == '_' || "@*#?-$!".contains(c) => {
                let scope = Layered(&self.script_vars, self.vars);
                let expansion = expand_dollar_at(cur.text(), start, &scope, '\\');
                let end = expansion.end.max(start + 1);
                let value = expansion.value.filter(|v| v.len() <= self.budget);
                match value {
                    Some(value) => {
                        self.budget -= value.len();
                        let span = Span::new(cur.file(start), cur.file(end.saturating_sub(1)) + 1);
                        // A loop variable's list: one word per item, quoted or not.
                        let reference = cur.text().get(start + 1..end).unwrap_or_default();
                        let name = reference
                            .strip_prefix('{')
                            .and_then(|r| r.strip_suffix('}'))
                            .unwrap_or(reference);
                        let quoted = quoted && !self.script_vars.is_list(name);
                        self.push_value(cur, &value, span, quoted);
                    }
                    None => {
                        cur.push_raw(start, end, quoted);
                        cur.word.unresolved = true;
                    }
                }
                cur.pos = end;
            }
            _ => {
                cur.push_source(start, '$', quoted);
                cur.pos += 1;
            }
        }
    }

    /// Insert an expanded value; unquoted values are split into fields,
    /// except in the value of an assignment (`A=$B` keeps B whole).
    fn push_value(&mut self, cur: &mut Cursor<'_>, value: &str, span: Span, quoted: bool) {
        cur.word.touch(span);
        if quoted {
            cur.word.quoted = true;
        }
        let in_assignment = cur.word.assign_eq.is_some()
            && cur
                .command
                .words
                .first()
                .is_none_or(|program| DECLARING_BUILTINS.contains(&program.word.text.as_str()));
        let split = !quoted && !in_assignment;
        for c in value.chars() {
            if split && c.is_whitespace() {
                self.finish_word(cur);
            } else {
                cur.word.push(c, span.start, true);
                cur.word.touch(span);
            }
        }
    }

    /// Close the word in progress, if any.
    fn finish_word(&mut self, cur: &mut Cursor<'_>) {
        let word = std::mem::replace(&mut cur.word, WordBuf::new());
        if word.is_empty() {
            return;
        }
        let span = word.span.unwrap_or_default();
        if let Some(redirect) = cur.redirect.take() {
            if let Redirect::Heredoc { strip_tabs } = redirect {
                cur.command.heredocs.push(word.text.clone());
                cur.pending_bodies.push((word.text, strip_tabs));
            }
            return;
        }
        if cur.command.skipping {
            if let Some(header) = &mut cur.command.for_header {
                header.push((word.text, !word.unresolved));
            }
            return;
        }
        if cur.command.words.is_empty() && !word.quoted {
            if TRANSPARENT_KEYWORDS.contains(&word.text.as_str()) {
                cur.keyword(&word.text);
                return;
            }
            if HEADER_KEYWORDS.contains(&word.text.as_str()) {
                cur.keyword(&word.text);
                cur.command.skipping = true;
                if word.text == "for" {
                    cur.command.for_header = Some(Vec::new());
                }
                return;
            }
        }
        if cur.command.words.is_empty() {
            if let Some(eq) = word.assign_eq {
                let name = word.text.get(..eq).unwrap_or("").to_string();
                let value = word.text.get(eq + 1..).unwrap_or("").to_string();
                cur.command.assignments.push((name, value));
                cur.command.assignments_resolved.push(!word.unresolved);
                return;
            }
        }
        cur.command.words.push(Part {
            word: Word {
                text: word.text,
                span,
            },
            pieces: word.pieces,
            resolved: !word.unresolved,
        });
    }

    /// Close the simple command in progress at a separator.
    fn end_command(&mut self, cur: &mut Cursor<'_>, depth: usize) {
        self.finish_word(cur);
        cur.redirect = None;
        let mut command = std::mem::take(&mut cur.command);
        // Copied only where a here-document or a condition needs them.
        let words =
            || -> Vec<String> { command.words.iter().map(|p| p.word.text.clone()).collect() };
        for delimiter in std::mem::take(&mut command.heredocs) {
            self.heredocs.push(HeredocUse {
                delimiter,
                command_words: words(),
            });
        }
        let reach = cur.reach();
        let assigns = if cur.after_or {
            Reach::Unknown.within(reach)
        } else {
            reach
        };
        self.record_assignments(&command, assigns);
        if !command.words.is_empty() || !command.assignments.is_empty() {
            cur.after_or = false;
        }
        if !command.words.is_empty() {
            if let Some(branch) = cur.branches.last_mut().filter(|b| b.in_condition) {
                let texts: Vec<&str> = command.words.iter().map(|p| p.word.text.as_str()).collect();
                branch.condition_commands += 1;
                branch.condition = test_value(&texts).map(|v| v != command.negated);
            }
        }
        self.emit(command.words, command.assignments, depth, reach);
    }

    /// What a finished command assigns, for the commands after it.
    fn record_assignments(&mut self, command: &CommandBuf, reach: Reach) {
        if let Some(header) = &command.for_header {
            let words: Vec<ScriptWord<'_>> = header
                .iter()
                .map(|(text, resolved)| ScriptWord {
                    text,
                    resolved: *resolved,
                })
                .collect();
            self.script_vars.for_header(&words, reach);
            return;
        }
        let words: Vec<ScriptWord<'_>> = command
            .words
            .iter()
            .map(|part| ScriptWord {
                text: &part.word.text,
                resolved: part.resolved,
            })
            .collect();
        let assignments: Vec<(String, ScriptWord<'_>)> = command
            .assignments
            .iter()
            .zip(&command.assignments_resolved)
            .map(|((name, value), resolved)| {
                let word = ScriptWord {
                    text: value,
                    resolved: *resolved,
                };
                (name.clone(), word)
            })
            .collect();
        self.script_vars.command(&words, &assignments, reach);
    }

    /// Record a command and split its `sh -c` script, if it has one.
    fn emit(
        &mut self,
        words: Vec<Part>,
        assignments: Vec<(String, String)>,
        depth: usize,
        reach: Reach,
    ) {
        let (Some(first), Some(last)) = (words.first(), words.last()) else {
            return;
        };
        let span = first.word.span.cover(last.word.span);
        let (words, mut pieces): (Vec<Word>, Vec<_>) = words
            .into_iter()
            .map(|part| (part.word, part.pieces))
            .unzip();
        let start = command_start(&words);
        let nested = shell_c_script(&words, start).and_then(|at| {
            Some(MappedText {
                text: words.get(at)?.text.clone(),
                pieces: std::mem::take(pieces.get_mut(at)?),
            })
        });
        self.commands.push(ShellCommand {
            words,
            assignments,
            program: start,
            span,
            reach,
        });
        if let Some(nested) = nested {
            if depth < MAX_NESTING {
                let outer_heredocs = std::mem::take(&mut self.heredocs);
                // The child shell's assignments end with it.
                let outer_vars = self.script_vars.clone();
                self.split(&nested, depth + 1, reach);
                self.script_vars = outer_vars;
                // Here-documents inside `-c` strings have their bodies in
                // the string, not in the Dockerfile.
                self.heredocs = outer_heredocs;
            }
        }
    }
}

/// Where the script argument of `sh -c SCRIPT`, `bash -euxo pipefail -c
/// SCRIPT` is among `words`.
fn shell_c_script(words: &[Word], start: usize) -> Option<usize> {
    let program = words.get(start)?;
    if !is_shell(&program.text) {
        return None;
    }
    let mut has_c = false;
    let mut i = start + 1;
    while let Some(word) = words.get(i) {
        let text = word.text.as_str();
        match text.strip_prefix('-').or_else(|| text.strip_prefix('+')) {
            Some("-") => {
                i += 1;
                break;
            }
            Some(letters) if !letters.is_empty() && !letters.starts_with('-') => {
                has_c |= text.starts_with('-') && letters.contains('c');
                if letters.contains('o') {
                    i += 1;
                }
            }
            Some(long) if long.starts_with('-') => {}
            _ => break,
        }
        i += 1;
    }
    (has_c && i < words.len()).then_some(i)
}

/// Read a redirection operator starting with `first` (`<` or `>`).
fn read_redirect(cur: &mut Cursor<'_>, first: char) -> Redirect {
    cur.pos += 1;
    let next = cur.peek_at(0);
    if first == '<' && next == Some('<') {
        cur.pos += 1;
        match cur.peek_at(0) {
            Some('<') => {
                cur.pos += 1;
                return Redirect::Plain;
            }
            Some('-') => {
                cur.pos += 1;
                return Redirect::Heredoc { strip_tabs: true };
            }
            _ => return Redirect::Heredoc { strip_tabs: false },
        }
    }
    if matches!(next, Some('>' | '&' | '|')) || (first == '<' && next == Some('>')) {
        cur.pos += 1;
    }
    Redirect::Plain
}

/// After a newline, skip the bodies of here-documents opened on that line.
fn skip_heredoc_bodies(cur: &mut Cursor<'_>) {
    for (delimiter, strip_tabs) in std::mem::take(&mut cur.pending_bodies) {
        while cur.pos < cur.text().len() {
            let rest = cur.text().get(cur.pos..).unwrap_or("");
            let line_len = rest.find('\n').unwrap_or(rest.len());
            let line = rest.get(..line_len).unwrap_or("").trim_end_matches('\r');
            let line = if strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line
            };
            let done = line == delimiter;
            cur.pos = (cur.pos + line_len + 1).min(cur.text().len());
            if done {
                break;
            }
        }
    }
}

/// End (exclusive) of the `` `…` `` starting at `start`.
fn backtick_end(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    let mut i = start + 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 2,
            b'`' => return i + 1,
            _ => i += 1,
        }
    }
    text.len()
}

/// End (exclusive) of a `$(…)` body starting at `start`, just after `(`.
fn paren_end(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    let mut depth = 1usize;
    let mut i = start;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 1,
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b'\'' => {
                i = text
                    .get(i + 1..)
                    .and_then(|r| r.find('\''))
                    .map_or(text.len(), |n| i + 1 + n);
            }
            b'"' => {
                i += 1;
                while let Some(&q) = bytes.get(i) {
                    match q {
                        b'\\' => i += 1,
                        b'"' => break,
                        _ => {}
                    }
                    i += 1;
                }
            }
            b'`' => i = backtick_end(text, i).saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    text.len()
}

/// End (exclusive, past the closing quote) of a `$'…'` body at `start`.
fn ansi_c_end(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    let mut i = start;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 2,
            b'\'' => return i + 1,
            _ => i += 1,
        }
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dockerfile::expand::VarScope;

    fn split(text: &str) -> Vec<Vec<String>> {
        split_with(text, &VarScope::new())
    }

    fn split_with(text: &str, vars: &VarScope) -> Vec<Vec<String>> {
        split_script(&MappedText::contiguous(text, 100), vars)
            .into_iter()
            .map(|c| c.words.into_iter().map(|w| w.text).collect())
            .collect()
    }

    /// Each command's first word and reach.
    fn reaches(text: &str, vars: &VarScope) -> Vec<(String, Reach)> {
        split_script(&MappedText::contiguous(text, 0), vars)
            .into_iter()
            .map(|c| (c.words[0].text.clone(), c.reach))
            .collect()
    }

    #[test]
    fn branches_are_decided_from_known_values() {
        let mut vars = VarScope::new();
        vars.set("IMAGE", Some("python:3-slim".into()));
        vars.set("EMPTY", Some(String::new()));
        vars.set("LATER", None);
        let script = "a; if [ \"$IMAGE\" = \"python:3-slim\" ]; then b; elif [ -n \"$EMPTY\" ]; then c; else d; fi; \
            if [ -z \"$EMPTY\" ]; then e; else f; fi; \
            if [ -n \"$LATER\" ]; then g; else h; fi; \
            if ! [ -n \"$EMPTY\" ]; then i; fi; \
            if [[ $IMAGE == python:* ]]; then j; fi; \
            if apt-get update; then k; fi; \
            case \"$IMAGE\" in x) l ;; esac; \
            if [ -z \"$EMPTY\" ]; then if [ -n \"$EMPTY\" ]; then m; fi; n; fi; o";
        use Reach::*;
        let got: Vec<(String, Reach)> = reaches(script, &vars)
            .into_iter()
            .filter(|(w, _)| w.len() == 1 && w != "[")
            .collect();
        let want = [
            ("a", Runs),
            ("b", Runs),
            ("c", Skipped),
            ("d", Skipped),
            ("e", Runs),
            ("f", Skipped),
            ("g", Unknown),
            ("h", Unknown),
            ("i", Runs),
            ("j", Runs),
            ("k", Unknown),
            ("l", Unknown),
            ("m", Skipped),
            ("n", Runs),
            ("o", Runs),
        ];
        let want: Vec<(String, Reach)> = want.iter().map(|(w, r)| (w.to_string(), *r)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_nested_shell_script_inherits_its_commands_reach() {
        let mut vars = VarScope::new();
        vars.set("MODE", Some("cpu".into()));
        let got = reaches(
            "if [ \"$MODE\" = gpu ]; then bash -c 'pip install x'; fi",
            &vars,
        );
        let body: Vec<_> = got.iter().filter(|(w, _)| w != "[").collect();
        assert_eq!(body.len(), 2, "{got:?}");
        assert!(body.iter().all(|(_, r)| *r == Reach::Skipped), "{got:?}");
    }

    #[test]
    fn operators_separate_commands() {
        assert_eq!(
            split("apt-get update && apt-get install -y curl || true; echo a | tee b & wait"),
            vec![
                vec!["apt-get", "update"],
                vec!["apt-get", "install", "-y", "curl"],
                vec!["true"],
                vec!["echo", "a"],
                vec!["tee", "b"],
                vec!["wait"],
            ]
        );
    }

    #[test]
    fn quotes_escapes_and_substitutions_stay_in_words() {
        assert_eq!(
            split(r#"echo "a b" 'c $d' e\ f "$(uname -m)" `date` x$(echo ")")y"#),
            vec![vec![
                "echo",
                "a b",
                "c $d",
                "e f",
                "$(uname -m)",
                "`date`",
                "x$(echo \")\")y"
            ]]
        );
    }

    #[test]
    fn comments_groups_and_keywords() {
        let script = "# setup\nif [ -f x ]; then apt-get install -y a; fi # trailing\n( cd /x && make ) ; { pip install b; }";
        assert_eq!(
            split(script),
            vec![
                vec!["[", "-f", "x", "]"],
                vec!["apt-get", "install", "-y", "a"],
                vec!["cd", "/x"],
                vec!["make"],
                vec!["pip", "install", "b"],
            ]
        );
        assert_eq!(
            split("for p in a b; do pip install $p; done"),
            vec![vec!["pip", "install", "a", "b"]]
        );
    }

    #[test]
    fn the_scripts_own_assignments_are_read_in_order() {
        // docker-stacks' `buildDeps`, a command in a variable, `export`,
        // `${VAR}`, a loop quoted or not, and values kept whole.
        assert_eq!(
            split("buildDeps='torch torchvision' && pip install $buildDeps"),
            vec![vec!["pip", "install", "torch", "torchvision"]]
        );
        assert_eq!(
            split(
                "PIP_INSTALL=\"python -m pip install\"; export V=2.1; $PIP_INSTALL \"torch==${V}\""
            ),
            vec![
                vec!["export", "V=2.1"],
                vec!["python", "-m", "pip", "install", "torch==2.1"]
            ]
        );
        assert_eq!(
            split("for p in a 'b c'; do pip install \"$p\"; done"),
            vec![vec!["pip", "install", "a", "b", "c"]]
        );
        assert_eq!(
            split("A='x y' && B=$A && echo $B"),
            vec![vec!["echo", "x", "y"]]
        );
        // Set after its use, or only for one command: not yet, not after.
        assert_eq!(
            split("echo $A; A=1; X=2 true; echo $A $X"),
            vec![vec!["echo", "$A"], vec!["true"], vec!["echo", "1", "$X"]]
        );
        // A child shell's assignments end with it.
        assert_eq!(
            split("sh -c 'A=1'; echo $A"),
            vec![vec!["sh", "-c", "A=1"], vec!["echo", "$A"]]
        );
    }

    #[test]
    fn undecidable_assignments_leave_the_variable_unknown() {
        let mut vars = VarScope::new();
        vars.set("ARCH", Some("x86_64".to_string()));
        let texts = |script: &str| -> Vec<Vec<String>> { split_with(script, &vars) };
        // A branch not known, a command substitution, after `||`, `read`.
        assert_eq!(
            texts("if [ -n \"$GPU\" ]; then P=torch; fi; pip install $P"),
            vec![
                vec!["[".to_string(), "-n".into(), "$GPU".into(), "]".into()],
                vec!["pip".into(), "install".into(), "$P".into()]
            ]
        );
        assert_eq!(
            texts("P=$(cat f) && pip install $P"),
            vec![vec!["pip", "install", "$P"]]
        );
        assert_eq!(
            texts("true || P=torch; pip install $P")[1],
            vec!["pip", "install", "$P"]
        );
        assert_eq!(
            texts("read P < f; pip install $P")[1],
            vec!["pip", "install", "$P"]
        );
        // A branch decided from known values, and one not taken.
        assert_eq!(
            texts("if [ \"$ARCH\" = x86_64 ]; then P=a; else P=b; fi; pip install $P")[1],
            vec!["pip", "install", "a"]
        );
    }

    #[test]
    fn assignments_and_redirections() {
        let commands = split_script(
            &MappedText::contiguous(
                "DEBIAN_FRONTEND=noninteractive apt-get install -y x > /dev/null 2>&1 X=1",
                0,
            ),
            &VarScope::new(),
        );
        assert_eq!(commands.len(), 1);
        assert_eq!(
            commands[0].assignments,
            vec![("DEBIAN_FRONTEND".to_string(), "noninteractive".to_string())]
        );
        let words: Vec<_> = commands[0].words.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(words, vec!["apt-get", "install", "-y", "x", "X=1"]);
    }

    #[test]
    fn word_spans_point_into_the_file() {
        let text = "pip install 'torch==2.5.1'";
        let commands = split_script(&MappedText::contiguous(text, 10), &VarScope::new());
        let torch = &commands[0].words[2];
        assert_eq!(torch.text, "torch==2.5.1");
        assert_eq!(torch.span, Span::new(10 + 12, 10 + text.len()));
        assert_eq!(commands[0].span, Span::new(10, 10 + text.len()));
    }

    #[test]
    fn known_variables_are_expanded_and_split() {
        let mut vars = VarScope::new();
        vars.set("TORCH_VERSION", Some("2.5.1".into()));
        vars.set("PKGS", Some("cuda-toolkit-12-4 libcudnn9".into()));
        vars.set("UNKNOWN", None);
        assert_eq!(
            split_with(
                "pip install torch==${TORCH_VERSION} && apt-get install $PKGS \"$PKGS\" $UNKNOWN $HOME",
                &vars
            ),
            vec![
                vec!["pip", "install", "torch==2.5.1"],
                vec!["apt-get", "install", "cuda-toolkit-12-4", "libcudnn9", "cuda-toolkit-12-4 libcudnn9", "$UNKNOWN", "$HOME"],
            ]
        );
    }

    #[test]
    fn sh_c_scripts_are_split() {
        assert_eq!(
            split(r#"bash -euxo pipefail -c "apt-get update && sh -c 'pip install x'""#),
            vec![
                vec![
                    "bash",
                    "-euxo",
                    "pipefail",
                    "-c",
                    "apt-get update && sh -c 'pip install x'"
                ],
                vec!["apt-get", "update"],
                vec!["sh", "-c", "pip install x"],
                vec!["pip", "install", "x"],
            ]
        );
        let text = "sh -c 'pip install a'";
        let commands = split_script(&MappedText::contiguous(text, 0), &VarScope::new());
        assert_eq!(commands[1].words[2].span, Span::new(19, 20));
    }

    #[test]
    fn nested_shells_are_bounded() {
        let mut script = String::from("true");
        for _ in 0..8 {
            script = format!("sh -c {}", shell_quote(&script));
        }
        let commands = split(&script);
        assert_eq!(commands.len(), MAX_NESTING + 1);
    }

    fn shell_quote(s: &str) -> String {
        format!("'{}'", s.replace('\'', r"'\''"))
    }

    #[test]
    fn heredoc_bodies_inside_scripts_are_skipped() {
        let script = "cat > /etc/x <<EOF\ndeb http://a b\nEOF\napt-get update\ncat <<-'X'\n\tnot a command\n\tX\necho done";
        assert_eq!(
            split(script),
            vec![
                vec!["cat"],
                vec!["apt-get", "update"],
                vec!["cat"],
                vec!["echo", "done"]
            ]
        );
    }

    #[test]
    fn command_start_skips_wrappers() {
        let commands = split_script(
            &MappedText::contiguous("sudo -E -u root env A=1 pip install x", 0),
            &VarScope::new(),
        );
        assert_eq!(command_start(&commands[0].words), 6);
    }

    #[test]
    fn unterminated_input_does_not_panic() {
        for text in [
            "'", "\"", "$(", "${", "`", "\\", "a <<", "echo $'x", "é'\"$", "$((1+", "2>",
        ] {
            let _ = split(text);
        }
    }
}
