//! `cudalint image registry:…` against a real registry (Debian's docker-registry, distribution
//! 2.8.2) started per test on 127.0.0.1 over the storage `scripts/registry-test-env up` pushed the
//! fixture images into with skopeo: plain HTTP, TLS with a certificate from a private CA trusted through
//! certs.d, htpasswd (bcrypt) Basic auth, and token auth with a token issuer the test runs (the
//! registry verifies its JWTs). Findings must equal the docker-archive source's; credentials,
//! damage, silence, size bounds and redirects must each end as the issue says.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;

#[path = "support/registry_env.rs"]
mod registry_env;
use registry_env::{
    blob_data, copy_storage, cudalint, cutting_proxy, layers_by_size, serve, tag_digest,
    tag_manifest, text, wait_for_port, Issuer, Registry, RegistryEnv, Scratch,
};

const TORCH: &str = "fixture/torch-cupti-missing";

/// The findings of a JSON report as (code, message) with the image's name taken out of messages.
fn findings(stdout: &[u8], reference: &str) -> Vec<(String, String, String)> {
    let report: serde_json::Value =
        serde_json::from_slice(stdout).unwrap_or_else(|_| panic!("not JSON: {}", text(stdout)));
    let mut found: Vec<(String, String, String)> = report["findings"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|finding| {
            (
                finding["code"].as_str().unwrap_or("").to_string(),
                finding["message"]
                    .as_str()
                    .unwrap_or("")
                    .replace(reference, "IMAGE"),
                finding["location"]["path"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    found.sort();
    found
}

fn scan(
    home: &Path,
    reference: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut args = vec!["image", "--format", "json", "--quiet"];
    args.extend_from_slice(extra);
    args.push(reference);
    cudalint(home, &args, env)
}

fn assert_read(output: &std::process::Output) {
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "exit {:?}\nstderr: {}",
        output.status.code(),
        text(&output.stderr)
    );
}

fn assert_failed(output: &std::process::Output, says: &[&str]) -> String {
    let stderr = text(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(2),
        "stderr: {stderr}\nstdout: {}",
        text(&output.stdout)
    );
    for part in says {
        assert!(stderr.contains(part), "stderr lacks {part:?}: {stderr}");
    }
    stderr
}

fn write_docker_config(home: &Path, config: &serde_json::Value) {
    std::fs::create_dir_all(home.join("docker")).unwrap();
    std::fs::write(home.join("docker/config.json"), config.to_string()).unwrap();
}

fn auths(host: &str, user: &str, password: &str) -> serde_json::Value {
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    serde_json::json!({ "auths": { host: { "auth": auth } } })
}

fn htpasswd(scratch: &Scratch, user: &str, password: &str) -> std::path::PathBuf {
    let path = scratch.path("htpasswd");
    let status = Command::new("htpasswd")
        .args(["-Bbc"])
        .arg(&path)
        .args([user, password])
        .stderr(Stdio::null())
        .status()
        .expect("htpasswd (apache2-utils, scripts/registry-test-env installs it)");
    assert!(status.success());
    path
}

#[test]
fn plain_http_gives_the_docker_archive_findings_for_gzip_and_zstd_layers() {
    let Some(env) = RegistryEnv::get("plain_http_gives_the_docker_archive_findings") else {
        return;
    };
    let scratch = Scratch::new("plain");
    let registry = Registry::start(&scratch, &env.storage, "", None);
    let archive = env.docker_archive("torch-cupti-missing");
    let archive_ref = format!("docker-archive:{}", archive.display());
    let from_archive = scan(&scratch.0, &archive_ref, &["--no-cache"], &[]);
    assert_read(&from_archive);
    let expected = findings(&from_archive.stdout, &archive_ref);
    assert!(!expected.is_empty(), "the fixture has findings");
    for tag in ["gzip", "zstd"] {
        let reference = format!("registry:{}/{TORCH}:{tag}", registry.host());
        let output = scan(&scratch.0, &reference, &["--no-cache"], &[]);
        assert_read(&output);
        assert_eq!(findings(&output.stdout, &reference), expected, "{tag}");
    }
    // skopeo's transport name and a digest reference read the same image.
    let digest = tag_digest(&env.storage, TORCH, "gzip");
    let reference = format!("docker://{}/{TORCH}@{digest}", registry.host());
    let output = scan(&scratch.0, &reference, &["--no-cache"], &[]);
    assert_read(&output);
    assert_eq!(findings(&output.stdout, &reference), expected);
}

/// `--dockerfile` links findings to instructions as with the archive; `facts` names the image; several
/// references are one report, a failing one reported while the others are read.
#[test]
fn dockerfile_facts_and_several_references_take_registry_references() {
    let Some(env) = RegistryEnv::get("dockerfile_facts_and_several_references") else {
        return;
    };
    let scratch = Scratch::new("dockerfile");
    let registry = Registry::start(&scratch, &env.storage, "", None);
    let dockerfile =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/image/torch-cupti-missing/Dockerfile");
    let dockerfile = dockerfile.display().to_string();
    let related = |stdout: &[u8]| -> Vec<String> {
        let report: serde_json::Value = serde_json::from_slice(stdout).unwrap();
        let mut lines: Vec<String> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|finding| format!("{} {}", finding["code"], finding["related"]))
            .collect();
        lines.sort();
        lines
    };
    let archive_ref = format!(
        "docker-archive:{}",
        env.docker_archive("torch-cupti-missing").display()
    );
    let from_archive = scan(
        &scratch.0,
        &archive_ref,
        &["--no-cache", "--dockerfile", &dockerfile],
        &[],
    );
    assert_read(&from_archive);
    let reference = format!("registry:{}/{TORCH}:gzip", registry.host());
    let from_registry = scan(
        &scratch.0,
        &reference,
        &["--no-cache", "--dockerfile", &dockerfile],
        &[],
    );
    assert_read(&from_registry);
    assert!(
        text(&from_registry.stdout).contains("layer"),
        "related instructions"
    );
    assert_eq!(
        related(&from_registry.stdout),
        related(&from_archive.stdout)
    );

    let facts = cudalint(
        &scratch.0,
        &[
            "facts",
            "registry:nvcr.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04",
        ],
        &[],
    );
    assert_eq!(facts.status.code(), Some(0), "{}", text(&facts.stderr));
    assert!(
        text(&facts.stdout).contains("variant: runtime"),
        "{}",
        text(&facts.stdout)
    );

    let missing = format!("registry:{}/{TORCH}:missing", registry.host());
    let fleet = cudalint(
        &scratch.0,
        &["image", "--format", "json", "--quiet", &reference, &missing],
        &[],
    );
    assert_eq!(fleet.status.code(), Some(2), "{}", text(&fleet.stderr));
    let report: serde_json::Value = serde_json::from_slice(&fleet.stdout).unwrap();
    assert_eq!(report["failed_inputs"].as_array().unwrap().len(), 1);
    assert!(!report["findings"].as_array().unwrap().is_empty());
}

#[test]
fn an_index_picks_the_platform_and_lists_what_it_has() {
    let Some(env) = RegistryEnv::get("an_index_picks_the_platform") else {
        return;
    };
    let scratch = Scratch::new("index");
    let registry = Registry::start(&scratch, &env.storage, "", None);
    let reference = format!("registry:{}/fixture/debug-env:multi", registry.host());
    for platform in ["linux/amd64", "linux/arm64"] {
        let output = scan(
            &scratch.0,
            &reference,
            &["--no-cache", "--platform", platform],
            &[],
        );
        assert_read(&output);
    }
    let output = scan(
        &scratch.0,
        &reference,
        &["--no-cache", "--platform", "linux/s390x"],
        &[],
    );
    assert_failed(
        &output,
        &["no image for linux/s390x", "linux/amd64, linux/arm64/v8"],
    );
}

#[test]
fn the_layer_cache_leaves_only_manifest_and_config_to_fetch() {
    let Some(env) = RegistryEnv::get("the_layer_cache_leaves_only_manifest_and_config") else {
        return;
    };
    let scratch = Scratch::new("cache");
    let registry = Registry::start(&scratch, &env.storage, "", None);
    let gzip = format!("registry:{}/{TORCH}:gzip", registry.host());
    assert_read(&scan(&scratch.0, &gzip, &[], &[]));
    let manifest = tag_manifest(&env.storage, TORCH, "gzip");
    let config = manifest["config"]["digest"].as_str().unwrap().to_owned();
    let config = config.as_str();
    let blobs = |requests: &[String]| -> Vec<String> {
        requests
            .iter()
            .filter(|uri| uri.contains("/blobs/") && !uri.contains(config))
            .cloned()
            .collect()
    };
    let first = registry.requests();
    assert!(blobs(&first).len() >= 8, "every layer read once: {first:?}");
    // A re-scan fetches the manifest and the config only.
    assert_read(&scan(&scratch.0, &gzip, &[], &[]));
    let rescan = registry.requests()[first.len()..].to_vec();
    assert!(
        blobs(&rescan).is_empty(),
        "no layer fetched again: {rescan:?}"
    );
    assert!(rescan.iter().any(|uri| uri.contains(config)), "{rescan:?}");
    // The same layers stored as zstd have the same diff IDs: nothing downloaded either; and an image
    // on the same base (debug-env's two layers are the torch image's first two) fetches none.
    let before = registry.requests().len();
    assert_read(&scan(
        &scratch.0,
        &format!("registry:{}/{TORCH}:zstd", registry.host()),
        &[],
        &[],
    ));
    assert_read(&scan(
        &scratch.0,
        &format!("registry:{}/fixture/debug-env:v2s2", registry.host()),
        &[],
        &[],
    ));
    let later = registry.requests()[before..].to_vec();
    assert!(
        later.iter().filter(|uri| uri.contains("/blobs/")).count() == 2,
        "only the two configs: {later:?}"
    );
}

#[test]
fn basic_auth_reads_docker_and_podman_files_and_names_the_source_it_tried() {
    let Some(env) = RegistryEnv::get("basic_auth") else {
        return;
    };
    let scratch = Scratch::new("basic");
    let passwords = htpasswd(&scratch, "ci", "s3cret-pass");
    let auth = format!(
        "auth:\n  htpasswd:\n    realm: cudalint-test\n    path: {}",
        passwords.display()
    );
    let registry = Registry::start(&scratch, &env.storage, &auth, None);
    let reference = format!("registry:{}/fixture/debug-env:v2s2", registry.host());

    let anonymous = scan(&scratch.0, &reference, &["--no-cache"], &[]);
    assert_failed(&anonymous, &["asks for credentials", "none were found"]);

    write_docker_config(&scratch.0, &auths(&registry.host(), "ci", "s3cret-pass"));
    assert_read(&scan(&scratch.0, &reference, &["--no-cache"], &[]));

    write_docker_config(&scratch.0, &auths(&registry.host(), "ci", "wrong-pass"));
    let config_path = scratch.0.join("docker/config.json");
    let refused = scan(&scratch.0, &reference, &["--no-cache", "--verbose"], &[]);
    let stderr = assert_failed(
        &refused,
        &[
            "refused the credentials",
            &format!("{} (auths)", config_path.display()),
        ],
    );
    assert!(!stderr.contains("wrong-pass") && !text(&refused.stdout).contains("wrong-pass"));

    // podman's file, when Docker's has nothing for the registry.
    write_docker_config(&scratch.0, &serde_json::json!({"auths": {}}));
    let podman = scratch.path("auth.json");
    std::fs::write(
        &podman,
        auths(&registry.host(), "ci", "s3cret-pass").to_string(),
    )
    .unwrap();
    let podman_text = podman.display().to_string();
    assert_read(&scan(
        &scratch.0,
        &reference,
        &["--no-cache"],
        &[("REGISTRY_AUTH_FILE", &podman_text)],
    ));
}

#[test]
fn credential_helpers_are_asked_and_a_failing_one_is_reported() {
    let Some(env) = RegistryEnv::get("credential_helpers") else {
        return;
    };
    let scratch = Scratch::new("helpers");
    let passwords = htpasswd(&scratch, "ci", "helper-pass");
    let auth = format!(
        "auth:\n  htpasswd:\n    realm: cudalint-test\n    path: {}",
        passwords.display()
    );
    let registry = Registry::start(&scratch, &env.storage, &auth, None);
    let reference = format!("registry:{}/fixture/debug-env:v2s2", registry.host());
    let bin = scratch.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let helper = |name: &str, script: &str| {
        let path = bin.join(format!("docker-credential-{name}"));
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    };
    helper(
        "cudalint-good",
        r#"read server; printf '{"ServerURL":"%s","Username":"ci","Secret":"helper-pass"}' "$server""#,
    );
    helper(
        "cudalint-broken",
        "echo 'the keychain is locked' >&2; exit 1",
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    write_docker_config(
        &scratch.0,
        &serde_json::json!({"credsStore": "cudalint-good"}),
    );
    assert_read(&scan(
        &scratch.0,
        &reference,
        &["--no-cache"],
        &[("PATH", &path)],
    ));
    write_docker_config(
        &scratch.0,
        &serde_json::json!({"credsStore": "cudalint-good", "credHelpers": {registry.host(): "cudalint-broken"}}),
    );
    let failed = scan(&scratch.0, &reference, &["--no-cache"], &[("PATH", &path)]);
    assert_failed(
        &failed,
        &[
            "credential helper docker-credential-cudalint-broken (credHelpers in",
            "the keychain is locked",
        ],
    );
}

#[test]
fn token_auth_with_credentials_and_anonymously() {
    let Some(env) = RegistryEnv::get("token_auth") else {
        return;
    };
    let scratch = Scratch::new("token");
    let issuer = Issuer::start(&scratch, &["--user", "ci", "--password", "token-pass"]);
    let registry = Registry::start(&scratch, &env.storage, &issuer.registry_auth(), None);
    let reference = format!("registry:{}/fixture/debug-env:v2s2", registry.host());
    write_docker_config(&scratch.0, &auths(&registry.host(), "ci", "token-pass"));
    assert_read(&scan(&scratch.0, &reference, &["--no-cache"], &[]));
    write_docker_config(&scratch.0, &auths(&registry.host(), "ci", "not-it"));
    let refused = scan(&scratch.0, &reference, &["--no-cache"], &[]);
    let stderr = assert_failed(
        &refused,
        &[
            "token endpoint",
            "refused the credentials",
            "config.json (auths)",
        ],
    );
    assert!(!stderr.contains("not-it"));
    drop(registry);
    drop(issuer);

    let scratch = Scratch::new("token-anonymous");
    let issuer = Issuer::start(&scratch, &["--anonymous"]);
    let registry = Registry::start(&scratch, &env.storage, &issuer.registry_auth(), None);
    let reference = format!("registry:{}/fixture/debug-env:v2s2", registry.host());
    assert_read(&scan(&scratch.0, &reference, &["--no-cache"], &[]));
}

/// A private CA made with `openssl` in `scratch`, and certificates it signs.
struct TestPki<'a> {
    scratch: &'a Scratch,
    ca: PathBuf,
    ca_key: PathBuf,
}

impl<'a> TestPki<'a> {
    fn new(scratch: &'a Scratch) -> Self {
        let pki = TestPki {
            scratch,
            ca: scratch.path("ca.crt"),
            ca_key: scratch.path("ca.key"),
        };
        let (ca, ca_key) = (path_arg(&pki.ca), path_arg(&pki.ca_key));
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=cudalint test CA",
            "-keyout",
            &ca_key,
            "-out",
            &ca,
        ]);
        pki
    }

    /// A certificate and key for `name`, signed by the CA, with `extensions` (openssl's `-extfile`).
    fn issue(&self, name: &str, subject: &str, extensions: &str) -> (PathBuf, PathBuf) {
        let (cert, key) = (
            self.scratch.path(&format!("{name}.crt")),
            self.scratch.path(&format!("{name}.key")),
        );
        let csr = self.scratch.path(&format!("{name}.csr"));
        let ext = self.scratch.write(&format!("{name}.ext"), extensions);
        openssl(&[
            "req",
            "-new",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-subj",
            subject,
            "-keyout",
            &path_arg(&key),
            "-out",
            &path_arg(&csr),
        ]);
        openssl(&[
            "x509",
            "-req",
            "-in",
            &path_arg(&csr),
            "-CA",
            &path_arg(&self.ca),
            "-CAkey",
            &path_arg(&self.ca_key),
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            &path_arg(&ext),
            "-out",
            &path_arg(&cert),
        ]);
        (cert, key)
    }

    /// The registry's own certificate, for 127.0.0.1.
    fn server(&self) -> (PathBuf, PathBuf) {
        self.issue(
            "registry",
            "/CN=127.0.0.1",
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\n",
        )
    }
}

