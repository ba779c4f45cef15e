//! End of life of `nvidia/cuda` releases: from the catalogue's own entry,
//! from the policy that only the latest point release of a major.minor is
//! supported, and for releases older than the catalogue.

use super::super::version::Version;
use super::view::{ImageKnowledge, ReleaseStatus};

/// Whether the EOL state comes straight from the data or from the policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EolBasis {
    /// The release's own catalogue entry.
    Catalogue,
    /// A later point release of the same major.minor exists, and only the
    /// latest one is supported.
    Superseded { by: Version },
    /// Older than every catalogued release.
    OlderThanCatalogue,
}

/// The EOL state of a CUDA image release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EolInfo {
    pub version: Version,
    pub status: ReleaseStatus,
    pub since: Option<String>,
    pub basis: EolBasis,
    /// Supported releases of the same major (else any), newest first.
    pub supported_alternatives: Vec<Version>,
    /// Months after EOL until tags are deleted.
    pub deletion_after_months: Option<u32>,
    pub source: String,
}

impl ImageKnowledge {
    /// The EOL state of the CUDA release `version`, or `None` when it is
    /// supported or unknown (newer than the catalogue).
    pub fn eol(&self, version: Version) -> Option<EolInfo> {
        let deletion_after_months = self.policy.as_ref().map(|p| p.deletion_after_months);
        let alternatives = self.supported_alternatives(version);
        if let Some(release) = self.release(version) {
            if release.status == ReleaseStatus::Supported {
                return None;
            }
            let basis = match release.superseded_by {
                Some(by) => EolBasis::Superseded { by },
                None => EolBasis::Catalogue,
            };
            return Some(EolInfo {
                version,
                status: release.status,
                since: release.eol_since.clone(),
                basis,
                supported_alternatives: alternatives,
                deletion_after_months,
                source: release.source.clone(),
            });
        }
        let policy = self.policy.as_ref()?;
        let newer_point = self
            .releases
            .iter()
            .filter(|r| r.version.major_minor() == version.major_minor() && r.version > version)
            .map(|r| r.version)
            .max();
        if let (true, Some(by)) = (policy.only_latest_point_release_supported, newer_point) {
            return Some(EolInfo {
                version,
                status: ReleaseStatus::Eol,
                since: None,
                basis: EolBasis::Superseded { by },
                supported_alternatives: alternatives,
                deletion_after_months,
                source: policy.source.clone(),
            });
        }
        let oldest = self.releases.last()?;
        (version < oldest.version && oldest.status == ReleaseStatus::Removed).then(|| EolInfo {
            version,
            status: ReleaseStatus::Removed,
            since: None,
            basis: EolBasis::OlderThanCatalogue,
            supported_alternatives: alternatives,
            deletion_after_months,
            source: oldest.source.clone(),
        })
    }

    fn supported_alternatives(&self, version: Version) -> Vec<Version> {
        let supported: Vec<Version> = self
            .releases
            .iter()
            .filter(|r| r.status == ReleaseStatus::Supported)
            .map(|r| r.version)
            .collect();
        let same_major: Vec<Version> = supported
            .iter()
            .copied()
            .filter(|v| v.major() == version.major())
            .collect();
        if same_major.is_empty() {
            supported
        } else {
            same_major
        }
    }
}
