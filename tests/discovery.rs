//! `cudalint DIR`: the Dockerfiles found under a directory are linted into
//! one report; ignored files, look-alike names and `.git` are not. Every
//! file in the sample tree, linted or not, holds the same CU001 error, so
//! the findings' origins are exactly the files that were linted.

#[path = "support/cli.rs"]
mod cli_support;

use std::process::Command;

use cli_support::{cudalint, stderr, stdout, TempDir};

/// One CU001 error (COPY with one argument) on line 2.
const BROKEN: &str = "FROM ubuntu:22.04\nCOPY x\n";

fn write_tree(dir: &TempDir, files: &[&str]) {
    for file in files {
        let path = dir.0.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, BROKEN).unwrap();
    }
}

/// The `origin` of every finding in a JSON report, in report order.
fn origins(output: &std::process::Output) -> Vec<String> {
    let report: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(output)));
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| finding["origin"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_directory_lints_every_dockerfile_by_name_and_honours_gitignore() {
    let dir = TempDir::new("discovery-tree");
    write_tree(
        &dir,
        &[
            "Dockerfile",
            "Containerfile",
            "docker/cuda12.Dockerfile",
            "docker/Dockerfile.train",
            ".devcontainer/Dockerfile",
            // Not Dockerfiles by name.
            "Dockerfile.dockerignore",
            "docker/Dockerfiles",
            "notes/dockerfile",
            // Ignored: by .gitignore, and git's own directory.
            "build/Dockerfile",
            "vendor/x/Dockerfile.gpu",
            ".git/Dockerfile",
        ],
    );
    std::fs::write(dir.0.join(".gitignore"), "/build\nvendor/\n").unwrap();

    let output = cudalint(&dir.0, &["--no-config", "--format", "json", "."]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let mut linted = origins(&output);
    linted.sort();
    assert_eq!(
        linted,
        [
            ".devcontainer/Dockerfile",
            "Containerfile",
            "Dockerfile",
            "docker/Dockerfile.train",
            "docker/cuda12.Dockerfile",
        ]
    );
}

#[test]
fn gitignore_is_honoured_inside_a_git_repository_too() {
    let dir = TempDir::new("discovery-git");
    write_tree(&dir, &["app/Dockerfile", "out/Dockerfile"]);
    std::fs::write(dir.0.join(".gitignore"), "out/\n").unwrap();
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&dir.0)
        .status()
        .expect("git is needed for this test");
    assert!(git.success());

    let output = cudalint(&dir.0, &["--no-config", "--format", "json", "."]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(origins(&output), ["app/Dockerfile"]);

    // A directory named on the command line is searched even when ignored
    // (as `rg out` does); found twice (through `app` and `.`), linted once.
    let output = cudalint(
        &dir.0,
        &["--no-config", "--format", "json", "app", "out", "."],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(origins(&output), ["app/Dockerfile", "out/Dockerfile"]);
}

#[test]
fn files_and_directories_mix_and_an_explicit_file_is_linted_whatever_its_name() {
    let dir = TempDir::new("discovery-mix");
    write_tree(&dir, &["images/Dockerfile", "gpu.txt"]);
    let output = cudalint(
        &dir.0,
        &["--no-config", "--format", "json", "gpu.txt", "images"],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(origins(&output), ["gpu.txt", "images/Dockerfile"]);
}

#[test]
fn a_directory_without_dockerfiles_is_exit_2_in_the_report_too() {
    let dir = TempDir::new("discovery-empty");
    write_tree(&dir, &["src/main.rs"]);
    let output = cudalint(&dir.0, &["--no-config", "--format", "json", "."]);
    assert_eq!(output.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["failed_inputs"][0]["name"], ".");
    assert!(report["failed_inputs"][0]["message"]
        .as_str()
        .unwrap()
        .contains("no Dockerfile"));
}

#[test]
fn a_clean_tree_exits_0() {
    let dir = TempDir::new("discovery-clean");
    std::fs::create_dir_all(dir.0.join("svc")).unwrap();
    std::fs::write(dir.0.join("svc/Dockerfile"), "FROM ubuntu:22.04\n").unwrap();
    let output = cudalint(&dir.0, &["--no-config", "."]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert!(
        stdout(&output).contains("no findings"),
        "{}",
        stdout(&output)
    );
}
