//! `cudalint build` end to end: the contexts of fixtures/build, completed with the parts
//! `scripts/image-test-env up` assembled (static busybox, the CUDA runtime wheel), built `FROM
//! scratch` by the real Docker engine that script starts. Without that environment the engine tests
//! skip with a notice (fail under `CI=true`); the context and usage tests need no engine.
//!
//! Each test tags its images `cudalint-build-test/NAME:PID` and removes them when it ends.

#[path = "support/cli.rs"]
mod cli_support;
#[path = "support/image_env.rs"]
mod image_env;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use cli_support::{stderr, stdout, TempDir};
use cudalint::build::context::{BuildContext, DockerfilePlace, EntryKind};
use image_env::ImageEnv;

const BINARY: &str = env!("CARGO_BIN_EXE_cudalint");

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The parts `scripts/image-test-env up` assembled: `bin/busybox`, unpacked wheels.
fn parts_dir() -> PathBuf {
    manifest_dir().join(".cache/image-test/parts")
}

const BUSYBOX: (&str, &str) = ("bin/busybox", "bin/busybox");
const LIBC6: (&str, &str) = ("debs/libc6", "libc6");
const CUDA_RUNTIME: (&str, &str) = (
    "wheels/nvidia_cuda_runtime_cu12/nvidia/cuda_runtime",
    "cuda_runtime",
);

fn copy_tree(from: &Path, to: &Path) {
    let metadata = std::fs::symlink_metadata(from).unwrap();
    if metadata.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        }
    } else if metadata.file_type().is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from).unwrap(), to).unwrap();
    } else {
        std::fs::copy(from, to).unwrap();
    }
}

/// A scratch directory holding `context/`: fixtures/build/NAME with `parts` (source under the
/// parts directory, destination in the context) added.
fn context(name: &str, parts: &[(&str, &str)]) -> TempDir {
    // Tests run in parallel and several build the same fixture: each gets its own copy.
    static COPIES: AtomicUsize = AtomicUsize::new(0);
    let copy = COPIES.fetch_add(1, Ordering::Relaxed);
    let dir = TempDir::new(&format!("build-{name}-{copy}"));
    let context = dir.0.join("context");
    copy_tree(&manifest_dir().join("fixtures/build").join(name), &context);
    for (source, destination) in parts {
        let destination = context.join(destination);
        std::fs::create_dir_all(destination.parent().unwrap()).unwrap();
        copy_tree(&parts_dir().join(source), &destination);
    }
    dir
}

/// An image tag that is removed from the engine when the test ends.
struct Tag<'e> {
    name: String,
    env: &'e ImageEnv,
}

impl<'e> Tag<'e> {
    fn new(env: &'e ImageEnv, name: &str) -> Self {
        let tag = Tag {
            name: format!("cudalint-build-test/{name}:{}", std::process::id()),
            env,
        };
        docker(env, &["rmi", "-f", &tag.name]);
        tag
    }
}

impl Drop for Tag<'_> {
    fn drop(&mut self) {
        docker(self.env, &["rmi", "-f", &self.name]);
    }
}

fn docker(env: &ImageEnv, args: &[&str]) -> Output {
    Command::new("docker")
        .args(args)
        .env("DOCKER_HOST", &env.docker_host)
        .env("DOCKER_BUILDKIT", "0")
        .output()
        .unwrap_or_else(|e| panic!("cannot run docker (the Docker CLI is needed): {e}"))
}

fn image_exists(env: &ImageEnv, reference: &str) -> bool {
    docker(env, &["image", "inspect", reference])
        .status
        .success()
}

/// `cudalint ARGS` in `dir`, against the test engine.
fn cudalint(env: &ImageEnv, dir: &Path, args: &[&str]) -> Output {
    Command::new(BINARY)
        .args(args)
        .current_dir(dir)
        .env("DOCKER_HOST", &env.docker_host)
        .env("NO_COLOR", "1")
        .env_remove("DOCKER_CONTEXT")
        .output()
        .unwrap()
}

