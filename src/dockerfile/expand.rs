//! ARG/ENV expansion with BuildKit's shell-lexer semantics
//! (`frontend/dockerfile/shell/lex.go`): `$VAR`, `${VAR}`, `${VAR:-d}`,
//! `${VAR-d}`, `${VAR:+x}`, `${VAR+x}`, `${VAR:?msg}`, `${VAR#pat}`,
//! `${VAR%pat}` (and the greedy `##`/`%%`), quotes and escapes. In shell
//! text (RUN scripts, through [`expand_dollar_at`]) bash's substring
//! `${VAR:offset}` / `${VAR:offset:length}` is evaluated too; BuildKit's own
//! lexer does not take it, so Dockerfile words keep it as written.
//!
//! One deliberate difference: a linter does not know everything a build
//! knows (build args passed later, the base image's environment), so a
//! variable whose value is unknown or unset is kept as written and the
//! result is marked [`Expansion::unresolved`] instead of becoming empty.
//! Work is bounded: nesting depth, output length and pattern matching all
//! have caps, past which the result is marked unresolved.

use std::collections::HashMap;

/// Deepest `${a:-${b:-…}}` nesting followed.
const MAX_DEPTH: usize = 16;
/// Longest expansion result kept; `ARG A=$A$A` chains double each time.
const MAX_OUTPUT: usize = 64 * 1024;
/// Cap on `value length × pattern length` for `#`/`%` trimming.
const MAX_PATTERN_WORK: usize = 1 << 20;

/// What a variable name stands for at some point of the build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarValue<'a> {
    Known(&'a str),
    /// Declared, but its value is only known at build time (an `ARG`
    /// without default, an automatic platform ARG).
    Unknown,
}

/// A source of variable values.
pub trait Vars {
    /// `None`: not declared at all.
    fn get(&self, name: &str) -> Option<VarValue<'_>>;
}

/// Variables in declaration order; setting a name again replaces its value
/// but keeps its place.
#[derive(Clone, Debug, Default)]
pub struct VarScope {
    entries: Vec<(String, Option<String>)>,
    index: HashMap<String, usize>,
}

impl VarScope {
    pub fn new() -> Self {
        Self::default()
    }

    /// Declare `name`; `None` means its value is unknown.
    pub fn set(&mut self, name: &str, value: Option<String>) {
        match self.index.get(name) {
            Some(&i) => {
                if let Some(entry) = self.entries.get_mut(i) {
                    entry.1 = value;
                }
            }
            None => {
                self.index.insert(name.to_string(), self.entries.len());
                self.entries.push((name.to_string(), value));
            }
        }
    }

    pub fn contains(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    /// Declared names and values, in declaration order.
    pub fn entries(&self) -> &[(String, Option<String>)] {
        &self.entries
    }
}

impl Vars for VarScope {
    fn get(&self, name: &str) -> Option<VarValue<'_>> {
        let &i = self.index.get(name)?;
        let (_, value) = self.entries.get(i)?;
        Some(match value {
            Some(v) => VarValue::Known(v),
            None => VarValue::Unknown,
        })
    }
}

/// Two scopes, the first shadowing the second.
pub struct Layered<'a>(pub &'a dyn Vars, pub &'a dyn Vars);

impl Vars for Layered<'_> {
    fn get(&self, name: &str) -> Option<VarValue<'_>> {
        self.0.get(name).or_else(|| self.1.get(name))
    }
}

/// The result of expanding one word.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expansion {
    /// The expanded text; unresolvable parts are kept as written.
    pub text: String,
    /// Variable names looked up, in order of first use.
    pub referenced: Vec<String>,
    /// Names looked up that are not declared at all.
    pub unset: Vec<String>,
    /// Some part depends on a value not known here (or the expansion gave up).
    pub unresolved: bool,
    /// What BuildKit would fail the build with (`${X:?}`, bad substitution).
    pub error: Option<String>,
}

