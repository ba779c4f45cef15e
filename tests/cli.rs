//! The `cudalint` binary end to end: commands, flags over config, exit
//! codes (0 clean, 1 findings at/above the threshold, 2 could not lint).

#[path = "support/cli.rs"]
mod cli_support;

use cli_support::{cudalint, cudalint_stdin, json_codes, stderr, stdout, TempDir};

/// A warning (CU004) and, once `runtime` is declared the only target, an
/// info finding (CU003), nothing else.
const WARNING_AND_INFO: &str = "\
FROM ${BASE} AS tools
RUN echo tools

FROM nvidia/cuda:13.0.2-runtime-ubuntu22.04 AS runtime
RUN echo runtime
";

/// Only an info finding (CU003), once `runtime` is declared the only target.
const INFO_ONLY: &str = "\
FROM python:3.11-slim AS docs
RUN pip install mkdocs

FROM nvidia/cuda:13.0.2-runtime-ubuntu22.04 AS runtime
RUN echo runtime
";

/// A config declaring the one stage the project builds, so that CU003
/// judges the other stages.
const RUNTIME_TARGET: &str = "targets = [\"runtime\"]\n";

#[test]
fn usage_errors_exit_2() {
    let dir = TempDir::new("usage");
    assert_eq!(cudalint(&dir.0, &[]).status.code(), Some(2));
    assert_eq!(
        cudalint(&dir.0, &["--no-such-flag", "x"]).status.code(),
        Some(2)
    );
    assert_eq!(
        cudalint(&dir.0, &["--format", "yaml", "Dockerfile"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(cudalint(&dir.0, &["--help"]).status.code(), Some(0));
}

#[test]
fn a_missing_file_exits_2_naming_it_and_other_files_are_still_linted() {
    let dir = TempDir::new("missing");
    dir.write(".cudalint.toml", RUNTIME_TARGET);
    dir.write("Dockerfile", INFO_ONLY);
    let output = cudalint(
        &dir.0,
        &["--format", "json", "Dockerfile", "nope.Dockerfile"],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("nope.Dockerfile"),
        "{}",
        stderr(&output)
    );
    assert_eq!(json_codes(&output), ["CU003"]);
}

#[test]
fn exit_status_follows_the_failure_threshold() {
    let dir = TempDir::new("threshold");
    dir.write(".cudalint.toml", RUNTIME_TARGET);
    dir.write("warn.Dockerfile", WARNING_AND_INFO);
    dir.write("info.Dockerfile", INFO_ONLY);
    // Default threshold is warning: info alone passes, a warning fails.
    assert_eq!(
        cudalint(&dir.0, &["info.Dockerfile"]).status.code(),
        Some(0)
    );
    assert_eq!(
        cudalint(&dir.0, &["warn.Dockerfile"]).status.code(),
        Some(1)
    );
    let with = |threshold: &str, file: &str| {
        cudalint(&dir.0, &["--failure-threshold", threshold, file])
            .status
            .code()
    };
    assert_eq!(with("info", "info.Dockerfile"), Some(1));
    assert_eq!(with("error", "warn.Dockerfile"), Some(0));
    assert_eq!(with("none", "warn.Dockerfile"), Some(0));
}

#[test]
fn lint_is_the_default_command_and_reads_stdin() {
    let dir = TempDir::new("stdin");
    let output = cudalint_stdin(
        &dir.0,
        &["lint", "--target", "runtime", "--format", "json", "-"],
        WARNING_AND_INFO,
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(json_codes(&output), ["CU004", "CU003"]);
    assert!(stdout(&output).contains("<stdin>"));
}

#[test]
fn config_is_discovered_from_parent_directories_and_flags_override_it() {
    let dir = TempDir::new("config");
    dir.write(
        ".cudalint.toml",
        "failure-threshold = \"info\"\ntargets = [\"runtime\"]\n[rules]\ndisable = [\"undefined-arg-in-from\"]\n",
    );
    std::fs::create_dir_all(dir.0.join("sub")).unwrap();
    dir.write("sub/Dockerfile", WARNING_AND_INFO);
    let sub = dir.0.join("sub");
    let output = cudalint(&sub, &["--format", "json", "Dockerfile"]);
    assert_eq!(json_codes(&output), ["CU003"]);
    // failure-threshold = "info" from the file makes the info finding fail.
    assert_eq!(output.status.code(), Some(1));
    let flagged = cudalint(&sub, &["--failure-threshold", "warning", "Dockerfile"]);
    assert_eq!(flagged.status.code(), Some(0));
    let no_config = cudalint(&sub, &["--no-config", "--format", "json", "Dockerfile"]);
    // Without the config no target is declared, so CU003 says nothing...
    assert_eq!(json_codes(&no_config), ["CU004"]);
    // ...until `--target` declares one.
    let targeted = cudalint(
        &sub,
        &[
            "--no-config",
            "--target",
            "runtime",
            "--format",
            "json",
            "Dockerfile",
        ],
    );
    assert_eq!(json_codes(&targeted), ["CU004", "CU003"]);
}

#[test]
fn a_bad_config_exits_2_with_its_location() {
    let dir = TempDir::new("badconfig");
    let config = dir.write(
        "lint.toml",
        "[rules]\nenable = [\"CU002\", \"no-such-rule\"]\n",
    );
    dir.write("Dockerfile", INFO_ONLY);
    let output = cudalint(
        &dir.0,
        &["--config", config.to_str().unwrap(), "Dockerfile"],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("lint.toml:2:20: unknown rule `no-such-rule`"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn rules_lists_every_rule_and_explain_prints_its_page() {
    let dir = TempDir::new("rules");
    let rules = stdout(&cudalint(&dir.0, &["rules"]));
    for code in ["CU001", "CU002", "CU003", "CU004", "CU005"] {
        assert!(rules.contains(code), "{rules}");
    }
    assert!(rules.contains("unknown-stage-reference"));

    let by_name = cudalint(&dir.0, &["explain", "unknown-stage-reference"]);
    assert_eq!(by_name.status.code(), Some(0));
    assert!(stdout(&by_name).starts_with("CU002 unknown-stage-reference"));
    assert!(stdout(&by_name).contains("## Use instead"));
    assert_eq!(
        stdout(&cudalint(&dir.0, &["explain", "cu002"])),
        stdout(&by_name)
    );
    assert_eq!(
        cudalint(&dir.0, &["explain", "CU999"]).status.code(),
        Some(2)
    );
}

#[test]
fn completions_are_generated() {
    let dir = TempDir::new("completions");
    let output = cudalint(&dir.0, &["completions", "bash"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout(&output).contains("cudalint"));
}

#[test]
fn fix_prints_a_diff_and_writes_only_when_asked() {
    let dir = TempDir::new("fix");
    let text = "FROM ubuntu:22.04 AS builder\nRUN echo > /out\nFROM ubuntu:22.04\nCOPY --from=buidler /out /out\n";
    let file = dir.write("Dockerfile", text);

    let dry = cudalint(&dir.0, &["fix", "--unsafe-fixes", "Dockerfile"]);
    assert!(
        stdout(&dry).contains("-COPY --from=buidler /out /out\n+COPY --from=builder /out /out\n"),
        "{}",
        stdout(&dry)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);

    let safe_only = cudalint(&dir.0, &["fix", "--write", "Dockerfile"]);
    assert_eq!(safe_only.status.code(), Some(1));
    assert!(stderr(&safe_only).contains("--unsafe-fixes"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);

    let written = cudalint(&dir.0, &["fix", "--write", "--unsafe-fixes", "Dockerfile"]);
    assert_eq!(written.status.code(), Some(0), "{}", stderr(&written));
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("COPY --from=builder /out /out"));
}

#[test]
fn color_is_off_when_piped_and_on_when_forced() {
    let dir = TempDir::new("color");
    dir.write(".cudalint.toml", RUNTIME_TARGET);
    dir.write("Dockerfile", INFO_ONLY);
    let piped = cudalint(&dir.0, &["Dockerfile"]);
    assert!(!stdout(&piped).contains('\x1b'));
    assert!(stdout(&piped).contains("CU003"));
    let forced = cudalint(&dir.0, &["--color", "always", "Dockerfile"]);
    assert!(stdout(&forced).contains('\x1b'));
}

/// A Dockerfile that installs torch through a requirements file it copies
/// from the build context: CU120 fires when the file is read (torch from
/// the cu121 index on a CUDA 11.8 base), and only then.
const COPIES_REQUIREMENTS: &str = "\
FROM nvidia/cuda:11.8.0-runtime-ubuntu22.04
COPY requirements.txt /app/
RUN pip install --no-cache-dir -r /app/requirements.txt
";
const TORCH_CU121: &str = "--index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.1\n";

fn fires_cu120(output: &std::process::Output) -> bool {
    json_codes(output).iter().any(|code| code == "CU120")
}

#[test]
fn requirement_files_are_read_from_the_dockerfiles_directory_or_context() {
    let dir = TempDir::new("requirements-context");
    std::fs::create_dir_all(dir.0.join("app/ctx")).unwrap();
    dir.write("app/Dockerfile", COPIES_REQUIREMENTS);
    dir.write("app/requirements.txt", TORCH_CU121);
    let json = ["--format", "json", "--failure-threshold", "none"];
    // The Dockerfile's directory is the context by default.
    let run = |extra: &[&str]| {
        let mut args = json.to_vec();
        args.extend_from_slice(extra);
        cudalint(&dir.0, &args)
    };
    assert!(fires_cu120(&run(&["app/Dockerfile"])));
    // `--context` names another; this one has no requirements.txt.
    assert!(!fires_cu120(&run(&[
        "--context",
        "app/ctx",
        "app/Dockerfile"
    ])));
    // A symlink out of the context is not followed.
    std::os::unix::fs::symlink(
        dir.0.join("app/requirements.txt"),
        dir.0.join("app/ctx/requirements.txt"),
    )
    .unwrap();
    assert!(!fires_cu120(&run(&[
        "--context",
        "app/ctx",
        "app/Dockerfile"
    ])));
    // A file the context's .dockerignore leaves out is not read.
    dir.write("app/.dockerignore", "requirements.txt\n");
    assert!(!fires_cu120(&run(&["app/Dockerfile"])));
    // Standard input has no context (not even the working directory).
    dir.write("requirements.txt", TORCH_CU121);
    let stdin = cudalint_stdin(&dir.0, &["--format", "json", "-"], COPIES_REQUIREMENTS);
    assert!(!fires_cu120(&stdin));
    // A context that is not a directory is a usage error.
    let bad = run(&["--context", "app/Dockerfile", "app/Dockerfile"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
}
