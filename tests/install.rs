//! The ways users install cudalint, checked on the artifacts `scripts/release` built in this test
//! run (`scripts/release-test-env up`, once, into .cache/release-test/): the PyPI wheel in a fresh
//! venv, the static binaries (aarch64 under Debian's qemu-user-static), the container image in the
//! engine `scripts/image-test-env` started, the GitHub action's download step against a local HTTP
//! server on 127.0.0.1, and the pre-commit hook that needs no Rust. Outside CI missing artifacts skip
//! these tests with a visible notice; with `CI=true` they fail.

#[path = "support/image_env.rs"]
mod image_env;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use image_env::ImageEnv;
use object::elf;
use object::read::elf::{ElfFile64, FileHeader, ProgramHeader};
use object::{Endianness, Object};

const REPO: &str = env!("CARGO_MANIFEST_DIR");
/// The binary under test (a dev build of the same source): the reference output.
const BINARY: &str = env!("CARGO_BIN_EXE_cudalint");

/// What `scripts/release-test-env up` built.
struct Release {
    dist: PathBuf,
    version: String,
    /// The architectures built (x86_64 in CI; aarch64 too where asked for).
    arches: Vec<String>,
    image: String,
    wheelhouse: PathBuf,
    docker_host: String,
}

impl Release {
    fn get(test: &str) -> Option<Release> {
        let file = Path::new(REPO).join(".cache/release-test/env");
        let Ok(text) = std::fs::read_to_string(&file) else {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!(
                    "{test}: {} is missing: `scripts/release-test-env up` did not build the \
                     release artifacts, and CI must not skip the install tests",
                    file.display()
                );
            }
            eprintln!(
                "NOTICE {test}: skipped: no release artifacts (run `scripts/release-test-env up` as root)"
            );
            return None;
        };
        let vars: BTreeMap<&str, &str> = text
            .lines()
            .filter_map(|line| line.split_once('='))
            .collect();
        let get = |key: &str| {
            vars.get(key)
                .unwrap_or_else(|| panic!("{}: no {key}", file.display()))
                .to_string()
        };
        Some(Release {
            dist: PathBuf::from(get("CUDALINT_RELEASE_DIST")),
            version: get("CUDALINT_RELEASE_VERSION"),
            arches: get("CUDALINT_RELEASE_TARGETS")
                .split_whitespace()
                .map(String::from)
                .collect(),
            image: get("CUDALINT_RELEASE_IMAGE"),
            wheelhouse: PathBuf::from(get("CUDALINT_RELEASE_WHEELHOUSE")),
            docker_host: get("DOCKER_HOST"),
        })
    }

    /// The one file in dist/ whose name starts with `prefix` and ends with `suffix`.
    fn artifact(&self, prefix: &str, suffix: &str) -> PathBuf {
        let matches: Vec<PathBuf> = std::fs::read_dir(&self.dist)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| {
                let name = path.file_name().unwrap().to_str().unwrap();
                name.starts_with(prefix) && name.ends_with(suffix)
            })
            .collect();
        assert_eq!(matches.len(), 1, "{prefix}*{suffix} in {:?}", self.dist);
        matches.into_iter().next().unwrap()
    }

    fn tarball(&self, arch: &str) -> PathBuf {
        self.artifact(
            &format!("cudalint-{}-{arch}-unknown-linux-musl", self.version),
            ".tar.gz",
        )
    }

    /// The binary of `arch`'s tarball, unpacked into `dir`.
    fn unpack_binary(&self, arch: &str, dir: &Path) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let tar = run(Command::new("tar")
            .arg("-xzf")
            .arg(self.tarball(arch))
            .arg("-C")
            .arg(dir));
        assert_eq!(tar.status.code(), Some(0), "{tar:?}");
        dir.join(format!(
            "cudalint-{}-{arch}-unknown-linux-musl/cudalint",
            self.version
        ))
    }
}

