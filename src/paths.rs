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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_apply_and_a_climb_above_the_root_is_told() {
        assert_eq!(components("/a/./b//../c"), (vec!["a", "c"], false));
        assert_eq!(components("a/../../b"), (vec!["b"], true));
        assert_eq!(components(""), (Vec::<&str>::new(), false));
    }
}
