//! The glob patterns the image knowledge uses for package names and paths.

use crate::wildcard::{self, Wild};

/// Glob match: `*` matches any run of characters, `#` one or more ASCII
/// digits, everything else itself.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    if !wildcard::literal_ends_fit(pattern, |c| c == '*' || c == '#', text) {
        return false;
    }
    let tokens = pattern.chars().map(|c| match c {
        '*' => Wild::AnyRun,
        '#' => Wild::DigitRun,
        c => Wild::Char(c),
    });
    wildcard::matches(tokens, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_matches("cuda-#-#", "cuda-12-4"));
        assert!(!glob_matches("cuda-#-#", "cuda-compat-12-4"));
        assert!(!glob_matches("cuda-#-#", "cuda-12-"));
        assert!(glob_matches("libcudnn*-dev*", "libcudnn9-dev-cuda-12"));
        assert!(!glob_matches("libcudnn*-dev*", "libcurl4-openssl-dev"));
        assert!(glob_matches("/usr/local/cuda-#.#", "/usr/local/cuda-12.4"));
        assert!(glob_matches("*", ""));
        assert!(!glob_matches("a", ""));
    }
}