fn path_arg(path: &Path) -> String {
    path.to_str().expect("scratch paths are UTF-8").to_string()
}

fn openssl(args: &[&str]) {
    let status = Command::new("openssl")
        .args(args)
        .stderr(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("openssl (scripts/registry-test-env installs it)");
    assert!(status.success(), "openssl {args:?}");
}

/// The directory of certs.d (rootless Docker's, under the scratch's XDG_CONFIG_HOME) for `registry`.
fn certs_d(scratch: &Scratch, registry: &Registry) -> PathBuf {
    let dir = scratch
        .0
        .join(format!("config/docker/certs.d/{}", registry.host()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn tls_is_verified_with_the_certs_d_ca() {
    let Some(env) = RegistryEnv::get("tls") else {
        return;
    };
    let scratch = Scratch::new("tls");
    let pki = TestPki::new(&scratch);
    let (cert, key) = pki.server();
    let registry = Registry::start(&scratch, &env.storage, "", Some((&cert, &key)));
    let reference = format!("registry:{}/fixture/debug-env:v2s2", registry.host());
    let untrusted = scan(&scratch.0, &reference, &["--no-cache"], &[]);
    assert_failed(&untrusted, &["certificate"]);
    std::fs::copy(&pki.ca, certs_d(&scratch, &registry).join("ca.crt")).unwrap();
    assert_read(&scan(&scratch.0, &reference, &["--no-cache"], &[]));
}

#[test]
fn a_client_certificate_in_certs_d_is_presented() {
    let Some(env) = RegistryEnv::get("mutual_tls") else {
        return;
    };
    let scratch = Scratch::new("mutual-tls");
    let pki = TestPki::new(&scratch);
    let (cert, key) = pki.server();
    let (client_cert, client_key) = pki.issue(
        "client",
        "/CN=cudalint test client",
        "extendedKeyUsage=clientAuth\nbasicConstraints=critical,CA:FALSE\n",
    );
    // The registry asks every client for a certificate its CA signed (distribution's
    // `http.tls.clientcas`).
    let registry = Registry::start_with_client_ca(&scratch, &env.storage, &cert, &key, &pki.ca);
    let reference = format!("registry:{}/fixture/debug-env:v2s2", registry.host());
    let dir = certs_d(&scratch, &registry);
    std::fs::copy(&pki.ca, dir.join("ca.crt")).unwrap();
    // Without a client certificate the registry ends the handshake.
    let refused = scan(&scratch.0, &reference, &["--no-cache"], &[]);
    assert_failed(&refused, &[&registry.host()]);
    // A certificate without its key is named, and nothing is read.
    std::fs::copy(&client_cert, dir.join("client.cert")).unwrap();
    assert_failed(
        &scan(&scratch.0, &reference, &["--no-cache"], &[]),
        &["client.cert: a client certificate without its key"],
    );
    std::fs::copy(&client_key, dir.join("client.key")).unwrap();
    assert_read(&scan(&scratch.0, &reference, &["--no-cache"], &[]));
}

#[test]
fn a_blob_rewritten_in_storage_is_exit_2() {
    let Some(env) = RegistryEnv::get("a_blob_rewritten") else {
        return;
    };
    let scratch = Scratch::new("damage");
    let storage = scratch.path("storage");
    copy_storage(&env.storage, &storage);
    let layer = layers_by_size(&tag_manifest(&storage, "fixture/debug-env", "v2s2"))[0].clone();
    let data = blob_data(&storage, &layer);
    let mut bytes = std::fs::read(&data).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&data, bytes).unwrap();
    let registry = Registry::start(&scratch, &storage, "", None);
    let reference = format!("registry:{}/fixture/debug-env:v2s2", registry.host());
    let output = scan(&scratch.0, &reference, &["--no-cache"], &[]);
    assert_failed(&output, &[&layer[..19]]);
    assert!(findings_or_empty(&output.stdout).is_empty());
}

fn findings_or_empty(stdout: &[u8]) -> Vec<serde_json::Value> {
    serde_json::from_slice::<serde_json::Value>(stdout)
        .ok()
        .and_then(|report| report["findings"].as_array().cloned())
        .unwrap_or_default()
}

#[test]
fn a_missing_tag_is_exit_2_and_lists_nothing() {
    let Some(env) = RegistryEnv::get("a_missing_tag") else {
        return;
    };
    let scratch = Scratch::new("missing");
    let registry = Registry::start(&scratch, &env.storage, "", None);
    let missing = scan(
        &scratch.0,
        &format!("registry:{}/{TORCH}:no-such-tag", registry.host()),
        &[],
        &[],
    );
    assert_failed(&missing, &["404", "MANIFEST_UNKNOWN"]);
    assert!(findings_or_empty(&missing.stdout).is_empty());
}

/// distribution itself refuses to read a manifest over 4 MiB from its storage ("read exceeds
/// limit"), so a registry that sends one is stood in for by a plain HTTP server.
#[test]
fn a_manifest_over_4_mib_is_refused() {
    let scratch = Scratch::new("huge");
    let port = serve(|head| {
        if head.starts_with("GET /v2/ ") {
            return ("200 OK".into(), String::new(), b"{}".to_vec());
        }
        let body = format!(
            "{{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"annotations\":{{\"x\":\"{}\"}}}}",
            "x".repeat(5 << 20)
        );
        (
            "200 OK".into(),
            "Content-Type: application/vnd.oci.image.manifest.v1+json\r\n".into(),
            body.into_bytes(),
        )
    });
    let huge = scan(
        &scratch.0,
        &format!("registry:127.0.0.1:{port}/big/manifest:huge"),
        &[],
        &[],
    );
    assert_failed(&huge, &["4194304-byte limit"]);
}

#[test]
fn a_dropped_download_resumes_with_range() {
    let Some(env) = RegistryEnv::get("a_dropped_download_resumes_with_range") else {
        return;
    };
    let scratch = Scratch::new("resume");
    let registry = Registry::start(&scratch, &env.storage, "", None);
    // The largest layer, cut after 300 KiB (it holds the image's libc: megabytes).
    let layer = layers_by_size(&tag_manifest(&env.storage, "fixture/debug-env", "v2s2"))[0].clone();
    // The proxy's thread outlives this frame.
    let layer: &'static str = Box::leak(layer.into_boxed_str());
    let (port, seen) = cutting_proxy(registry.port, layer, 300 << 10);
    let reference = format!("registry:127.0.0.1:{port}/fixture/debug-env:v2s2");
    let output = scan(&scratch.0, &reference, &["--no-cache", "--jobs", "1"], &[]);
    assert_read(&output);
    let seen = seen.lock().unwrap();
    let asked: Vec<&String> = seen.iter().filter(|line| line.contains(layer)).collect();
    assert_eq!(asked.len(), 2, "once whole, once resumed: {seen:?}");
    assert!(asked[1].ends_with("(range)"), "{seen:?}");
}

#[test]
fn a_registry_that_never_answers_hits_the_timeout() {
    let scratch = Scratch::new("silent");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = held.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            keep.lock().unwrap().push(stream); // accepted, never answered
        }
    });
    let started = Instant::now();
    let output = scan(
        &scratch.0,
        &format!("registry:127.0.0.1:{port}/x/y:z"),
        &["--timeout", "2"],
        &[],
    );
    let took = started.elapsed();
    assert_failed(&output, &["--timeout of 2 s"]);
    assert!(
        took < Duration::from_secs(3),
        "took {took:?}, past the timeout plus a second"
    );
}

