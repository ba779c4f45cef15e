//! Exec-form detection: a JSON array of strings, judged as Go's
//! `encoding/json` judges it (BuildKit unmarshals into `[]any`).
//!
//! The validator is iterative (an explicit container stack, Go's nesting
//! limit of 10000), so hostile input cannot overflow our stack.

/// Why text is not an exec-form array. Only `NotStringArray` is fatal in
/// BuildKit; the others fall back to shell form.
#[derive(Debug, PartialEq, Eq)]
pub enum JsonError {
    NotArray,
    Syntax,
    NotStringArray,
}

/// A string element: decoded text and its byte range in the input (quotes
/// included).
#[derive(Debug, PartialEq, Eq)]
pub struct JsonString {
    pub text: String,
    pub start: usize,
    pub end: usize,
}

/// Go's `maxNestingDepth`.
const MAX_DEPTH: usize = 10_000;

/// BuildKit's `parseJSON`.
pub fn parse_string_array(input: &str) -> Result<Vec<JsonString>, JsonError> {
    let offset = input.len() - input.trim_start_matches(char::is_whitespace).len();
    let bytes = input.as_bytes();
    if bytes.get(offset) != Some(&b'[') {
        return Err(JsonError::NotArray);
    }
    let mut p = Parser {
        bytes,
        pos: offset,
        strings: Vec::new(),
        all_strings: true,
    };
    p.document()?;
    if !p.all_strings {
        return Err(JsonError::NotStringArray);
    }
    Ok(p.strings)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Container {
    Array,
    Object,
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
    strings: Vec<JsonString>,
    all_strings: bool,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), JsonError> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(JsonError::Syntax)
        }
    }

    /// The whole input: one value (an array, checked by the caller) and
    /// nothing but whitespace after it.
    fn document(&mut self) -> Result<(), JsonError> {
        let mut stack: Vec<Container> = Vec::new();
        // Parse a value; containers push and the loop resumes them.
        'value: loop {
            self.skip_ws();
            let depth = stack.len();
            match self.peek() {
                Some(b'[') => {
                    self.pos += 1;
                    if depth == 1 {
                        self.all_strings = false;
                    }
                    stack.push(Container::Array);
                    if stack.len() > MAX_DEPTH {
                        return Err(JsonError::Syntax);
                    }
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        stack.pop();
                    } else {
                        continue 'value;
                    }
                }
                Some(b'{') => {
                    self.pos += 1;
                    if depth == 1 {
                        self.all_strings = false;
                    }
                    stack.push(Container::Object);
                    if stack.len() > MAX_DEPTH {
                        return Err(JsonError::Syntax);
                    }
                    self.skip_ws();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        stack.pop();
                    } else {
                        self.object_key()?;
                        continue 'value;
                    }
                }
                Some(b'"') => {
                    let start = self.pos;
                    let text = self.string()?;
                    if depth == 1 {
                        self.strings.push(JsonString {
                            text,
                            start,
                            end: self.pos,
                        });
                    }
                }
                Some(_) => {
                    self.scalar()?;
                    if depth == 1 {
                        self.all_strings = false;
                    }
                }
                None => return Err(JsonError::Syntax),
            }
            // After a value: close containers or move to the next element.
            loop {
                self.skip_ws();
                let Some(&top) = stack.last() else {
                    return if self.pos == self.bytes.len() {
                        Ok(())
                    } else {
                        Err(JsonError::Syntax)
                    };
                };
                match (top, self.peek()) {
                    (_, Some(b',')) => {
                        self.pos += 1;
                        if top == Container::Object {
                            self.skip_ws();
                            self.object_key()?;
                        }
                        continue 'value;
                    }
                    (Container::Array, Some(b']')) | (Container::Object, Some(b'}')) => {
                        self.pos += 1;
                        stack.pop();
                    }
                    _ => return Err(JsonError::Syntax),
                }
            }
        }
    }

    /// `"key"` and `:` of an object member.
    fn object_key(&mut self) -> Result<(), JsonError> {
        if self.peek() != Some(b'"') {
            return Err(JsonError::Syntax);
        }
        self.string()?;
        self.skip_ws();
        self.expect(b':')
    }

    fn scalar(&mut self) -> Result<(), JsonError> {
        for literal in [&b"true"[..], b"false", b"null"] {
            if self
                .bytes
                .get(self.pos..)
                .is_some_and(|r| r.starts_with(literal))
            {
                self.pos += literal.len();
                return Ok(());
            }
        }
        self.number()
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<(), JsonError> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(JsonError::Syntax),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(JsonError::Syntax);
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(JsonError::Syntax);
            }
        }
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let digits = self
            .bytes
            .get(self.pos..self.pos + 4)
            .ok_or(JsonError::Syntax)?;
        let mut value = 0u32;
        for &d in digits {
            let v = (d as char).to_digit(16).ok_or(JsonError::Syntax)?;
            value = value * 16 + v;
        }
        self.pos += 4;
        Ok(value)
    }

    /// A string literal, decoded as Go decodes it (bad surrogates become
    /// U+FFFD).
    fn string(&mut self) -> Result<String, JsonError> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            let Some(b) = self.peek() else {
                return Err(JsonError::Syntax);
            };
            self.pos += 1;
            match b {
                b'"' => break,
                0..=0x1f => return Err(JsonError::Syntax),
                b'\\' => {
                    let Some(e) = self.peek() else {
                        return Err(JsonError::Syntax);
                    };
                    self.pos += 1;
                    let simple = match e {
                        b'"' => Some(b'"'),
                        b'\\' => Some(b'\\'),
                        b'/' => Some(b'/'),
                        b'b' => Some(0x08),
                        b'f' => Some(0x0c),
                        b'n' => Some(b'\n'),
                        b'r' => Some(b'\r'),
                        b't' => Some(b'\t'),
                        b'u' => None,
                        _ => return Err(JsonError::Syntax),
                    };
                    if let Some(byte) = simple {
                        out.push(byte);
                        continue;
                    }
                    let first = self.hex4()?;
                    let ch = if (0xD800..0xDC00).contains(&first)
                        && self.bytes.get(self.pos..self.pos + 2) == Some(b"\\u")
                    {
                        let save = self.pos;
                        self.pos += 2;
                        let second = self.hex4()?;
                        if (0xDC00..0xE000).contains(&second) {
                            char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
                        } else {
                            // Go leaves the second escape to be read on its own.
                            self.pos = save;
                            None
                        }
                    } else {
                        char::from_u32(first)
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(
                        ch.unwrap_or('\u{fffd}').encode_utf8(&mut buf).as_bytes(),
                    );
                }
                _ => out.push(b),
            }
        }
        // The input is valid UTF-8 and escapes produce whole chars.
        Ok(String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Result<Vec<String>, JsonError> {
        parse_string_array(s).map(|v| v.into_iter().map(|j| j.text).collect())
    }

    #[test]
    fn go_json_semantics() {
        assert_eq!(texts(r#"  ["a", "b\"c"]"#).unwrap(), ["a", "b\"c"]);
        assert_eq!(texts("[]").unwrap(), Vec::<String>::new());
        assert_eq!(
            texts(r#"["\ud83d\ude00", "\ud800"]"#).unwrap(),
            ["😀", "\u{fffd}"]
        );
        assert_eq!(texts("['a']"), Err(JsonError::Syntax));
        assert_eq!(texts(r#"["a""#), Err(JsonError::Syntax));
        assert_eq!(texts(r#"["a"] x"#), Err(JsonError::Syntax));
        assert_eq!(texts(r#"["a", ["b"]]"#), Err(JsonError::NotStringArray));
        assert_eq!(
            texts(r#"["a", {"k": [1, null]}]"#),
            Err(JsonError::NotStringArray)
        );
        assert_eq!(texts("echo"), Err(JsonError::NotArray));
        let deep = "[".repeat(10_001) + &"]".repeat(10_001);
        assert_eq!(texts(&deep), Err(JsonError::Syntax));
        let ok_deep = "[".repeat(10_000) + &"]".repeat(10_000);
        assert_eq!(texts(&ok_deep), Err(JsonError::NotStringArray));
    }
}
