//! The typed layer: BuildKit's `instructions` package. Each instruction's
//! flags are checked as `BFlags.Parse` checks them, its arguments counted and
//! shaped into a [`Command`]. Errors carry the span of the offending flag or
//! word where there is one, else of the instruction.
//!
//! The view is best effort: an instruction BuildKit rejects still gets the
//! command we could build (or [`Command::Unknown`]) beside its error.

use crate::dockerfile::ast::{
    ArgDecl, Command, CopyCommand, Flag, FromCommand, HealthcheckCommand, Instruction, KeyValue,
    MappedText, Mount, ParseError, RunCommand, ShellOrExec, Word,
};
use crate::dockerfile::heredoc::parse_marker;
use crate::dockerfile::shlex::{process_word, LexOptions};
use crate::source::Span;

/// The typed command for an instruction, and BuildKit's first complaint.
pub fn type_instruction(inst: &Instruction, escape: char) -> (Command, Option<ParseError>) {
    let mut typer = Typer {
        inst,
        escape,
        error: None,
    };
    let command = typer.command();
    (command, typer.error)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Str,
    Strs,
}

/// Flags after `BFlags.Parse`.
struct Flags<'a> {
    used: Vec<(&'static str, &'a Flag)>,
}

impl<'a> Flags<'a> {
    fn last(&self, name: &str) -> Option<&'a Flag> {
        self.used
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
    }

    fn all(&self, name: &str) -> impl Iterator<Item = &'a Flag> + '_ {
        let name = name.to_string();
        self.used
            .iter()
            .filter(move |(n, _)| *n == name)
            .map(|(_, f)| *f)
    }

    fn string(&self, name: &str) -> Option<String> {
        self.last(name).and_then(|f| f.value.clone())
    }

    fn bool(&self, name: &str) -> bool {
        self.last(name).is_some_and(|f| {
            f.value
                .as_deref()
                .is_none_or(|v| v.eq_ignore_ascii_case("true"))
        })
    }
}

struct Typer<'i> {
    inst: &'i Instruction,
    escape: char,
    error: Option<ParseError>,
}

impl<'i> Typer<'i> {
    fn fail(&mut self, message: impl Into<String>, span: Span) {
        if self.error.is_none() {
            self.error = Some(ParseError {
                message: message.into(),
                span,
            });
        }
    }

    fn fail_here(&mut self, message: impl Into<String>) {
        let span = self.inst.span;
        self.fail(message, span);
    }

    fn upper(&self) -> String {
        self.inst.keyword.to_uppercase()
    }