/// Expand `word` as BuildKit's `ProcessWord` does: quotes removed, escapes
/// processed, variables substituted.
pub fn expand_word(word: &str, vars: &dyn Vars, escape: char) -> Expansion {
    let mut lexer = Lexer::new(vars, escape);
    let mut pos = 0;
    let text = match lexer.process_until(word, &mut pos, None, false, 0) {
        Ok(text) => text,
        Err(()) => word.to_string(),
    };
    lexer.finish(text)
}

/// Expand only `$` references in `text`, leaving quotes and escapes alone
/// (for text whose quotes were already processed).
pub fn expand_vars(text: &str, vars: &dyn Vars, escape: char) -> Expansion {
    let mut lexer = Lexer::new(vars, escape);
    let mut out = String::new();
    let mut pos = 0;
    while let Some(c) = peek(text, pos) {
        if c == '$' {
            let start = pos;
            match lexer.dollar(text, &mut pos, 0) {
                Ok(value) => out.push_str(&value),
                Err(()) => {
                    out.push_str(text.get(start..).unwrap_or(""));
                    break;
                }
            }
        } else {
            out.push(c);
            pos += c.len_utf8();
        }
        if out.len() > MAX_OUTPUT {
            lexer.fail("expansion too long");
            break;
        }
    }
    lexer.finish(out)
}

/// One `$…` reference found in shell text, for the shell splitter.
pub(crate) struct DollarExpansion {
    /// Byte offset just past the reference.
    pub end: usize,
    /// The value, when it could be computed.
    pub value: Option<String>,
}

/// Expand the `$` reference starting at `start` in `text` (which must hold
/// a `$` there). Unresolvable references give `value: None`.
pub(crate) fn expand_dollar_at(
    text: &str,
    start: usize,
    vars: &dyn Vars,
    escape: char,
) -> DollarExpansion {
    let mut lexer = Lexer::new(vars, escape);
    lexer.shell = true;
    let mut pos = start;
    match lexer.dollar(text, &mut pos, 0) {
        Ok(value) if !lexer.unresolved && lexer.error.is_none() => DollarExpansion {
            end: pos,
            value: Some(value),
        },
        Ok(_) => DollarExpansion {
            end: pos,
            value: None,
        },
        Err(()) => DollarExpansion {
            end: text.len(),
            value: None,
        },
    }
}

fn peek(text: &str, pos: usize) -> Option<char> {
    text.get(pos..).and_then(|rest| rest.chars().next())
}

/// Special shell parameters (`$@`, `$?`…), never ARGs or ENVs.
fn is_special_param(c: char) -> bool {
    matches!(c, '@' | '*' | '#' | '?' | '-' | '$' | '!' | '0')
}

struct Lexer<'a> {
    vars: &'a dyn Vars,
    escape: char,
    referenced: Vec<String>,
    unset: Vec<String>,
    unresolved: bool,
    error: Option<String>,
    /// Expanding shell text: bash's substring form is understood.
    shell: bool,
}

type Step<T> = Result<T, ()>;

impl<'a> Lexer<'a> {
    fn new(vars: &'a dyn Vars, escape: char) -> Self {
        Lexer {
            vars,
            escape,
            referenced: Vec::new(),
            unset: Vec::new(),
            unresolved: false,
            error: None,
            shell: false,
        }
    }

    fn finish(self, text: String) -> Expansion {
        Expansion {
            text,
            referenced: self.referenced,
            unset: self.unset,
            unresolved: self.unresolved,
            error: self.error,
        }
    }

    fn fail(&mut self, message: &str) {
        self.unresolved = true;
        if self.error.is_none() {
            self.error = Some(message.to_string());
        }
    }

