//! Wildcard matching shared by the pattern dialects cudalint reads: the shell's `case`/`[[ == ]]`
//! patterns (`*`, `?`) and the image knowledge's package and path globs (`*`, `#`). Each dialect
//! turns its pattern into [`Wild`] tokens; [`matches`] runs them over the text by dynamic
//! programming, O(pattern × text) with no backtracking blow-up.

/// One token of a wildcard pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wild {
    /// Any run of characters, the empty one included (`*`).
    AnyRun,
    /// Exactly one character (`?` in the shell).
    AnyChar,
    /// One or more ASCII digits (`#` in the knowledge globs).
    DigitRun,
    /// This character itself.
    Char(char),
}

/// Whether `pattern` matches the whole of `text`.
///
/// The literal characters the pattern starts and ends with are compared
/// first, which settles most calls (a package name against a list of globs)
/// without the table; the rest is matched by [`matches_middle`].
pub fn matches(pattern: impl IntoIterator<Item = Wild>, text: &str) -> bool {
    let pattern: Vec<Wild> = pattern.into_iter().collect();
    let head = pattern
        .iter()
        .take_while(|w| matches!(w, Wild::Char(_)))
        .count();
    let mut chars = text.chars();
    for token in &pattern[..head] {
        if Some(*token) != chars.next().map(Wild::Char) {
            return false;
        }
    }
    if head == pattern.len() {
        return chars.next().is_none();
    }
    let rest = &pattern[head..];
    let tail = rest
        .iter()
        .rev()
        .take_while(|w| matches!(w, Wild::Char(_)))
        .count();
    let mut text_tail = chars.clone();
    for token in rest[rest.len() - tail..].iter().rev() {
        if Some(*token) != text_tail.next_back().map(Wild::Char) {
            return false;
        }
    }
    // `text_tail` now holds what lies between the literal head and tail.
    matches_middle(&rest[..rest.len() - tail], text_tail.as_str())
}

/// A quick necessary condition for a pattern written as text, checked
/// before its tokens are made: `text` starts with what `pattern` has before
/// its first wildcard character and ends with what it has after its last
/// (all of it, for a pattern without one). `is_wild` tells the dialect's
/// wildcard characters.
pub fn literal_ends_fit(pattern: &str, is_wild: impl Fn(char) -> bool, text: &str) -> bool {
    // The head is compared as it is read: most texts differ from most
    // patterns in the first characters, and a pattern without a wildcard
    // is then never read whole (knowledge tables hold many such names).
    let mut first_wild = None;
    for (at, c) in pattern.char_indices() {
        if is_wild(c) {
            first_wild = Some(at);
            break;
        }
        // The characters before matched byte for byte, so `at` is a
        // character boundary of `text` too.
        if !text.get(at..).is_some_and(|rest| rest.starts_with(c)) {
            return false;
        }
    }
    let Some(first) = first_wild else {
        // All of the pattern is a prefix of the text.
        return pattern.len() == text.len();
    };
    let last = pattern.rfind(&is_wild).unwrap_or(first);
    let wildcard = pattern[last..].chars().next().map_or(0, char::len_utf8);
    let tail = &pattern[last + wildcard..];
    text.len() >= first + tail.len() && text.ends_with(tail)
}

/// [`matches`] by dynamic programming: O(pattern × text), no backtracking.
fn matches_middle(pattern: &[Wild], text: &str) -> bool {
    let t: Vec<char> = text.chars().collect();
    // reach[j]: the pattern read so far matches text[..j].
    let mut reach = vec![false; t.len() + 1];
    let mut next = vec![false; t.len() + 1];
    reach[0] = true;
    for &token in pattern {
        next.fill(false);
        match token {
            Wild::AnyRun => {
                let mut any = false;
                for j in 0..=t.len() {
                    any |= reach[j];
                    next[j] = any;
                }
            }
            Wild::DigitRun => {
                for j in 0..t.len() {
                    if t[j].is_ascii_digit() && (reach[j] || next[j]) {
                        next[j + 1] = true;
                    }
                }
            }
            Wild::AnyChar | Wild::Char(_) => {
                for j in 0..t.len() {
                    if reach[j] && (token == Wild::AnyChar || token == Wild::Char(t[j])) {
                        next[j + 1] = true;
                    }
                }
            }
        }
        std::mem::swap(&mut reach, &mut next);
    }
    reach[t.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(pattern: &str) -> Vec<Wild> {
        pattern
            .chars()
            .map(|c| match c {
                '*' => Wild::AnyRun,
                '?' => Wild::AnyChar,
                '#' => Wild::DigitRun,
                c => Wild::Char(c),
            })
            .collect()
    }

    #[test]
    fn every_token_kind() {
        assert!(matches(tokens("a*c"), "abbbc"));
        assert!(matches(tokens("a*c"), "ac"));
        assert!(!matches(tokens("a?c"), "ac"));
        assert!(matches(tokens("a?c"), "abc"));
        assert!(matches(tokens("v#.#"), "v12.4"));
        assert!(!matches(tokens("v#"), "v"));
        assert!(!matches(tokens("v#"), "v1a"));
        assert!(matches(tokens(""), ""));
        assert!(!matches(tokens(""), "x"));
        // The literal head and tail are compared without overlapping.
        assert!(!matches(tokens("ab*ba"), "aba"));
        assert!(matches(tokens("ab*ba"), "abba"));
        assert!(!matches(tokens("abc"), "ab"));
        assert!(!matches(tokens("ab"), "abc"));
        assert!(matches(tokens("*c"), "c"));
        assert!(!matches(tokens("a*"), ""));
        assert!(matches(tokens("é*#ü"), "éx12ü"));
        let wild = |c| c == '*' || c == '#';
        assert!(literal_ends_fit("lib*-dev", wild, "libfoo-dev"));
        assert!(!literal_ends_fit("lib*-dev", wild, "libdev"));
        assert!(!literal_ends_fit("ab*ba", wild, "aba"));
        assert!(literal_ends_fit("cuda-#", wild, "cuda-12"));
        assert!(!literal_ends_fit("cuda", wild, "cudax"));
        // Many stars over a long text stay linear per token.
        assert!(!matches(tokens(&"*a".repeat(50)), &"a".repeat(49)));
    }
}