    /// `BFlags.Parse` with the flags an instruction declares.
    fn flags(&mut self, specs: &[(&'static str, Kind)]) -> Flags<'i> {
        let mut used: Vec<(&'static str, &'i Flag)> = Vec::new();
        for flag in &self.inst.flags {
            let Some(&(name, kind)) = specs.iter().find(|(n, _)| *n == flag.name) else {
                // BuildKit stops at the first bad flag; the typed view goes
                // on, so that a later `--from` still links its stage.
                self.fail(format!("unknown flag: --{}", flag.name), flag.span);
                continue;
            };
            if kind != Kind::Strs && used.iter().any(|(n, _)| *n == name) {
                self.fail(format!("duplicate flag specified: --{name}"), flag.span);
                continue;
            }
            let problem = match (kind, flag.value.as_deref()) {
                (Kind::Bool, Some("")) | (Kind::Str | Kind::Strs, None) => {
                    Some(format!("missing a value on flag: --{name}"))
                }
                (Kind::Bool, Some(v))
                    if !v.eq_ignore_ascii_case("true") && !v.eq_ignore_ascii_case("false") =>
                {
                    Some(format!(
                        "expecting boolean value for flag --{name}, not: {v}"
                    ))
                }
                _ => None,
            };
            if let Some(message) = problem {
                self.fail(message, flag.span);
                continue;
            }
            used.push((name, flag));
        }
        Flags { used }
    }

    fn args(&self) -> &'i [Word] {
        &self.inst.args
    }

    fn exactly_one(&mut self) -> Option<Word> {
        match self.args() {
            [one] => Some(one.clone()),
            _ => {
                let message = format!("{} requires exactly one argument", self.upper());
                self.fail_here(message);
                None
            }
        }
    }

    fn at_least_one(&mut self) -> bool {
        if self.args().is_empty() {
            let message = format!("{} requires at least one argument", self.upper());
            self.fail_here(message);
            return false;
        }
        true
    }

    fn unquote(&self, text: &str) -> String {
        let options = LexOptions {
            escape: self.escape,
            raw_quotes: false,
            raw_escapes: false,
            verbatim_vars: true,
        };
        process_word(text, options).unwrap_or_else(|_| text.to_string())
    }

    /// Exec form from the JSON words, shell form from the rest of the line.
    fn shell_or_exec(&self, words: &[Word], shell: MappedText) -> ShellOrExec {
        if self.inst.json {
            ShellOrExec::Exec(words.to_vec())
        } else {
            ShellOrExec::Shell(shell)
        }
    }

    fn command(&mut self) -> Command {
        match self.inst.keyword.as_str() {
            "from" => self.from(),
            "run" => self.run(),
            "copy" => self.copy(false),
            "add" => self.copy(true),
            "env" => {
                self.flags(&[]);
                Command::Env(self.key_values())
            }
            "label" => {
                self.flags(&[]);
                Command::Label(self.key_values())
            }
            "arg" => self.arg(),
            "cmd" => {
                self.flags(&[]);
                Command::Cmd(self.shell_or_exec(self.args(), self.inst.rest.clone()))
            }
            "entrypoint" => {
                self.flags(&[]);
                Command::Entrypoint(self.shell_or_exec(self.args(), self.inst.rest.clone()))
            }
            "shell" => {
                self.flags(&[]);
                if self.at_least_one() && !self.inst.json {
                    self.fail_here("SHELL requires the arguments to be in JSON form");
                }
                Command::Shell(self.args().to_vec())
            }
            "workdir" | "user" | "maintainer" => {
                let word = self.exactly_one();
                self.flags(&[]);
                match (word, self.inst.keyword.as_str()) {
                    (Some(w), "workdir") => Command::Workdir(w),
                    (Some(w), "user") => Command::User(w),
                    (Some(w), _) => Command::Maintainer(w),
                    (None, _) => Command::Unknown,
                }
            }
            // BuildKit never parses STOPSIGNAL's flags.
            "stopsignal" => self
                .exactly_one()
                .map_or(Command::Unknown, Command::StopSignal),
            "expose" => {
                self.at_least_one();
                self.flags(&[]);
                Command::Expose(self.args().to_vec())
            }
            "volume" => self.volume(),
            "healthcheck" => self.healthcheck(),
            "onbuild" => self.onbuild(),
            _ => Command::Unknown,
        }
    }

    fn from(&mut self) -> Command {
        let args = self.args();
        let stage_name = match args {
            [_, as_word, name] if is_as(&as_word.text) => {
                let lower = name.text.to_lowercase();
                if !valid_stage_name(&lower) {
                    self.fail(
                        format!(
                            "invalid name for build stage: {:?}, name can't start with a number or contain symbols",
                            name.text
                        ),
                        name.span,
                    );
                }
                Some(Word {
                    text: lower,
                    span: name.span,
                })
            }
            [_] => None,
            _ => {
                self.fail_here("FROM requires either one or three arguments");
                None
            }
        };
        let flags = self.flags(&[("platform", Kind::Str)]);
        match args.first() {
            Some(image) => Command::From(FromCommand {
                image: image.clone(),
                stage_name,
                platform: flags.string("platform"),
            }),
            None => Command::Unknown,
        }
    }

    fn run(&mut self) -> Command {
        let flags = self.flags(&[
            ("mount", Kind::Strs),
            ("network", Kind::Str),
            ("security", Kind::Str),
            ("device", Kind::Strs),
        ]);
        let mut mounts = Vec::new();
        for flag in flags.all("mount") {
            match parse_mount(flag.value.as_deref().unwrap_or_default(), flag.span) {
                Ok(mount) => mounts.push(mount),
                Err(message) => self.fail(message, flag.span),
            }
        }
        let network = flags.string("network");
        if let Some(value) = &network {
            if !matches!(value.as_str(), "default" | "none" | "host") {
                let span = flags.last("network").map_or(self.inst.span, |f| f.span);
                self.fail(format!("invalid network mode {value:?}"), span);
            }
        }
        let security = flags.string("security");
        if let Some(value) = &security {
            if !matches!(value.as_str(), "sandbox" | "insecure") {
                let span = flags.last("security").map_or(self.inst.span, |f| f.span);
                self.fail(format!("security {value:?} is not valid"), span);
            }
        }
        Command::Run(RunCommand {
            command: self.shell_or_exec(self.args(), self.inst.rest.clone()),
            mounts,
            network,
            security,
        })
    }

    fn copy(&mut self, is_add: bool) -> Command {
        let name = if is_add { "ADD" } else { "COPY" };
        let args = self.args();
        if args.len() < 2 {
            self.fail_here(format!(
                "{name} requires at least two arguments, but only one was provided. Destination could not be determined"
            ));
        }
        let specs: &[(&str, Kind)] = if is_add {
            &[
                ("chown", Kind::Str),
                ("chmod", Kind::Str),
                ("link", Kind::Bool),
                ("keep-git-dir", Kind::Bool),
                ("checksum", Kind::Str),
                ("unpack", Kind::Bool),
                ("exclude", Kind::Strs),
            ]
        } else {
            &[
                ("chown", Kind::Str),
                ("from", Kind::Str),
                ("chmod", Kind::Str),
                ("link", Kind::Bool),
                ("exclude", Kind::Strs),
                ("parents", Kind::Bool),
            ]
        };
        let flags = self.flags(specs);
        let Some((dest, sources)) = args.split_last() else {
            return Command::Unknown;
        };
        if !sources.is_empty() && is_heredoc_word(&dest.text) {
            self.fail(
                format!("{name} cannot accept a heredoc as a destination"),
                dest.span,
            );
        }
        let from = flags.last("from").map(|f| Word {
            text: f.value.clone().unwrap_or_default(),
            span: f.span,
        });
        let other_flags = flags
            .used
            .iter()
            .filter(|(n, _)| !matches!(*n, "from" | "link" | "chown" | "chmod"))
            .map(|(_, f)| (*f).clone())
            .collect();
        let command = CopyCommand {
            sources: sources.to_vec(),
            dest: dest.clone(),
            from,
            link: flags.bool("link"),
            chown: flags.string("chown"),
            chmod: flags.string("chmod"),
            other_flags,
        };
        if is_add {
            Command::Add(command)
        } else {
            Command::Copy(command)
        }
    }

    /// BuildKit's `parseKvps` on the parser's key/value/separator triples.
    fn key_values(&mut self) -> Vec<KeyValue> {
        let upper = self.upper();
        if !self.at_least_one() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for triple in self.args().chunks(3) {
            let [key, value, _] = triple else {
                self.fail_here(format!("Bad input to {upper}, too many arguments"));
                break;
            };
            if key.text.is_empty() {
                self.fail(format!("{upper} names can not be blank"), key.span);
            }
            out.push(KeyValue {
                key: self.unquote(&key.text),
                value: self.unquote(&value.text),
                span: key.span.cover(value.span),
            });
        }
        out
    }

    fn arg(&mut self) -> Command {
        // BuildKit never parses ARG's flags.
        self.at_least_one();
        let mut out = Vec::new();
        for word in self.args() {
            let (name, default) = match word.text.split_once('=') {
                Some((name, value)) => (name, Some(self.unquote(value))),
                None => (word.text.as_str(), None),
            };
            if name.is_empty() {
                self.fail("ARG names can not be blank", word.span);
            }
            out.push(ArgDecl {
                name: name.to_string(),
                default,
                span: word.span,
            });
        }
        Command::Arg(out)
    }

    fn volume(&mut self) -> Command {
        self.at_least_one();
        self.flags(&[]);
        let mut out = Vec::new();
        for word in self.args() {
            let trimmed = word.text.trim();
            if trimmed.is_empty() {
                self.fail("VOLUME specified can not be an empty string", word.span);
            }
            out.push(Word {
                text: trimmed.to_string(),
                span: word.span,
            });
        }
        Command::Volume(out)
    }

    fn healthcheck(&mut self) -> Command {
        let Some((kind, rest)) = self.args().split_first() else {
            self.fail_here("HEALTHCHECK requires at least one argument");
            return Command::Unknown;
        };
        let kind_upper = kind.text.to_uppercase();
        if kind_upper == "NONE" {
            // BuildKit does not look at flags for NONE.
            if !rest.is_empty() {
                self.fail_here("HEALTHCHECK NONE takes no arguments");
            }
            return Command::Healthcheck(HealthcheckCommand::None);
        }
        let flags = self.flags(&[
            ("interval", Kind::Str),
            ("timeout", Kind::Str),
            ("start-period", Kind::Str),
            ("start-interval", Kind::Str),
            ("retries", Kind::Str),
        ]);
        if kind_upper != "CMD" {
            self.fail(
                format!("Unknown type {:?} in HEALTHCHECK (try CMD)", kind.text),
                kind.span,
            );
        } else if rest.is_empty() {
            self.fail_here("Missing command after HEALTHCHECK CMD");
        }
        for name in ["interval", "timeout", "start-period", "start-interval"] {
            let Some(flag) = flags.last(name) else {
                continue;
            };
            if let Err(message) = check_interval(name, flag.value.as_deref().unwrap_or_default()) {
                self.fail(message, flag.span);
            }
        }
        if let Some(flag) = flags.last("retries") {
            let value = flag.value.as_deref().unwrap_or_default();
            if !value.is_empty() {
                match parse_go_int32(value) {
                    Some(n) if n < 0 => {
                        self.fail(format!("--retries cannot be negative ({n})"), flag.span)
                    }
                    Some(_) => {}
                    None => self.fail(
                        format!("strconv.ParseInt: parsing {value:?}: invalid syntax"),
                        flag.span,
                    ),
                }
            }
        }
        let shell = match rest.first() {
            Some(first) if !self.inst.json => {
                let rest_text = &self.inst.rest;
                let start = rest_text.text.len().saturating_sub(first.text.len());
                slice_mapped(rest_text, start, rest_text.text.len())
            }
            _ => MappedText::default(),
        };
        Command::Healthcheck(HealthcheckCommand::Check {
            test: self.shell_or_exec(rest, shell),
            options: flags.used.iter().map(|(_, f)| (*f).clone()).collect(),
        })
    }

    fn onbuild(&mut self) -> Command {
        let Some(trigger) = self.args().first() else {
            self.fail_here("ONBUILD requires at least one argument");
            return Command::Unknown;
        };
        self.flags(&[]);
        let trigger_upper = trigger.text.trim().to_uppercase();
        match trigger_upper.as_str() {
            "ONBUILD" => self.fail(
                "Chaining ONBUILD via `ONBUILD ONBUILD` isn't allowed",
                trigger.span,
            ),
            "MAINTAINER" | "FROM" => self.fail(
                format!("{trigger_upper} isn't allowed as an ONBUILD trigger"),
                trigger.span,
            ),
            _ => {}
        }
        match &self.inst.command {
            Command::Onbuild(inner) => Command::Onbuild(inner.clone()),
            _ => Command::Unknown,
        }
    }
}

/// `strings.EqualFold(word, "as")`, Unicode simple folding included
/// (`ſ` folds to `s`).
fn is_as(word: &str) -> bool {
    let mut chars = word.chars();
    matches!(
        (chars.next(), chars.next(), chars.next()),
        (Some('a' | 'A'), Some('s' | 'S' | '\u{17f}'), None)
    )
}

/// `^[a-z][a-z0-9-_.]*$`.
fn valid_stage_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'))
}

fn is_heredoc_word(word: &str) -> bool {
    matches!(parse_marker(word), Ok(Some(_)))
}

/// A sub-range of mapped text, still mapped.
pub fn slice_mapped(text: &MappedText, start: usize, end: usize) -> MappedText {
    let Some(sub) = text.text.get(start..end) else {
        return MappedText::default();
    };
    if sub.is_empty() {
        return MappedText::default();
    }
    let mut pieces = vec![(0, text.file_offset(start))];
    pieces.extend(
        text.pieces
            .iter()
            .filter(|&&(t, _)| t > start && t < end)
            .map(|&(t, f)| (t - start, f)),
    );
    MappedText {
        text: sub.to_string(),
        pieces,
    }
}

/// BuildKit's `parseMount` without an expander (the parse-time checks): csv
/// fields, and no variables in `from=`.
fn parse_mount(value: &str, span: Span) -> Result<Mount, String> {
    let fields = csv_fields(value).map_err(|e| format!("failed to parse csv mounts: {e}"))?;
    let mut mount = Mount {
        kind: "bind".to_string(),
        from: None,
        target: None,
        source: None,
        fields: Vec::new(),
        span,
    };
    for field in fields {
        let (key, value) = match field.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (field.clone(), None),
        };
        if let Some(v) = &value {
            match key.to_lowercase().as_str() {
                "type" => mount.kind = v.to_lowercase(),
                "from" => {
                    if v.find('$').is_some_and(|i| i + 1 != v.len()) {
                        return Err(
                            "'from' doesn't support variable expansion, define alias stage instead"
                                .to_string(),
                        );
                    }
                    mount.from = Some(v.clone());
                }
                "source" | "src" => mount.source = Some(v.clone()),
                "target" | "dst" | "destination" => mount.target = Some(v.clone()),
                _ => {}
            }
        }
        mount.fields.push((key, value));
    }
    Ok(mount)
}

