//! Registry credentials, found where the Docker CLI finds them and then where podman does:
//!
//! 1. `$DOCKER_CONFIG/config.json` (else `~/.docker/config.json`): `credHelpers[host]`, else
//!    `credsStore`, run as `docker-credential-<name> get` with the server URL on stdin (the
//!    docker-credential-helpers protocol: JSON `{ServerURL, Username, Secret}` on stdout); else
//!    `auths[host].auth` (base64 `user:password`) or `auths[host].identitytoken`.
//! 2. `$REGISTRY_AUTH_FILE`, else `$XDG_RUNTIME_DIR/containers/auth.json` (podman, skopeo, buildah):
//!    the same `auths` format.
//!
//! Docker Hub's entry is keyed `https://index.docker.io/v1/`; other keys may carry a scheme or a
//! path, and are matched by host. A helper that fails is an error naming it (a helper that reports
//! "credentials not found" is not: the registry is then tried anonymously). Each credential
//! remembers where it came from, so a refusal can say which source was tried; secrets have no
//! `Debug` or `Display` and are never printed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context};
use base64::Engine as _;
use serde::Deserialize;

use super::reference::DOCKER_HUB;

/// Docker Hub's key in `auths` and its server URL for helpers.
const DOCKER_HUB_KEY: &str = "https://index.docker.io/v1/";

/// What a registry is asked with.
#[derive(Clone)]
pub enum Secret {
    Basic {
        username: String,
        password: String,
    },
    /// An OAuth2 refresh token (`identitytoken`), traded at the token endpoint.
    IdentityToken(String),
}

/// A credential and the place it was found, e.g. `/root/.docker/config.json (auths)`.
#[derive(Clone)]
pub struct Credential {
    pub secret: Secret,
    pub source: String,
}

impl Credential {
    pub fn username(&self) -> Option<&str> {
        match &self.secret {
            Secret::Basic { username, .. } => Some(username),
            Secret::IdentityToken(_) => None,
        }
    }
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Credential {{ source: {:?}, secret: <redacted> }}",
            self.source
        )
    }
}

#[derive(Deserialize, Default)]
struct AuthFile {
    #[serde(default)]
    auths: std::collections::BTreeMap<String, AuthEntry>,
    #[serde(default, rename = "credsStore")]
    creds_store: Option<String>,
    #[serde(default, rename = "credHelpers")]
    cred_helpers: std::collections::BTreeMap<String, String>,
}

#[derive(Deserialize, Default)]
struct AuthEntry {
    #[serde(default)]
    auth: Option<String>,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    password: Option<String>,
    #[serde(default)]
    identitytoken: Option<String>,
}

#[derive(Deserialize)]
struct HelperAnswer {
    #[serde(rename = "Username", default)]
    username: String,
    #[serde(rename = "Secret", default)]
    secret: String,
}

/// The credential for `registry` (as written in the reference, `host[:port]`), or `None` to go
/// anonymous.
pub fn find(registry: &str) -> anyhow::Result<Option<Credential>> {
    if let Some(found) = from_docker_config(registry)? {
        return Ok(Some(found));
    }
    for path in podman_auth_files() {
        if let Some(found) = from_auths_file(&path, registry)? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

fn docker_config_file() -> Option<PathBuf> {
    match std::env::var_os("DOCKER_CONFIG") {
        Some(dir) => Some(PathBuf::from(dir).join("config.json")),
        None => {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".docker/config.json"))
        }
    }
}

/// `$REGISTRY_AUTH_FILE` when set, else podman's per-session file.
fn podman_auth_files() -> Vec<PathBuf> {
    if let Some(file) = std::env::var_os("REGISTRY_AUTH_FILE") {
        return vec![PathBuf::from(file)];
    }
    std::env::var_os("XDG_RUNTIME_DIR")
        .map(|dir| vec![PathBuf::from(dir).join("containers/auth.json")])
        .unwrap_or_default()
}

fn read_auth_file(path: &Path) -> anyhow::Result<Option<AuthFile>> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error).with_context(|| format!("reading {}", path.display())),
    };
    let file = serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{}: not a registry auth file (JSON with \"auths\")",
            path.display()
        )
    })?;
    Ok(Some(file))
}

fn from_docker_config(registry: &str) -> anyhow::Result<Option<Credential>> {
    let Some(path) = docker_config_file() else {
        return Ok(None);
    };
    let Some(config) = read_auth_file(&path)? else {
        return Ok(None);
    };
    let helper = config
        .cred_helpers
        .iter()
        .find(|(key, _)| same_registry(key, registry))
        .map(|(_, helper)| (helper.clone(), "credHelpers"))
        .or_else(|| {
            config
                .creds_store
                .clone()
                .map(|store| (store, "credsStore"))
        });
    if let Some((helper, key)) = helper.filter(|(helper, _)| !helper.is_empty()) {
        let source = format!("docker-credential-{helper} ({key} in {})", path.display());
        return run_helper(&helper, registry, source);
    }
    entry_credential(&config, registry, format!("{} (auths)", path.display()))
}

