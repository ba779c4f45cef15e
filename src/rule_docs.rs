//! The rules' doc pages (`docs/rules/<CODE>.md`) as the binary carries them: one zstd frame that
//! `build.rs` packs, decompressed once per process, at the first page asked for (`cudalint
//! explain`, a SARIF report). Compressed, the 176,926 bytes of Markdown take 49,394 (issue 22: the
//! release binary's size); the decoder is the one the image reader uses for zstd layers.

use std::sync::OnceLock;

/// Every `docs/rules/*.md`, concatenated in name order and zstd-compressed.
static PACKED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/rule_docs.zst"));

// `INDEX`, each page's rule code and its byte range in the concatenation, and `LEN`, the
// concatenation's length (to decompress it in one allocation).
include!(concat!(env!("OUT_DIR"), "/rule_docs_index.rs"));

/// The doc page of rule `code`. Panics on a code that has no page: every rule with
/// [`crate::rule_meta::Doc::Page`] has one (the test below checks it).
pub fn page(code: &str) -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    let text = TEXT.get_or_init(|| {
        let bytes = zstd::bulk::decompress(PACKED, LEN).expect("build.rs packs a valid zstd frame");
        String::from_utf8(bytes).expect("build.rs packs UTF-8 text")
    });
    let &(_, start, end) = INDEX
        .iter()
        .find(|(known, ..)| *known == code)
        .unwrap_or_else(|| panic!("no docs/rules/{code}.md"));
    &text[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_is_packed_as_it_is_on_disk() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/rules");
        let mut on_disk = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                let code = path.file_stem().unwrap().to_str().unwrap();
                assert_eq!(
                    page(code),
                    std::fs::read_to_string(&path).unwrap(),
                    "{code}"
                );
                on_disk += 1;
            }
        }
        assert_eq!(on_disk, INDEX.len());
    }

    #[test]
    fn every_rule_has_its_page() {
        for meta in crate::engine::all_rule_metas() {
            assert!(!meta.doc().is_empty(), "{}", meta.code);
        }
    }
}