    fn lookup(&mut self, name: &str) -> Option<VarValue<'a>> {
        if !self.referenced.iter().any(|n| n == name) {
            self.referenced.push(name.to_string());
        }
        let value = self.vars.get(name);
        if value.is_none() && !self.unset.iter().any(|n| n == name) {
            self.unset.push(name.to_string());
        }
        value
    }

    /// BuildKit's `processStopOn`: read up to `stop` (consumed) or the end.
    fn process_until(
        &mut self,
        text: &str,
        pos: &mut usize,
        stop: Option<char>,
        raw_escapes: bool,
        depth: usize,
    ) -> Step<String> {
        let mut out = String::new();
        while let Some(c) = peek(text, *pos) {
            if Some(c) == stop {
                *pos += c.len_utf8();
                return Ok(out);
            }
            match c {
                '$' => out.push_str(&self.dollar(text, pos, depth)?),
                '\'' => out.push_str(&self.single_quoted(text, pos)?),
                '"' => out.push_str(&self.double_quoted(text, pos, raw_escapes, depth)?),
                _ => {
                    *pos += c.len_utf8();
                    if c == self.escape {
                        if raw_escapes {
                            out.push(c);
                        }
                        match peek(text, *pos) {
                            Some(next) => {
                                *pos += next.len_utf8();
                                out.push(next);
                            }
                            None => break,
                        }
                    } else {
                        out.push(c);
                    }
                }
            }
            if out.len() > MAX_OUTPUT {
                self.fail("expansion too long");
                return Err(());
            }
        }
        if let Some(stop) = stop {
            self.fail(&format!(
                "unexpected end of statement while looking for matching {stop}"
            ));
            return Err(());
        }
        Ok(out)
    }

    fn single_quoted(&mut self, text: &str, pos: &mut usize) -> Step<String> {
        *pos += 1;
        let rest = text.get(*pos..).unwrap_or("");
        match rest.find('\'') {
            Some(end) => {
                *pos += end + 1;
                Ok(rest.get(..end).unwrap_or("").to_string())
            }
            None => {
                self.fail("unexpected end of statement while looking for matching single-quote");
                Err(())
            }
        }
    }

    fn double_quoted(
        &mut self,
        text: &str,
        pos: &mut usize,
        raw_escapes: bool,
        depth: usize,
    ) -> Step<String> {
        *pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = peek(text, *pos) else {
                self.fail("unexpected end of statement while looking for matching double-quote");
                return Err(());
            };
            match c {
                '"' => {
                    *pos += 1;
                    return Ok(out);
                }
                '$' => out.push_str(&self.dollar(text, pos, depth)?),
                _ => {
                    *pos += c.len_utf8();
                    if c == self.escape {
                        if raw_escapes {
                            out.push(c);
                        }
                        match peek(text, *pos) {
                            None => continue,
                            Some(next) if next == '"' || next == '$' || next == self.escape => {
                                *pos += next.len_utf8();
                                out.push(next);
                            }
                            Some(_) => out.push(c),
                        }
                    } else {
                        out.push(c);
                    }
                }
            }
            if out.len() > MAX_OUTPUT {
                self.fail("expansion too long");
                return Err(());
            }
        }
    }

    fn name(text: &str, pos: &mut usize) -> String {
        let mut name = String::new();
        while let Some(c) = peek(text, *pos) {
            if name.is_empty() && c.is_ascii_digit() {
                while let Some(d) = peek(text, *pos).filter(char::is_ascii_digit) {
                    name.push(d);
                    *pos += 1;
                }
                return name;
            }
            if name.is_empty() && is_special_param(c) {
                *pos += 1;
                return c.to_string();
            }
            if !(c.is_alphanumeric() || c == '_') {
                break;
            }
            name.push(c);
            *pos += c.len_utf8();
        }
        name
    }

    /// BuildKit's `processDollar`, starting at the `$`.
    fn dollar(&mut self, text: &str, pos: &mut usize, depth: usize) -> Step<String> {
        let start = *pos;
        *pos += 1;
        if peek(text, *pos) != Some('{') {
            let name = Self::name(text, pos);
            if name.is_empty() {
                return Ok("$".to_string());
            }
            let raw = text.get(start..*pos).unwrap_or("");
            return Ok(self.plain(&name, raw));
        }
        if depth >= MAX_DEPTH {
            self.fail("substitutions nested too deeply");
            return Err(());
        }
        *pos += 1;
        match peek(text, *pos) {
            None => {
                self.fail("syntax error: missing '}'");
                return Err(());
            }
            Some('{' | '}' | ':') => {
                self.fail("syntax error: bad substitution");
                return Err(());
            }
            Some(_) => {}
        }
        let name = Self::name(text, pos);
        let Some(op) = peek(text, *pos) else {
            self.fail("syntax error: missing '}'");
            return Err(());
        };
        *pos += op.len_utf8();
        if op == '}' {
            let raw = text.get(start..*pos).unwrap_or("");
            return Ok(self.plain(&name, raw));
        }
        let (null_is_unset, op) = if op == ':' {
            let Some(next) = peek(text, *pos) else {
                self.fail("syntax error: missing '}'");
                return Err(());
            };
            *pos += next.len_utf8();
            (true, next)
        } else {
            (false, op)
        };
        if self.shell && null_is_unset && !matches!(op, '-' | '+' | '?' | '=') {
            *pos -= op.len_utf8();
            return self.substring(text, start, pos, &name, depth);
        }
        if !matches!(op, '-' | '+' | '?' | '#' | '%') || (null_is_unset && matches!(op, '#' | '%'))
        {
            // `${X/a/b}` and friends: BuildKit supports some; we do not
            // evaluate them, but skip to the closing brace.
            self.fail_soft_skip(text, pos, depth)?;
            self.unresolved = true;
            return Ok(text.get(start..*pos).unwrap_or("").to_string());
        }
        let outer_unresolved = self.unresolved;
        self.unresolved = false;
        let word = self.process_until(text, pos, Some('}'), matches!(op, '#' | '%'), depth + 1)?;
        let word_unresolved = self.unresolved;
        self.unresolved = outer_unresolved;
        let raw = text.get(start..*pos).unwrap_or("").to_string();

        let value = if is_shell_param(&name) {
            None
        } else {
            self.lookup(&name)
        };
        let use_word = |lexer: &mut Self, word: String| {
            lexer.unresolved |= word_unresolved;
            word
        };
        Ok(match (op, value) {
            (_, Some(VarValue::Unknown)) => {
                self.unresolved = true;
                raw
            }
            ('-', Some(VarValue::Known(v))) if !(null_is_unset && v.is_empty()) => v.to_string(),
            ('-', _) => use_word(self, word),
            ('+', Some(VarValue::Known(v))) if !(null_is_unset && v.is_empty()) => {
                use_word(self, word)
            }
            ('+', _) => String::new(),
            ('?', Some(VarValue::Known(v))) if !(null_is_unset && v.is_empty()) => v.to_string(),
            ('?', value) => {
                let default = if value.is_none() {
                    "is not allowed to be unset"
                } else {
                    "is not allowed to be empty"
                };
                let message = if word.is_empty() { default } else { &word };
                self.fail(&format!("{name}: {message}"));
                raw
            }
            ('#' | '%', Some(VarValue::Known(v))) if !word_unresolved => {
                match trim_pattern(v, &word, op == '%') {
                    Some(trimmed) => trimmed,
                    None => {
                        self.unresolved = true;
                        raw
                    }
                }
            }
            _ => {
                self.unresolved = true;
                raw
            }
        })
    }

    /// Bash's `${NAME:offset}` / `${NAME:offset:length}`, `pos` just past
    /// the `:`. Offsets and lengths are plain integers here (bash reads
    /// arithmetic; anything else stays unresolved); a negative offset counts
    /// from the end (`${V: -2}`), a negative length is an end counted from
    /// the end.
    fn substring(
        &mut self,
        text: &str,
        start: usize,
        pos: &mut usize,
        name: &str,
        depth: usize,
    ) -> Step<String> {
        let outer_unresolved = self.unresolved;
        self.unresolved = false;
        let spec = self.process_until(text, pos, Some('}'), true, depth + 1)?;
        let spec_unresolved = self.unresolved;
        self.unresolved = outer_unresolved;
        let raw = text.get(start..*pos).unwrap_or("").to_string();
        let value = if is_shell_param(name) {
            None
        } else {
            self.lookup(name)
        };
        let (Some(VarValue::Known(value)), false) = (value, spec_unresolved) else {
            self.unresolved = true;
            return Ok(raw);
        };
        match substring_of(value, &spec) {
            Some(part) => Ok(part),
            None => {
                self.unresolved = true;
                Ok(raw)
            }
        }
    }

    /// `$NAME` / `${NAME}`.
    fn plain(&mut self, name: &str, raw: &str) -> String {
        if is_shell_param(name) {
            self.unresolved = true;
            return raw.to_string();
        }
        match self.lookup(name) {
            Some(VarValue::Known(v)) => v.to_string(),
            _ => {
                self.unresolved = true;
                raw.to_string()
            }
        }
    }

    /// Skip an unsupported `${…}` body up to its closing brace.
    fn fail_soft_skip(&mut self, text: &str, pos: &mut usize, depth: usize) -> Step<()> {
        let outer = self.unresolved;
        self.process_until(text, pos, Some('}'), true, depth + 1)?;
        self.unresolved = outer;
        Ok(())
    }
}