/// A scratch directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("cudalint-install-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(command: &mut Command) -> Output {
    command.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `cudalint --format json Dockerfile.example` run by `command` in the repository: (exit code, JSON).
fn lint_example(command: &mut Command) -> (Option<i32>, String) {
    let output = run(command
        .args(["--format", "json", "Dockerfile.example"])
        .current_dir(REPO));
    (output.status.code(), text(&output.stdout))
}

/// The reference: the binary under test on Dockerfile.example.
fn reference_json() -> String {
    let (code, json) = lint_example(&mut Command::new(BINARY));
    assert_eq!(code, Some(1), "Dockerfile.example has findings");
    assert!(json.contains("\"findings\""), "{json}");
    json
}

/// A static, stripped executable: no program interpreter, no shared library, no dynamic symbol
/// (so no glibc symbol version at all), no symbol table.
fn assert_static(binary: &Path) {
    let data = std::fs::read(binary).unwrap();
    let file = ElfFile64::<Endianness>::parse(&*data).unwrap();
    let endian = file.endian();
    let headers = file.elf_header().program_headers(endian, &*data).unwrap();
    for header in headers {
        let kind = header.p_type(endian);
        assert_ne!(
            kind,
            elf::PT_INTERP,
            "{binary:?} asks for a program interpreter"
        );
        assert_ne!(kind, elf::PT_DYNAMIC, "{binary:?} is dynamically linked");
    }
    assert_eq!(file.dynamic_symbols().count(), 0, "{binary:?}");
    assert!(file.symbol_table().is_none(), "{binary:?} is not stripped");
}

#[test]
fn the_host_wheel_installs_into_a_fresh_venv_and_lints() {
    let Some(release) = Release::get("the_host_wheel_installs_into_a_fresh_venv_and_lints") else {
        return;
    };
    let arch = std::env::consts::ARCH;
    let wheel = release.artifact(&format!("cudalint-{}-py3-none-", release.version), ".whl");
    let name = wheel.file_name().unwrap().to_str().unwrap().to_string();
    // PEP 600 and PEP 656 tags pip accepts on glibc >= 2.17 and on musl >= 1.2; never the bare
    // `linux_<arch>` PyPI refuses.
    let tags = name
        .strip_prefix(&format!("cudalint-{}-py3-none-", release.version))
        .and_then(|rest| rest.strip_suffix(".whl"))
        .unwrap_or_else(|| panic!("{name}"));
    let mut tags: Vec<&str> = tags.split('.').collect();
    tags.sort();
    let manylinux2014 = format!("manylinux2014_{arch}");
    let manylinux_2_17 = format!("manylinux_2_17_{arch}");
    let musllinux = format!("musllinux_1_2_{arch}");
    assert_eq!(
        tags,
        [&manylinux2014, &manylinux_2_17, &musllinux],
        "{name}"
    );
    assert!(!name.contains(&format!("-linux_{arch}")), "{name}");

    let scratch = Scratch::new("wheel");
    let venv = scratch.0.join("venv");
    let created = run(Command::new("python3").arg("-m").arg("venv").arg(&venv));
    assert_eq!(created.status.code(), Some(0), "{created:?}");
    let installed = run(Command::new(venv.join("bin/python"))
        .args(["-m", "pip", "install", "--quiet", "--no-index"])
        .args(["--disable-pip-version-check"])
        .arg(&wheel));
    assert_eq!(installed.status.code(), Some(0), "{installed:?}");

    let cudalint = venv.join("bin/cudalint");
    assert_static(&cudalint);
    let version = run(Command::new(&cudalint).arg("--version"));
    assert_eq!(version.status.code(), Some(0));
    let line = text(&version.stdout);
    let prefix = format!("cudalint {} (knowledge checked ", release.version);
    assert!(
        line.starts_with(&prefix) && line.trim_end().ends_with(')'),
        "{line}"
    );

    let (code, json) = lint_example(&mut Command::new(&cudalint));
    assert_eq!(code, Some(1));
    assert_eq!(json, reference_json());
}

