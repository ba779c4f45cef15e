//! Open documents: their text and version, which of them cudalint lints, and
//! positions. The linter speaks byte offsets; LSP speaks (line, character)
//! where a character is a UTF-16 code unit unless the client and server
//! agreed on UTF-8 (`positionEncoding`, LSP 3.17). [`LineIndex`] converts
//! both ways, and edits (`didChange` with ranges) are applied through it.

use std::collections::HashMap;
use std::path::PathBuf;

use lsp_types::{Position, Range, Url};

use super::params::TextDocumentContentChangeEvent;
use crate::source::Span;

/// How `Position::character` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

/// Line starts of a text, for offset ↔ position conversion.
#[derive(Clone, Debug, Default)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineIndex { starts }
    }

    /// The position of byte `offset` (clamped to the text and floored to a
    /// character boundary).
    pub fn position(&self, text: &str, offset: usize, encoding: Encoding) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&start| start <= offset) - 1;
        let prefix = &text[self.starts[line]..offset];
        let character = match encoding {
            Encoding::Utf8 => prefix.len(),
            Encoding::Utf16 => prefix.chars().map(char::len_utf16).sum(),
        };
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, text: &str, span: Span, encoding: Encoding) -> Range {
        Range::new(
            self.position(text, span.start, encoding),
            self.position(text, span.end, encoding),
        )
    }

    /// The byte offset of `position`. A line past the end is the end of the
    /// text; a character past the end of its line is the line's end (LSP
    /// says so); a character inside a UTF-16 pair or a UTF-8 sequence is
    /// the start of that character.
    pub fn offset(&self, text: &str, position: Position, encoding: Encoding) -> usize {
        let Some(&start) = self.starts.get(position.line as usize) else {
            return text.len();
        };
        let end = self
            .starts
            .get(position.line as usize + 1)
            .map_or(text.len(), |next| next - 1);
        let line = &text[start..end];
        let line = line.strip_suffix('\r').unwrap_or(line);
        let wanted = position.character as usize;
        let mut counted = 0;
        for (index, c) in line.char_indices() {
            if counted >= wanted {
                return start + index;
            }
            counted += match encoding {
                Encoding::Utf8 => c.len_utf8(),
                Encoding::Utf16 => c.len_utf16(),
            };
            if counted > wanted {
                return start + index;
            }
        }
        start + line.len()
    }

    pub fn span(&self, text: &str, range: Range, encoding: Encoding) -> Span {
        let start = self.offset(text, range.start, encoding);
        let end = self.offset(text, range.end, encoding).max(start);
        Span::new(start, end)
    }
}

/// One open document.
#[derive(Debug)]
pub struct Document {
    pub uri: Url,
    pub language_id: String,
    pub version: i32,
    pub text: String,
    pub index: LineIndex,
}

impl Document {
    pub fn new(uri: Url, language_id: String, version: i32, text: String) -> Self {
        let index = LineIndex::new(&text);
        Document {
            uri,
            language_id,
            version,
            text,
            index,
        }
    }

    /// Apply `didChange` events in order; a change without a range replaces
    /// the whole text.
    pub fn apply(
        &mut self,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
        encoding: Encoding,
    ) {
        for change in changes {
            match change.range {
                None => self.text = change.text,
                Some(range) => {
                    let span = self.index.span(&self.text, range.into(), encoding);
                    self.text.replace_range(span.start..span.end, &change.text);
                }
            }
            self.index = LineIndex::new(&self.text);
        }
        self.version = version;
    }

    /// The file on disk, for `file:` URIs.
    pub fn path(&self) -> Option<PathBuf> {
        path_of(&self.uri)
    }

    /// Whether cudalint lints this document: the editor calls it a
    /// Dockerfile, or its name is one `cudalint DIR` would lint.
    pub fn is_dockerfile(&self) -> bool {
        self.language_id.eq_ignore_ascii_case("dockerfile")
            || self
                .uri
                .path_segments()
                .and_then(|mut segments| segments.next_back())
                .is_some_and(crate::discover::is_dockerfile_name)
    }

    /// The span of the `Range` in this document.
    pub fn span(&self, range: Range, encoding: Encoding) -> Span {
        self.index.span(&self.text, range, encoding)
    }

    pub fn range(&self, span: Span, encoding: Encoding) -> Range {
        self.index.range(&self.text, span, encoding)
    }

    pub fn offset(&self, position: Position, encoding: Encoding) -> usize {
        self.index.offset(&self.text, position, encoding)
    }
}

/// The local path of a `file:` URI.
pub fn path_of(uri: &Url) -> Option<PathBuf> {
    (uri.scheme() == "file")
        .then(|| uri.to_file_path().ok())
        .flatten()
}

/// The open documents by URI.
#[derive(Debug, Default)]
pub struct Documents {
    open: HashMap<Url, Document>,
}

impl Documents {
    pub fn open(&mut self, document: Document) {
        self.open.insert(document.uri.clone(), document);
    }

    pub fn close(&mut self, uri: &Url) -> Option<Document> {
        self.open.remove(uri)
    }

    pub fn get(&self, uri: &Url) -> Option<&Document> {
        self.open.get(uri)
    }

    pub fn get_mut(&mut self, uri: &Url) -> Option<&mut Document> {
        self.open.get_mut(uri)
    }

    /// The URIs of the open Dockerfiles.
    pub fn dockerfiles(&self) -> Vec<Url> {
        let mut uris: Vec<Url> = self
            .open
            .values()
            .filter(|document| document.is_dockerfile())
            .map(|document| document.uri.clone())
            .collect();
        uris.sort();
        uris
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units_or_bytes() {
        let text = "FROM a\nRUN é𝄞x\n";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(
            index.position(text, x, Encoding::Utf16),
            Position::new(1, 7)
        );
        assert_eq!(
            index.position(text, x, Encoding::Utf8),
            Position::new(1, 10)
        );
        for encoding in [Encoding::Utf8, Encoding::Utf16] {
            let position = index.position(text, x, encoding);
            assert_eq!(index.offset(text, position, encoding), x);
        }
        // Inside the surrogate pair: the character's start.
        let clef = text.find('𝄞').unwrap();
        assert_eq!(
            index.offset(text, Position::new(1, 6), Encoding::Utf16),
            clef
        );
        // Past the line's end: the line's end; past the last line: the end.
        assert_eq!(index.offset(text, Position::new(0, 99), Encoding::Utf16), 6);
        assert_eq!(
            index.offset(text, Position::new(9, 0), Encoding::Utf16),
            text.len()
        );
    }

    #[test]
    fn ranged_changes_edit_the_text() {
        let uri = Url::parse("file:///w/Dockerfile").unwrap();
        let mut document = Document::new(uri, "dockerfile".into(), 1, "FROM é\nRUN x\n".into());
        document.apply(
            2,
            vec![serde_json::from_value(serde_json::json!({
                "range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 5}},
                "text": "yz",
            }))
            .unwrap()],
            Encoding::Utf16,
        );
        assert_eq!(document.text, "FROM é\nRUN yz\n");
        assert!(document.is_dockerfile());
    }
}
