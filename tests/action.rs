//! The GitHub composite action (`action.yml`): its shell steps, taken from
//! the file as GitHub would read them, run here against a sample
//! repository with the environment the runner gives them (inputs through
//! `env:`, `GITHUB_OUTPUT`, `GITHUB_PATH`, `RUNNER_TEMP`). The YAML is read
//! with PyYAML from the pre-commit environment `scripts/install-precommit`
//! makes. The install step (scripts/action-install, which downloads a
//! release) is run by `tests/install.rs` against a local server; the lint
//! step here runs the binary under test, put first on PATH.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const REPO: &str = env!("CARGO_MANIFEST_DIR");
const BINARY: &str = env!("CARGO_BIN_EXE_cudalint");

/// The final stage's base comes from a build argument: a devel image (CU101,
/// a warning on line 2) only when `BASE` says so.
const ARG_BASED: &str = "ARG BASE=ubuntu:24.04\nFROM ${BASE}\nCMD [\"python3\"]\n";
/// A devel final stage: CU101 on line 3.
const DEVEL: &str =
    "# The serving image.\n\nFROM nvidia/cuda:13.0.2-devel-ubuntu24.04\nCMD [\"python3\"]\n";

/// action.yml as JSON, read by PyYAML.
fn action() -> Value {
    let install = Command::new(Path::new(REPO).join("scripts/install-precommit"))
        .output()
        .unwrap();
    assert!(install.status.success(), "{install:?}");
    let python = Path::new(REPO).join(".cache/venv-precommit/bin/python");
    let output = Command::new(python)
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
        ])
        .arg(Path::new(REPO).join("action.yml"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

fn step<'a>(action: &'a Value, name: &str) -> &'a Value {
    action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|step| step["name"] == name)
        .unwrap_or_else(|| panic!("no step {name}"))
}

/// A sample repository in a scratch directory, removed on drop.
struct Workspace(PathBuf);

