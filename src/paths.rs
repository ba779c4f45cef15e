//! Lexical path arithmetic on slash paths (no file system is asked): `.`, empty components and
//! `..` applied. The bottom of the crate: the layer reader, the loader model and the build-context
//! reader each resolve names this way, and differ only in what a `..` above the root means to them.

/// The components of `path` with `.`, empty components and `..` applied, and whether a `..`
/// climbed above the root (it is dropped there: the root's parent is the root).
pub fn components(path: &str) -> (Vec<&str>, bool) {
    let mut parts = Vec::new();
    let mut above_root = false;
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    above_root = true;
                }
            }
            part => parts.push(part),
        }
    }
    (parts, above_root)
}

/// The last component of a slash path: `/usr/bin/pip3` → `pip3`, `pip` → `pip`, `dir/` → ``.
/// A byte search from the end rather than a `rsplit`: the rules ask it of the program word of
/// every command, most of them a few bytes long.
pub fn basename(path: &str) -> &str {
    match path.as_bytes().iter().rposition(|&byte| byte == b'/') {
        Some(slash) => &path[slash + 1..],
        None => path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basename_is_what_follows_the_last_slash() {
        for (path, want) in [
            ("/usr/bin/pip3", "pip3"),
            ("pip", "pip"),
            ("dir/", ""),
            ("", ""),
            ("./é/x", "x"),
            ("/", ""),
        ] {
            assert_eq!(basename(path), want, "{path}");
            assert_eq!(basename(path), path.rsplit('/').next().unwrap(), "{path}");
        }
    }

    #[test]
    fn dots_apply_and_a_climb_above_the_root_is_told() {
        assert_eq!(components("/a/./b//../c"), (vec!["a", "c"], false));
        assert_eq!(components("a/../../b"), (vec!["b"], true));
        assert_eq!(components(""), (Vec::<&str>::new(), false));
    }
}
