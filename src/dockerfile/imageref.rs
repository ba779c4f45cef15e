//! Image references, parsed by the grammar of the distribution reference
//! library (`github.com/distribution/reference`, `regexp.go`) that Docker
//! and BuildKit use: `[domain/]path[:tag][@digest]`.
//!
//! Parsing decides whether a `COPY --from=` value that is not a stage is a
//! plausible image (or named build context) or a typo such as `buidler:`.

use crate::dockerfile::model::ImageRef;

/// The longest repository name (domain included) the grammar allows.
const MAX_NAME_LEN: usize = 255;
/// A tag is one word character and at most 127 more.
const MAX_TAG_LEN: usize = 128;
/// Docker Hub's canonical domain names, dropped when normalising.
const DOCKER_HUB_DOMAINS: [&str; 3] = ["docker.io", "index.docker.io", "registry-1.docker.io"];

impl ImageRef {
    /// Parse `text`; `None` when it is not a valid reference.
    pub fn parse(text: &str) -> Option<ImageRef> {
        let (name_and_tag, digest) = match text.split_once('@') {
            Some((name, digest)) => (name, Some(digest)),
            None => (text, None),
        };
        if let Some(digest) = digest {
            if !is_digest(digest) {
                return None;
            }
        }
        // A tag's colon comes after the last slash; an earlier colon is a port.
        let last_slash = name_and_tag.rfind('/').map_or(0, |i| i + 1);
        let (name, tag) = match name_and_tag.get(last_slash..).and_then(|s| s.rfind(':')) {
            Some(colon) => {
                let at = last_slash + colon;
                (name_and_tag.get(..at)?, Some(name_and_tag.get(at + 1..)?))
            }
            None => (name_and_tag, None),
        };
        if let Some(tag) = tag {
            if !is_tag(tag) {
                return None;
            }
        }
        if name.is_empty() || name.len() > MAX_NAME_LEN {
            return None;
        }
        let (domain, path) = split_domain(name);
        if let Some(domain) = domain {
            if !is_domain(domain) {
                return None;
            }
        }
        if !path.split('/').all(is_path_component) {
            return None;
        }
        let is_hub = domain.is_none_or(|d| DOCKER_HUB_DOMAINS.contains(&d));
        let repository = match path.strip_prefix("library/") {
            Some(rest) if is_hub && !rest.contains('/') => rest,
            _ => path,
        };
        Some(ImageRef {
            text: text.to_string(),
            registry: domain.filter(|_| !is_hub).map(str::to_string),
            repository: repository.to_string(),
            tag: tag.map(str::to_string),
            digest: digest.map(str::to_string),
        })
    }
}

/// The first component is a domain when it has a `.` or `:`, is
/// `localhost`, or has upper-case letters (which paths may not): `splitDockerDomain` of
/// distribution/reference, for FROM lines and `registry:` references alike.
pub(crate) fn split_domain(name: &str) -> (Option<&str>, &str) {
    match name.split_once('/') {
        Some((first, rest))
            if first.contains(['.', ':'])
                || first == "localhost"
                || first.chars().any(|c| c.is_ascii_uppercase()) =>
        {
            (Some(first), rest)
        }
        _ => (None, name),
    }
}

/// `host[:port]` where host is a DNS name, an IPv4 address or `[IPv6]`.
fn is_domain(domain: &str) -> bool {
    let (host, port) = if let Some(rest) = domain.strip_prefix('[') {
        let Some((v6, after)) = rest.split_once(']') else {
            return false;
        };
        if v6.is_empty()
            || !v6
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        {
            return false;
        }
        match after {
            "" => return true,
            _ => ("x", after.strip_prefix(':')),
        }
    } else {
        match domain.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (domain, None),
        }
    };
    if let Some(port) = port {
        if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
    }
    !host.is_empty() && host.split('.').all(is_domain_component)
}

/// `[a-zA-Z0-9]` or `[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]`.
fn is_domain_component(component: &str) -> bool {
    let bytes = component.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        }
        _ => false,
    }
}

/// `[a-z0-9]+` runs joined by a separator: `.`, `_`, `__` or `-`+.
fn is_path_component(component: &str) -> bool {
    let bytes = component.as_bytes();
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if !bytes.first().is_some_and(alnum) || !bytes.last().is_some_and(alnum) {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if alnum(&b) {
            i += 1;
            continue;
        }
        // A separator run: `.`, `_`, `__`, or one or more `-`.
        let start = i;
        while i < bytes.len() && !alnum(&bytes[i]) {
            i += 1;
        }
        let separator = &component[start..i];
        let valid = matches!(separator, "." | "_" | "__") || separator.bytes().all(|b| b == b'-');
        if !valid {
            return false;
        }
    }
    true
}