#[test]
fn the_static_binaries_agree_byte_for_byte_and_the_sums_hold() {
    let Some(release) = Release::get("the_static_binaries_agree_byte_for_byte_and_the_sums_hold")
    else {
        return;
    };
    // CI builds the host's architecture (a cross-compiled second build costs as much as the rest of
    // the suite); `CUDALINT_RELEASE_TEST_TARGETS="x86_64 aarch64"` adds aarch64, checked under qemu.
    assert!(
        release.arches.iter().any(|arch| arch == "x86_64"),
        "the host's x86_64 binary is built: {:?}",
        release.arches
    );
    if release.arches.len() < 2 {
        eprintln!("NOTICE: only {:?} built here", release.arches);
    }
    let sums = run(Command::new("sha256sum")
        .args(["--check", "--strict", "SHA256SUMS"])
        .current_dir(&release.dist));
    assert_eq!(sums.status.code(), Some(0), "{sums:?}");
    let listed = std::fs::read_to_string(release.dist.join("SHA256SUMS")).unwrap();
    let mut names = vec![format!("cudalint-{}.tar.gz", release.version)];
    for arch in &release.arches {
        names.push(format!(
            "cudalint-{}-{arch}-unknown-linux-musl.tar.gz",
            release.version
        ));
    }
    for name in names {
        assert!(listed.contains(&format!("  {name}\n")), "{name}: {listed}");
    }

    let scratch = Scratch::new("static");
    let reference = reference_json();
    for arch in &release.arches {
        let arch = arch.as_str();
        let listing = run(Command::new("tar").arg("-tzf").arg(release.tarball(arch)));
        let mut names: Vec<String> = text(&listing.stdout).lines().map(String::from).collect();
        names.sort();
        let top = format!("cudalint-{}-{arch}-unknown-linux-musl/", release.version);
        let expected: Vec<String> = ["", "LICENSE", "README.md", "cudalint"]
            .iter()
            .map(|name| format!("{top}{name}"))
            .collect();
        assert_eq!(names, expected);

        let binary = release.unpack_binary(arch, &scratch.0.join(arch));
        assert_static(&binary);
        let mut command = if arch == std::env::consts::ARCH {
            Command::new(&binary)
        } else {
            let mut command = Command::new(format!("qemu-{arch}-static"));
            command.arg(&binary);
            command
        };
        let (code, json) = lint_example(&mut command);
        assert_eq!(code, Some(1), "{arch}");
        assert_eq!(json, reference, "{arch}'s JSON differs");
    }
}

/// `docker` with the engine the image tests started.
fn docker(release: &Release) -> Command {
    // Debian's client (the engine's own) where the newer one on PATH wants buildx for anything.
    let client = if Path::new("/usr/bin/docker").exists() {
        "/usr/bin/docker"
    } else {
        "docker"
    };
    let mut command = Command::new(client);
    command.env("DOCKER_HOST", &release.docker_host);
    command
}

