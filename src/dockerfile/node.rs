//! BuildKit's `parser.Node` for one logical line: the keyword, its flags and
//! its argument words as each instruction's line parser (`line_parsers.go`)
//! produces them, with byte ranges in the logical line.

use crate::dockerfile::json::{parse_string_array, JsonError};
use crate::dockerfile::words::{
    is_re_whitespace, parse_words, piece, split_command, split_whitespace, Piece,
};

/// ONBUILD nests by recursion in BuildKit; we stop well before our stack does.
const MAX_ONBUILD_DEPTH: usize = 32;

/// One instruction as BuildKit's parser sees it.
#[derive(Debug)]
pub struct RawNode {
    pub keyword: Piece,
    pub flags: Vec<Piece>,
    /// BuildKit's `Next` chain (for ONBUILD: empty, see `child`).
    pub args: Vec<Piece>,
    pub json: bool,
    /// Range of the text after keyword and flags.
    pub rest: (usize, usize),
    /// ONBUILD's trigger instruction.
    pub child: Option<Box<RawNode>>,
}

impl RawNode {
    /// BuildKit's `canContainHeredoc`.
    pub fn can_contain_heredoc(&self) -> bool {
        let node = match (
            &self.child,
            self.keyword.text.eq_ignore_ascii_case("onbuild"),
        ) {
            (Some(child), true) => child,
            _ => self,
        };
        let keyword = node.keyword.text.to_lowercase();
        matches!(keyword.as_str(), "run" | "copy" | "add") && !node.json
    }

    /// BuildKit's `nodeArgs`: ONBUILD's trigger is flattened into its args.
    pub fn flat_args(&self) -> Vec<Piece> {
        match &self.child {
            Some(child) => {
                let mut args = vec![child.keyword.clone()];
                args.extend(child.flat_args());
                args
            }
            None => self.args.clone(),
        }
    }
}

/// BuildKit's `newNodeFromLine` on `line[start..end]`.
pub fn node_from_line(
    line: &str,
    start: usize,
    end: usize,
    escape: char,
    depth: usize,
) -> Result<RawNode, String> {
    let split = split_command(line, start, end, escape);
    let (rest_start, rest_end) = split.args;
    let mut node = RawNode {
        keyword: split.keyword,
        flags: split.flags,
        args: Vec::new(),
        json: false,
        rest: split.args,
        child: None,
    };
    let rest = line.get(rest_start..rest_end).unwrap_or_default();
    match node.keyword.text.to_lowercase().as_str() {
        "add" | "copy" | "volume" => {
            (node.args, node.json) = maybe_json_to_list(line, rest_start, rest_end)?;
        }
        "cmd" | "entrypoint" | "run" | "shell" => {
            (node.args, node.json) = maybe_json(line, rest_start, rest_end)?;
        }
        "arg" => node.args = parse_words(line, rest_start, rest_end, escape),
        "env" => node.args = name_val(line, rest_start, rest_end, escape, "ENV")?,
        "label" => node.args = name_val(line, rest_start, rest_end, escape, "LABEL")?,
        "expose" | "from" => node.args = split_whitespace(line, rest_start, rest_end),
        "maintainer" | "stopsignal" | "user" | "workdir" => {
            if !rest.is_empty() {
                node.args = vec![piece(line, rest_start, rest_end)];
            }
        }
        "healthcheck" => (node.args, node.json) = health_config(line, rest_start, rest_end)?,
        "onbuild" => {
            if !rest.is_empty() {
                if depth >= MAX_ONBUILD_DEPTH {
                    return Err("ONBUILD triggers nested too deeply".to_string());
                }
                let child = node_from_line(line, rest_start, rest_end, escape, depth + 1)?;
                node.child = Some(Box::new(child));
            }
        }
        // BuildKit's parser keeps unknown instructions with one empty word.
        _ => node.args = vec![piece(line, rest_start, rest_start)],
    }
    Ok(node)
}

