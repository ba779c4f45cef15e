//! A real registry for the registry-source tests: Debian's `docker-registry` (distribution 2.8.2)
//! started per test on 127.0.0.1 with a config the test generates, over the storage
//! `scripts/registry-test-env up` pushed the fixture images into (or a copy the test may damage).
//! Its access log (distribution's "response completed" lines) tells which URLs were fetched.
//! Outside CI a missing environment skips the test with a visible notice; with `CI=true` it fails.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub struct RegistryEnv {
    pub storage: PathBuf,
    pub fixtures: PathBuf,
}

impl RegistryEnv {
    pub fn get(test: &str) -> Option<RegistryEnv> {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(".cache/registry-test/env");
        let Ok(text) = std::fs::read_to_string(&file) else {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!(
                    "{test}: {} is missing: `scripts/registry-test-env up` did not prepare the \
                     registry storage, and CI must not skip the registry tests",
                    file.display()
                );
            }
            eprintln!("NOTICE {test}: skipped: no registry test environment (run `scripts/registry-test-env up` as root)");
            return None;
        };
        let vars: BTreeMap<&str, &str> = text
            .lines()
            .filter_map(|line| line.split_once('='))
            .collect();
        Some(RegistryEnv {
            storage: PathBuf::from(vars["CUDALINT_REGISTRY_STORAGE"]),
            fixtures: PathBuf::from(vars["CUDALINT_REGISTRY_FIXTURES"]),
        })
    }

    pub fn docker_archive(&self, name: &str) -> PathBuf {
        self.fixtures.join(name).join("docker-archive.tar")
    }
}

/// A scratch directory, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("cudalint-registry-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something listens on `port`.
pub fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "nothing listens on 127.0.0.1:{port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A running registry, stopped on drop.
pub struct Registry {
    child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl Registry {
    /// Starts a registry over `storage` with `extra` YAML (auth, tls, middleware) added to its
    /// config; `tls` is the `http.tls` block's (certificate, key) when it serves HTTPS.
    pub fn start(
        scratch: &Scratch,
        storage: &Path,
        extra: &str,
        tls: Option<(&Path, &Path)>,
    ) -> Registry {
        let port = free_port();
        let tls = tls
            .map(|(cert, key)| {
                format!(
                    "\n  tls:\n    certificate: {}\n    key: {}",
                    cert.display(),
                    key.display()
                )
            })
            .unwrap_or_default();
        let config = format!(
            "version: 0.1\nlog:\n  level: info\n  formatter: text\n  accesslog:\n    disabled: true\n\
             storage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: false\n{extra}\n\
             http:\n  addr: 127.0.0.1:{port}{tls}\n",
            storage.display()
        );
        let config_path = scratch.write(&format!("registry-{port}.yml"), &config);
        let log = scratch.path(&format!("registry-{port}.log"));
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config_path)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("docker-registry (scripts/registry-test-env installs it)");
        wait_for_port(port);
        Registry { child, port, log }
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The request URIs the registry answered, in order.
    pub fn requests(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines()
            .filter(|line| line.contains("response completed"))
            .filter_map(|line| {
                let at = line.find("http.request.uri=")? + "http.request.uri=".len();
                let rest = line[at..].trim_start_matches('"');
                Some(rest.split(['"', ' ']).next()?.to_string())
            })
            .collect()
    }

    /// The bytes sent in answer to requests whose URI contains `part`.
    pub fn bytes_sent(&self, part: &str) -> u64 {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines()
            .filter(|line| line.contains("response completed") && line.contains(part))
            .filter_map(|line| {
                let at = line.find("http.response.written=")? + "http.response.written=".len();
                line[at..].split(' ').next()?.parse::<u64>().ok()
            })
            .sum()
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Copies a registry storage tree (for a test that damages it).
pub fn copy_storage(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "cp -a {} {}",
        from.display(),
        to.display()
    );
}

/// Where a blob's bytes lie in a registry storage tree.
pub fn blob_data(storage: &Path, digest: &str) -> PathBuf {
    let hex = digest.strip_prefix("sha256:").unwrap();
    storage.join(format!(
        "docker/registry/v2/blobs/sha256/{}/{hex}/data",
        &hex[..2]
    ))
}

/// The digest a tag points at in a registry storage tree.
pub fn tag_digest(storage: &Path, repository: &str, tag: &str) -> String {
    std::fs::read_to_string(storage.join(format!(
        "docker/registry/v2/repositories/{repository}/_manifests/tags/{tag}/current/link"
    )))
    .unwrap()
    .trim()
    .to_string()
}

/// `cudalint ARGS` with a clean credential environment: `DOCKER_CONFIG`, `XDG_CONFIG_HOME` (certs.d)
/// and `XDG_CACHE_HOME` (the layer cache) under `home`, nothing from the machine's own files.
pub fn cudalint(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cudalint"));
    command
        .args(args)
        .current_dir(home)
        .env("DOCKER_CONFIG", home.join("docker"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env_remove("REGISTRY_AUTH_FILE")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("SSL_CERT_FILE")
        .env_remove("SSL_CERT_DIR");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
