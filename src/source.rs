//! Source text and byte spans: the coordinates every finding is anchored to.
//!
//! Parsers and rules speak in byte offsets ([`Span`]); only rendering turns
//! them into 1-based lines and columns, through [`SourceFile::line_col`].

use serde::Serialize;

/// A half-open byte range `start..end` into a [`SourceFile`]'s text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub const fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }

    /// The smallest span covering both.
    pub fn cover(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    pub fn len(self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}

/// A 1-based line and column; the column counts Unicode scalar values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct LineCol {
    pub line: usize,
    pub column: usize,
}

/// A named text with a line index, so spans can be shown as lines and columns.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The name shown to users: the path as given, or `<stdin>`.
    pub name: String,
    pub text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        let text = text.into();
        let mut line_starts = vec![0];
        line_starts.extend(memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        SourceFile {
            name: name.into(),
            text,
            line_starts,
        }
    }

    /// Line and column of a byte offset (clamped to the text).
    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = offset.min(self.text.len());
        let line_index = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let line_start = self.line_starts[line_index];
        let column = self.text[line_start..floor_char_boundary(&self.text, offset)]
            .chars()
            .count()
            + 1;
        LineCol {
            line: line_index + 1,
            column,
        }
    }

    /// The text of 1-based line `line`, without its line ending.
    pub fn line_text(&self, line: usize) -> &str {
        let Some(&start) = self.line_starts.get(line.wrapping_sub(1)) else {
            return "";
        };
        let end = self
            .line_starts
            .get(line)
            .copied()
            .unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    /// Byte offset where 1-based line `line` starts.
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts
            .get(line.wrapping_sub(1))
            .copied()
            .unwrap_or(self.text.len())
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

fn memchr_iter(needle: u8, haystack: &[u8]) -> impl Iterator<Item = usize> + '_ {
    haystack
        .iter()
        .enumerate()
        .filter(move |(_, &b)| b == needle)
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        let file = SourceFile::new("f", "FROM a\nRUN é x\n");
        assert_eq!(file.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(file.line_col(7), LineCol { line: 2, column: 1 });
        // "é" is two bytes but one column.
        assert_eq!(file.line_col(13), LineCol { line: 2, column: 6 });
        assert_eq!(file.line_text(2), "RUN é x");
        assert_eq!(file.line_text(9), "");
    }
}
