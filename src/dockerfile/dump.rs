//! BuildKit's `Node.Dump()` text for a parsed file: one `(keyword …)` line
//! per instruction, flags as a Go `%q` list, arguments Go-quoted. This is
//! the format of BuildKit's parser test `result` files, so conformance can
//! be checked byte for byte.

use crate::dockerfile::ast::{Command, Dockerfile, Instruction};

/// The dump of the whole file, each instruction on its own line.
pub fn dump(dockerfile: &Dockerfile) -> String {
    let mut out = String::new();
    for instruction in &dockerfile.instructions {
        out.push('(');
        out.push_str(&dump_instruction(instruction));
        out.push_str(")\n");
    }
    out
}

/// One instruction without the outer parentheses (BuildKit's `Node.Dump`
/// of a child node, trimmed).
pub fn dump_instruction(instruction: &Instruction) -> String {
    let mut out = instruction.keyword.clone();
    if !instruction.flags.is_empty() {
        out.push_str(" [");
        for (i, flag) in instruction.flags.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            let text = match &flag.value {
                Some(value) => format!("--{}={}", flag.name, value),
                None => format!("--{}", flag.name),
            };
            out.push_str(&go_quote(&text));
        }
        out.push(']');
    }
    match &instruction.command {
        Command::Onbuild(inner) if instruction.keyword == "onbuild" => {
            out.push_str(" (");
            out.push_str(&dump_instruction(inner));
            out.push(')');
        }
        _ => {
            for arg in &instruction.args {
                out.push(' ');
                out.push_str(&go_quote(&arg.text));
            }
        }
    }
    out.trim_matches(char::is_whitespace).to_string()
}

/// Go's `strconv.Quote`.
pub fn go_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            c if is_go_printable(c) => out.push(c),
            c if (c as u32) < 0x20 || c == '\x7f' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// An approximation of Go's `strconv.IsPrint` without Unicode tables:
/// controls, separators other than the ASCII space, format characters,
/// private use and non-characters are not printable.
fn is_go_printable(c: char) -> bool {
    let u = c as u32;
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(u,
        0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x180e | 0x200b..=0x200f
        | 0x202a..=0x202e | 0x2060..=0x206f | 0xd800..=0xf8ff | 0xfeff | 0xfff9..=0xfffb
        | 0xfffe | 0xffff | 0xe0000..=0xe007f | 0xf0000..=0x10ffff)
        && (u & 0xfffe) != 0xfffe
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_go() {
        assert_eq!(go_quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(go_quote("\t\u{1}é\u{a0}"), r#""\t\x01é\u00a0""#);
    }
}
