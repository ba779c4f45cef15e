//! Physical and logical lines: the first layer of BuildKit's parser.
//!
//! BuildKit reads a Dockerfile with a `bufio.Scanner` whose lines keep their
//! `\n`, so a line longer than the scanner's 64 KiB buffer stops the read
//! with an error; [`PhysicalLines`] reproduces that limit. A logical line is
//! built by joining physical lines at the escape character; [`LogicalLine`]
//! keeps, for every piece it joined, where the piece came from in the file.

use crate::dockerfile::ast::MappedText;
use crate::source::Span;

/// `bufio.MaxScanTokenSize`: a line, its `\n` included, must fit in it.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// One line of the file.
#[derive(Clone, Copy, Debug)]
pub struct PhysicalLine<'a> {
    /// 1-based line number.
    pub number: usize,
    /// Offset of the line's first byte (after a BOM on line 1).
    pub start: usize,
    /// The line without its trailing `\r`/`\n` run (BuildKit's `trimNewline`).
    pub content: &'a str,
    /// The line with its line ending, as a heredoc body keeps it.
    pub with_ending: &'a str,
}

impl PhysicalLine<'_> {
    /// Offset just past the content (before the line ending).
    pub fn content_end(&self) -> usize {
        self.start + self.content.len()
    }
}

/// The file cut into lines the way BuildKit's scanner cuts it.
pub struct PhysicalLines<'a> {
    text: &'a str,
    pos: usize,
    number: usize,
    /// Bytes of a byte-order mark, which still count toward line 1's length.
    bom: usize,
    /// Set when a line too long for BuildKit's scanner stopped the reading.
    pub too_long: Option<Span>,
}

impl<'a> PhysicalLines<'a> {
    pub fn new(text: &'a str) -> Self {
        // BuildKit drops a byte-order mark from the first line only.
        let pos = if text.starts_with('\u{feff}') { 3 } else { 0 };
        PhysicalLines {
            text,
            pos,
            number: 0,
            bom: pos,
            too_long: None,
        }
    }
}

impl<'a> Iterator for PhysicalLines<'a> {
    type Item = PhysicalLine<'a>;

    fn next(&mut self) -> Option<PhysicalLine<'a>> {
        if self.pos >= self.text.len() || self.too_long.is_some() {
            return None;
        }
        let rest = self.text.get(self.pos..)?;
        let (with_ending, has_newline) = match rest.find('\n') {
            Some(i) => (rest.get(..=i)?, true),
            None => (rest, false),
        };
        // The scanner needs the whole token in its buffer, and at end of
        // input one spare byte to learn that no newline follows.
        let limit = if has_newline {
            MAX_LINE_BYTES
        } else {
            MAX_LINE_BYTES - 1
        };
        let counted = with_ending.len() + if self.number == 0 { self.bom } else { 0 };
        if counted > limit {
            let end = self.pos + with_ending.trim_end_matches(['\r', '\n']).len();
            self.too_long = Some(Span::new(self.pos, end));
            return None;
        }
        self.number += 1;
        let line = PhysicalLine {
            number: self.number,
            start: self.pos,
            content: with_ending.trim_end_matches(['\r', '\n']),
            with_ending,
        };
        self.pos += with_ending.len();
        Some(line)
    }
}

/// A logical line under construction: BuildKit's joined `buf`, plus where
/// each appended piece lies in the file.
#[derive(Clone, Debug)]
pub struct LogicalLine {
    pub text: String,
    /// `(text_offset, file_offset)` per appended piece.
    pieces: Vec<(usize, usize)>,
    /// Where the line starts in the file, for offsets when no piece was
    /// appended (a lone escape followed by blank lines).
    origin: usize,
}

impl LogicalLine {
    pub fn new(origin: usize) -> Self {
        LogicalLine {
            text: String::new(),
            pieces: Vec::new(),
            origin,
        }
    }

    pub fn push(&mut self, piece: &str, file_offset: usize) {
        if piece.is_empty() {
            return;
        }
        self.pieces.push((self.text.len(), file_offset));
        self.text.push_str(piece);
    }

    /// The text range `start..end` as a [`MappedText`] of its own.
    pub fn slice(&self, start: usize, end: usize) -> MappedText {
        let Some(text) = self.text.get(start..end) else {
            return MappedText::default();
        };
        if text.is_empty() {
            return MappedText::default();
        }
        let mut pieces = vec![(0, self.file_offset(start))];
        let first_after = self.pieces.partition_point(|&(t, _)| t <= start);
        for &(t, f) in self.pieces.iter().skip(first_after) {
            if t >= end {
                break;
            }
            pieces.push((t - start, f));
        }
        MappedText {
            text: text.to_string(),
            pieces,
        }
    }

    /// File offset of a text offset.
    pub fn file_offset(&self, text_offset: usize) -> usize {
        let i = self.pieces.partition_point(|&(t, _)| t <= text_offset);
        match i.checked_sub(1).and_then(|i| self.pieces.get(i)) {
            Some(&(t, f)) => f + (text_offset - t),
            None => self.pieces.first().map_or(self.origin, |p| p.1),
        }
    }

    /// File span covering the text range `start..end`.
    pub fn file_span(&self, start: usize, end: usize) -> Span {
        let file_start = self.file_offset(start);
        if end <= start {
            return Span::new(file_start, file_start);
        }
        let file_end = self.file_offset(end - 1) + 1;
        Span::new(file_start, file_end.max(file_start))
    }
}

/// What BuildKit's `trimContinuationCharacter` does with a line: strip an
/// escape character that ends it (spaces and tabs may follow), unless the
/// escape is itself escaped. Returns the kept length and whether the logical
/// line ends here.
pub fn trim_continuation(line: &str, escape: char) -> (usize, bool) {
    let body = line.trim_end_matches([' ', '\t']);
    let Some(before) = body.strip_suffix(escape) else {
        return (line.len(), true);
    };
    // BuildKit's regex needs a char that is not the escape before it, or
    // the escape at the very start of the line.
    match before.chars().next_back() {
        Some(c) if c == escape => (line.len(), true),
        _ => (before.len(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuation_rules() {
        assert_eq!(trim_continuation("a \\", '\\'), (2, false));
        assert_eq!(trim_continuation("a \\ \t", '\\'), (2, false));
        assert_eq!(trim_continuation("\\", '\\'), (0, false));
        assert_eq!(trim_continuation("a\\\\", '\\'), (3, true));
        assert_eq!(trim_continuation("a `", '`'), (2, false));
        assert_eq!(trim_continuation("a \\", '`'), (3, true));
    }

    #[test]
    fn logical_line_maps_pieces() {
        let mut line = LogicalLine::new(0);
        line.push("RUN a ", 0);
        line.push("  b", 10);
        assert_eq!(line.text, "RUN a   b");
        assert_eq!(line.file_offset(0), 0);
        assert_eq!(line.file_offset(6), 10);
        assert_eq!(line.file_span(8, 9), Span::new(12, 13));
        let rest = line.slice(4, 9);
        assert_eq!(rest.text, "a   b");
        assert_eq!(rest.file_span(4, 5), Span::new(12, 13));
    }
}
