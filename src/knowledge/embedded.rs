//! The built-in knowledge files (`rules/*.toml`) as the binary carries them, packed by `build.rs`
//! ([`PackedText`]). Compressed, the 257,445 bytes of text take 50,060; decompressing all of it
//! takes well under a millisecond, once.

use crate::packed_text::PackedText;

// `INDEX`, each file's name (`rules/…`) and its byte range in the concatenation, and `LEN`, the
// concatenation's length.
include!(concat!(env!("OUT_DIR"), "/knowledge_index.rs"));

/// Every `rules/*.toml`, concatenated in name order and zstd-compressed.
static KNOWLEDGE: PackedText = PackedText::new(
    include_bytes!(concat!(env!("OUT_DIR"), "/knowledge.zst")),
    LEN,
    INDEX,
);

/// The text of the built-in knowledge file `name` (`rules/toolkits.toml`, as the repository names
/// it). Panics on a name that is not one: the names are the repository's, fixed at build time.
pub fn file(name: &str) -> &'static str {
    KNOWLEDGE
        .get(name)
        .unwrap_or_else(|| panic!("{name} is not a built-in knowledge file"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rules_file_is_packed_as_it_is_on_disk() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/rules");
        let mut on_disk = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let name = format!("rules/{}", path.file_name().unwrap().to_str().unwrap());
                assert_eq!(
                    file(&name),
                    std::fs::read_to_string(&path).unwrap(),
                    "{name}"
                );
                on_disk += 1;
            }
        }
        assert_eq!(on_disk, KNOWLEDGE.len());
    }
}
