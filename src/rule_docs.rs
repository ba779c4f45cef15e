//! The rules' doc pages (`docs/rules/<CODE>.md`) as the binary carries them, packed by `build.rs`
//! ([`PackedText`]) and decompressed at the first page asked for (`cudalint explain`, a SARIF
//! report). Compressed, the 176,926 bytes of Markdown take 49,394.

use crate::packed_text::PackedText;

// `INDEX`, each page's rule code and its byte range in the concatenation, and `LEN`, the
// concatenation's length.
include!(concat!(env!("OUT_DIR"), "/rule_docs_index.rs"));

/// Every `docs/rules/*.md`, concatenated in name order and zstd-compressed.
static RULE_DOCS: PackedText = PackedText::new(
    include_bytes!(concat!(env!("OUT_DIR"), "/rule_docs.zst")),
    LEN,
    INDEX,
);

/// The doc page of rule `code`. Panics on a code that has no page: every rule with
/// [`crate::rule_meta::Doc::Page`] has one (the test below checks it).
pub fn page(code: &str) -> &'static str {
    RULE_DOCS
        .get(code)
        .unwrap_or_else(|| panic!("no docs/rules/{code}.md"))
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
        assert_eq!(on_disk, RULE_DOCS.len());
    }

    #[test]
    fn every_rule_has_its_page() {
        for meta in crate::engine::all_rule_metas() {
            assert!(!meta.doc().is_empty(), "{}", meta.code);
        }
    }
}