impl Workspace {
    fn new(test: &str) -> Workspace {
        let dir =
            std::env::temp_dir().join(format!("cudalint-action-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (name, text) in [
            ("docker/train.Dockerfile", ARG_BASED),
            ("docker/serve.Dockerfile", DEVEL),
            ("app/README.md", DEVEL),
        ] {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        Workspace(dir)
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct StepRun {
    code: Option<i32>,
    stdout: String,
    github_output: String,
}

/// Run step `name`'s script as the runner would: `${{ inputs.X }}` in its
/// `env:` resolved from `inputs` over the action's defaults.
fn run_step(action: &Value, name: &str, workspace: &Workspace, inputs: &[(&str, &str)]) -> StepRun {
    let step = step(action, name);
    assert_eq!(step["shell"], "bash");
    let mut values: BTreeMap<String, String> = action["inputs"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(key, input)| {
            (
                key.clone(),
                input["default"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    for (key, value) in inputs {
        assert!(values.contains_key(*key), "action.yml has no input {key}");
        values.insert(key.to_string(), value.to_string());
    }
    let output_file = workspace.0.join(".github-output");
    std::fs::write(&output_file, "").unwrap();
    let bin_dir = Path::new(BINARY).parent().unwrap();
    let mut command = Command::new("bash");
    command
        // GitHub's own bash invocation for `shell: bash`.
        .args([
            "--noprofile",
            "--norc",
            "-eo",
            "pipefail",
            "-c",
            step["run"].as_str().unwrap(),
        ])
        .current_dir(&workspace.0)
        .env(
            "PATH",
            format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap()),
        )
        .env("GITHUB_OUTPUT", &output_file)
        .env("RUNNER_TEMP", &workspace.0);
    for (key, value) in step["env"].as_object().unwrap() {
        let expression = value.as_str().unwrap();
        let input = expression
            .strip_prefix("${{ inputs.")
            .and_then(|rest| rest.strip_suffix(" }}"))
            .unwrap_or_else(|| panic!("{key}: not an input expression: {expression}"));
        command.env(key, &values[input]);
    }
    let output = command.output().unwrap();
    StepRun {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        github_output: std::fs::read_to_string(&output_file).unwrap(),
    }
}

#[test]
fn the_action_declares_its_inputs_and_uploads_sarif_only_when_asked() {
    let action = action();
    assert_eq!(action["runs"]["using"], "composite");
    for input in [
        "paths",
        "format",
        "failure-threshold",
        "driver",
        "build-args",
        "target",
        "sarif",
        "sarif-file",
        "install",
    ] {
        assert!(action["inputs"][input].is_object(), "input {input}");
    }
    let upload = step(&action, "Upload SARIF");
    assert!(upload["uses"]
        .as_str()
        .unwrap()
        .starts_with("github/codeql-action/upload-sarif@"));
    assert!(upload["if"]
        .as_str()
        .unwrap()
        .contains("inputs.sarif == 'true'"));
    assert_eq!(upload["with"]["sarif_file"], "${{ inputs.sarif-file }}");
    // The install step runs scripts/action-install (tests/install.rs runs it against a local server),
    // which keeps `cargo install` as the fallback where no release binary exists.
    let install = step(&action, "Install cudalint");
    assert!(install["run"]
        .as_str()
        .unwrap()
        .contains("$ACTION_PATH/scripts/action-install"));
    let script = std::fs::read_to_string(Path::new(REPO).join("scripts/action-install")).unwrap();
    assert!(script.contains("cargo install --locked"));
    assert!(action["inputs"]["version"].is_object());
    assert_eq!(
        action["outputs"]["exit-code"]["value"],
        "${{ steps.lint.outputs.exit-code }}"
    );
}

#[test]
fn annotations_land_on_the_lines_and_the_exit_code_gates_the_job() {
    let action = action();
    let workspace = Workspace::new("annotations");
    let run = run_step(&action, "Lint", &workspace, &[]);
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert_eq!(run.github_output.trim(), "exit-code=1");
    let annotations: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("::")).collect();
    // Only the devel Dockerfile: train's base is ubuntu without build args,
    // and the README is not a Dockerfile.
    assert_eq!(annotations.len(), 1, "{}", run.stdout);
    assert!(
        annotations[0].starts_with("::warning file=docker/serve.Dockerfile,line=3,col=6,")
            && annotations[0].contains("title=CU101"),
        "{}",
        run.stdout
    );

    // Build arguments reach the linter: now train's final stage is devel.
    let run = run_step(
        &action,
        "Lint",
        &workspace,
        &[
            ("paths", "docker/train.Dockerfile"),
            (
                "build-args",
                "BASE=nvidia/cuda:13.0.2-devel-ubuntu24.04\nUNUSED=1",
            ),
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("::warning file=docker/train.Dockerfile,line=2,col=6,")
            && run.stdout.contains("title=CU101"),
        "{}",
        run.stdout
    );

    // Warnings only, and the threshold is error: the job passes.
    let run = run_step(
        &action,
        "Lint",
        &workspace,
        &[("failure-threshold", "error")],
    );
    assert_eq!(run.code, Some(0), "{}", run.stdout);
    assert_eq!(run.github_output.trim(), "exit-code=0");
    assert!(run.stdout.contains("::warning"), "{}", run.stdout);
}

#[test]
fn sarif_is_written_when_asked_and_bad_paths_exit_2() {
    let action = action();
    let workspace = Workspace::new("sarif");
    let run = run_step(
        &action,
        "Lint",
        &workspace,
        &[
            ("sarif", "true"),
            ("sarif-file", "out.sarif"),
            ("format", "text"),
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(workspace.0.join("out.sarif")).unwrap())
            .unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(results.iter().any(|r| r["ruleId"] == "CU101"
        && r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("docker/serve.Dockerfile")
        && r["locations"][0]["physicalLocation"]["region"]["startLine"] == 3));

    let run = run_step(
        &action,
        "Lint",
        &workspace,
        &[("paths", "app missing.Dockerfile")],
    );
    assert_eq!(run.code, Some(2), "{}", run.stdout);
    assert_eq!(run.github_output.trim(), "exit-code=2");
}
