//! Image references as the Docker CLI and every registry tool read them, after
//! distribution/reference's grammar (`distribution/reference@v0.6.0:regexp.go`, `normalize.go`):
//!
//! ```text
//! reference  := name [ ":" tag ] [ "@" digest ]
//! name       := [ domain "/" ] path-component ( "/" path-component )*
//! domain     := domain-component ( "." domain-component )* [ ":" port ]
//! path-component := [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
//! tag        := [A-Za-z0-9_] [A-Za-z0-9_.-]{0,127}
//! digest     := algorithm ":" hex       (sha256: exactly 64 lower-case hex digits)
//! ```
//!
//! The first component is a registry host when it has a `.` or a `:`, or is `localhost`; otherwise
//! the image is on Docker Hub (`docker.io`), where a one-component name is under `library/`. A bad
//! reference is refused with the rule it breaks, never guessed at.

use std::fmt;

use anyhow::bail;

/// Docker Hub's name in references, and the host its API answers on.
pub const DOCKER_HUB: &str = "docker.io";
pub const DOCKER_HUB_API: &str = "registry-1.docker.io";
/// distribution/reference's bound on a name (domain and path together).
const MAX_NAME_LEN: usize = 255;
const MAX_TAG_LEN: usize = 128;

/// A parsed registry reference: `registry/repository` plus a tag, a digest or both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// The reference as written, without its transport (`nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04`).
    pub written: String,
    /// `host[:port]` as written (Docker Hub's is `docker.io`).
    pub registry: String,
    pub repository: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
}

impl Reference {
    /// Parses `text` (what follows `registry:` or `docker://`).
    pub fn parse(text: &str) -> anyhow::Result<Reference> {
        if text.is_empty() {
            bail!("an empty reference: expected [HOST/]REPOSITORY[:TAG][@DIGEST]");
        }
        let (rest, digest) = match text.split_once('@') {
            Some((rest, digest)) => (rest, Some(parse_digest(digest)?)),
            None => (text, None),
        };
        // A tag follows the last `:` that comes after the last `/` (a `:` before it is a port).
        let last_slash = rest.rfind('/').map_or(0, |at| at + 1);
        let (name, tag) = match rest[last_slash..].rfind(':') {
            Some(at) => {
                let tag = &rest[last_slash + at + 1..];
                check_tag(tag)?;
                (&rest[..last_slash + at], Some(tag.to_string()))
            }
            None => (rest, None),
        };
        if name.is_empty() {
            bail!("no repository name before the tag or digest");
        }
        if name.len() > MAX_NAME_LEN {
            bail!("repository name must not be more than {MAX_NAME_LEN} characters");
        }
        let (registry, path) = crate::dockerfile::imageref::split_domain(name);
        if let Some(registry) = registry {
            check_domain(registry)?;
        }
        if path.is_empty() {
            bail!("no repository name after the registry host");
        }
        for component in path.split('/') {
            check_path_component(component)?;
        }
        let registry = match registry {
            None | Some("index.docker.io") => DOCKER_HUB.to_string(),
            Some(host) => host.to_string(),
        };
        let repository = if registry == DOCKER_HUB && !path.contains('/') {
            format!("library/{path}")
        } else {
            path.to_string()
        };
        let tag = match (&tag, &digest) {
            (None, None) => Some("latest".to_string()),
            _ => tag,
        };
        Ok(Reference {
            written: text.to_string(),
            registry,
            repository,
            tag,
            digest,
        })
    }

    /// The host the registry's API answers on (Docker Hub's differs from its name).
    pub fn api_host(&self) -> &str {
        if self.registry == DOCKER_HUB {
            DOCKER_HUB_API
        } else {
            &self.registry
        }
    }

    /// What `/v2/<name>/manifests/<this>` asks for: the digest when there is one (a tag beside it is
    /// only a label, as in Docker), else the tag.
    pub fn manifest_reference(&self) -> &str {
        self.digest
            .as_deref()
            .or(self.tag.as_deref())
            .unwrap_or("latest")
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

fn check_domain(domain: &str) -> anyhow::Result<()> {
    let (host, port) = match domain.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || domain.starts_with('[') => (host, Some(port)),
        _ => (domain, None),
    };
    if let Some(port) = port {
        if port.is_empty() || !port.chars().all(|c| c.is_ascii_digit()) {
            bail!("the registry port {port:?} is not a number");
        }
    }
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        if inner.parse::<std::net::Ipv6Addr>().is_err() {
            bail!("{host} is not an IPv6 address");
        }
        return Ok(());
    }
    for component in host.split('.') {
        let valid = !component.is_empty()
            && component
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !component.starts_with('-')
            && !component.ends_with('-');
        if !valid {
            bail!(
                "the registry host {host:?} is not a host name (letters, digits and inner \
                 hyphens, separated by dots)"
            );
        }
    }
    Ok(())
}

