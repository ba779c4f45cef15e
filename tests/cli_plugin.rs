//! `docker cudalint`: the binary installed by `cudalint install-plugin` into
//! a scratch Docker config directory, then run through the real `docker`
//! client, which must accept its metadata, pass the arguments through and
//! hand back the exit status. No Docker engine is needed (DOCKER_HOST points
//! nowhere): linting a Dockerfile never talks to one.

#[path = "support/cli.rs"]
mod cli_support;

use std::path::Path;
use std::process::{Command, Output};

use cli_support::{stderr, stdout, TempDir};

const BINARY: &str = env!("CARGO_BIN_EXE_cudalint");

/// A devel base that builds nothing: CU101, a warning (exit 1).
const BAD: &str = "FROM nvidia/cuda:13.0.2-devel-ubuntu24.04\nCMD [\"python3\"]\n";
const CLEAN: &str = "FROM ubuntu:24.04\nCMD [\"bash\"]\n";

/// Run `program ARGS` with the scratch Docker config of `home`.
fn run_in(home: &Path, program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("DOCKER_CONFIG", home.join("docker-config"))
        .env(
            "DOCKER_HOST",
            format!("unix://{}", home.join("no-engine.sock").display()),
        )
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} (the Docker CLI is needed): {e}"))
}

fn docker(home: &Path, args: &[&str]) -> Output {
    run_in(home, "docker", args)
}

fn plugin_path(home: &Path) -> std::path::PathBuf {
    home.join("docker-config/cli-plugins/docker-cudalint")
}

#[test]
fn metadata_is_what_the_docker_cli_expects() {
    let output = Command::new(BINARY)
        .arg("docker-cli-plugin-metadata")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(metadata["SchemaVersion"], "0.1.0");
    assert_eq!(metadata["Vendor"], "cudalint");
    assert_eq!(metadata["Version"], env!("CARGO_PKG_VERSION"));
    assert!(!metadata["ShortDescription"].as_str().unwrap().is_empty());
}

#[test]
fn docker_runs_the_linked_plugin_and_passes_exit_codes_through() {
    let home = TempDir::new("plugin-link");
    let output = run_in(&home.0, BINARY, &["install-plugin"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let link = std::fs::read_link(plugin_path(&home.0)).expect("a symbolic link");
    assert_eq!(link, Path::new(BINARY).canonicalize().unwrap());

    // The Docker CLI lists it among its commands: it took the metadata.
    let help = docker(&home.0, &["--help"]);
    assert!(
        stdout(&help).contains("cudalint*") && stdout(&help).contains("Lint CUDA packaging"),
        "{}",
        stdout(&help)
    );

    let output = docker(&home.0, &["cudalint", "--help"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("Usage: docker cudalint"),
        "{}",
        stdout(&output)
    );

    home.write("Dockerfile", BAD);
    home.write("clean.Dockerfile", CLEAN);
    let output = docker(&home.0, &["cudalint", "Dockerfile"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stdout(&output).contains("CU101"), "{}", stdout(&output));

    let output = docker(
        &home.0,
        &["cudalint", "lint", "--format", "json", "clean.Dockerfile"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["summary"]["inputs"], 1);

    let output = docker(&home.0, &["cudalint", "missing.Dockerfile"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("missing.Dockerfile"));

    let output = docker(&home.0, &["cudalint", "--no-such-flag", "Dockerfile"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
}

#[test]
fn a_copy_replaces_an_earlier_install_and_runs_on_its_own() {
    let home = TempDir::new("plugin-copy");
    let output = run_in(&home.0, BINARY, &["install-plugin", "--user"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let output = run_in(&home.0, BINARY, &["install-plugin", "--copy"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let installed = std::fs::symlink_metadata(plugin_path(&home.0)).unwrap();
    assert!(installed.file_type().is_file(), "{installed:?}");
    assert_eq!(
        installed.len(),
        std::fs::metadata(BINARY).unwrap().len(),
        "a whole copy"
    );

    let output = docker(&home.0, &["cudalint", "rules"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("CU101"), "{}", stdout(&output));
    // Nothing but the plugin is left in the directory (no staging file).
    let names: Vec<_> = std::fs::read_dir(home.0.join("docker-config/cli-plugins"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names, ["docker-cudalint"]);
}

#[path = "support/image_env.rs"]
mod image_env;

/// `docker cudalint image` through the real Docker CLI against the real engine: the plugin reads the
/// engine the CLI was pointed at and reports what the image holds (the torch fixture without its
/// CUPTI wheel: CU201, exit 1).
#[test]
fn docker_cudalint_image_reads_an_image_from_the_engine() {
    let Some(env) = image_env::ImageEnv::get("cli_plugin") else {
        return;
    };
    let home = TempDir::new("plugin-image");
    let output = run_in(&home.0, BINARY, &["install-plugin"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let image = env.fixture("torch-cupti-missing");
    let output = Command::new("docker")
        .args([
            "cudalint",
            "image",
            "--quiet",
            "--no-config",
            &image.engine_ref,
        ])
        .current_dir(&home.0)
        .env("HOME", &home.0)
        .env("DOCKER_CONFIG", home.0.join("docker-config"))
        .env("DOCKER_HOST", &env.docker_host)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("error[CU201]") && stdout(&output).contains("libtorch_cpu.so"),
        "{}",
        stdout(&output)
    );
}