/// Bash's substring of `value` for the `offset[:length]` text `spec`, in
/// characters; `None` when `spec` is not two integers or bash would fail
/// (an end before the start).
fn substring_of(value: &str, spec: &str) -> Option<String> {
    let number = |s: &str| s.trim().parse::<i64>().ok();
    let (offset, length) = match spec.split_once(':') {
        Some((offset, length)) => (number(offset)?, Some(number(length)?)),
        None => (number(spec)?, None),
    };
    let chars: Vec<char> = value.chars().collect();
    let len = i64::try_from(chars.len()).ok()?;
    let begin = if offset < 0 { len + offset } else { offset };
    if begin < 0 || begin > len {
        return Some(String::new());
    }
    let end = match length {
        None => len,
        Some(l) if l < 0 => len + l,
        Some(l) => begin.saturating_add(l).min(len),
    };
    if end < begin {
        return None;
    }
    let (begin, end) = (usize::try_from(begin).ok()?, usize::try_from(end).ok()?);
    Some(chars.get(begin..end)?.iter().collect())
}

/// Positional and special parameters belong to the shell, not to ARG/ENV.
fn is_shell_param(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_digit()) || name.chars().all(is_special_param)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PatternToken {
    Star,
    Any,
    Literal(char),
}

fn pattern_tokens(pattern: &str) -> Option<Vec<PatternToken>> {
    let mut tokens = Vec::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        tokens.push(match c {
            '*' => PatternToken::Star,
            '?' => PatternToken::Any,
            '\\' => match chars.next() {
                Some(next @ ('*' | '?' | '\\' | '}' | '/')) => PatternToken::Literal(next),
                // BuildKit rejects other escapes in patterns.
                _ => return None,
            },
            c => PatternToken::Literal(c),
        });
    }
    Some(tokens)
}