fn check_path_component(component: &str) -> anyhow::Result<()> {
    if component.is_empty() {
        bail!(
            "invalid reference format: an empty path component (a leading, trailing or double /)"
        );
    }
    if component.chars().any(|c| c.is_ascii_uppercase()) {
        bail!("repository name must be lowercase");
    }
    // [a-z0-9]+ separated by ".", "_", "__" or one or more "-".
    let bytes = component.as_bytes();
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let mut at = 0;
    let mut expect_alnum = true;
    while at < bytes.len() {
        if alnum(bytes[at]) {
            while at < bytes.len() && alnum(bytes[at]) {
                at += 1;
            }
            expect_alnum = false;
            continue;
        }
        if expect_alnum {
            break;
        }
        let separator_len = match bytes[at] {
            b'.' => 1,
            b'_' if bytes.get(at + 1) == Some(&b'_') => 2,
            b'_' => 1,
            b'-' => bytes[at..].iter().take_while(|&&b| b == b'-').count(),
            _ => 0,
        };
        if separator_len == 0 {
            break;
        }
        at += separator_len;
        expect_alnum = true;
    }
    if at < bytes.len() || expect_alnum {
        bail!(
            "invalid reference format: repository component {component:?} must be lower-case \
             letters and digits, separated by '.', '_', '__' or '-'"
        );
    }
    Ok(())
}

fn check_tag(tag: &str) -> anyhow::Result<()> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let valid = tag.len() <= MAX_TAG_LEN
        && tag.chars().next().is_some_and(word)
        && tag.chars().all(|c| word(c) || c == '.' || c == '-');
    if !valid {
        bail!(
            "invalid tag {tag:?}: a tag is up to {MAX_TAG_LEN} letters, digits, '_', '.' and '-', \
             not starting with '.' or '-'"
        );
    }
    Ok(())
}

/// Checks a digest as distribution/reference does: `algorithm:hex`, and for sha256 exactly 64
/// lower-case hex digits (the only algorithm cudalint can verify).
pub fn parse_digest(digest: &str) -> anyhow::Result<String> {
    let Some((algorithm, hex)) = digest.split_once(':') else {
        bail!("invalid digest {digest:?}: expected sha256:<64 hex digits>");
    };
    if algorithm != "sha256" {
        bail!(
            "invalid digest {digest:?}: unsupported digest algorithm {algorithm:?} (only sha256)"
        );
    }
    if hex.len() != 64
        || !hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        bail!("invalid checksum digest format {digest:?}: sha256 takes exactly 64 lower-case hex digits");
    }
    Ok(digest.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Reference {
        Reference::parse(text).unwrap()
    }

    fn refused(text: &str) -> String {
        format!("{:#}", Reference::parse(text).unwrap_err())
    }

    #[test]
    fn short_names_are_on_docker_hub_under_library() {
        let ubuntu = parsed("ubuntu");
        assert_eq!(
            (ubuntu.registry.as_str(), ubuntu.repository.as_str()),
            ("docker.io", "library/ubuntu")
        );
        assert_eq!(ubuntu.tag.as_deref(), Some("latest"));
        assert_eq!(ubuntu.api_host(), "registry-1.docker.io");
        assert_eq!(
            parsed("nvidia/cuda:12.4.1-runtime-ubuntu22.04").repository,
            "nvidia/cuda"
        );
        assert_eq!(
            parsed("index.docker.io/pytorch/pytorch").registry,
            "docker.io"
        );
    }

    #[test]
    fn hosts_ports_tags_and_digests() {
        let digest = format!("sha256:{}", "a".repeat(64));
        let full = parsed(&format!("localhost:5000/team/app:v1.2@{digest}"));
        assert_eq!(full.registry, "localhost:5000");
        assert_eq!(full.repository, "team/app");
        assert_eq!(full.tag.as_deref(), Some("v1.2"));
        assert_eq!(full.manifest_reference(), digest);
        let ngc = parsed("nvcr.io/nvidia/pytorch:24.05-py3");
        assert_eq!(
            (ngc.registry.as_str(), ngc.tag.as_deref()),
            ("nvcr.io", Some("24.05-py3"))
        );
        assert_eq!(parsed("127.0.0.1:5000/x").tag.as_deref(), Some("latest"));
        assert_eq!(parsed("[::1]:5000/x").registry, "[::1]:5000");
        assert_eq!(parsed("a__b/c-d---e.f").repository, "a__b/c-d---e.f");
    }

    #[test]
    fn malformed_references_name_the_rule() {
        assert!(refused("").contains("empty reference"));
        assert!(refused("/x").contains("empty path component"));
        assert!(refused("localhost:5000/Team/app").contains("must be lowercase"));
        assert!(refused("Ubuntu").contains("must be lowercase"));
        assert!(refused("x@sha256:abc").contains("64 lower-case hex"));
        assert!(refused(&format!("x@sha256:{}", "A".repeat(64))).contains("64 lower-case hex"));
        assert!(refused("x@md5:abc").contains("unsupported digest algorithm"));
        assert!(refused("x:-bad").contains("invalid tag"));
        assert!(refused("x:").contains("invalid tag"));
        assert!(refused("a/-b").contains("must be lower-case letters"));
        assert!(refused("a/b_").contains("must be lower-case letters"));
        assert!(refused("a/b___c").contains("must be lower-case letters"));
        assert!(refused("host:port/x").contains("not a number"));
        assert!(refused(&format!("{}/x", "a".repeat(256))).contains("255"));
    }
}
