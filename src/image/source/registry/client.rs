//! One registry session over HTTP: the `/v2/` handshake and authorization, documents (manifests,
//! configs) read whole under a size bound, and blobs as a blocking [`Read`] that a layer reader
//! consumes on its own thread.
//!
//! # The stack
//!
//! hyper 1 through hyper-util's pooled client, with rustls (ring) through hyper-rustls: the engine
//! client (bollard, with its `ssl` feature) already builds every one of these crates, so the
//! registry source adds no crate to the build and no C library (no OpenSSL: static musl builds
//! stay simple). ureq or reqwest would each have added a second HTTP stack. Requests run on a small
//! tokio runtime of their own; a layer worker waits on each body chunk with `Handle::block_on`, so
//! hyper reads from the socket only as fast as the layer reader consumes, and memory stays bounded
//! by hyper's buffers whatever the layer's size.
//!
//! # Rules
//!
//! - HTTPS, verified (`tls.rs`). Plain HTTP only for a loopback registry or one named by
//!   `--insecure-registry`, and then only after HTTPS was refused at the TLS level (as Docker does).
//! - Every network wait (connect, answer, each body chunk) is bounded by `--timeout`.
//! - Redirects are followed only for blob downloads (storage backends), at most
//!   [`MAX_REDIRECTS`] times, and a redirect to another host carries no credentials.
//! - A blob whose connection drops is asked again from where it stopped, with `Range`.
//! - Credentials and tokens are sent only in headers, and never printed.

use std::io::{self, Read};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{
    HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, LOCATION, RANGE,
};
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use super::auth::{self, Challenge};
use super::credentials::{self, Credential};
use super::reference::Reference;
use super::tls;

/// Blob redirects followed before giving up.
const MAX_REDIRECTS: usize = 5;
/// Times a blob download is resumed after its connection drops.
const MAX_RESUMES: u32 = 3;
/// The bound on an error answer's body read for its message.
const ERROR_BODY_LIMIT: usize = 16 << 10;

/// What a session needs to know beyond the reference.
#[derive(Clone, Debug)]
pub struct SessionOptions {
    pub timeout: Duration,
    /// Hosts (`host[:port]`) that may be reached over plain HTTP.
    pub insecure_registries: Vec<String>,
}

/// An open session with one registry for one repository.
pub struct Session {
    inner: Arc<Inner>,
}

struct Inner {
    runtime: tokio::runtime::Runtime,
    http: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    /// `https://host[:port]` or `http://host[:port]`.
    base: String,
    reference: Reference,
    timeout: Duration,
    insecure_registries: Vec<String>,
    credential: Option<Credential>,
    /// The `Authorization` value for the registry's own requests, once the handshake chose it.
    authorization: Mutex<Option<String>>,
    challenge: Mutex<Option<Challenge>>,
}

/// A request's answer: status, headers, and the body still to be read.
type Answer = Response<Incoming>;