/// `csvvalue.Fields`: one CSV record, Go `encoding/csv` rules.
fn csv_fields(line: &str) -> Result<Vec<String>, String> {
    let line = line
        .strip_suffix("\r\n")
        .or_else(|| line.strip_suffix('\n'))
        .unwrap_or(line);
    if line.is_empty() {
        return Err("EOF".to_string());
    }
    let bytes = line.as_bytes();
    let mut fields = Vec::new();
    let mut pos = 0;
    loop {
        if bytes.get(pos) != Some(&b'"') {
            let rest = line.get(pos..).unwrap_or_default();
            let field = rest.split(',').next().unwrap_or_default();
            if let Some(j) = field.find('"') {
                return Err(format!(
                    "parse error on line 1, column {}: bare \" in non-quoted-field",
                    pos + j + 1
                ));
            }
            fields.push(field.to_string());
            pos += field.len();
            if pos < bytes.len() {
                pos += 1;
                continue;
            }
            return Ok(fields);
        }
        pos += 1;
        let mut field = String::new();
        loop {
            let rest = line.get(pos..).unwrap_or_default();
            let Some(i) = rest.find('"') else {
                return Err(format!(
                    "parse error on line 1, column {}: extraneous or missing \" in quoted-field",
                    pos + 1
                ));
            };
            field.push_str(rest.get(..i).unwrap_or_default());
            pos += i + 1;
            match bytes.get(pos) {
                Some(b'"') => {
                    field.push('"');
                    pos += 1;
                }
                Some(b',') => {
                    pos += 1;
                    fields.push(field);
                    break;
                }
                None => {
                    fields.push(field);
                    return Ok(fields);
                }
                Some(_) => {
                    return Err(format!(
                    "parse error on line 1, column {}: extraneous or missing \" in quoted-field",
                    pos
                ))
                }
            }
        }
        if pos >= bytes.len() {
            // A trailing `",` leaves an empty last field, as in Go.
            fields.push(String::new());
            return Ok(fields);
        }
    }
}