/// `[\w][\w.-]{0,127}`.
fn is_tag(tag: &str) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = tag.as_bytes();
    bytes.first().is_some_and(|&b| word(b))
        && bytes.len() <= MAX_TAG_LEN
        && bytes.iter().all(|&b| word(b) || b == b'.' || b == b'-')
}

/// `algorithm:hex` with an algorithm like `sha256` or `sha512` and at least
/// 32 hex digits.
fn is_digest(digest: &str) -> bool {
    let Some((algorithm, encoded)) = digest.split_once(':') else {
        return false;
    };
    let algorithm_ok = algorithm.split(['+', '.', '-', '_']).all(|c| {
        c.starts_with(|ch: char| ch.is_ascii_alphabetic())
            && c.bytes().all(|b| b.is_ascii_alphanumeric())
    });
    algorithm_ok && encoded.len() >= 32 && encoded.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    type Parts = (Option<String>, String, Option<String>, Option<String>);

    fn parts(text: &str) -> Option<Parts> {
        ImageRef::parse(text).map(|r| (r.registry, r.repository, r.tag, r.digest))
    }

    #[test]
    fn docker_hub_names_are_normalised() {
        assert_eq!(
            parts("ubuntu:22.04"),
            Some((None, "ubuntu".into(), Some("22.04".into()), None))
        );
        assert_eq!(parts("docker.io/library/ubuntu").unwrap().1, "ubuntu");
        assert_eq!(parts("library/ubuntu").unwrap().1, "ubuntu");
        assert_eq!(
            parts("docker.io/nvidia/cuda:12.4.1-devel-ubuntu22.04"),
            Some((
                None,
                "nvidia/cuda".into(),
                Some("12.4.1-devel-ubuntu22.04".into()),
                None
            ))
        );
    }

    #[test]
    fn registries_are_recognised() {
        let r = ImageRef::parse("nvcr.io/nvidia/pytorch:24.05-py3").unwrap();
        assert_eq!(r.registry.as_deref(), Some("nvcr.io"));
        assert_eq!(r.repository, "nvidia/pytorch");
        let r = ImageRef::parse("localhost:5000/team/img").unwrap();
        assert_eq!(r.registry.as_deref(), Some("localhost:5000"));
        assert_eq!(r.tag, None);
        let r = ImageRef::parse("localhost/img:1").unwrap();
        assert_eq!(r.registry.as_deref(), Some("localhost"));
        let r = ImageRef::parse("[::1]:5000/img").unwrap();
        assert_eq!(r.registry.as_deref(), Some("[::1]:5000"));
        // `library/` is Docker Hub's; elsewhere it is a real path.
        let r = ImageRef::parse("ghcr.io/library/x").unwrap();
        assert_eq!(r.repository, "library/x");
    }

    #[test]
    fn digests() {
        let digest = format!("sha256:{}", "a".repeat(64));
        let r = ImageRef::parse(&format!("nvidia/cuda:12.4.1-base-ubuntu22.04@{digest}")).unwrap();
        assert_eq!(r.digest.as_deref(), Some(digest.as_str()));
        assert!(ImageRef::parse(&format!("ubuntu@{digest}")).is_some());
        assert!(ImageRef::parse("ubuntu@sha256:abc").is_none());
        assert!(ImageRef::parse("ubuntu@").is_none());
    }

    #[test]
    fn invalid_references() {
        for text in [
            "",
            "buidler:",
            "Builder",
            "a//b",
            "-a",
            "a-",
            "a..b",
            "a___b",
            "img:-tag",
            "img:tag with space",
            "${BASE}",
            "nvidia/cuda:12.4:devel",
            "host:port/img",
            ":tag",
        ] {
            assert!(
                ImageRef::parse(text).is_none(),
                "{text:?} should be invalid"
            );
        }
        assert!(ImageRef::parse(&format!("img:{}", "t".repeat(129))).is_none());
        assert!(ImageRef::parse(&"a".repeat(256)).is_none());
    }

    #[test]
    fn plausible_names_and_contexts_are_valid() {
        for text in [
            "builder",
            "my-context",
            "a__b",
            "a.b_c--d",
            "0",
            "x/y/z:v1.0-rc_1",
        ] {
            assert!(ImageRef::parse(text).is_some(), "{text:?} should be valid");
        }
    }
}
