//! How a registry is asked: the `WWW-Authenticate` challenge of its `/v2/` answer (RFC 7235), then
//! nothing (a registry that answers 200), `Basic` with the credential, or the Bearer token flow that
//! Docker Hub, GHCR and nvcr.io use (distribution's `docs/spec/auth/token.md`): a token for
//! `repository:<name>:pull` from the challenge's realm, asked with the credential when there is one
//! (Basic on a GET; an identity token is traded by an OAuth2 POST) and anonymously otherwise.

use std::collections::BTreeMap;

use anyhow::bail;
use base64::Engine as _;
use serde::Deserialize;

use super::credentials::{Credential, Secret};

/// One challenge of a `WWW-Authenticate` header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    /// Lower-cased: `basic` or `bearer`.
    pub scheme: String,
    pub params: BTreeMap<String, String>,
}

impl Challenge {
    /// Parses `Scheme key="value", key=value, …` (a registry sends one challenge).
    pub fn parse(header: &str) -> anyhow::Result<Challenge> {
        let header = header.trim();
        let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
        if scheme.is_empty() {
            bail!("an empty WWW-Authenticate challenge");
        }
        let mut params = BTreeMap::new();
        let mut chars = rest.chars().peekable();
        loop {
            while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
                chars.next();
            }
            let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
            if key.trim().is_empty() {
                break;
            }
            let mut value = String::new();
            if chars.peek() == Some(&'"') {
                chars.next();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => value.extend(chars.next()),
                        '"' => break,
                        c => value.push(c),
                    }
                }
            } else {
                while let Some(c) = chars.peek().copied() {
                    if c == ',' {
                        break;
                    }
                    value.push(c);
                    chars.next();
                }
            }
            params.insert(key.trim().to_ascii_lowercase(), value.trim().to_string());
        }
        Ok(Challenge {
            scheme: scheme.to_ascii_lowercase(),
            params,
        })
    }
}

/// The `Authorization` value for Basic.
pub fn basic(username: &str, password: &str) -> String {
    let encoded =
        base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"));
    format!("Basic {encoded}")
}

/// The token endpoint's request for `scope`: its URL query, the method and form body (POST for an
/// identity token), and the `Authorization` header to send (Basic with the credential, if any).
pub struct TokenRequest {
    pub url: String,
    pub form: Option<String>,
    pub authorization: Option<String>,
}

pub fn token_request(
    challenge: &Challenge,
    scope: &str,
    credential: Option<&Credential>,
) -> anyhow::Result<TokenRequest> {
    let Some(realm) = challenge.params.get("realm") else {
        bail!("the registry's Bearer challenge names no realm (token endpoint)");
    };
    let service = challenge.params.get("service");
    let mut query = Vec::new();
    if let Some(service) = service {
        query.push(format!("service={}", form_encode(service)));
    }
    query.push(format!("scope={}", form_encode(scope)));
    match credential.map(|found| &found.secret) {
        Some(Secret::IdentityToken(token)) => {
            let mut form = vec![
                "grant_type=refresh_token".to_string(),
                format!("refresh_token={}", form_encode(token)),
                "client_id=cudalint".to_string(),
                format!("scope={}", form_encode(scope)),
            ];
            if let Some(service) = service {
                form.push(format!("service={}", form_encode(service)));
            }
            Ok(TokenRequest {
                url: realm.clone(),
                form: Some(form.join("&")),
                authorization: None,
            })
        }
        Some(Secret::Basic { username, password }) => {
            query.push("client_id=cudalint".to_string());
            query.push(format!("account={}", form_encode(username)));
            Ok(TokenRequest {
                url: join_query(realm, &query),
                form: None,
                authorization: Some(basic(username, password)),
            })
        }
        None => Ok(TokenRequest {
            url: join_query(realm, &query),
            form: None,
            authorization: None,
        }),
    }
}

fn join_query(url: &str, query: &[String]) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}{}", query.join("&"))
}

/// `application/x-www-form-urlencoded` encoding of one value.
fn form_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[derive(Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    access_token: Option<String>,
}

/// The bearer token in a token endpoint's answer (`token`, or OAuth2's `access_token`).
pub fn token_from_answer(body: &[u8]) -> anyhow::Result<String> {
    let answer: TokenAnswer = serde_json::from_slice(body)
        .map_err(|_| anyhow::anyhow!("the token endpoint's answer is not a token (JSON)"))?;
    match answer.token.or(answer.access_token) {
        Some(token) if !token.is_empty() => Ok(token),
        _ => bail!("the token endpoint's answer holds no token"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_parse_as_registries_send_them() {
        let hub = Challenge::parse(
            r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/ubuntu:pull""#,
        )
        .unwrap();
        assert_eq!(hub.scheme, "bearer");
        assert_eq!(hub.params["realm"], "https://auth.docker.io/token");
        assert_eq!(hub.params["scope"], "repository:library/ubuntu:pull");
        let basic = Challenge::parse(r#"Basic realm="Registry Realm""#).unwrap();
        assert_eq!(basic.scheme, "basic");
        assert_eq!(basic.params["realm"], "Registry Realm");
        let bare = Challenge::parse("Bearer realm=http://127.0.0.1:1/t, service=r").unwrap();
        assert_eq!(bare.params["realm"], "http://127.0.0.1:1/t");
        assert_eq!(bare.params["service"], "r");
    }

    #[test]
    fn token_requests_carry_scope_service_and_the_credential() {
        let challenge =
            Challenge::parse(r#"Bearer realm="https://a.example/token",service="reg""#).unwrap();
        let anonymous = token_request(&challenge, "repository:a/b:pull", None).unwrap();
        assert_eq!(
            anonymous.url,
            "https://a.example/token?service=reg&scope=repository%3Aa%2Fb%3Apull"
        );
        assert!(anonymous.authorization.is_none());
        let credential = Credential {
            secret: Secret::Basic {
                username: "u".into(),
                password: "p".into(),
            },
            source: "test".into(),
        };
        let asked = token_request(&challenge, "repository:a/b:pull", Some(&credential)).unwrap();
        assert_eq!(asked.authorization.as_deref(), Some("Basic dTpw"));
        assert_eq!(token_from_answer(br#"{"access_token":"t"}"#).unwrap(), "t");
        assert!(token_from_answer(b"{}").is_err());
    }
}