impl Session {
    /// Connects to `reference`'s registry: finds the credential, chooses the scheme, and completes the
    /// `/v2/` handshake (and the token flow when the registry asks for it).
    pub fn open(reference: &Reference, options: &SessionOptions) -> anyhow::Result<Session> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("cudalint-registry")
            .enable_all()
            .build()
            .context("starting the registry client")?;
        let tls = tls::client_config(&reference.registry)?;
        let mut connector = HttpConnector::new();
        connector.enforce_http(false);
        connector.set_connect_timeout(Some(options.timeout));
        connector.set_nodelay(true);
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config((*tls).clone())
            .https_or_http()
            .enable_http1()
            .wrap_connector(connector);
        let http = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(https);
        let credential = credentials::find(&reference.registry)?;
        let mut inner = Inner {
            runtime,
            http,
            base: format!("https://{}", reference.api_host()),
            reference: reference.clone(),
            timeout: options.timeout,
            insecure_registries: options.insecure_registries.clone(),
            credential,
            authorization: Mutex::new(None),
            challenge: Mutex::new(None),
        };
        let ping = match inner.get_plain(&format!("{}/v2/", inner.base), None) {
            Ok(answer) => answer,
            Err(error)
                if inner.plain_http_allowed(reference.api_host()) && is_tls_refusal(&error) =>
            {
                inner.base = format!("http://{}", reference.api_host());
                inner.get_plain(&format!("{}/v2/", inner.base), None)?
            }
            Err(error) => return Err(error),
        };
        inner.handshake(ping)?;
        Ok(Session {
            inner: Arc::new(inner),
        })
    }

    /// A document (manifest or config) by reference or digest, read whole up to `limit` bytes:
    /// its bytes, content type and `Docker-Content-Digest`.
    pub fn document(&self, path: &str, accept: &str, limit: u64) -> anyhow::Result<Document> {
        let url = format!(
            "{}/v2/{}/{path}",
            self.inner.base, self.inner.reference.repository
        );
        let answer = self.inner.registry_get(&url, Some(accept), None)?;
        let answer = self.inner.expect_ok(answer, &url)?;
        if let Some(length) = content_length(&answer) {
            if length > limit {
                bail!(
                    "{url}: {length} bytes, over the {limit}-byte limit for this document: refused"
                );
            }
        }
        let content_type = header_text(&answer, CONTENT_TYPE.as_str());
        let digest = header_text(&answer, "docker-content-digest");
        let bytes = self
            .inner
            .read_body(answer.into_body(), limit)
            .with_context(|| format!("{url}: reading the answer"))?
            .with_context(|| {
                format!("{url}: over the {limit}-byte limit for this document: refused")
            })?;
        Ok(Document {
            bytes,
            content_type,
            digest,
        })
    }

    /// A blob as a blocking reader of at most `size` bytes (more is an error).
    pub fn blob(&self, digest: &str, size: u64) -> anyhow::Result<BlobReader> {
        let url = format!(
            "{}/v2/{}/blobs/{digest}",
            self.inner.base, self.inner.reference.repository
        );
        let body = self.inner.open_blob(&url, 0)?;
        Ok(BlobReader {
            inner: self.inner.clone(),
            url,
            size,
            received: 0,
            body: Some(body),
            chunk: Bytes::new(),
            resumes: 0,
        })
    }
}

/// A document read whole.
pub struct Document {
    pub bytes: Vec<u8>,
    pub content_type: Option<String>,
    pub digest: Option<String>,
}

impl Inner {
    fn plain_http_allowed(&self, host: &str) -> bool {
        is_loopback(host)
            || self
                .insecure_registries
                .iter()
                .any(|allowed| allowed == host)
    }

    fn block_on<T>(&self, future: impl std::future::Future<Output = T>) -> T {
        self.runtime.handle().block_on(future)
    }