/// `parseOptInterval`: a Go duration, zero or at least 1ms.
fn check_interval(name: &str, value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    let nanos =
        parse_go_duration(value).ok_or_else(|| format!("time: invalid duration {value:?}"))?;
    if nanos != 0 && nanos < 1_000_000 {
        return Err(format!("Interval {name:?} cannot be less than 1ms"));
    }
    Ok(())
}

/// Go's `time.ParseDuration`, in nanoseconds.
fn parse_go_duration(s: &str) -> Option<i128> {
    let (negative, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, s.get(1..)?),
        Some(b'+') => (false, s.get(1..)?),
        _ => (false, s),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let int_len = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let int_part = rest.get(..int_len)?;
        rest = rest.get(int_len..)?;
        let mut frac_part = "";
        if let Some(after) = rest.strip_prefix('.') {
            let frac_len =
                after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            frac_part = after.get(..frac_len)?;
            rest = after.get(frac_len..)?;
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return None;
        }
        let unit_len = rest
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit: i128 = match rest.get(..unit_len)? {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        rest = rest.get(unit_len..)?;
        let int_value: i128 = if int_part.is_empty() {
            0
        } else {
            int_part
                .parse()
                .ok()
                .filter(|v: &i128| *v <= i64::MAX as i128)?
        };
        let mut value = int_value.checked_mul(unit)?;
        let mut scale: i128 = 1;
        let mut frac: i128 = 0;
        for d in frac_part.bytes().take(30) {
            frac = frac * 10 + i128::from(d - b'0');
            scale *= 10;
        }
        value = value.checked_add(frac * unit / scale)?;
        total = total.checked_add(value)?;
        if total > i64::MAX as i128 + i128::from(negative) {
            return None;
        }
    }
    Some(if negative { -total } else { total })
}