#[test]
fn the_container_image_lints_stdin_and_reads_a_mounted_archive() {
    let Some(release) = Release::get("the_container_image_lints_stdin_and_reads_a_mounted_archive")
    else {
        return;
    };
    let Some(images) = ImageEnv::get("the_container_image_lints_stdin_and_reads_a_mounted_archive")
    else {
        return;
    };
    let inspect = run(docker(&release)
        .args(["image", "inspect", "--format"])
        .arg("{{.Config.User}} {{json .Config.Entrypoint}} {{index .Config.Labels \"org.opencontainers.image.version\"}}")
        .arg(&release.image));
    assert_eq!(
        text(&inspect.stdout).trim(),
        format!(
            "65532:65532 [\"/usr/local/bin/cudalint\"] {}",
            release.version
        ),
        "{inspect:?}"
    );

    // `docker run --rm -i IMAGE - < Dockerfile`.
    let mut child = docker(&release)
        .args(["run", "--rm", "-i", "--network", "none"])
        .arg(&release.image)
        .args(["--format", "json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let dockerfile = std::fs::read(Path::new(REPO).join("Dockerfile.example")).unwrap();
    child.stdin.take().unwrap().write_all(&dockerfile).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let host = run(Command::new(BINARY)
        .args(["--format", "json", "-"])
        .stdin(std::fs::File::open(Path::new(REPO).join("Dockerfile.example")).unwrap()));
    assert_eq!(text(&output.stdout), text(&host.stdout));

    // An image archive mounted read-only, read as the image's non-root user.
    let archive = images.fixture("torch-cupti-missing").oci_archive_gzip;
    let output = run(docker(&release)
        .args(["run", "--rm", "--network", "none", "-v"])
        .arg(format!("{}:/in/image.tar:ro", archive.display()))
        .arg(&release.image)
        .args([
            "image",
            "--quiet",
            "--format",
            "json",
            "oci-archive:/in/image.tar",
        ]));
    let scratch = Scratch::new("image-cache");
    let host = run(Command::new(BINARY)
        .args(["image", "--quiet", "--format", "json"])
        .arg(format!("oci-archive:{}", archive.display()))
        .env("XDG_CACHE_HOME", &scratch.0));
    assert_eq!(output.status.code(), host.status.code(), "{output:?}");
    let json = text(&output.stdout);
    assert!(json.contains("\"CU201\""), "{json}");
    assert_eq!(
        json.replace("/in/image.tar", "ARCHIVE"),
        text(&host.stdout).replace(&archive.display().to_string(), "ARCHIVE")
    );
}

#[test]
fn the_repository_dockerfile_passes_cudalint() {
    let output = run(Command::new(BINARY)
        .args(["--format", "json", "Dockerfile"])
        .current_dir(REPO));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["findings"], serde_json::json!([]), "{report}");
}

/// `python3 -m http.server` on 127.0.0.1 (a free port), serving `dir`; killed on drop.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(dir: &Path) -> Server {
        let mut child = Command::new("python3")
            .args(["-u", "-m", "http.server", "--bind", "127.0.0.1", "0"])
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .split_whitespace()
            .skip_while(|word| *word != "port")
            .nth(1)
            .unwrap_or_else(|| panic!("http.server said {line:?}"));
        Server {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// scripts/action-install as the action runs it on a Linux x64 runner.
fn action_install(server: &Server, version: &str, scratch: &Path) -> Output {
    let github_path = scratch.join("github-path");
    std::fs::write(&github_path, "").unwrap();
    run(Command::new(Path::new(REPO).join("scripts/action-install"))
        .env("ACTION_PATH", REPO)
        .env("CUDALINT_VERSION", version)
        .env("CUDALINT_RELEASES_URL", &server.url)
        .env("CUDALINT_INSTALL_DIR", scratch.join("tool-cache"))
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .env("RUNNER_TEMP", scratch)
        .env("GITHUB_PATH", &github_path)
        .env("GITHUB_OUTPUT", scratch.join("github-output")))
}

/// A release directory as GitHub serves it: `<root>/v<version>/<asset>`.
fn serve_release(release: &Release, root: &Path, files: &[&str]) -> PathBuf {
    let dir = root.join(format!("v{}", release.version));
    std::fs::create_dir_all(&dir).unwrap();
    for name in files {
        std::fs::copy(release.dist.join(name), dir.join(name)).unwrap();
    }
    dir
}

#[test]
fn the_action_downloads_verifies_and_caches_the_release_binary() {
    if std::env::consts::ARCH != "x86_64" {
        return;
    }
    let Some(release) = Release::get("the_action_downloads_verifies_and_caches_the_release_binary")
    else {
        return;
    };
    let scratch = Scratch::new("action-good");
    let asset = format!(
        "cudalint-{}-x86_64-unknown-linux-musl.tar.gz",
        release.version
    );
    serve_release(&release, &scratch.0.join("www"), &["SHA256SUMS", &asset]);
    let server = Server::start(&scratch.0.join("www"));

    let first = action_install(&server, "", &scratch.0);
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let bin = scratch.0.join(format!(
        "tool-cache/{}/x86_64-unknown-linux-musl/bin",
        release.version
    ));
    assert_eq!(
        std::fs::read_to_string(scratch.0.join("github-path")).unwrap(),
        format!("{}\n", bin.display())
    );
    assert!(text(&first.stdout).starts_with(&format!("cudalint {} ", release.version)));
    let outputs = std::fs::read_to_string(scratch.0.join("github-output")).unwrap();
    assert!(outputs.contains("installed-by=download\n"), "{outputs}");
    let (code, json) = lint_example(&mut Command::new(bin.join("cudalint")));
    assert_eq!(code, Some(1));
    assert_eq!(json, reference_json());

    // The second run finds it in the cache (the action caches the tool-cache directory).
    std::fs::remove_file(scratch.0.join("github-output")).unwrap();
    let second = action_install(&server, &release.version, &scratch.0);
    assert_eq!(second.status.code(), Some(0), "{second:?}");
    let outputs = std::fs::read_to_string(scratch.0.join("github-output")).unwrap();
    assert!(outputs.contains("installed-by=cache\n"), "{outputs}");
}

/// A tarball shaped like the release's whose `cudalint` leaves a mark if anything runs it.
fn booby_trapped_tarball(release: &Release, path: &Path, mark: &Path) {
    let top = path.parent().unwrap().join(format!(
        "cudalint-{}-x86_64-unknown-linux-musl",
        release.version
    ));
    std::fs::create_dir_all(&top).unwrap();
    let script = top.join("cudalint");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ntouch '{}'\necho cudalint 6.6.6\n",
            mark.display()
        ),
    )
    .unwrap();
    let chmod = run(Command::new("chmod").arg("755").arg(&script));
    assert!(chmod.status.success());
    let tar = run(Command::new("tar")
        .arg("-czf")
        .arg(path)
        .arg("-C")
        .arg(top.parent().unwrap())
        .arg(top.file_name().unwrap()));
    assert!(tar.status.success(), "{tar:?}");
    std::fs::remove_dir_all(&top).unwrap();
}