    /// Sends one request and waits for its answer's head, within the timeout.
    fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, String)],
        body: Option<String>,
    ) -> anyhow::Result<Answer> {
        let uri: Uri = url.parse().with_context(|| format!("{url}: not a URL"))?;
        let host = uri
            .authority()
            .map(|authority| authority.as_str().to_string())
            .unwrap_or_default();
        if uri.scheme_str() == Some("http") && !self.plain_http_allowed(&host) {
            bail!(
                "{url}: plain HTTP to {host} refused (only loopback registries, or hosts named by \
                 --insecure-registry)"
            );
        }
        let mut request = Request::builder().method(method).uri(uri).header(
            "user-agent",
            concat!("cudalint/", env!("CARGO_PKG_VERSION")),
        );
        for (name, value) in headers {
            let mut value = HeaderValue::from_str(value)
                .map_err(|_| anyhow::anyhow!("{url}: a header value that cannot be sent"))?;
            if *name == AUTHORIZATION.as_str() {
                value.set_sensitive(true);
            }
            request = request.header(*name, value);
        }
        let request = request
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .with_context(|| format!("{url}: building the request"))?;
        let answer = self.block_on(async {
            tokio::time::timeout(self.timeout, self.http.request(request)).await
        });
        match answer {
            Err(_) => bail!(
                "{url}: no answer within the --timeout of {} s",
                self.timeout.as_secs_f64()
            ),
            Ok(Err(error)) => {
                let error = anyhow::Error::new(error);
                if format!("{error:#}").contains("certificate") {
                    return Err(error).with_context(|| {
                        format!(
                            "{url}: the registry's TLS certificate is not trusted (a private CA goes in \
                             /etc/docker/certs.d/{host}/ca.crt)"
                        )
                    });
                }
                Err(error).with_context(|| format!("{url}: request failed"))
            }
            Ok(Ok(answer)) => Ok(answer),
        }
    }

    /// A GET with no credentials.
    fn get_plain(&self, url: &str, accept: Option<&str>) -> anyhow::Result<Answer> {
        let mut headers = Vec::new();
        if let Some(accept) = accept {
            headers.push((ACCEPT.as_str(), accept.to_string()));
        }
        self.send(Method::GET, url, &headers, None)
    }

    /// A GET to the registry itself, authorized as the handshake chose; a Bearer token refused on the
    /// way (expired during a long download) is asked again once.
    fn registry_get(
        &self,
        url: &str,
        accept: Option<&str>,
        range: Option<u64>,
    ) -> anyhow::Result<Answer> {
        let request = |authorization: Option<String>| {
            let mut headers = Vec::new();
            if let Some(accept) = accept {
                headers.push((ACCEPT.as_str(), accept.to_string()));
            }
            if let Some(from) = range {
                headers.push((RANGE.as_str(), format!("bytes={from}-")));
            }
            if let Some(authorization) = authorization {
                headers.push((AUTHORIZATION.as_str(), authorization));
            }
            self.send(Method::GET, url, &headers, None)
        };
        let authorization = self
            .authorization
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let answer = request(authorization)?;
        let bearer = self
            .challenge
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .filter(|challenge| challenge.scheme == "bearer");
        match bearer {
            Some(challenge) if answer.status() == StatusCode::UNAUTHORIZED => {
                let token = self.fetch_token(&challenge)?;
                *self.authorization.lock().unwrap_or_else(|p| p.into_inner()) = Some(token.clone());
                request(Some(token))
            }
            _ => Ok(answer),
        }
    }

    /// Chooses how to ask, from the `/v2/` answer.
    fn handshake(&mut self, ping: Answer) -> anyhow::Result<()> {
        let url = format!("{}/v2/", self.base);
        match ping.status() {
            status if status.is_success() => return Ok(()),
            StatusCode::UNAUTHORIZED => {}
            _ => {
                self.expect_ok(ping, &url)?;
                return Ok(());
            }
        }
        let header = header_text(&ping, "www-authenticate")
            .with_context(|| format!("{url}: 401 without a WWW-Authenticate challenge"))?;
        let challenge =
            Challenge::parse(&header).with_context(|| format!("{url}: WWW-Authenticate"))?;
        match challenge.scheme.as_str() {
            "basic" => {
                let Some(credential) = &self.credential else {
                    bail!(
                        "{}: the registry asks for credentials (Basic) and none were found ({})",
                        self.reference.registry,
                        credential_places()
                    );
                };
                let credentials::Secret::Basic { username, password } = &credential.secret else {
                    bail!(
                        "{}: the registry asks for a password (Basic) and {} holds an identity token",
                        self.reference.registry,
                        credential.source
                    );
                };
                let authorization = auth::basic(username, password);
                let answer = self.send(
                    Method::GET,
                    &url,
                    &[(AUTHORIZATION.as_str(), authorization.clone())],
                    None,
                )?;
                if answer.status() == StatusCode::UNAUTHORIZED {
                    bail!(
                        "{}: the registry refused the credentials of user {username:?} from {} \
                         (401 Unauthorized)",
                        self.reference.registry,
                        credential.source
                    );
                }
                self.expect_ok(answer, &url)?;
                *self
                    .authorization
                    .get_mut()
                    .unwrap_or_else(|p| p.into_inner()) = Some(authorization);
            }
            "bearer" => {
                let token = self.fetch_token(&challenge)?;
                *self
                    .authorization
                    .get_mut()
                    .unwrap_or_else(|p| p.into_inner()) = Some(token);
            }
            other => bail!("{url}: unsupported authentication scheme {other:?}"),
        }
        *self.challenge.get_mut().unwrap_or_else(|p| p.into_inner()) = Some(challenge);
        Ok(())
    }

    /// A bearer token for pulling the repository, as `Bearer <token>`.
    fn fetch_token(&self, challenge: &Challenge) -> anyhow::Result<String> {
        let scope = format!("repository:{}:pull", self.reference.repository);
        let asked = auth::token_request(challenge, &scope, self.credential.as_ref())?;
        let realm_url = asked.url.clone();
        let shown = realm_url
            .split('?')
            .next()
            .unwrap_or(&realm_url)
            .to_string();
        let mut headers = Vec::new();
        if let Some(authorization) = asked.authorization {
            headers.push((AUTHORIZATION.as_str(), authorization));
        }
        let answer = match asked.form {
            Some(form) => {
                headers.push((
                    CONTENT_TYPE.as_str(),
                    "application/x-www-form-urlencoded".into(),
                ));
                self.send(Method::POST, &realm_url, &headers, Some(form))?
            }
            None => self.send(Method::GET, &realm_url, &headers, None)?,
        };
        let status = answer.status();
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            match &self.credential {
                Some(credential) => bail!(
                    "{}: the token endpoint {shown} refused the credentials{} from {} ({status})",
                    self.reference.registry,
                    credential
                        .username()
                        .map(|user| format!(" of user {user:?}"))
                        .unwrap_or_default(),
                    credential.source
                ),
                None => bail!(
                    "{}: the token endpoint {shown} refused an anonymous pull of {} ({status}); no \
                     credentials were found ({})",
                    self.reference.registry,
                    self.reference.repository,
                    credential_places()
                ),
            }
        }
        let answer = self.expect_ok(answer, &shown)?;
        let body = self
            .read_body(answer.into_body(), 1 << 20)?
            .with_context(|| format!("{shown}: the token answer is over 1 MiB"))?;
        let token = auth::token_from_answer(&body).with_context(|| shown.clone())?;
        Ok(format!("Bearer {token}"))
    }

    /// `answer` when it is a success, else an error with its status and the registry's error code.
    fn expect_ok(&self, answer: Answer, url: &str) -> anyhow::Result<Answer> {
        let status = answer.status();
        if status.is_success() {
            return Ok(answer);
        }
        let body = self
            .read_body(answer.into_body(), ERROR_BODY_LIMIT as u64)
            .ok()
            .flatten()
            .unwrap_or_default();
        let said = registry_error(&body);
        let hint = match status {
            StatusCode::NOT_FOUND => " (not found in the registry)",
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => match &self.credential {
                Some(_) => " (the credential does not allow pulling it)",
                None => " (anonymous pull refused; log in first)",
            },
            _ => "",
        };
        let shown = url.split('?').next().unwrap_or(url);
        match said {
            Some(said) => bail!("{shown}: {status}{hint}: {said}"),
            None => bail!("{shown}: {status}{hint}"),
        }
    }

    /// Reads a body whole; `None` when it runs past `limit`.
    fn read_body(&self, mut body: Incoming, limit: u64) -> anyhow::Result<Option<Vec<u8>>> {
        let mut bytes = Vec::new();
        loop {
            let frame = self
                .block_on(async { tokio::time::timeout(self.timeout, body.frame()).await })
                .map_err(|_| {
                    anyhow::anyhow!(
                        "no data within the --timeout of {} s",
                        self.timeout.as_secs_f64()
                    )
                })?;
            let Some(frame) = frame else {
                return Ok(Some(bytes));
            };
            if let Ok(data) = frame.context("the connection failed")?.into_data() {
                if bytes.len() as u64 + data.len() as u64 > limit {
                    return Ok(None);
                }
                bytes.extend_from_slice(&data);
            }
        }
    }

    /// Asks for a blob from byte `from`, following redirects (credentials only to the registry).
    fn open_blob(&self, url: &str, from: u64) -> anyhow::Result<Incoming> {
        let range = (from > 0).then_some(from);
        let mut answer = self.registry_get(url, None, range)?;
        let registry_authority = authority_of(url);
        let mut at = url.to_string();
        for _ in 0..=MAX_REDIRECTS {
            if !answer.status().is_redirection() {
                let answer = self.expect_ok(answer, &at)?;
                if from > 0 && answer.status() != StatusCode::PARTIAL_CONTENT {
                    bail!("{at}: asked to resume at byte {from}, the server sent the whole blob again");
                }
                return Ok(answer.into_body());
            }
            let location = header_text(&answer, LOCATION.as_str())
                .with_context(|| format!("{at}: a redirect without a Location"))?;
            let next = resolve(&at, &location)?;
            let mut headers = Vec::new();
            if let Some(from) = range {
                headers.push((RANGE.as_str(), format!("bytes={from}-")));
            }
            if authority_of(&next) == registry_authority {
                if let Some(authorization) = self
                    .authorization
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone()
                {
                    headers.push((AUTHORIZATION.as_str(), authorization));
                }
            }
            answer = self.send(Method::GET, &next, &headers, None)?;
            at = next;
        }
        bail!("{url}: more than {MAX_REDIRECTS} redirects")
    }
}