/// `${v#pat}` (`suffix` false) or `${v%pat}`; a leading repeat of the
/// operator (`##`, `%%`) asks for the longest match. `None` when the
/// pattern is invalid or too costly to match.
fn trim_pattern(value: &str, word: &str, suffix: bool) -> Option<String> {
    let op = if suffix { '%' } else { '#' };
    let (greedy, pattern) = match word.strip_prefix(op) {
        Some(rest) => (true, rest),
        None => (false, word),
    };
    let mut tokens = pattern_tokens(pattern)?;
    let mut chars: Vec<char> = value.chars().collect();
    if chars.len().saturating_mul(tokens.len() + 1) > MAX_PATTERN_WORK {
        return None;
    }
    if suffix {
        tokens.reverse();
        chars.reverse();
    }
    let lengths = prefix_match_lengths(&tokens, &chars);
    let cut = if greedy {
        lengths.last()
    } else {
        lengths.first()
    };
    let kept: String = match cut {
        Some(&n) => chars.get(n..).unwrap_or(&[]).iter().collect(),
        None => chars.iter().collect(),
    };
    Some(if suffix {
        kept.chars().rev().collect()
    } else {
        kept
    })
}

/// Lengths of the prefixes of `chars` that `tokens` matches entirely, in
/// increasing order (a set-of-states simulation: O(len × tokens)).
fn prefix_match_lengths(tokens: &[PatternToken], chars: &[char]) -> Vec<usize> {
    let states = tokens.len() + 1;
    let close = |set: &mut Vec<bool>| {
        for i in 0..tokens.len() {
            if set[i] && tokens[i] == PatternToken::Star {
                set[i + 1] = true;
            }
        }
    };
    let mut current = vec![false; states];
    current[0] = true;
    close(&mut current);
    let mut lengths = Vec::new();
    if current[tokens.len()] {
        lengths.push(0);
    }
    for (n, &c) in chars.iter().enumerate() {
        let mut next = vec![false; states];
        for (i, token) in tokens.iter().enumerate() {
            if !current[i] {
                continue;
            }
            match *token {
                PatternToken::Star => next[i] = true,
                PatternToken::Any => next[i + 1] = true,
                PatternToken::Literal(l) if l == c => next[i + 1] = true,
                PatternToken::Literal(_) => {}
            }
        }
        close(&mut next);
        if next[tokens.len()] {
            lengths.push(n + 1);
        }
        if !next.iter().any(|&s| s) {
            break;
        }
        current = next;
    }
    lengths
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(pairs: &[(&str, Option<&str>)]) -> VarScope {
        let mut scope = VarScope::new();
        for (k, v) in pairs {
            scope.set(k, v.map(str::to_string));
        }
        scope
    }

    fn ex(word: &str, vars: &VarScope) -> Expansion {
        expand_word(word, vars, '\\')
    }

    #[test]
    fn plain_and_braced_references() {
        let vars = scope(&[("CUDA", Some("12.4.1")), ("OS", Some("ubuntu22.04"))]);
        let e = ex("nvidia/cuda:${CUDA}-devel-$OS", &vars);
        assert_eq!(e.text, "nvidia/cuda:12.4.1-devel-ubuntu22.04");
        assert_eq!(e.referenced, vec!["CUDA", "OS"]);
        assert!(e.unset.is_empty());
        assert!(!e.unresolved);
    }

    #[test]
    fn defaults_and_alternatives() {
        let vars = scope(&[("EMPTY", Some("")), ("SET", Some("v"))]);
        assert_eq!(ex("${NOPE:-d}", &vars).text, "d");
        assert_eq!(ex("${NOPE-d}", &vars).text, "d");
        assert_eq!(ex("${EMPTY:-d}", &vars).text, "d");
        assert_eq!(ex("${EMPTY-d}", &vars).text, "");
        assert_eq!(ex("${SET:-d}", &vars).text, "v");
        assert_eq!(ex("${SET:+x}", &vars).text, "x");
        assert_eq!(ex("${EMPTY:+x}", &vars).text, "");
        assert_eq!(ex("${EMPTY+x}", &vars).text, "x");
        assert_eq!(ex("${NOPE+x}", &vars).text, "");
        let e = ex("${NOPE:-d}", &vars);
        assert_eq!(e.unset, vec!["NOPE"]);
        assert!(!e.unresolved);
    }

    #[test]
    fn nested_default_uses_inner_variable() {
        let vars = scope(&[("B", Some("inner"))]);
        assert_eq!(ex("${A:-${B}}", &vars).text, "inner");
        let e = ex("${A:-${C}}", &vars);
        assert!(e.unresolved);
        assert_eq!(e.unset, vec!["C", "A"]);
    }

    #[test]
    fn required_variable_errors() {
        let vars = scope(&[("EMPTY", Some(""))]);
        assert_eq!(
            ex("${NOPE:?give it}", &vars).error.as_deref(),
            Some("NOPE: give it")
        );
        assert_eq!(
            ex("${EMPTY:?}", &vars).error.as_deref(),
            Some("EMPTY: is not allowed to be empty")
        );
        assert_eq!(ex("${EMPTY?}", &vars).error, None);
    }

    #[test]
    fn unknown_and_unset_are_kept_as_written() {
        let vars = scope(&[("TARGETARCH", None)]);
        let e = ex("cuda-${TARGETARCH}-$MISSING", &vars);
        assert_eq!(e.text, "cuda-${TARGETARCH}-$MISSING");
        assert!(e.unresolved);
        assert_eq!(e.unset, vec!["MISSING"]);
        let e = ex("${TARGETARCH:-amd64}", &vars);
        assert_eq!(e.text, "${TARGETARCH:-amd64}");
        assert!(e.unresolved);
    }

    #[test]
    fn quotes_and_escapes() {
        let vars = scope(&[("V", Some("x y"))]);
        assert_eq!(ex(r#""a $V" '$V' \$V"#, &vars).text, "a x y $V $V");
        assert_eq!(ex(r#""q\"\$\\\n""#, &vars).text, "q\"$\\\\n");
        assert_eq!(ex("a`b", &vars).text, "a`b");
        assert_eq!(expand_word("`$V", &vars, '`').text, "$V");
        assert!(ex("'open", &vars).error.is_some());
        assert!(ex("\"open", &vars).error.is_some());
    }

    #[test]
    fn bad_substitutions_error() {
        let vars = scope(&[]);
        assert!(ex("${}", &vars).error.is_some());
        assert!(ex("${:x}", &vars).error.is_some());
        assert!(ex("${A", &vars).error.is_some());
        assert!(ex("${A:-x", &vars).error.is_some());
        assert_eq!(ex("$", &vars).text, "$");
        assert_eq!(ex("a$-b", &vars).text, "a$-b");
    }

    #[test]
    fn prefix_and_suffix_trimming() {
        let vars = scope(&[("V", Some("12.4.1")), ("P", Some("/usr/local/cuda/bin"))]);
        assert_eq!(ex("${V%.*}", &vars).text, "12.4");
        assert_eq!(ex("${V%%.*}", &vars).text, "12");
        assert_eq!(ex("${V#*.}", &vars).text, "4.1");
        assert_eq!(ex("${V##*.}", &vars).text, "1");
        assert_eq!(ex("${P#/usr/}", &vars).text, "local/cuda/bin");
        assert_eq!(ex("${P%/b?n}", &vars).text, "/usr/local/cuda");
        assert_eq!(ex("${V%x}", &vars).text, "12.4.1");
    }

    #[test]
    fn substrings_in_shell_text() {
        let vars = scope(&[("V", Some("13.3.0")), ("T", None), ("I", Some("1"))]);
        let sh = |text: &str| expand_dollar_at(text, 0, &vars, '\\').value;
        assert_eq!(sh("${V:0:2}").as_deref(), Some("13"));
        assert_eq!(sh("${V:3}").as_deref(), Some("3.0"));
        assert_eq!(sh("${V: -3}").as_deref(), Some("3.0"));
        assert_eq!(sh("${V: -3:1}").as_deref(), Some("3"));
        assert_eq!(sh("${V:1:-2}").as_deref(), Some("3.3"));
        assert_eq!(sh("${V:0:100}").as_deref(), Some("13.3.0"));
        assert_eq!(sh("${V:10}").as_deref(), Some(""));
        assert_eq!(sh("${V: -10}").as_deref(), Some(""));
        assert_eq!(sh("${V:$I:2}").as_deref(), Some("3."));
        // `${V:-2}` is a default, not a substring.
        assert_eq!(sh("${V:-2}").as_deref(), Some("13.3.0"));
        // Unknown values, arithmetic and an end before the start stay undecided.
        assert_eq!(sh("${T:0:2}"), None);
        assert_eq!(sh("${NOPE:0:2}"), None);
        assert_eq!(sh("${V:I+1}"), None);
        assert_eq!(sh("${V:4:-4}"), None);
        // BuildKit's lexer has no substring form: Dockerfile words keep it.
        let e = ex("${V:0:2}", &vars);
        assert!(e.unresolved);
        assert_eq!(e.text, "${V:0:2}");
    }

    #[test]
    fn expand_vars_leaves_quotes() {
        let vars = scope(&[("V", Some("1"))]);
        assert_eq!(expand_vars("'$V' \"$V\"", &vars, '\\').text, "'1' \"1\"");
    }

    #[test]
    fn work_is_bounded() {
        let deep = "${A:-".repeat(10_000) + &"}".repeat(10_000);
        let e = ex(&deep, &scope(&[]));
        assert!(e.error.is_some());
        let big = "x".repeat(40_000);
        let vars = scope(&[("A", Some(&big))]);
        let e = ex("$A$A$A", &vars);
        assert!(e.unresolved);
        assert!(e.text.len() <= 3 * 40_000 + 10);
    }
}
