//! Words the knowledge looks for inside Dockerfile text (`deadsnakes` in a
//! RUN, `/lib/modules` in a driver build): the list as the rules' TOML gives
//! it, and one searcher for all of them, built the first time a text is
//! asked about and kept with the knowledge. A rule asks it of every word of
//! every RUN, so the texts are joined and each word is looked for in the
//! joined text with a vectorised substring search (memchr's memmem): a
//! search of a text of a few bytes costs more to start than to run.

use std::ops::Deref;
use std::sync::OnceLock;

use crate::from_toml::FromToml;
use memchr::memmem::Finder;

/// A list of words and their searchers.
#[derive(Clone, Debug, Default, FromToml)]
#[toml(from = "Vec<String>")]
pub struct Needles {
    words: Vec<String>,
    /// One searcher per word, built on first use.
    finders: OnceLock<Vec<Finder<'static>>>,
}

impl From<Vec<String>> for Needles {
    fn from(words: Vec<String>) -> Self {
        Needles {
            words,
            finders: OnceLock::new(),
        }
    }
}

impl Deref for Needles {
    type Target = [String];

    fn deref(&self) -> &[String] {
        &self.words
    }
}

/// How much joined text is searched at a time.
const BLOCK: usize = 64 * 1024;

impl Needles {
    /// Whether any of `texts` holds any of the words (case-sensitive).
    ///
    /// The texts are joined with NULs and searched a block at a time; a
    /// word holding a NUL could match across two texts, so such words are
    /// looked for in each text in turn.
    pub fn found_in_any<'t>(&self, texts: impl IntoIterator<Item = &'t str>) -> bool {
        if self.words.is_empty() {
            return false;
        }
        if self.words.iter().any(|word| word.contains('\0')) {
            return texts
                .into_iter()
                .any(|text| self.words.iter().any(|word| text.contains(word.as_str())));
        }
        let finders = self.finders.get_or_init(|| {
            self.words
                .iter()
                .map(|word| Finder::new(word.as_bytes()).into_owned())
                .collect()
        });
        let found = |block: &str| {
            finders
                .iter()
                .any(|finder| finder.find(block.as_bytes()).is_some())
        };
        let mut block = String::new();
        for text in texts {
            block.push_str(text);
            block.push('\0');
            if block.len() >= BLOCK {
                if found(&block) {
                    return true;
                }
                block.clear();
            }
        }
        found(&block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_word_anywhere_in_the_text() {
        let needles = Needles::from(vec!["deadsnakes".to_string(), "pyenv".to_string()]);
        assert!(needles.found_in_any(["ppa:deadsnakes/ppa"]));
        assert!(needles.found_in_any(["apt-get", "install", "/root/.pyenv/bin"]));
        assert!(!needles.found_in_any(["python3-pip", "Deadsnakes"]));
        // A word split over two texts is not in either.
        assert!(!needles.found_in_any(["dead", "snakes"]));
        assert_eq!(needles.len(), 2);
        assert!(!Needles::default().found_in_any(["anything"]));
    }

    #[test]
    fn texts_past_one_block_are_all_searched() {
        let needles = Needles::from(vec!["/lib/modules".to_string()]);
        let filler = "x".repeat(1000);
        let mut texts: Vec<&str> = vec![filler.as_str(); 200];
        assert!(!needles.found_in_any(texts.iter().copied()));
        texts.push("/lib/modules/6.1");
        assert!(needles.found_in_any(texts.iter().copied()));
        // A word holding the separator is looked for text by text.
        let odd = Needles::from(vec!["a\0b".to_string()]);
        assert!(odd.found_in_any(["xa\0by"]));
        assert!(!odd.found_in_any(["a", "b"]));
    }
}
