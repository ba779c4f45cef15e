//! A real registry for the registry-source tests: Debian's `docker-registry` (distribution 2.8.2)
//! started per test on 127.0.0.1 with a config the test generates, over the storage
//! `scripts/registry-test-env up` pushed the fixture images into (or a copy the test may damage).
//! Its access log (distribution's "response completed" lines) tells which URLs were fetched. Beside
//! it: the token issuer (a Python script the registry trusts), a plain HTTP server for what the
//! registry will not serve, and a proxy that drops a download midway.
//! Outside CI a missing environment skips the test with a visible notice; with `CI=true` it fails.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
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
        let tls = tls
            .map(|(cert, key)| {
                format!(
                    "\n  tls:\n    certificate: {}\n    key: {}",
                    cert.display(),
                    key.display()
                )
            })
            .unwrap_or_default();
        Self::start_with_http(scratch, storage, extra, &tls)
    }

    /// Starts a registry serving HTTPS that asks each client for a certificate `client_ca` signed
    /// (mutual TLS).
    pub fn start_with_client_ca(
        scratch: &Scratch,
        storage: &Path,
        cert: &Path,
        key: &Path,
        client_ca: &Path,
    ) -> Registry {
        let tls = format!(
            "\n  tls:\n    certificate: {}\n    key: {}\n    clientcas:\n      - {}",
            cert.display(),
            key.display(),
            client_ca.display()
        );
        Self::start_with_http(scratch, storage, "", &tls)
    }

    /// Starts a registry with `extra` top-level YAML and `http` block lines `http_extra`.
    fn start_with_http(
        scratch: &Scratch,
        storage: &Path,
        extra: &str,
        http_extra: &str,
    ) -> Registry {
        let port = free_port();
        let tls = http_extra;
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

/// The manifest a tag points at in a registry storage tree. The fixture images are built at test
/// time, so their digests differ from machine to machine: tests read them from here.
pub fn tag_manifest(storage: &Path, repository: &str, tag: &str) -> serde_json::Value {
    let digest = tag_digest(storage, repository, tag);
    serde_json::from_slice(&std::fs::read(blob_data(storage, &digest)).unwrap()).unwrap()
}

/// The digests of a manifest's layers, largest first.
pub fn layers_by_size(manifest: &serde_json::Value) -> Vec<String> {
    let mut layers: Vec<(u64, String)> = manifest["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|layer| {
            (
                layer["size"].as_u64().unwrap(),
                layer["digest"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    layers.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    layers.into_iter().map(|(_, digest)| digest).collect()
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

/// The test's token issuer (tests/support/registry_token_issuer.py), stopped on drop.
pub struct Issuer {
    child: Child,
    port: u16,
    cert: PathBuf,
}

impl Issuer {
    pub fn start(scratch: &Scratch, args: &[&str]) -> Issuer {
        let cert = scratch.path("issuer.crt");
        let port_file = scratch.path("issuer.port");
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/registry_token_issuer.py");
        let child = Command::new("python3")
            .arg(script)
            .arg(&cert)
            .arg(&port_file)
            .args([
                "--issuer",
                "cudalint-test-issuer",
                "--service",
                "cudalint-test",
            ])
            .args(args)
            .spawn()
            .expect("python3 with cryptography (scripts/registry-test-env installs it)");
        let deadline = Instant::now() + Duration::from_secs(20);
        let port = loop {
            if let Ok(port) = std::fs::read_to_string(&port_file) {
                break port.trim().parse().unwrap();
            }
            assert!(Instant::now() < deadline, "the token issuer did not start");
            std::thread::sleep(Duration::from_millis(20));
        };
        Issuer { child, port, cert }
    }

    pub fn registry_auth(&self) -> String {
        format!(
            "auth:\n  token:\n    realm: http://127.0.0.1:{}/token\n    service: cudalint-test\n    \
             issuer: cudalint-test-issuer\n    rootcertbundle: {}",
            self.port,
            self.cert.display()
        )
    }
}

impl Drop for Issuer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Serves every connection with `answer(request head)`: (status line, extra headers, body).
pub fn serve(answer: impl Fn(&str) -> (String, String, Vec<u8>) + Send + 'static) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            // A TLS ClientHello (cudalint tries HTTPS first): answered as a plain HTTP server does.
            if reader
                .fill_buf()
                .map_or(true, |bytes| bytes.first() == Some(&0x16))
            {
                let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
                continue;
            }
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let (status, headers, body) = answer(&head);
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
        }
    });
    port
}

/// A proxy in front of the real registry that cuts the first download of `blob` after `cut_after`
/// bytes of its answer, as a dropped connection would; it returns its port and the requests it saw.
pub fn cutting_proxy(
    upstream: u16,
    blob: &'static str,
    cut_after: usize,
) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let cut_done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = std::net::TcpStream::connect(("127.0.0.1", upstream)) else {
                continue;
            };
            // Armed when this connection carries the first plain GET of the blob.
            let armed = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let (mut from_client, mut to_server) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            let (record, cut_done, arm) = (record.clone(), cut_done.clone(), armed.clone());
            std::thread::spawn(move || {
                let mut buffer = [0u8; 16 << 10];
                while let Ok(count) = from_client.read(&mut buffer) {
                    if count == 0 {
                        break;
                    }
                    let request = String::from_utf8_lossy(&buffer[..count]).to_string();
                    if request.starts_with("GET ") {
                        record.lock().unwrap().push(
                            request.lines().next().unwrap_or("").to_string()
                                + if request.to_ascii_lowercase().contains("\r\nrange:") {
                                    " (range)"
                                } else {
                                    ""
                                },
                        );
                        if request.contains(blob)
                            && !request.to_ascii_lowercase().contains("\r\nrange:")
                            && !cut_done.swap(true, std::sync::atomic::Ordering::SeqCst)
                        {
                            arm.store(true, std::sync::atomic::Ordering::SeqCst);
                        }
                    }
                    if to_server.write_all(&buffer[..count]).is_err() {
                        break;
                    }
                }
            });
            let (mut from_server, mut to_client) = (server, client);
            std::thread::spawn(move || {
                let mut buffer = [0u8; 16 << 10];
                let mut since_armed = 0;
                while let Ok(count) = from_server.read(&mut buffer) {
                    if count == 0 {
                        break;
                    }
                    if armed.load(std::sync::atomic::Ordering::SeqCst) {
                        since_armed += count;
                        if since_armed > cut_after {
                            let _ = to_client.shutdown(std::net::Shutdown::Both);
                            let _ = from_server.shutdown(std::net::Shutdown::Both);
                            break;
                        }
                    }
                    if to_client.write_all(&buffer[..count]).is_err() {
                        break;
                    }
                }
            });
        }
    });
    (port, seen)
}
