//! Text files the binary carries packed by `build.rs`: the files concatenated in one zstd frame,
//! with an index of each file's key and byte range, decompressed once per process at the first
//! file asked for. The built-in knowledge (`rules/*.toml`, [`crate::knowledge::embedded`]) and the
//! rules' doc pages (`docs/rules/*.md`, [`crate::rule_docs`]) are carried this way (issue 22: the
//! release binary's size); the decoder is the one the image reader uses for zstd layers.

use std::sync::OnceLock;

/// One packed set of files, as `build.rs` writes it (`NAME.zst` and `NAME_index.rs`).
pub struct PackedText {
    /// The zstd frame.
    packed: &'static [u8],
    /// The concatenation's length (to decompress it in one allocation).
    len: usize,
    /// Each file's key and its byte range in the concatenation.
    index: &'static [(&'static str, usize, usize)],
    text: OnceLock<String>,
}

impl PackedText {
    pub const fn new(
        packed: &'static [u8],
        len: usize,
        index: &'static [(&'static str, usize, usize)],
    ) -> Self {
        PackedText {
            packed,
            len,
            index,
            text: OnceLock::new(),
        }
    }

    /// The text of the file packed under `key`, if one is.
    pub fn get(&'static self, key: &str) -> Option<&'static str> {
        let &(_, start, end) = self.index.iter().find(|(known, ..)| *known == key)?;
        let text = self.text.get_or_init(|| {
            let bytes = zstd::bulk::decompress(self.packed, self.len)
                .expect("build.rs packs a valid zstd frame");
            String::from_utf8(bytes).expect("build.rs packs UTF-8 text")
        });
        Some(&text[start..end])
    }

    /// How many files are packed.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
}
