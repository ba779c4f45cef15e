//! The glob patterns the image knowledge uses for package names and paths.

/// Glob match: `*` matches any run of characters, `#` one or more ASCII
/// digits, everything else itself. Dynamic programming over both strings,
/// so O(pattern × text) with no backtracking blow-up.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // reach[j]: the pattern prefix read so far matches text[..j].
    let mut reach = vec![false; t.len() + 1];
    reach[0] = true;
    for &pc in &p {
        let mut next = vec![false; t.len() + 1];
        match pc {
            '*' => {
                let mut any = false;
                for j in 0..=t.len() {
                    any |= reach[j];
                    next[j] = any;
                }
            }
            '#' => {
                for j in 0..t.len() {
                    if t[j].is_ascii_digit() && (reach[j] || next[j]) {
                        next[j + 1] = true;
                    }
                }
            }
            c => {
                for j in 0..t.len() {
                    if reach[j] && t[j] == c {
                        next[j + 1] = true;
                    }
                }
            }
        }
        reach = next;
    }
    reach[t.len()]
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