/// A blob's bytes as a blocking reader: bounded by the size the manifest gives, resumed with
/// `Range` when the connection drops or stalls, never buffering more than hyper's chunks.
pub struct BlobReader {
    inner: Arc<Inner>,
    url: String,
    size: u64,
    received: u64,
    body: Option<Incoming>,
    chunk: Bytes,
    resumes: u32,
}

impl BlobReader {
    fn next_chunk(&mut self) -> io::Result<Option<Bytes>> {
        loop {
            let failure = match self.body.as_mut() {
                None => "the connection was closed".to_string(),
                Some(body) => {
                    let timeout = self.inner.timeout;
                    let frame = self
                        .inner
                        .block_on(async { tokio::time::timeout(timeout, body.frame()).await });
                    match frame {
                        Ok(Some(Ok(frame))) => match frame.into_data() {
                            Ok(data) if data.is_empty() => continue,
                            Ok(data) => return Ok(Some(data)),
                            Err(_) => continue, // trailers
                        },
                        Ok(None) if self.received >= self.size => return Ok(None),
                        Ok(None) => format!(
                            "the connection ended after {} of {} bytes",
                            self.received, self.size
                        ),
                        Ok(Some(Err(error))) => format!("the connection failed: {error}"),
                        Err(_) => format!(
                            "no data within the --timeout of {} s",
                            timeout.as_secs_f64()
                        ),
                    }
                }
            };
            self.body = None;
            if self.resumes >= MAX_RESUMES {
                return Err(io::Error::other(format!(
                    "{}: {failure} (after {} resumes)",
                    self.url, self.resumes
                )));
            }
            self.resumes += 1;
            let body = self
                .inner
                .open_blob(&self.url, self.received)
                .map_err(|error| io::Error::other(format!("{failure}; resuming: {error:#}")))?;
            self.body = Some(body);
        }
    }
}

