//! Bad input through the real binary: every case ends with a defined exit
//! status (README, "Exit codes") and a message that says where or what,
//! and none hangs. Each test writes its files in its own temporary folder.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("cudalint-bad-input-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn cudalint(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cudalint"))
        .arg("--no-config")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // The binary may stop reading early (a size cap); a closed pipe is fine.
    let _ = input.write_all(stdin);
    drop(input);
    child.wait_with_output().unwrap()
}

fn lint_path(path: &Path) -> Output {
    cudalint(&["--format", "json", path.to_str().unwrap()], b"")
}

fn findings(output: &Output) -> Vec<serde_json::Value> {
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    report["findings"].as_array().unwrap().clone()
}

/// The (code, line) of each finding.
fn located(output: &Output) -> Vec<(String, u64)> {
    findings(output)
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["location"]["line"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_binary_file_is_a_located_syntax_error() {
    let dir = TempDir::new("binary");
    let path = dir.file("Dockerfile", b"FROM ubuntu:22.04\nRUN a\0b\n");
    let output = lint_path(&path);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(located(&output), [("CU001".to_string(), 2)]);
    assert!(findings(&output)[0]["message"]
        .as_str()
        .unwrap()
        .contains("NUL byte"));
}

#[test]
fn invalid_utf8_is_a_located_syntax_error() {
    let dir = TempDir::new("utf8");
    let path = dir.file("Dockerfile", b"FROM ubuntu:22.04\nLABEL a=\xff\xfe\n");
    let output = lint_path(&path);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(located(&output), [("CU001".to_string(), 2)]);
}

#[test]
fn invalid_utf8_on_stdin_is_a_located_syntax_error() {
    let output = cudalint(&["--format", "json", "-"], b"FROM ubuntu:22.04\n\xc3(\n");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(located(&output), [("CU001".to_string(), 2)]);
    assert_eq!(findings(&output)[0]["origin"], "<stdin>");
}

#[test]
fn an_empty_file_is_a_syntax_error() {
    let dir = TempDir::new("empty");
    let output = lint_path(&dir.file("Dockerfile", b""));
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(located(&output), [("CU001".to_string(), 1)]);
}

#[test]
fn unterminated_heredoc_and_json_are_located() {
    let dir = TempDir::new("unterminated");
    let heredoc = dir.file(
        "heredoc.Dockerfile",
        b"FROM ubuntu:22.04\nRUN <<EOF\napt-get update\n",
    );
    let output = lint_path(&heredoc);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(located(&output), [("CU001".to_string(), 2)]);

    // BuildKit reads an unterminated JSON array as shell form; the file builds.
    let json = dir.file(
        "json.Dockerfile",
        b"FROM ubuntu:22.04\nCMD [\"python3\", \"app.py\"\n",
    );
    let output = lint_path(&json);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn a_hundred_thousand_continuation_lines_finish() {
    let dir = TempDir::new("continuations");
    let mut text = String::from("FROM ubuntu:22.04\nRUN true");
    for i in 0..100_000 {
        text.push_str(&format!(" \\\n && echo {i}"));
    }
    text.push('\n');
    let output = lint_path(&dir.file("Dockerfile", text.as_bytes()));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn a_fifty_megabyte_file_finishes() {
    let dir = TempDir::new("large");
    let mut text = String::from("FROM ubuntu:22.04 AS base\n");
    let line = "LABEL org.example.description=\"padding padding padding padding\"\n";
    while text.len() < 50_000_000 {
        text.push_str(line);
    }
    let output = lint_path(&dir.file("Dockerfile", text.as_bytes()));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn a_directory_without_dockerfiles_and_a_missing_file_exit_2_naming_the_path() {
    let dir = TempDir::new("paths");
    let output = cudalint(&[dir.0.to_str().unwrap()], b"");
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("is a directory with no Dockerfile in it"));

    let missing = dir.0.join("no-such-Dockerfile");
    let output = cudalint(&[missing.to_str().unwrap()], b"");
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains(missing.to_str().unwrap()));
}

#[test]
fn endless_input_is_refused_at_the_size_cap() {
    let output = cudalint(&["/dev/zero"], b"");
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("/dev/zero"));
    assert!(stderr(&output).contains("larger than 64 MiB"));
}

#[test]
fn oversized_stdin_is_refused_at_the_size_cap() {
    let big = vec![b'#'; (64 << 20) + 10];
    let output = cudalint(&["-"], &big);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("<stdin>"));
}

#[test]
fn a_missing_file_does_not_stop_the_others() {
    let dir = TempDir::new("several");
    let good = dir.file(
        "good.Dockerfile",
        b"FROM ubuntu:22.04 AS unused\nFROM ubuntu:22.04 AS runtime\nRUN echo hi\n",
    );
    let missing = dir.0.join("missing.Dockerfile");
    let output = cudalint(
        &[
            "--target",
            "runtime",
            "--format",
            "json",
            missing.to_str().unwrap(),
            good.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(located(&output), [("CU003".to_string(), 1)]);
    assert!(findings(&output)[0]["origin"]
        .as_str()
        .unwrap()
        .ends_with("good.Dockerfile"));
}

/// The run that skipped a file must not read as clean to a consumer that
/// sees only stdout: the failed input is in the report itself, in every
/// format, beside the good file's findings.
#[test]
fn a_missing_file_is_in_the_report_not_only_on_stderr() {
    let dir = TempDir::new("reported");
    let good = dir.file(
        "good.Dockerfile",
        b"FROM ubuntu:22.04 AS unused\nFROM ubuntu:22.04 AS runtime\nRUN echo hi\n",
    );
    let missing = dir.0.join("missing.Dockerfile");
    let (missing, good) = (missing.to_str().unwrap(), good.to_str().unwrap());
    let run = |format: &str| {
        let output = cudalint(
            &["--target", "runtime", "--format", format, missing, good],
            b"",
        );
        assert_eq!(output.status.code(), Some(2), "{format}");
        // The stderr line stays, for people reading the terminal.
        assert!(stderr(&output).contains(missing), "{format}");
        output
    };

    let json: serde_json::Value = serde_json::from_slice(&run("json").stdout).unwrap();
    assert_eq!(json["findings"][0]["code"], "CU003");
    let failed = json["failed_inputs"].as_array().unwrap();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["name"], missing);
    let message = failed[0]["message"].as_str().unwrap();
    // The reason alone: the name is beside it, not repeated in it.
    assert!(
        !message.is_empty() && !message.contains(missing),
        "{message}"
    );

    let sarif: serde_json::Value = serde_json::from_slice(&run("sarif").stdout).unwrap();
    let sarif_run = &sarif["runs"][0];
    assert_eq!(sarif_run["results"][0]["ruleId"], "CU003");
    let invocation = &sarif_run["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    let notification = &invocation["toolExecutionNotifications"][0];
    assert_eq!(notification["level"], "error");
    assert!(notification["message"]["text"]
        .as_str()
        .unwrap()
        .contains(missing));

    let text = String::from_utf8(run("text").stdout).unwrap();
    assert!(
        text.contains(&format!("error: cannot lint {missing}: ")),
        "{text}"
    );
    assert!(
        text.ends_with("1 finding: 1 info; 1 input could not be linted\n"),
        "{text}"
    );

    // Every input read: the invocation succeeded and lists nothing.
    let output = cudalint(&["--target", "runtime", "--format", "sarif", good], b"");
    assert_eq!(
        output.status.code(),
        Some(0),
        "CU003 is info, below the threshold"
    );
    let sarif: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let invocation = &sarif["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], true);
    assert!(invocation.get("toolExecutionNotifications").is_none());
}
