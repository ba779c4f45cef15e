//! BuildKit's word-level splitters on a logical line: keyword and rest
//! (`splitCommand`), `--flag` extraction (`extractBuilderFlags`), quoted
//! words (`parseWords`) and whitespace fields. Each result carries its byte
//! range in the line so spans can be mapped back to the file.
//!
//! `extractBuilderFlags` walks bytes, not chars: it tests each byte with
//! `unicode.IsSpace(rune(b))` (so bytes 0x85 and 0xA0 inside a UTF-8 char
//! end a flag) and appends bytes as Latin-1 runes. We keep both quirks; a
//! split that would land inside a char moves to the char's end.

/// A piece of a line: text and its byte range in the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    pub text: String,
    pub start: usize,
    pub end: usize,
}

/// Go's `regexp` class `[\t\v\f\r ]`, BuildKit's `reWhitespace`.
pub fn is_re_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\x0b' | '\x0c' | '\r' | ' ')
}

/// `unicode.IsSpace(rune(b))` for a single byte read as Latin-1.
fn is_byte_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ' | 0x85 | 0xa0)
}

/// Go's `strings.TrimSpace` as a byte range of `text[start..end]`.
pub fn trim_range(text: &str, start: usize, end: usize) -> (usize, usize) {
    let Some(slice) = text.get(start..end) else {
        return (start, start);
    };
    let lead = slice.len() - slice.trim_start_matches(char::is_whitespace).len();
    let trimmed = slice.trim_matches(char::is_whitespace);
    (start + lead, start + lead + trimmed.len())
}

fn ceil_boundary(text: &str, mut pos: usize) -> usize {
    while pos < text.len() && !text.is_char_boundary(pos) {
        pos += 1;
    }
    pos.min(text.len())
}

/// The keyword, the flags and the rest of an instruction line.
#[derive(Debug)]
pub struct SplitCommand {
    pub keyword: Piece,
    pub flags: Vec<Piece>,
    /// Byte range of the arguments (trimmed); empty when there are none.
    pub args: (usize, usize),
}