impl Read for BlobReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.chunk.is_empty() {
            match self.next_chunk()? {
                Some(chunk) => self.chunk = chunk,
                None => return Ok(0),
            }
        }
        let count = buf.len().min(self.chunk.len());
        if self.received + count as u64 > self.size {
            return Err(io::Error::other(format!(
                "{}: the blob runs past the {} bytes its manifest gives",
                self.url, self.size
            )));
        }
        buf[..count].copy_from_slice(&self.chunk[..count]);
        let _ = self.chunk.split_to(count);
        self.received += count as u64;
        Ok(count)
    }
}

/// Whether an error is the TLS handshake failing against a server that does not speak TLS (it
/// answers a ClientHello with plain HTTP, or closes), rather than a timeout, a refused connection or
/// a certificate that is not trusted (which is never a reason to drop TLS).
fn is_tls_refusal(error: &anyhow::Error) -> bool {
    let text = format!("{error:#}").to_ascii_lowercase();
    if text.contains("--timeout")
        || text.contains("connection refused")
        || text.contains("certificate")
    {
        return false;
    }
    [
        "corrupt message",
        "invalid content type",
        "handshake",
        "connection reset",
        "unexpected eof",
        "tls",
    ]
    .iter()
    .any(|sign| text.contains(sign))
}

