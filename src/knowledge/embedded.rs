//! The built-in knowledge files (`rules/*.toml`) as the binary carries them: one zstd frame that
//! `build.rs` packs, decompressed once per process, at the first file asked for. Compressed, the
//! 257,445 bytes of text take 50,060 (issue 22: the release binary's size); the
//! decoder is the one the image reader uses for zstd layers, and decompressing all of it takes well
//! under a millisecond, once.

use std::sync::OnceLock;

/// Every `rules/*.toml`, concatenated in name order and zstd-compressed.
static PACKED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/knowledge.zst"));

// `INDEX`, each file's name (`rules/…`) and its byte range in the concatenation, and `LEN`, the
// concatenation's length (to decompress it in one allocation).
include!(concat!(env!("OUT_DIR"), "/knowledge_index.rs"));

/// The text of the built-in knowledge file `name` (`rules/toolkits.toml`, as the repository names
/// it). Panics on a name that is not one: the names are the repository's, fixed at build time.
pub fn file(name: &str) -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    let text = TEXT.get_or_init(|| {
        let bytes = zstd::bulk::decompress(PACKED, LEN).expect("build.rs packs a valid zstd frame");
        String::from_utf8(bytes).expect("build.rs packs UTF-8 text")
    });
    let &(_, start, end) = INDEX
        .iter()
        .find(|(known, ..)| *known == name)
        .unwrap_or_else(|| panic!("{name} is not a built-in knowledge file"));
    &text[start..end]
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
        assert_eq!(on_disk, INDEX.len());
    }
}
