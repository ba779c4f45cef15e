//! NGC framework containers (`rules/ngc.toml`): NVIDIA's support window for
//! the monthly releases of `nvcr.io/nvidia/pytorch`, `tritonserver` and the
//! other framework images, the newest release each repository is known to
//! have, and the CUDA and driver a release is built on.
//!
//! It answers questions about one repository and tag; the rule
//! (`checks::dockerfile::cu135_ngc_framework_image_eol`) decides what to say.

use crate::from_toml::{FromToml, Node, TomlError};

use super::clock::Date;
use super::merge_by;

#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct NgcKnowledge {
    #[toml(default)]
    pub policy: Option<NgcPolicy>,
    #[toml(default)]
    pub repositories: Vec<NgcRepository>,
    #[toml(default)]
    pub releases: Vec<NgcRelease>,
}

/// How long NVIDIA supports a monthly release, and when cudalint reports one.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct NgcPolicy {
    /// Months after its release month before a superseded release is reported.
    pub report_after_months: u32,
    pub source: String,
    /// Where the `YY.MM` = year and month convention is stated.
    pub tag_source: String,
}

/// A framework repository and the newest release cudalint's sources show.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct NgcRepository {
    /// `registry/path`, as `canonicalize` spells it (`nvcr.io/nvidia/pytorch`).
    pub name: String,
    /// The product name the messages use (`PyTorch`).
    pub product: String,
    pub newest_known: NgcReleaseId,
    /// Tag endings (`-py3`) published for `newest_known`.
    #[toml(default)]
    pub suffixes: Vec<String>,
    pub source: String,
}

/// What one release of one repository is built on.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct NgcRelease {
    pub repository: String,
    pub release: NgcReleaseId,
    pub cuda: Option<String>,
    /// The driver branch the release notes require (`545` for "545 or later").
    pub driver: Option<u32>,
    pub source: String,
}

/// A release `YY.MM`: ordered by year, then month.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct NgcReleaseId {
    /// Two-digit year (`24` for 2024).
    pub year: u32,
    pub month: u32,
}

impl NgcReleaseId {
    /// `YY.MM` with a month from 01 to 12.
    pub fn parse(text: &str) -> Option<NgcReleaseId> {
        let (year, month) = text.split_once('.')?;
        if year.len() != 2 || month.len() != 2 {
            return None;
        }
        if !year
            .bytes()
            .chain(month.bytes())
            .all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let (year, month) = (year.parse().ok()?, month.parse().ok()?);
        (1..=12)
            .contains(&month)
            .then_some(NgcReleaseId { year, month })
    }

    /// The first day of the release month.
    pub fn date(self) -> Date {
        Date {
            year: 2000 + self.year as i32,
            month: self.month,
            day: 1,
        }
    }

    /// Whole months from the release month to `today`'s month.
    pub fn months_until(self, today: Date) -> i32 {
        (today.year * 12 + today.month as i32) - (self.date().year * 12 + self.month as i32)
    }
}

impl std::fmt::Display for NgcReleaseId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:02}.{:02}", self.year, self.month)
    }
}

impl FromToml for NgcReleaseId {
    fn from_toml(node: &Node<'_>) -> Result<Self, TomlError> {
        let text = crate::from_toml::string(node)?;
        NgcReleaseId::parse(text).ok_or_else(|| {
            TomlError::at(
                node.span(),
                format!("`{text}` is not a release `YY.MM` (month 01-12)"),
            )
        })
    }
}

/// An NGC framework tag: `YY.MM`, an optional patch (`20.03.1`), then the
/// ending (`-py3`, `-py3-min`, `-tf2-py3`, or nothing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NgcTag {
    pub release: NgcReleaseId,
    /// Everything after `YY.MM[.N]`, such as `-py3` (empty when none).
    pub suffix: String,
}

/// Reads a tag as an NGC release tag; `None` for other tags (`latest`).
pub fn parse_ngc_tag(tag: &str) -> Option<NgcTag> {
    let release = NgcReleaseId::parse(tag.get(..5)?)?;
    let mut rest = &tag[5..];
    if let Some(patch) = rest.strip_prefix('.') {
        let digits = patch.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = &patch[digits..];
    }
    if !(rest.is_empty() || rest.starts_with('-')) {
        return None;
    }
    Some(NgcTag {
        release,
        suffix: rest.to_string(),
    })
}

impl NgcKnowledge {
    /// Reads a whole knowledge document (taking its `[ngc]` table) or
    /// the table itself.
    pub fn from_area(node: &Node<'_>) -> Result<Self, TomlError> {
        <NgcKnowledge as FromToml>::from_toml(super::area_table(node, "ngc"))
    }

    /// Adds `other`'s entries; an entry with the same key replaces ours.
    pub fn extend(&mut self, other: Self) {
        if other.policy.is_some() {
            self.policy = other.policy;
        }
        merge_by(&mut self.repositories, other.repositories, |a, b| {
            a.name == b.name
        });
        merge_by(&mut self.releases, other.releases, |a, b| {
            a.repository == b.repository && a.release == b.release
        });
    }

    /// The framework repository `name` (canonical spelling), if known.
    pub fn repository(&self, name: &str) -> Option<&NgcRepository> {
        self.repositories
            .iter()
            .find(|r| r.name.eq_ignore_ascii_case(name))
    }

    /// What `release` of `repository` is built on, if recorded.
    pub fn release(&self, repository: &str, release: NgcReleaseId) -> Option<&NgcRelease> {
        self.releases
            .iter()
            .find(|r| r.repository.eq_ignore_ascii_case(repository) && r.release == release)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_read_as_year_month_and_ending() {
        let tag = parse_ngc_tag("24.02-py3").unwrap();
        assert_eq!(tag.release, NgcReleaseId { year: 24, month: 2 });
        assert_eq!(tag.suffix, "-py3");
        assert_eq!(parse_ngc_tag("20.03.1-py3").unwrap().suffix, "-py3");
        assert_eq!(parse_ngc_tag("23.03").unwrap().suffix, "");
        assert_eq!(parse_ngc_tag("24.04-py3-min").unwrap().suffix, "-py3-min");
        for other in [
            "latest",
            "24.13-py3",
            "2.4.0-cuda12.1",
            "24.2-py3",
            "24.02py3",
            "",
        ] {
            assert_eq!(parse_ngc_tag(other), None, "{other}");
        }
    }

    #[test]
    fn age_is_counted_in_whole_months() {
        let release = NgcReleaseId::parse("24.02").unwrap();
        let today = Date::parse("2026-11-23").unwrap();
        assert_eq!(release.months_until(today), 33);
        assert_eq!(NgcReleaseId::parse("26.11").unwrap().months_until(today), 0);
    }

    #[test]
    fn the_embedded_file_loads_with_a_policy_and_sourced_rows() {
        let knowledge = crate::knowledge::Knowledge::embedded().unwrap();
        let ngc = &knowledge.ngc;
        assert!(ngc.policy.is_some());
        let pytorch = ngc.repository("nvcr.io/nvidia/pytorch").unwrap();
        assert!(pytorch.newest_known >= NgcReleaseId::parse("26.01").unwrap());
        let triton = ngc
            .release(
                "nvcr.io/nvidia/tritonserver",
                NgcReleaseId::parse("24.01").unwrap(),
            )
            .unwrap();
        assert_eq!(triton.cuda.as_deref(), Some("12.3.2"));
        assert_eq!(triton.driver, Some(545));
    }
}
