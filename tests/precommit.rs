//! The pre-commit hook (`.pre-commit-hooks.yaml`) run by the real
//! pre-commit (from PyPI, installed by `scripts/install-precommit` into
//! `.cache/venv-precommit`) with `pre-commit try-repo` against a sample git
//! repository: staged bad Dockerfiles stop the commit, good ones pass, and
//! files that are not Dockerfiles are not handed to cudalint.
//!
//! pre-commit builds the hook from this repository with `cargo install
//! --path`, in a fresh clone each run. To keep that to a rebuild of
//! cudalint alone, the test points CARGO_TARGET_DIR at
//! `.cache/precommit-target` (dependencies compiled once, kept between
//! runs) and builds the release profile without LTO and optimisation (the
//! per-package opt-levels through a cargo config beside the sample): the
//! same code, compiled faster. The first run still compiles every
//! dependency (minutes).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// A devel base that builds nothing: CU101, a warning.
const BAD: &str = "FROM nvidia/cuda:13.0.2-devel-ubuntu24.04\nCMD [\"python3\"]\n";
const GOOD: &str = "FROM ubuntu:24.04\nCMD [\"bash\"]\n";

struct SampleRepo(PathBuf);

impl SampleRepo {
    fn new() -> SampleRepo {
        let dir = std::env::temp_dir().join(format!("cudalint-precommit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let repo = SampleRepo(dir);
        repo.git(&["init", "-q"]);
        repo.build_dependencies_unoptimised();
        repo
    }

    /// The release profile sets opt-level per package (issue 22's size profile), which the
    /// `CARGO_PROFILE_RELEASE_*` variables cannot reach: a cargo config beside the sample repo (cargo
    /// finds it from the hook's clone in `.pre-commit-home`, below it) sets each of those packages
    /// to opt-level 0, so the hook's build compiles as fast as before.
    fn build_dependencies_unoptimised(&self) {
        let manifest: toml::Table = std::fs::read_to_string(Path::new(REPO).join("Cargo.toml"))
            .unwrap()
            .parse()
            .unwrap();
        let packages = manifest
            .get("profile")
            .and_then(|profile| profile.get("release"))
            .and_then(|release| release.get("package"))
            .and_then(|packages| packages.as_table())
            .map(|packages| packages.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default();
        let config: String = packages
            .iter()
            .map(|package| format!("[profile.release.package.\"{package}\"]\nopt-level = 0\n"))
            .collect();
        std::fs::create_dir_all(self.0.join(".cargo")).unwrap();
        std::fs::write(self.0.join(".cargo/config.toml"), config).unwrap();
    }

    fn git(&self, args: &[&str]) {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&self.0)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    /// Write `files` and stage them (`git add`).
    fn stage(&self, files: &[(&str, &str)]) {
        for (name, text) in files {
            let path = self.0.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            self.git(&["add", name]);
        }
    }
}

impl Drop for SampleRepo {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `scripts/install-precommit`, which prints the executable's path last.
fn install_precommit() -> PathBuf {
    let output = Command::new(Path::new(REPO).join("scripts/install-precommit"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "installing pre-commit failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    PathBuf::from(text.lines().last().unwrap())
}

/// `pre-commit try-repo REPO cudalint` on what is staged in `sample`.
fn try_repo(pre_commit: &Path, sample: &SampleRepo) -> (Option<i32>, String) {
    let output: Output = Command::new(pre_commit)
        .args(["try-repo", REPO, "cudalint", "--verbose"])
        .current_dir(&sample.0)
        .env(
            "CARGO_TARGET_DIR",
            Path::new(REPO).join(".cache/precommit-target"),
        )
        .env("CARGO_PROFILE_RELEASE_LTO", "false")
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "256")
        .env("PRE_COMMIT_HOME", sample.0.join(".pre-commit-home"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code(), text)
}

/// `scripts/test` runs this module on its own, beside the rest of the suite (its minutes are
/// `cargo install` compiling, the rest mostly waits on engines and child processes), and skips it
/// by this module's name in the main run.
mod precommit_hook {
    use super::*;

    #[test]
    fn the_hook_stops_a_bad_commit_and_passes_a_good_one() {
        let pre_commit = install_precommit();
        let sample = SampleRepo::new();

        sample.stage(&[("Dockerfile", GOOD), ("README.md", BAD)]);
        sample.git(&["commit", "-q", "-m", "initial"]);

        // A bad Dockerfile under a name the hook matches; a README holding
        // the same text is not a Dockerfile and is not linted.
        sample.stage(&[("docker/train.Dockerfile", BAD), ("README.md", "# x\n")]);
        let (code, output) = try_repo(&pre_commit, &sample);
        assert_eq!(code, Some(1), "{output}");
        assert!(output.contains("Failed"), "{output}");
        assert!(output.contains("docker/train.Dockerfile:1"), "{output}");
        assert!(output.contains("CU101"), "{output}");
        assert!(!output.contains("README.md"), "{output}");

        // Fixed, and a BuildKit ignore file beside it holding the bad text:
        // it would fail the run if it were linted as a Dockerfile.
        sample.stage(&[
            ("docker/train.Dockerfile", GOOD),
            ("docker/train.Dockerfile.dockerignore", BAD),
            ("Containerfile", GOOD),
        ]);
        let (code, output) = try_repo(&pre_commit, &sample);
        assert_eq!(code, Some(0), "{output}");
        assert!(output.contains("Passed"), "{output}");
        assert!(!output.contains("dockerignore"), "{output}");
    }
}