/// `strconv.ParseInt(s, 10, 32)`.
fn parse_go_int32(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i32>().ok().map(i64::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_like_go() {
        assert_eq!(parse_go_duration("5s"), Some(5_000_000_000));
        assert_eq!(parse_go_duration("1m30.5s"), Some(90_500_000_000));
        assert_eq!(parse_go_duration("0"), Some(0));
        assert_eq!(parse_go_duration("5"), None);
        assert_eq!(parse_go_duration(".s"), None);
        assert!(check_interval("interval", "1us").is_err());
        assert!(check_interval("interval", "0s").is_ok());
    }

    #[test]
    fn csv_like_go() {
        assert_eq!(
            csv_fields("type=cache,target=/x").unwrap(),
            ["type=cache", "target=/x"]
        );
        assert_eq!(csv_fields(r#""a,b",c"#).unwrap(), ["a,b", "c"]);
        assert_eq!(csv_fields("a,").unwrap(), ["a", ""]);
        assert!(csv_fields(r#"a"b"#).is_err());
        assert!(csv_fields("").is_err());
    }

    #[test]
    fn stage_names() {
        assert!(valid_stage_name("build-1.x_y"));
        assert!(!valid_stage_name("1build"));
        assert!(is_as("AS") && is_as("a\u{17f}") && !is_as("ass"));
    }
}