/// Every path under `/ctx` in `image`, listed by its own busybox at `/ctx/bin/busybox`.
fn listing(env: &ImageEnv, image: &str) -> Vec<String> {
    let output = docker(
        env,
        &[
            "run",
            "--rm",
            "--network",
            "none",
            image,
            "/ctx/bin/busybox",
            "find",
            "/ctx",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let mut paths: Vec<String> = stdout(&output).lines().map(str::to_string).collect();
    paths.sort();
    paths
}

fn run_in_image(env: &ImageEnv, image: &str, command: &[&str]) -> String {
    let mut args = vec!["run", "--rm", "--network", "none", image];
    args.extend_from_slice(command);
    let output = docker(env, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    stdout(&output)
}

#[test]
fn a_clean_context_builds_is_tagged_and_passes() {
    let Some(env) = ImageEnv::get("a_clean_context_builds_is_tagged_and_passes") else {
        return;
    };
    let dir = context("clean", &[BUSYBOX]);
    let tag = Tag::new(&env, "clean");
    let output = cudalint(&env, &dir.0, &["build", "-t", &tag.name, "context"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // The engine's own output, live on stderr; the report on stdout.
    assert!(
        stderr(&output).contains("Step 3/4 : RUN"),
        "{}",
        stderr(&output)
    );
    assert!(image_exists(&env, &tag.name));
    assert_eq!(
        run_in_image(&env, &tag.name, &["/bin/busybox", "ls", "-d", "/opt/app"]).trim(),
        "/opt/app"
    );
}

#[test]
fn without_a_tag_the_engine_names_the_image_by_its_id() {
    let Some(env) = ImageEnv::get("without_a_tag_the_engine_names_the_image_by_its_id") else {
        return;
    };
    let dir = context("clean", &[BUSYBOX]);
    // An image of its own (no other test shares its layers), so the test can remove it.
    let dockerfile = dir.0.join("context/Dockerfile");
    let mut text = std::fs::read_to_string(&dockerfile).unwrap();
    text.push_str(&format!(
        "LABEL cudalint.test=untagged-{}\n",
        std::process::id()
    ));
    std::fs::write(&dockerfile, text).unwrap();
    let output = cudalint(&env, &dir.0, &["build", "--format", "json", "context"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let short_id = stderr(&output)
        .lines()
        .find_map(|line| line.strip_prefix("Successfully built "))
        .map(str::to_string)
        .unwrap_or_else(|| panic!("no image ID: {}", stderr(&output)));
    assert!(image_exists(&env, &short_id));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["summary"]["inputs"], 2, "{report}");
    assert!(docker(&env, &["rmi", &short_id]).status.success());
}

#[test]
fn an_error_finding_stops_the_build_unless_no_fail_fast() {
    let Some(env) = ImageEnv::get("an_error_finding_stops_the_build_unless_no_fail_fast") else {
        return;
    };
    let dir = context("stubs-on-path", &[BUSYBOX, CUDA_RUNTIME]);
    let tag = Tag::new(&env, "stubs-on-path");
    let output = cudalint(&env, &dir.0, &["build", "-t", &tag.name, "context"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stdout(&output).contains("CU124"), "{}", stdout(&output));
    assert!(
        stderr(&output).contains("not building"),
        "{}",
        stderr(&output)
    );
    assert!(!stderr(&output).contains("Step 1/"), "{}", stderr(&output));
    assert!(!image_exists(&env, &tag.name), "nothing may be built");

    let output = cudalint(
        &env,
        &dir.0,
        &["build", "--no-fail-fast", "-t", &tag.name, "context"],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("Step 1/"), "{}", stderr(&output));
    assert!(stdout(&output).contains("CU124"), "{}", stdout(&output));
    assert!(image_exists(&env, &tag.name), "built and tagged anyway");

    // A threshold above the finding lets the build go on, and passes.
    let output = cudalint(
        &env,
        &dir.0,
        &[
            "build",
            "--failure-threshold",
            "none",
            "-t",
            &tag.name,
            "context",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn a_failing_step_exits_2_with_the_engines_message() {
    let Some(env) = ImageEnv::get("a_failing_step_exits_2_with_the_engines_message") else {
        return;
    };
    let dir = context("failing-run", &[BUSYBOX]);
    let tag = Tag::new(&env, "failing-run");
    let output = cudalint(&env, &dir.0, &["build", "-t", &tag.name, "context"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let errors = stderr(&output);
    // The step's own output streamed, then the engine's error text.
    assert!(errors.contains("this step fails on purpose"), "{errors}");
    assert!(errors.contains("returned a non-zero code: 3"), "{errors}");
    assert!(!image_exists(&env, &tag.name));
    // The report says the build failed too, for readers of stdout only.
    assert!(
        stdout(&output).contains("returned a non-zero code: 3"),
        "{}",
        stdout(&output)
    );
}

/// The same context built by the Docker CLI (classic builder) and by cudalint holds the same
/// paths, and the paths `.dockerignore` is meant to keep and drop.
#[test]
fn dockerignore_selects_what_the_docker_cli_selects() {
    let Some(env) = ImageEnv::get("dockerignore_selects_what_the_docker_cli_selects") else {
        return;
    };
    let dir = context("dockerignore", &[BUSYBOX]);
    let root = dir.0.join("context");
    std::os::unix::fs::symlink("docs/README.md", root.join("readme-link")).unwrap();
    std::fs::hard_link(root.join("bin/busybox"), root.join("bin/sh")).unwrap();
    let ours = Tag::new(&env, "dockerignore-cudalint");
    let theirs = Tag::new(&env, "dockerignore-docker");
    let output = cudalint(&env, &dir.0, &["build", "-t", &ours.name, "context"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let output = Command::new("docker")
        .args(["build", "-q", "-t", &theirs.name, "context"])
        .current_dir(&dir.0)
        .env("DOCKER_HOST", &env.docker_host)
        .env("DOCKER_BUILDKIT", "0")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));

    let sent = listing(&env, &ours.name);
    assert_eq!(sent, listing(&env, &theirs.name));
    let expected = [
        "/ctx",
        "/ctx/.dockerignore",
        "/ctx/bin",
        "/ctx/bin/busybox",
        "/ctx/bin/sh",
        // `docs` is excluded, `!docs/README.md` brings one file back (not the directory's
        // other entries).
        "/ctx/docs",
        "/ctx/docs/README.md",
        // `**/*.txt` drops every .txt, `!keep/**/*.txt` re-includes those under keep/.
        "/ctx/keep",
        "/ctx/keep/deep",
        "/ctx/keep/deep/kept.txt",
        "/ctx/keep/other.txt",
        "/ctx/readme-link",
        "/ctx/src",
        "/ctx/src/gen",
        "/ctx/src/gen/kept.py",
        "/ctx/src/main.py",
    ];
    assert_eq!(sent, expected);
    let link = run_in_image(
        &env,
        &ours.name,
        &["/ctx/bin/busybox", "readlink", "/ctx/readme-link"],
    );
    assert_eq!(link.trim(), "docs/README.md");
}

#[test]
fn a_dockerfile_outside_the_context_or_on_stdin_is_sent_hidden() {
    let Some(env) = ImageEnv::get("a_dockerfile_outside_the_context_or_on_stdin_is_sent_hidden")
    else {
        return;
    };
    let dir = context("clean", &[BUSYBOX]);
    std::fs::remove_file(dir.0.join("context/Dockerfile")).unwrap();
    let dockerfile = "FROM scratch\nCOPY . /ctx/\n";
    dir.write("outside.Dockerfile", dockerfile);
    let tag = Tag::new(&env, "outside");
    let output = cudalint(
        &env,
        &dir.0,
        &[
            "build",
            "-f",
            "outside.Dockerfile",
            "-t",
            &tag.name,
            "context",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // The generated Dockerfile and the generated .dockerignore hide themselves.
    assert_eq!(
        listing(&env, &tag.name),
        ["/ctx", "/ctx/bin", "/ctx/bin/busybox"]
    );

    let mut child = Command::new(BINARY)
        .args(["build", "-f", "-", "-t", &tag.name, "context"])
        .current_dir(&dir.0)
        .env("DOCKER_HOST", &env.docker_host)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(dockerfile.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        listing(&env, &tag.name),
        ["/ctx", "/ctx/bin", "/ctx/bin/busybox"]
    );
}

#[test]
fn target_and_build_args_reach_the_lint_and_the_engine() {
    let Some(env) = ImageEnv::get("target_and_build_args_reach_the_lint_and_the_engine") else {
        return;
    };
    let dir = context("targets", &[BUSYBOX]);
    let tag = Tag::new(&env, "targets");
    // The debug stage has the error; only a build of it stops.
    let output = cudalint(
        &env,
        &dir.0,
        &["build", "--target", "debug", "-t", &tag.name, "context"],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stdout(&output).contains("CU124"), "{}", stdout(&output));
    assert!(!image_exists(&env, &tag.name));

    let output = cudalint(
        &env,
        &dir.0,
        &[
            "build",
            "--target",
            "release",
            "--build-arg",
            "GREETING=hello from the build",
            "-t",
            &tag.name,
            "context",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!stdout(&output).contains("CU124"), "{}", stdout(&output));
    assert_eq!(
        run_in_image(&env, &tag.name, &["/bin/busybox", "cat", "/greeting"]).trim(),
        "hello from the build"
    );
}

#[test]
fn sarif_is_one_run_for_the_dockerfile_and_the_image() {
    let Some(env) = ImageEnv::get("sarif_is_one_run_for_the_dockerfile_and_the_image") else {
        return;
    };
    let dir = context("stubs-on-path", &[BUSYBOX, CUDA_RUNTIME]);
    let tag = Tag::new(&env, "sarif");
    let output = cudalint(
        &env,
        &dir.0,
        &[
            "build",
            "--no-fail-fast",
            "--format",
            "sarif",
            "-t",
            &tag.name,
            "context",
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let sarif: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(&output)));
    let runs = sarif["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{sarif}");
    let results = runs[0]["results"].as_array().unwrap();
    let dockerfile_results: Vec<&serde_json::Value> = results
        .iter()
        .filter(|result| {
            result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                == "context/Dockerfile"
        })
        .collect();
    assert!(
        dockerfile_results
            .iter()
            .any(|result| result["ruleId"] == "CU124"),
        "{sarif}"
    );
    // The image's devel content, located in the image and linked to the COPY lines (5 and 6)
    // whose layers added it.
    let image_results: Vec<&serde_json::Value> = results
        .iter()
        .filter(|result| result["ruleId"] == "CU210")
        .collect();
    assert!(!image_results.is_empty(), "{sarif}");
    for result in &image_results {
        let package = &result["locations"][0]["logicalLocations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|location| location["kind"] == "package")
            .unwrap_or_else(|| panic!("no image in {result}"))["name"];
        assert_eq!(package, &format!("docker-daemon:{}", tag.name));
        let related = &result["relatedLocations"][0]["physicalLocation"];
        assert_eq!(related["artifactLocation"]["uri"], "context/Dockerfile");
        let line = related["region"]["startLine"].as_u64().unwrap();
        assert!(line == 5 || line == 6, "{result}");
    }
    assert_eq!(runs[0]["invocations"][0]["executionSuccessful"], true);
}

/// The README's path for a newcomer: a CI build of an image that ships CUDA devel content the
/// Dockerfile cannot show is blocked by the image rules, and the image stays tagged for a look.
#[test]
fn a_ci_build_of_a_devel_in_final_image_is_blocked() {
    let Some(env) = ImageEnv::get("a_ci_build_of_a_devel_in_final_image_is_blocked") else {
        return;
    };
    let dir = context("devel-in-final", &[BUSYBOX, LIBC6, CUDA_RUNTIME]);
    let tag = Tag::new(&env, "devel-in-final");
    let output = cudalint(&env, &dir.0, &["build", "-t", &tag.name, "context"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = stdout(&output);
    assert!(report.contains("warning[CU210]"), "{report}");
    // Linked to the COPY that brought the toolkit in.
    assert!(
        report.contains("made by: context/Dockerfile:9:1"),
        "{report}"
    );
    // Only the image is at fault: the Dockerfile alone is clean.
    assert!(!report.contains(" --> context/Dockerfile"), "{report}");
    assert!(image_exists(&env, &tag.name));

    // The rule selection covers the image rules too.
    let output = cudalint(
        &env,
        &dir.0,
        &["build", "--ignore", "CU210", "-t", &tag.name, "context"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
}

#[test]
fn docker_cudalint_build_works_through_the_cli_plugin() {
    let Some(env) = ImageEnv::get("docker_cudalint_build_works_through_the_cli_plugin") else {
        return;
    };
    let dir = context("clean", &[BUSYBOX]);
    let tag = Tag::new(&env, "plugin");
    let run = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .current_dir(dir.0.join("context"))
            .env("HOME", &dir.0)
            .env("DOCKER_CONFIG", dir.0.join("docker-config"))
            .env("DOCKER_HOST", &env.docker_host)
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let output = run(BINARY, &["install-plugin"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let output = run("docker", &["cudalint", "build", "-t", &tag.name, "."]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(image_exists(&env, &tag.name));

    let output = run("docker", &["cudalint", "build", "--help"]);
    assert!(
        stdout(&output).contains("Usage: docker cudalint build"),
        "{}",
        stdout(&output)
    );
}

/// What `BuildContext::scan` would send from `dir`, by name.
fn sent_names(root: &Path, dockerfile: DockerfilePlace) -> Vec<String> {
    BuildContext::scan(root, dockerfile)
        .unwrap()
        .entries()
        .iter()
        .map(|entry| entry.name.clone())
        .collect()
}

fn tree(dir: &TempDir, files: &[&str]) {
    for file in files {
        let path = dir.0.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, file).unwrap();
    }
}

#[test]
fn an_excluded_directory_is_walked_only_for_an_exception_inside_it() {
    let dir = TempDir::new("build-scan-exceptions");
    tree(
        &dir,
        &[
            "Dockerfile",
            "a/keep.md",
            "a/drop.md",
            "b/keep.md",
            "c/sub/keep.md",
        ],
    );
    dir.write(".dockerignore", "a\nb\n!a/keep.md\n!**/keep.md\nc/sub\n");
    let place = || DockerfilePlace::InContext("Dockerfile".into());
    // `!a/keep.md` names a path under `a`, so `a` is walked; `!**/keep.md` starts with no
    // excluded directory's name, so `b` and `c/sub` are not (go-archive's prefix test).
    assert_eq!(
        sent_names(&dir.0, place()),
        [".dockerignore", "Dockerfile", "a/keep.md", "c"]
    );
}

#[test]
fn the_dockerfile_and_dockerignore_are_sent_even_when_ignored() {
    let dir = TempDir::new("build-scan-trim");
    tree(&dir, &["build/Dockerfile", "build/other", "top"]);
    dir.write(".dockerignore", "*\n");
    let context = BuildContext::scan(
        &dir.0,
        DockerfilePlace::InContext("build/Dockerfile".into()),
    )
    .unwrap();
    let names: Vec<&str> = context
        .entries()
        .iter()
        .map(|entry| entry.name.as_str())
        .collect();
    assert_eq!(names, [".dockerignore", "build/Dockerfile"]);
    assert_eq!(context.dockerfile_name(), "build/Dockerfile");
}

#[test]
fn an_outside_dockerfile_travels_under_a_generated_name() {
    let dir = TempDir::new("build-scan-outside");
    tree(&dir, &["app.py"]);
    let context =
        BuildContext::scan(&dir.0, DockerfilePlace::Outside(b"FROM scratch\n".to_vec())).unwrap();
    let name = context.dockerfile_name().to_string();
    assert!(
        name.starts_with(".dockerfile.") && name.len() == 32,
        "{name}"
    );
    let mut tar_bytes = Vec::new();
    context.write_tar(&mut tar_bytes).unwrap();
    let mut archive = tar::Archive::new(tar_bytes.as_slice());
    let mut files = std::collections::BTreeMap::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().display().to_string();
        assert_eq!(
            (entry.header().uid().unwrap(), entry.header().gid().unwrap()),
            (0, 0)
        );
        let mut text = String::new();
        std::io::Read::read_to_string(&mut entry, &mut text).unwrap();
        files.insert(path, text);
    }
    assert_eq!(files[&name], "FROM scratch\n");
    assert_eq!(files[".dockerignore"], format!(".dockerignore\n{name}\n"));
    assert_eq!(files["app.py"], "app.py");
    assert_eq!(files.len(), 3);
}

#[test]
fn links_are_sent_as_links() {
    let dir = TempDir::new("build-scan-links");
    tree(&dir, &["Dockerfile", "data"]);
    std::os::unix::fs::symlink("data", dir.0.join("soft")).unwrap();
    std::fs::hard_link(dir.0.join("data"), dir.0.join("hard")).unwrap();
    let context =
        BuildContext::scan(&dir.0, DockerfilePlace::InContext("Dockerfile".into())).unwrap();
    let kinds: Vec<(&str, &EntryKind)> = context
        .entries()
        .iter()
        .map(|entry| (entry.name.as_str(), &entry.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("Dockerfile", &EntryKind::File { size: 10 }),
            ("data", &EntryKind::File { size: 4 }),
            (
                "hard",
                &EntryKind::HardLink {
                    target: "data".into()
                }
            ),
            (
                "soft",
                &EntryKind::Symlink {
                    target: "data".into()
                }
            ),
        ]
    );
}

#[test]
fn a_bad_dockerignore_pattern_is_a_located_error() {
    let dir = TempDir::new("build-scan-bad");
    tree(&dir, &["Dockerfile"]);
    dir.write(".dockerignore", "ok\n[unclosed\n");
    let error =
        BuildContext::scan(&dir.0, DockerfilePlace::InContext("Dockerfile".into())).unwrap_err();
    let message = format!("{error:#}");
    assert!(
        message.contains(".dockerignore") && message.contains("[unclosed"),
        "{message}"
    );
}

/// Mistakes in the command line are exit 2 with a message, before any engine is asked.
#[test]
fn a_context_that_is_not_a_directory_is_refused() {
    let dir = TempDir::new("build-usage");
    dir.write("Dockerfile", "FROM scratch\n");
    let run = |args: &[&str]| {
        Command::new(BINARY)
            .args(args)
            .current_dir(&dir.0)
            .env(
                "DOCKER_HOST",
                format!("unix://{}", dir.0.join("no-engine.sock").display()),
            )
            .output()
            .unwrap()
    };
    for (args, message) in [
        (&["build", "Dockerfile"][..], "not a directory"),
        (&["build", "missing"][..], "missing"),
        (
            &["build", "-f", "nope.Dockerfile", "."][..],
            "nope.Dockerfile",
        ),
        (&["build", "."][..], "no-engine.sock"),
    ] {
        let output = run(args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(message),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}