fn from_auths_file(path: &Path, registry: &str) -> anyhow::Result<Option<Credential>> {
    let Some(file) = read_auth_file(path)? else {
        return Ok(None);
    };
    entry_credential(&file, registry, format!("{} (auths)", path.display()))
}

fn entry_credential(
    file: &AuthFile,
    registry: &str,
    source: String,
) -> anyhow::Result<Option<Credential>> {
    let Some((_, entry)) = file
        .auths
        .iter()
        .find(|(key, _)| same_registry(key, registry))
    else {
        return Ok(None);
    };
    if let Some(token) = entry
        .identitytoken
        .as_ref()
        .filter(|token| !token.is_empty())
    {
        return Ok(Some(Credential {
            secret: Secret::IdentityToken(token.clone()),
            source,
        }));
    }
    if let Some(auth) = entry.auth.as_ref().filter(|auth| !auth.is_empty()) {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(auth.trim())
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .with_context(|| {
                format!("{source}: the \"auth\" of {registry} is not base64 of user:password")
            })?;
        let Some((username, password)) = decoded.split_once(':') else {
            bail!("{source}: the \"auth\" of {registry} is not base64 of user:password");
        };
        return Ok(Some(Credential {
            secret: Secret::Basic {
                username: username.to_string(),
                password: password.to_string(),
            },
            source,
        }));
    }
    match (&entry.username, &entry.password) {
        (Some(username), Some(password)) => Ok(Some(Credential {
            secret: Secret::Basic {
                username: username.clone(),
                password: password.clone(),
            },
            source,
        })),
        _ => Ok(None),
    }
}

/// Whether an `auths` or `credHelpers` key names `registry`: keys may be `host`, `https://host`,
/// `https://host/v1/`; Docker Hub has several names.
fn same_registry(key: &str, registry: &str) -> bool {
    let host = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    let host = host.split('/').next().unwrap_or(host);
    let hub = |name: &str| {
        matches!(
            name,
            "docker.io" | "index.docker.io" | "registry-1.docker.io" | "registry.hub.docker.com"
        )
    };
    host == registry || (registry == DOCKER_HUB && hub(host))
}

/// The server URL a helper is asked for: Docker Hub's legacy key, else the host.
fn server_url(registry: &str) -> String {
    if registry == DOCKER_HUB {
        DOCKER_HUB_KEY.to_string()
    } else {
        registry.to_string()
    }
}

/// Runs `docker-credential-<helper> get`.
fn run_helper(helper: &str, registry: &str, source: String) -> anyhow::Result<Option<Credential>> {
    let program = format!("docker-credential-{helper}");
    let mut child = Command::new(&program)
        .arg("get")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("credential helper {source} could not be started"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A helper that exits without reading its input is judged by its exit status below.
        let _ = stdin.write_all(server_url(registry).as_bytes());
    }
    let output = child
        .wait_with_output()
        .with_context(|| format!("credential helper {source}"))?;
    if !output.status.success() {
        // Helpers answer "credentials not found in native keychain" on stdout for an unknown server.
        let said = String::from_utf8_lossy(&output.stdout);
        if said.to_ascii_lowercase().contains("credentials not found") {
            return Ok(None);
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let message = stderr
            .lines()
            .chain(said.lines())
            .find(|line| !line.trim().is_empty());
        bail!(
            "credential helper {source} failed ({}){}",
            output.status,
            message
                .map(|line| format!(": {}", line.chars().take(200).collect::<String>()))
                .unwrap_or_default()
        );
    }
    let answer: HelperAnswer = serde_json::from_slice(&output.stdout).with_context(|| {
        format!("credential helper {source}: its answer is not the helper protocol's JSON")
    })?;
    let secret = if answer.username == "<token>" {
        Secret::IdentityToken(answer.secret)
    } else {
        Secret::Basic {
            username: answer.username,
            password: answer.secret,
        }
    };
    Ok(Some(Credential { secret, source }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_match_by_host() {
        assert!(same_registry("https://index.docker.io/v1/", "docker.io"));
        assert!(same_registry("registry-1.docker.io", "docker.io"));
        assert!(same_registry("https://nvcr.io", "nvcr.io"));
        assert!(same_registry("127.0.0.1:5000", "127.0.0.1:5000"));
        assert!(!same_registry("127.0.0.1:5001", "127.0.0.1:5000"));
        assert!(!same_registry("ghcr.io", "docker.io"));
    }

    #[test]
    fn auth_entries_decode_and_never_show_the_secret() {
        let file: AuthFile =
            serde_json::from_str(r#"{"auths":{"r.example:5000":{"auth":"dTpzM2NyZXQ="}}}"#)
                .unwrap();
        let found = entry_credential(&file, "r.example:5000", "f (auths)".into())
            .unwrap()
            .unwrap();
        assert_eq!(found.username(), Some("u"));
        assert!(matches!(&found.secret, Secret::Basic { password, .. } if password == "s3cret"));
        assert!(!format!("{found:?}").contains("s3cret"));
        assert!(entry_credential(&file, "other", "f".into())
            .unwrap()
            .is_none());
    }
}