/// BuildKit's `splitCommand` on `line[start..end]`.
pub fn split_command(line: &str, start: usize, end: usize, escape: char) -> SplitCommand {
    let (start, end) = trim_range(line, start, end);
    let body = line.get(start..end).unwrap_or_default();
    let keyword_end = body.find(is_re_whitespace).unwrap_or(body.len());
    let keyword = Piece {
        text: body.get(..keyword_end).unwrap_or_default().to_string(),
        start,
        end: start + keyword_end,
    };
    let after = body.get(keyword_end..).unwrap_or_default();
    if after.is_empty() {
        return SplitCommand {
            keyword,
            flags: Vec::new(),
            args: (end, end),
        };
    }
    let rest_start =
        start + keyword_end + (after.len() - after.trim_start_matches(is_re_whitespace).len());
    let (flags, args_start) = extract_builder_flags(line, rest_start, end, escape);
    let args = match args_start {
        Some(s) => trim_range(line, s, end),
        None => (end, end),
    };
    SplitCommand {
        keyword,
        flags,
        args,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Spaces,
    Word,
    Quote,
}

/// BuildKit's `extractBuilderFlags` on `line[start..end]`: the flag words
/// and where the remaining arguments begin (`None`: nothing remains).
fn extract_builder_flags(
    line: &str,
    start: usize,
    end: usize,
    escape: char,
) -> (Vec<Piece>, Option<usize>) {
    let bytes = line.as_bytes();
    let mut words = Vec::new();
    let mut phase = Phase::Spaces;
    let mut word = String::new();
    let mut word_start = start;
    let mut quote = 0u8;
    let mut blank_ok = false;
    let escape = escape as u32 as u8;
    let mut pos = start;
    while pos <= end {
        let ch = if pos < end {
            bytes.get(pos).copied().unwrap_or(0)
        } else {
            0
        };
        if phase == Phase::Spaces {
            if pos == end {
                break;
            }
            if is_byte_space(ch) {
                pos += 1;
                continue;
            }
            let next = if pos + 1 < end {
                bytes.get(pos + 1).copied()
            } else {
                None
            };
            if ch != b'-' || next != Some(b'-') {
                return (words, Some(ceil_boundary(line, pos)));
            }
            phase = Phase::Word;
            word_start = pos;
        }
        if pos == end {
            if word != "--" && (blank_ok || !word.is_empty()) {
                words.push(Piece {
                    text: std::mem::take(&mut word),
                    start: word_start,
                    end,
                });
            }
            break;
        }
        let mut ch = ch;
        if phase == Phase::Word {
            if is_byte_space(ch) {
                phase = Phase::Spaces;
                if word == "--" {
                    return (words, Some(ceil_boundary(line, pos)));
                }
                if blank_ok || !word.is_empty() {
                    words.push(Piece {
                        text: std::mem::take(&mut word),
                        start: word_start,
                        // A 0x85/0xA0 byte inside a char ended the word;
                        // the span takes the whole char.
                        end: ceil_boundary(line, pos),
                    });
                }
                word.clear();
                blank_ok = false;
                pos += 1;
                continue;
            }
            if ch == b'\'' || ch == b'"' {
                quote = ch;
                blank_ok = true;
                phase = Phase::Quote;
                pos += 1;
                continue;
            }
            if ch == escape {
                if pos + 1 == end {
                    pos += 1;
                    continue;
                }
                pos += 1;
                ch = bytes.get(pos).copied().unwrap_or(0);
            }
            word.push(char::from(ch));
            pos += 1;
            continue;
        }
        // Quote phase.
        if ch == quote {
            phase = Phase::Word;
            pos += 1;
            continue;
        }
        if ch == escape {
            if pos + 1 == end {
                phase = Phase::Word;
                pos += 1;
                continue;
            }
            pos += 1;
            ch = bytes.get(pos).copied().unwrap_or(0);
        }
        word.push(char::from(ch));
        pos += 1;
    }
    (words, None)
}

/// BuildKit's `parseWords` on `line[start..end]`: words split on unquoted
/// whitespace, quotes and escapes kept in the text.
pub fn parse_words(line: &str, start: usize, end: usize, escape: char) -> Vec<Piece> {
    let Some(rest) = line.get(start..end) else {
        return Vec::new();
    };
    let mut words = Vec::new();
    let mut phase = Phase::Spaces;
    let mut quote = '\0';
    let mut blank_ok = false;
    let mut word = String::new();
    let mut word_start = 0;
    let mut chars = rest.char_indices().peekable();
    while let Some((pos, ch)) = chars.next() {
        if phase == Phase::Spaces {
            if ch.is_whitespace() {
                continue;
            }
            phase = Phase::Word;
            word_start = pos;
        }
        let at_end =
            |chars: &mut std::iter::Peekable<std::str::CharIndices>| chars.peek().is_none();
        if phase == Phase::Word {
            if ch.is_whitespace() {
                phase = Phase::Spaces;
                if blank_ok || !word.is_empty() {
                    words.push(Piece {
                        text: std::mem::take(&mut word),
                        start: start + word_start,
                        end: start + pos,
                    });
                }
                word.clear();
                blank_ok = false;
                continue;
            }
            if ch == '\'' || ch == '"' {
                quote = ch;
                blank_ok = true;
                phase = Phase::Quote;
            }
            if ch == escape {
                if at_end(&mut chars) {
                    continue;
                }
                // Unquoted, the escape and the next char both stay.
                word.push(ch);
                if let Some((_, next)) = chars.next() {
                    word.push(next);
                }
                continue;
            }
            word.push(ch);
            continue;
        }
        // Quote phase.
        if ch == quote {
            phase = Phase::Word;
        }
        if ch == escape && quote != '\'' {
            if at_end(&mut chars) {
                phase = Phase::Word;
                continue;
            }
            word.push(ch);
            if let Some((_, next)) = chars.next() {
                word.push(next);
            }
            continue;
        }
        word.push(ch);
    }
    if phase != Phase::Spaces && (blank_ok || !word.is_empty()) {
        words.push(Piece {
            text: word,
            start: start + word_start,
            end,
        });
    }
    words
}

/// BuildKit's `parseStringsWhitespaceDelimited`: fields between runs of
/// `[\t\v\f\r ]` (the text is already trimmed).
pub fn split_whitespace(line: &str, start: usize, end: usize) -> Vec<Piece> {
    let Some(rest) = line.get(start..end) else {
        return Vec::new();
    };
    if rest.is_empty() {
        return Vec::new();
    }
    let mut fields = Vec::new();
    let mut field_start = 0;
    let mut in_gap = false;
    for (pos, ch) in rest.char_indices() {
        if is_re_whitespace(ch) {
            if !in_gap {
                fields.push(piece(line, start + field_start, start + pos));
                in_gap = true;
            }
        } else if in_gap {
            in_gap = false;
            field_start = pos;
        }
    }
    if in_gap {
        // Go's regexp.Split leaves an empty last field after a trailing gap.
        fields.push(piece(line, end, end));
    } else {
        fields.push(piece(line, start + field_start, end));
    }
    fields
}

/// `line[start..end]` as a piece.
pub fn piece(line: &str, start: usize, end: usize) -> Piece {
    Piece {
        text: line.get(start..end).unwrap_or_default().to_string(),
        start,
        end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> (String, Vec<String>, String) {
        let s = split_command(line, 0, line.len(), '\\');
        (
            s.keyword.text,
            s.flags.into_iter().map(|f| f.text).collect(),
            line[s.args.0..s.args.1].to_string(),
        )
    }

    #[test]
    fn flags_like_buildkit() {
        assert_eq!(
            split("COPY --from=a --link x y"),
            (
                "COPY".into(),
                vec!["--from=a".into(), "--link".into()],
                "x y".into()
            )
        );
        assert_eq!(
            split("CMD --doit -- [ ]"),
            ("CMD".into(), vec!["--doit".into()], "[ ]".into())
        );
        assert_eq!(split("RUN --x=\"a b\" c").1, ["--x=a b"]);
        assert_eq!(split("RUN --x=é c").1, ["--x=\u{c3}\u{a9}"]);
        // U+04E0 is D3 A0: Go's byte-wise IsSpace ends the flag at 0xA0.
        let line = "RUN --a=\u{4e0}b c";
        let s = split_command(line, 0, line.len(), '\\');
        assert_eq!(s.flags[0].text, "--a=\u{d3}");
        assert_eq!(s.flags[0].end, 10);
        assert_eq!(&line[s.args.0..s.args.1], "b c");
        assert_eq!(split("  FROM  "), ("FROM".into(), vec![], "".into()));
    }

    #[test]
    fn words_keep_quotes() {
        let w: Vec<String> = parse_words(r#"a="b c" d\ e 'f'"#, 0, 16, '\\')
            .into_iter()
            .map(|p| p.text)
            .collect();
        assert_eq!(w, [r#"a="b c""#, r"d\ e", "'f'"]);
    }

    #[test]
    fn whitespace_fields() {
        let f: Vec<String> = split_whitespace("a  b\tc", 0, 6)
            .into_iter()
            .map(|p| p.text)
            .collect();
        assert_eq!(f, ["a", "b", "c"]);
    }
}
