//! Version numbers the knowledge compares: CUDA toolkit versions (`12.4.1`)
//! and NVIDIA driver versions (`535.104.05`).

use std::cmp::Ordering;
use std::fmt;

/// A dotted version of up to three numeric parts; missing parts compare as 0
/// (as libnvidia-container does: trailing `.0` parts are ignored).
#[derive(Clone, Copy, Debug)]
pub struct Version {
    pub parts: [u32; 3],
    /// How many parts were written (1–3), for display.
    pub written: u8,
}

impl Version {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Version {
            parts: [major, minor, patch],
            written: 3,
        }
    }

    /// Parse `13`, `12.4`, `12.4.1`, `535.104.05`. Leading zeros are kept as
    /// numbers (`05` is 5). Anything else is `None`.
    pub fn parse(text: &str) -> Option<Version> {
        let mut parts = [0u32; 3];
        let mut written = 0u8;
        for piece in text.trim().split('.') {
            if written == 3 || piece.is_empty() || !piece.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            parts[usize::from(written)] = piece.parse().ok()?;
            written += 1;
        }
        (written > 0).then_some(Version { parts, written })
    }

    pub fn major(self) -> u32 {
        self.parts[0]
    }

    pub fn minor(self) -> u32 {
        self.parts[1]
    }

    pub fn patch(self) -> u32 {
        self.parts[2]
    }

    /// The `major.minor` of this version.
    pub fn major_minor(self) -> Version {
        Version {
            parts: [self.parts[0], self.parts[1], 0],
            written: 2,
        }
    }
}

// Equality, order and hash look at the numbers only: `12.4 == 12.4.0`.
impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.parts == other.parts
    }
}

impl Eq for Version {}

impl std::hash::Hash for Version {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.parts.hash(state);
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        self.parts.cmp(&other.parts)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = usize::from(self.written.max(1));
        for (i, part) in self.parts[..shown].iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            // Driver versions print their third part with two digits (535.104.05).
            if i == 2 && self.parts[0] >= 100 {
                write!(f, "{part:02}")?;
            } else {
                write!(f, "{part}")?;
            }
        }
        Ok(())
    }
}

impl crate::from_toml::FromToml for Version {
    fn from_toml(node: &crate::from_toml::Node<'_>) -> Result<Self, crate::from_toml::TomlError> {
        let text = crate::from_toml::string(node)?;
        Version::parse(text).ok_or_else(|| {
            crate::from_toml::TomlError::at(node.span(), format!("invalid version `{text}`"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_orders() {
        let driver = Version::parse("535.104.05").unwrap();
        assert_eq!(driver.to_string(), "535.104.05");
        assert!(Version::parse("12.4").unwrap() < Version::parse("12.4.1").unwrap());
        assert_eq!(
            Version::parse("12.4.0"),
            Some(Version {
                parts: [12, 4, 0],
                written: 3
            })
        );
        assert!(Version::parse("12.4").unwrap() == Version::parse("12.4.0").unwrap());
        assert_eq!(Version::parse("12.x"), None);
        assert_eq!(Version::parse(""), None);
        assert_eq!(Version::parse("1.2.3.4"), None);
    }
}