#[test]
fn the_action_never_runs_a_corrupt_or_missing_download_or_an_unknown_version() {
    let Some(release) =
        Release::get("the_action_never_runs_a_corrupt_or_missing_download_or_an_unknown_version")
    else {
        return;
    };
    let scratch = Scratch::new("action-bad");
    let www = scratch.0.join("www");
    let server = Server::start(&{
        std::fs::create_dir_all(&www).unwrap();
        www.clone()
    });
    let asset = format!(
        "cudalint-{}-x86_64-unknown-linux-musl.tar.gz",
        release.version
    );
    let tool_cache = scratch.0.join("tool-cache");
    let nothing_installed = || {
        !tool_cache
            .join(format!(
                "{}/x86_64-unknown-linux-musl/bin/cudalint",
                release.version
            ))
            .exists()
    };

    // An unknown version: no release directory at all, so nothing is fetched past SHA256SUMS.
    let output = action_install(&server, "9.9.9", &scratch.0);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        text(&output.stderr).contains("unknown version 9.9.9"),
        "{output:?}"
    );
    let output = action_install(&server, "latest; touch /tmp/x", &scratch.0);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(text(&output.stderr).contains("unknown version 'latest; touch /tmp/x'"));
    assert!(nothing_installed());

    // A missing asset: SHA256SUMS lists it, the server does not have it.
    let dir = serve_release(&release, &www, &["SHA256SUMS"]);
    let output = action_install(&server, &release.version, &scratch.0);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        text(&output.stderr).contains(&format!("could not download {asset}")),
        "{output:?}"
    );
    assert!(nothing_installed());

    // A corrupt download (not the bytes SHA256SUMS names) is deleted, never unpacked or run.
    let mark = scratch.0.join("it-ran");
    booby_trapped_tarball(&release, &dir.join(&asset), &mark);
    let output = action_install(&server, &release.version, &scratch.0);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(&format!("checksum mismatch for {asset}")),
        "{stderr}"
    );
    assert!(stderr.contains("not installed, not run"), "{stderr}");
    assert!(text(&output.stdout).contains("::error title=cudalint install::"));
    assert!(!mark.exists(), "the corrupt download ran");
    assert!(nothing_installed());

    // A platform with no release binary names its fallback (and here, with no cargo on PATH, fails).
    let output = run(Command::new(Path::new(REPO).join("scripts/action-install"))
        .env("PATH", "/usr/bin:/bin")
        .env("ACTION_PATH", REPO)
        .env("CUDALINT_VERSION", &release.version)
        .env("CUDALINT_RELEASES_URL", &server.url)
        .env("CUDALINT_INSTALL_DIR", &tool_cache)
        .env("RUNNER_OS", "macOS")
        .env("RUNNER_ARCH", "ARM64")
        .env("RUNNER_TEMP", &scratch.0));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("no release binary for macOS/ARM64: falling back to cargo install"),
        "{stderr}"
    );
    if !Path::new("/usr/bin/cargo").exists() {
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("no cargo to build one"), "{stderr}");
    }
}