fn json_pieces(line: &str, start: usize, end: usize) -> Result<Option<Vec<Piece>>, String> {
    match parse_string_array(line.get(start..end).unwrap_or_default()) {
        Ok(strings) => Ok(Some(
            strings
                .into_iter()
                .map(|s| Piece {
                    text: s.text,
                    start: start + s.start,
                    end: start + s.end,
                })
                .collect(),
        )),
        Err(JsonError::NotStringArray) => Err(
            "when using JSON array syntax, arrays must be comprised of strings only".to_string(),
        ),
        Err(_) => Ok(None),
    }
}

/// BuildKit's `parseMaybeJSON`: exec form, or the whole rest as one word.
fn maybe_json(line: &str, start: usize, end: usize) -> Result<(Vec<Piece>, bool), String> {
    if start >= end {
        return Ok((Vec::new(), false));
    }
    if let Some(words) = json_pieces(line, start, end)? {
        return Ok((words, true));
    }
    Ok((vec![piece(line, start, end)], false))
}

/// BuildKit's `parseMaybeJSONToList`: exec form, or whitespace fields.
fn maybe_json_to_list(line: &str, start: usize, end: usize) -> Result<(Vec<Piece>, bool), String> {
    if let Some(words) = json_pieces(line, start, end)? {
        return Ok((words, true));
    }
    Ok((split_whitespace(line, start, end), false))
}

/// BuildKit's `parseNameVal` (ENV, LABEL): `key value` (legacy) or
/// `k=v k2=v2`, as triples `key, value, separator`.
fn name_val(
    line: &str,
    start: usize,
    end: usize,
    escape: char,
    command: &str,
) -> Result<Vec<Piece>, String> {
    let words = parse_words(line, start, end, escape);
    let Some(first) = words.first() else {
        return Ok(Vec::new());
    };
    if !first.text.contains('=') {
        let rest = line.get(start..end).unwrap_or_default();
        let Some(gap) = rest.find(is_re_whitespace) else {
            return Err(format!("{command} must have two arguments"));
        };
        let after = rest.get(gap..).unwrap_or_default();
        let value_start =
            start + gap + (after.len() - after.trim_start_matches(is_re_whitespace).len());
        return Ok(vec![
            piece(line, start, start + gap),
            piece(line, value_start, end),
            piece(line, end, end),
        ]);
    }
    let mut out = Vec::with_capacity(words.len() * 3);
    for word in words {
        let Some(eq) = word.text.find('=') else {
            return Err(format!(
                "Syntax error - can't find = in {:?}. Must be of the form: name=value",
                word.text
            ));
        };
        let (key, value) = (&word.text[..eq], &word.text[eq + 1..]);
        // parseWords keeps the source bytes of a word, so offsets carry over.
        let eq_at = word.start + eq;
        out.push(Piece {
            text: key.to_string(),
            start: word.start,
            end: eq_at,
        });
        out.push(Piece {
            text: value.to_string(),
            start: eq_at + 1,
            end: word.end,
        });
        out.push(Piece {
            text: "=".to_string(),
            start: eq_at,
            end: eq_at + 1,
        });
    }
    Ok(out)
}

/// BuildKit's `parseHealthConfig`: a type word, then `parseMaybeJSON`. It
/// looks for the first blank byte by byte, like `extractBuilderFlags`.
fn health_config(line: &str, start: usize, end: usize) -> Result<(Vec<Piece>, bool), String> {
    let bytes = line.as_bytes();
    let is_space = |b: u8| matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ' | 0x85 | 0xa0);
    let mut sep = start;
    while sep < end && !bytes.get(sep).copied().is_some_and(is_space) {
        sep += 1;
    }
    while sep < end && !line.is_char_boundary(sep) {
        sep += 1;
    }
    let mut next = sep;
    while next < end && bytes.get(next).copied().is_some_and(is_space) {
        next += 1;
    }
    while next < end && !line.is_char_boundary(next) {
        next += 1;
    }
    if sep == start {
        return Ok((Vec::new(), false));
    }
    let (command, json) = maybe_json(line, next, end)?;
    let mut args = vec![piece(line, start, sep)];
    args.extend(command);
    Ok((args, json))
}