/// Whether `host[:port]` is this machine.
pub fn is_loopback(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    name == "localhost" || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn authority_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split(['/', '?'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// `location` resolved against `url` (absolute, or an absolute path on the same host).
fn resolve(url: &str, location: &str) -> anyhow::Result<String> {
    if location.starts_with("https://") || location.starts_with("http://") {
        return Ok(location.to_string());
    }
    if location.starts_with('/') && !location.starts_with("//") {
        let scheme = url.split_once("://").map_or("https", |(scheme, _)| scheme);
        return Ok(format!("{scheme}://{}{location}", authority_of(url)));
    }
    bail!("{url}: a redirect to {location:?}, which is not an absolute URL or path")
}

fn header_text(answer: &Answer, name: &str) -> Option<String> {
    answer
        .headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string)
}

fn content_length(answer: &Answer) -> Option<u64> {
    header_text(answer, CONTENT_LENGTH.as_str())?
        .trim()
        .parse()
        .ok()
}

/// The first error of a registry's `{"errors":[{"code","message"}]}` body.
fn registry_error(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let first = value.get("errors")?.as_array()?.first()?;
    let code = first
        .get("code")
        .and_then(|code| code.as_str())
        .unwrap_or("");
    let message = first.get("message").and_then(|m| m.as_str()).unwrap_or("");
    let said: String = format!("{code} {message}")
        .trim()
        .chars()
        .take(300)
        .collect();
    (!said.is_empty()).then_some(said)
}

/// Where credentials were looked for, for a message.
fn credential_places() -> String {
    "looked in $DOCKER_CONFIG or ~/.docker/config.json, then $REGISTRY_AUTH_FILE or \
     $XDG_RUNTIME_DIR/containers/auth.json"
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        assert!(is_loopback("127.0.0.1:5000"));
        assert!(is_loopback("localhost"));
        assert!(is_loopback("[::1]:5000"));
        assert!(!is_loopback("10.0.0.1:5000"));
        assert!(!is_loopback("registry.example"));
    }

    #[test]
    fn redirects_resolve_and_hosts_compare() {
        assert_eq!(
            resolve("http://127.0.0.1:5000/v2/x/blobs/d", "/other").unwrap(),
            "http://127.0.0.1:5000/other"
        );
        assert_eq!(
            resolve("https://a/v2/x", "https://b.example/blob?sig=1").unwrap(),
            "https://b.example/blob?sig=1"
        );
        assert!(resolve("https://a/v2/x", "relative").is_err());
        assert_eq!(authority_of("https://B.example:443/x?y"), "b.example:443");
    }

    #[test]
    fn registry_errors_are_read() {
        let body =
            br#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{}}]}"#;
        assert_eq!(
            registry_error(body).as_deref(),
            Some("MANIFEST_UNKNOWN manifest unknown")
        );
        assert_eq!(registry_error(b"<html>"), None);
    }
}