#[test]
fn the_pip_pre_commit_hook_needs_no_rust() {
    let Some(release) = Release::get("the_pip_pre_commit_hook_needs_no_rust") else {
        return;
    };
    let scratch = Scratch::new("precommit");
    let git = |dir: &Path, args: &[&str]| {
        let output = run(Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir));
        assert!(output.status.success(), "git {args:?}: {output:?}");
    };
    // The hook repository the release publishes, as a git repository.
    let mirror = scratch.0.join("cudalint-pre-commit");
    let made = run(
        Command::new(Path::new(REPO).join("scripts/pre-commit-mirror"))
            .arg(&mirror)
            .arg(&release.version),
    );
    assert!(made.status.success(), "{made:?}");
    git(&mirror, &["init", "-q"]);
    git(&mirror, &["add", "."]);
    git(&mirror, &["commit", "-q", "-m", "hook"]);

    let sample = scratch.0.join("sample");
    std::fs::create_dir_all(sample.join("docker")).unwrap();
    git(&sample, &["init", "-q"]);
    std::fs::write(
        sample.join("docker/train.Dockerfile"),
        "FROM nvidia/cuda:13.0.2-devel-ubuntu24.04\nCMD [\"python3\"]\n",
    )
    .unwrap();
    git(&sample, &["add", "."]);

    let pre_commit = Command::new(Path::new(REPO).join("scripts/install-precommit"))
        .output()
        .unwrap();
    assert!(pre_commit.status.success(), "{pre_commit:?}");
    let pre_commit = PathBuf::from(text(&pre_commit.stdout).lines().last().unwrap());
    // No cargo or rustc on PATH, and pip offline: the wheel built in this run and setuptools (for
    // the hook repository's own tiny build) are all it may use.
    let python_bin = Path::new(&pre_commit).parent().unwrap();
    let output = run(Command::new(&pre_commit)
        .args(["try-repo"])
        .arg(&mirror)
        .args(["cudalint", "--verbose"])
        .current_dir(&sample)
        .env("PATH", format!("{}:/usr/bin:/bin", python_bin.display()))
        .env_remove("CARGO_HOME")
        .env("PIP_NO_INDEX", "1")
        .env(
            "PIP_FIND_LINKS",
            format!(
                "{} {}",
                release.dist.display(),
                release.wheelhouse.display()
            ),
        )
        .env("PRE_COMMIT_HOME", scratch.0.join("pre-commit-home"))
        .env("NO_COLOR", "1"));
    let all = format!("{}{}", text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(1), "{all}");
    assert!(all.contains("Failed"), "{all}");
    assert!(all.contains("docker/train.Dockerfile:1"), "{all}");
    assert!(all.contains("CU101"), "{all}");
}
