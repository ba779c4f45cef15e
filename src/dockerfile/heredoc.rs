//! Heredoc markers (`<<EOF`, `<<-EOF`, `<<"EOF"`, `3<<EOF`) on a RUN/COPY/ADD
//! line, found the way BuildKit finds them: the whole logical line is split
//! into shell words (quotes and escapes kept, an unlexable line has none),
//! and each word is matched against `^(\d*)<<(-?)\s*([^<]*)$`.

use crate::dockerfile::shlex::{process_words, LexError, LexOptions};

/// A heredoc marker: its delimiter and how the body is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    pub name: String,
    pub expand: bool,
    pub chomp: bool,
}

const LINE_WORDS: LexOptions = LexOptions {
    escape: '\\',
    raw_quotes: true,
    raw_escapes: true,
    verbatim_vars: false,
};

/// BuildKit's `heredocsFromLine`. An error is fatal to the parse.
pub fn markers_in_line(line: &str) -> Result<Vec<Marker>, String> {
    // BuildKit ignores the lexer's error here: the line then has no words.
    let words = process_words(line, LINE_WORDS).unwrap_or_default();
    let mut markers = Vec::new();
    for word in words {
        if let Some(marker) = parse_marker(&word)? {
            markers.push(marker);
        }
    }
    Ok(markers)
}

/// BuildKit's `ParseHeredoc` on one word.
pub fn parse_marker(word: &str) -> Result<Option<Marker>, String> {
    let digits = word.len() - word.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let Some(after) = word.get(digits..).and_then(|w| w.strip_prefix("<<")) else {
        return Ok(None);
    };
    let (chomp, after) = match after.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, after),
    };
    let rest = after.trim_start_matches(['\t', '\n', '\x0c', '\r', ' ']);
    if rest.contains('<') || rest.is_empty() {
        return Ok(None);
    }
    let lex_error =
        |_: LexError| format!("failed to process {rest:?}: unterminated quote or bad substitution");
    let cooked = LexOptions {
        escape: '\\',
        raw_quotes: false,
        raw_escapes: false,
        verbatim_vars: false,
    };
    let words = process_words(rest, cooked).map_err(lex_error)?;
    let [name] = words.as_slice() else {
        return Ok(None);
    };
    let raw_words = process_words(
        rest,
        LexOptions {
            raw_quotes: true,
            ..cooked
        },
    )
    .map_err(lex_error)?;
    let [raw] = raw_words.as_slice() else {
        return Err(format!(
            "internal lexing of heredoc produced inconsistent results: {rest}"
        ));
    };
    // A quote anywhere in the delimiter turns expansion off.
    let quotes = |s: &str| s.chars().filter(|c| matches!(c, '\'' | '"')).count();
    Ok(Some(Marker {
        name: name.clone(),
        expand: quotes(name) == quotes(raw),
        chomp,
    }))
}

/// BuildKit's `ChompHeredocContent`: leading tabs off every line.
pub fn chomp(content: &str) -> String {
    let mut out = String::with_capacity(content.len());
    for line in content.split_inclusive('\n') {
        out.push_str(line.trim_start_matches('\t'));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(line: &str) -> Vec<(String, bool, bool)> {
        markers_in_line(line)
            .unwrap()
            .into_iter()
            .map(|m| (m.name, m.expand, m.chomp))
            .collect()
    }

    #[test]
    fn buildkit_heredoc_cases() {
        assert_eq!(names("RUN <<EOF"), [("EOF".into(), true, false)]);
        assert_eq!(names("RUN 3<<EOF"), [("EOF".into(), true, false)]);
        assert_eq!(names("RUN <<-'X' python3"), [("X".into(), false, true)]);
        assert_eq!(names("RUN <<eo'f'"), [("eof".into(), false, false)]);
        assert_eq!(names("RUN <<'one two'"), [("one two".into(), false, false)]);
        assert_eq!(names("RUN <<  EOF  > foo"), [("EOF".into(), true, false)]);
        assert_eq!(names("RUN <<$EOF"), [("$EOF".into(), true, false)]);
        assert!(names("RUN \"<<NOHEREDOC\"").is_empty());
        assert!(names("RUN cat<<EOF").is_empty());
        assert!(names("RUN echo don't <<EOF").is_empty());
        assert_eq!(names("COPY <<A <<B /d").len(), 2);
    }

    #[test]
    fn chomp_strips_tabs_per_line() {
        assert_eq!(chomp("\ta\n\t\tb\n c\n"), "a\nb\n c\n");
    }
}
