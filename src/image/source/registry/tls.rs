//! TLS for registries: rustls (the `ring` provider bollard already builds) verifying against the
//! system's roots (`rustls-native-certs`, which honours `SSL_CERT_FILE`/`SSL_CERT_DIR`) plus the
//! registry's own CA in Docker's per-registry directory, `/etc/docker/certs.d/HOST[:PORT]/*.crt`
//! (rootless Docker's `$XDG_CONFIG_HOME/docker/certs.d` too), as `docker pull` trusts it.
//! Certificates are always verified: a registry without TLS is reached over plain HTTP, and only
//! when it is on loopback or named by `--insecure-registry` (see `client.rs`).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
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

/// A client configuration trusting the system roots and `registry`'s certs.d CAs.
pub fn client_config(registry: &str) -> anyhow::Result<Arc<ClientConfig>> {
    let mut roots = RootCertStore::empty();
    // A system store that cannot be read leaves only the certs.d CAs; an unreadable certificate in it
    // is skipped, as every TLS client does.
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    for dir in certs_d_roots() {
        let dir = dir.join(registry);
        let Ok(listing) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in listing.flatten() {
            let path = entry.path();
            if path.extension().and_then(|ext| ext.to_str()) != Some("crt") {
                continue;
            }
            let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&path)
                .with_context(|| format!("reading {}", path.display()))?
                .collect::<Result<_, _>>()
                .with_context(|| format!("{}: not a PEM certificate", path.display()))?;
            for cert in certs {
                roots
                    .add(cert)
                    .with_context(|| format!("{}: not a usable CA certificate", path.display()))?;
            }
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("setting up TLS")?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}