#[test]
fn malformed_references_name_the_rule_they_break() {
    let scratch = Scratch::new("malformed");
    for (reference, rule) in [
        ("registry:", "empty reference"),
        ("registry:/x", "empty path component"),
        ("registry:127.0.0.1:5000/Team/app", "must be lowercase"),
        ("docker://x@sha256:1234", "64 lower-case hex"),
    ] {
        let output = scan(&scratch.0, reference, &[], &[]);
        assert_failed(&output, &[rule]);
    }
}

/// Distribution's redirect storage middleware sends blob GETs to another host (as S3 or a CDN
/// would); the test serves the storage files there and records the headers it is sent.
#[test]
fn blob_redirects_to_another_host_carry_no_credentials() {
    let Some(env) = RegistryEnv::get("blob_redirects") else {
        return;
    };
    let scratch = Scratch::new("redirect");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let backend_port = listener.local_addr().unwrap().port();
    let seen: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let storage = env.storage.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = Vec::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push(line.trim_end().to_string());
            }
            record.lock().unwrap().push(head.join("\n"));
            let path = head
                .first()
                .and_then(|line| line.split(' ').nth(1))
                .unwrap_or("/")
                .to_string();
            let path = path.split('?').next().unwrap().to_string();
            let file = storage.join(path.trim_start_matches('/'));
            let mut body = Vec::new();
            let found = std::fs::File::open(&file)
                .and_then(|mut f| f.read_to_end(&mut body))
                .is_ok();
            let status = if found { "200 OK" } else { "404 Not Found" };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
        }
    });
    wait_for_port(backend_port);
    let passwords = htpasswd(&scratch, "ci", "redirect-pass");
    let extra = format!(
        "auth:\n  htpasswd:\n    realm: cudalint-test\n    path: {}\nmiddleware:\n  storage:\n    - name: redirect\n      options:\n        baseurl: http://127.0.0.1:{backend_port}/",
        passwords.display()
    );
    let registry = Registry::start(&scratch, &env.storage, &extra, None);
    write_docker_config(&scratch.0, &auths(&registry.host(), "ci", "redirect-pass"));
    let reference = format!("registry:{}/fixture/debug-env:v2s2", registry.host());
    assert_read(&scan(&scratch.0, &reference, &["--no-cache"], &[]));
    let seen = seen.lock().unwrap();
    assert!(
        seen.len() >= 3,
        "config and two layers fetched from the backend: {seen:?}"
    );
    for request in seen.iter() {
        assert!(
            !request.to_ascii_lowercase().contains("authorization:"),
            "{request}"
        );
    }
}
