//! TLS for registries: rustls (the `ring` provider bollard already builds) verifying against the
//! system's roots (`rustls-native-certs`, which honours `SSL_CERT_FILE`/`SSL_CERT_DIR`) plus the
//! registry's own CA in Docker's per-registry directory, `/etc/docker/certs.d/HOST[:PORT]/*.crt`
//! (rootless Docker's `$XDG_CONFIG_HOME/docker/certs.d` too), as `docker pull` trusts it. A client
//! certificate there (`NAME.cert` with its key `NAME.key`, Docker's pairing) is presented to a
//! registry that asks for one.
//! Certificates are always verified: a registry without TLS is reached over plain HTTP, and only
//! when it is on loopback or named by `--insecure-registry` (see `client.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore};

/// The directories whose `HOST[:PORT]/` subdirectory holds a registry's CA certificates.
pub fn certs_d_roots() -> Vec<PathBuf> {
    let mut roots = vec![PathBuf::from("/etc/docker/certs.d")];
    let config_home = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")));
    if let Some(config_home) = config_home {
        roots.push(config_home.join("docker/certs.d"));
    }
    roots
}

/// A client configuration trusting the system roots and `registry`'s certs.d CAs, presenting the
/// client certificate certs.d holds for it, if any.
pub fn client_config(registry: &str) -> anyhow::Result<Arc<ClientConfig>> {
    let mut roots = RootCertStore::empty();
    // A system store that cannot be read leaves only the certs.d CAs; an unreadable certificate in it
    // is skipped, as every TLS client does.
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    let mut client_identity = None;
    for dir in certs_d_roots() {
        let dir = dir.join(registry);
        let Ok(listing) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = listing.flatten().map(|entry| entry.path()).collect();
        paths.sort();
        for path in paths {
            match path.extension().and_then(|ext| ext.to_str()) {
                Some("crt") => {
                    for cert in read_certificates(&path)? {
                        roots.add(cert).with_context(|| {
                            format!("{}: not a usable CA certificate", path.display())
                        })?;
                    }
                }
                // Docker takes the first pair it finds; so does this.
                Some("cert") if client_identity.is_none() => {
                    client_identity = Some(read_client_identity(&path)?);
                }
                Some("key") => anyhow::ensure!(
                    path.with_extension("cert").is_file(),
                    "{}: a client key without its certificate {}",
                    path.display(),
                    path.with_extension("cert").display()
                ),
                _ => {}
            }
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("setting up TLS")?
        .with_root_certificates(roots);
    let config = match client_identity {
        Some(ClientIdentity { certs, key, path }) => {
            builder.with_client_auth_cert(certs, key).with_context(|| {
                format!(
                    "{}: the certificate and its key do not go together",
                    path.display()
                )
            })?
        }
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

fn read_certificates(path: &Path) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    CertificateDer::pem_file_iter(path)
        .with_context(|| format!("reading {}", path.display()))?
        .collect::<Result<_, _>>()
        .with_context(|| format!("{}: not a PEM certificate", path.display()))
}

/// A client certificate chain and its private key, from certs.d.
struct ClientIdentity {
    certs: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    path: PathBuf,
}

/// `NAME.cert` and the `NAME.key` beside it (as Docker pairs them: a certificate without its key
/// is an error, never skipped).
fn read_client_identity(cert_path: &Path) -> anyhow::Result<ClientIdentity> {
    let key_path = cert_path.with_extension("key");
    anyhow::ensure!(
        key_path.is_file(),
        "{}: a client certificate without its key {}",
        cert_path.display(),
        key_path.display()
    );
    let certs = read_certificates(cert_path)?;
    anyhow::ensure!(
        !certs.is_empty(),
        "{}: holds no certificate",
        cert_path.display()
    );
    let key = PrivateKeyDer::from_pem_file(&key_path)
        .with_context(|| format!("{}: not a PEM private key", key_path.display()))?;
    Ok(ClientIdentity {
        certs,
        key,
        path: cert_path.to_path_buf(),
    })
}
