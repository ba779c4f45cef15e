//! Finding Dockerfiles under a directory (`cudalint .`, `cudalint DIR…`):
//! the file names that are Dockerfiles by convention, walked the way `git`
//! sees the tree (`.gitignore`, `.git/info/exclude`, `.ignore` honoured), in
//! a stable order so reports and exit codes do not depend on the file system.

use std::path::{Path, PathBuf};

/// The names `cudalint DIR` lints, as a sentence for messages and docs. The
/// pre-commit hook's `files` pattern (`.pre-commit-hooks.yaml`) matches the
/// same names.
pub const DOCKERFILE_NAMES: &str = "Dockerfile, Containerfile, *.Dockerfile, Dockerfile.*";

/// Whether a file called `name` is a Dockerfile by naming convention:
/// `Dockerfile`, `Containerfile`, `NAME.Dockerfile` or `Dockerfile.NAME`.
/// `Dockerfile.dockerignore` (BuildKit's per-Dockerfile ignore file) is not.
pub fn is_dockerfile_name(name: &str) -> bool {
    if name.ends_with(".dockerignore") {
        return false;
    }
    name == "Dockerfile"
        || name == "Containerfile"
        || name
            .strip_suffix(".Dockerfile")
            .is_some_and(|stem| !stem.is_empty())
        || name
            .strip_prefix("Dockerfile.")
            .is_some_and(|rest| !rest.is_empty())
}

/// Every Dockerfile under `root`, sorted by path. Ignored files (by
/// `.gitignore` and friends, whether or not `root` is in a git repository)
/// and `.git` itself are skipped; other hidden directories are walked,
/// since `.devcontainer/Dockerfile` is a Dockerfile people ship. Symbolic
/// links are not followed. `root` itself is named in the paths returned,
/// except that `.` is dropped (`cudalint .` reports `sub/Dockerfile`).
pub fn find_dockerfiles(root: &Path) -> Result<Vec<PathBuf>, ignore::Error> {
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    let mut found = Vec::new();
    for entry in walker {
        let entry = entry?;
        let is_file = entry.file_type().is_some_and(|kind| kind.is_file());
        if is_file && entry.file_name().to_str().is_some_and(is_dockerfile_name) {
            found.push(without_dot_prefix(entry.into_path()));
        }
    }
    Ok(found)
}

/// `./sub/Dockerfile` → `sub/Dockerfile`: the path as a user (and GitHub's
/// annotations, which want repository-relative paths) writes it.
fn without_dot_prefix(path: PathBuf) -> PathBuf {
    match path.strip_prefix(".") {
        Ok(rest) if !rest.as_os_str().is_empty() => rest.to_path_buf(),
        _ => path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dockerfile_names_follow_the_conventions() {
        for name in [
            "Dockerfile",
            "Containerfile",
            "cuda.Dockerfile",
            "Dockerfile.cuda12",
            "Dockerfile.dev.gpu",
        ] {
            assert!(is_dockerfile_name(name), "{name}");
        }
        for name in [
            "Dockerfile.dockerignore",
            "cuda.Dockerfile.dockerignore",
            ".Dockerfile",
            "Dockerfile.",
            "dockerfile",
            "Dockerfiles",
            "MyDockerfile",
            "Containerfile.in",
            "README.md",
        ] {
            assert!(!is_dockerfile_name(name), "{name}");
        }
    }
}
