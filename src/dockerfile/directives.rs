//! Parser directives (`# syntax=`, `# escape=`, `# check=`) with BuildKit's
//! quirks: only at the top of the file, the first line that is not a
//! directive ends them for good, names are case-insensitive, a repeated
//! directive is an error.

/// BuildKit's `DirectiveParser`.
#[derive(Debug, Default)]
pub struct DirectiveParser {
    done: bool,
    seen: Vec<&'static str>,
}

/// A directive read from one line.
#[derive(Debug, PartialEq, Eq)]
pub struct RawDirective {
    pub name: &'static str,
    pub value: String,
}

const KNOWN: [&str; 3] = ["syntax", "escape", "check"];

impl DirectiveParser {
    /// Look at one line (trailing newline and leading whitespace removed).
    /// `Ok(None)` when it is not a directive; an error for a repeat.
    pub fn parse_line(&mut self, line: &str) -> Result<Option<RawDirective>, String> {
        if self.done {
            return Ok(None);
        }
        let Some((name, value)) = line.strip_prefix('#').and_then(match_directive) else {
            self.done = true;
            return Ok(None);
        };
        let lower = name.to_ascii_lowercase();
        let Some(&name) = KNOWN.iter().find(|k| **k == lower) else {
            self.done = true;
            return Ok(None);
        };
        if self.seen.contains(&name) {
            return Err(format!("only one {name} parser directive can be used"));
        }
        self.seen.push(name);
        Ok(Some(RawDirective {
            name,
            value: value.to_string(),
        }))
    }
}

/// RE2's `\s`: what BuildKit's directive regex treats as blank.
fn is_re_space(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\x0c' | '\r' | ' ')
}

/// `^([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.+?)\s*$` on the text after `#` and
/// leading whitespace, without a regex engine.
fn match_directive(after_hash: &str) -> Option<(&str, &str)> {
    let text = after_hash.trim_start_matches(char::is_whitespace);
    if !text.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let name_end = text
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(text.len());
    let (name, rest) = text.split_at(name_end);
    let rest = rest.trim_start_matches(is_re_space).strip_prefix('=')?;
    let trimmed_start = rest.trim_start_matches(is_re_space);
    if trimmed_start.is_empty() {
        // The lazy `(.+?)` still takes one char when only blanks follow `=`:
        // the regex backtracks and the value is the last blank.
        let last = rest.chars().next_back()?;
        return Some((name, rest.get(rest.len() - last.len_utf8()..)?));
    }
    Some((name, trimmed_start.trim_end_matches(is_re_space)))
}

/// BuildKit accepts only `\` and `` ` `` as escape characters.
pub fn escape_token(value: &str) -> Result<char, String> {
    match value {
        "\\" => Ok('\\'),
        "`" => Ok('`'),
        _ => Err(format!(
            "invalid escape token '{value}' does not match ` or \\"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directive_syntax() {
        assert_eq!(match_directive(" escape = `"), Some(("escape", "`")));
        assert_eq!(match_directive("syntax=a b "), Some(("syntax", "a b")));
        assert_eq!(match_directive("escape=  "), Some(("escape", " ")));
        assert_eq!(match_directive("escape="), None);
        assert_eq!(match_directive("1x=y"), None);
    }

    #[test]
    fn directives_stop_and_repeat() {
        let mut p = DirectiveParser::default();
        assert!(p.parse_line("# ESCAPE=`").unwrap().is_some());
        assert!(p.parse_line("# escape=\\").is_err());
        let mut p = DirectiveParser::default();
        assert!(p.parse_line("# hello").unwrap().is_none());
        assert!(p.parse_line("# syntax=x").unwrap().is_none());
    }
}
