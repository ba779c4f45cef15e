//! Toolkits and drivers: minimum driver per CUDA release, minor-version
//! compatibility floors, GPU architectures per toolkit
//! (`rules/toolkits.toml`), and reading the host's driver version.
//!
//! Rules ask three questions here: which driver a CUDA version needs
//! ([`ToolkitKnowledge::driver_verdict`]), which architecture a build flag
//! names ([`ToolkitKnowledge::parse_arch`]) and whether a toolkit can build
//! it ([`ToolkitKnowledge::arch_support`]).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::from_toml::{FromToml, Node, TomlError};

use super::version::Version;

/// The embedded `rules/toolkits.toml`.
pub fn embedded_toml() -> &'static str {
    super::embedded::file("rules/toolkits.toml")
}

/// Toolkit, driver and architecture facts, sorted for lookup.
#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct ToolkitKnowledge {
    /// The oldest toolkit the tables describe; older ones are not judged.
    #[toml(default)]
    pub known_from: Option<Version>,
    /// Toolkit releases, sorted by version.
    #[toml(default)]
    pub releases: Vec<Release>,
    /// Minor-version-compatibility floors, one per CUDA major.
    #[toml(default)]
    pub minor_compat: Vec<MinorCompat>,
    /// What breaks under minor-version compatibility and below its floor.
    #[toml(default)]
    pub limits: Limits,
    /// Sorted by architecture.
    #[toml(default)]
    pub architectures: Vec<Architecture>,
    /// Family names (`Ampere`) as TORCH_CUDA_ARCH_LIST accepts them.
    #[toml(default)]
    pub arch_names: Vec<ArchName>,
    /// NVIDIA's driver branches and their end of life, newest first.
    #[toml(default)]
    pub driver_branches: Vec<DriverBranch>,
}

/// A driver branch (`R580`) with its designation and end of life.
#[derive(Clone, Debug, PartialEq, FromToml)]
#[toml(deny_unknown_fields)]
pub struct DriverBranch {
    pub branch: u32,
    /// `Long Term Support Branch`, `Production Branch`, `New Feature Branch`.
    pub designation: String,
    /// `YYYY-MM-DD`; `None` when the source gives no date.
    #[toml(default)]
    pub eol: Option<String>,
    pub source: String,
}

/// One row of the toolkit → minimum driver table.
#[derive(Clone, Debug, PartialEq, FromToml)]
#[toml(deny_unknown_fields)]
pub struct Release {
    /// The `CUDA_VERSION` of the release (`12.4.1` = 12.4 Update 1).
    pub version: Version,
    /// How the release notes name it (`12.4 Update 1`).
    pub label: String,
    /// Minimum Linux x86_64 driver.
    pub driver: Version,
    /// False for rows no primary source confirms; they decide no finding.
    #[toml(default = "yes")]
    pub confirmed: bool,
    pub source: String,
}

/// The lowest driver on which a CUDA major initialises at all.
#[derive(Clone, Debug, PartialEq, FromToml)]
#[toml(deny_unknown_fields)]
pub struct MinorCompat {
    pub major: u32,
    pub floor: Version,
    pub source: String,
}

/// Consequences quoted in messages, with their sources.
#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct Limits {
    #[toml(default)]
    pub below_floor: String,
    #[toml(default)]
    pub below_floor_source: String,
    #[toml(default)]
    pub minor_compat: String,
    #[toml(default)]
    pub minor_compat_source: String,
    #[toml(default)]
    pub forward_compat: String,
    #[toml(default)]
    pub forward_compat_source: String,
}

/// When toolkits gained and lost the ability to build for a GPU architecture.
#[derive(Clone, Debug, PartialEq, FromToml)]
#[toml(deny_unknown_fields)]
pub struct Architecture {
    /// Compute capability `major.minor` (`9.0` = sm_90).
    pub arch: Version,
    /// First toolkit that builds it; `None`: older than every known toolkit.
    #[toml(default)]
    pub added: Option<Version>,
    /// First toolkit that no longer builds it.
    #[toml(default)]
    pub removed: Option<Version>,
    #[toml(default = "yes")]
    pub confirmed: bool,
    pub source: String,
}

/// A family name and the architectures it stands for.
#[derive(Clone, Debug, PartialEq, FromToml)]
#[toml(deny_unknown_fields)]
pub struct ArchName {
    pub name: String,
    pub archs: Vec<Version>,
    pub source: String,
}

fn yes() -> bool {
    true
}

/// How a target driver stands against what a CUDA version needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DriverVerdict<'k> {
    /// The driver is at least the release's own minimum.
    Satisfied,
    /// Older than the release's minimum but inside minor-version
    /// compatibility: it starts, with the limits in [`Limits::minor_compat`].
    MinorCompat {
        release: &'k Release,
        floor: &'k MinorCompat,
    },
    /// Below the floor of the CUDA major: CUDA does not initialise.
    BelowFloor {
        floor: &'k MinorCompat,
        release: Option<&'k Release>,
    },
    /// The tables do not cover this CUDA version.
    Unknown,
}

/// What a build flag names: one architecture, or a family name.
#[derive(Clone, Debug, PartialEq)]
pub enum ArchRef<'k> {
    Arch(Version),
    Name(&'k ArchName),
}

/// Whether a toolkit can build for an architecture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArchSupport<'k> {
    Supported,
    /// Added by a later toolkit.
    NotYet(&'k Architecture),
    /// Dropped by this toolkit or an earlier one.
    Dropped(&'k Architecture),
    /// The tables say nothing about this pair.
    Unknown,
}

impl ToolkitKnowledge {
    /// The knowledge shipped with cudalint.
    pub fn embedded() -> Result<Self, TomlError> {
        Self::from_toml_text(embedded_toml())
    }

    /// Reads a knowledge document holding a `[toolkits]` table, or that table's text.
    pub fn from_toml_text(text: &str) -> Result<Self, TomlError> {
        Self::from_area(&crate::from_toml::parse(text)?)
    }

    /// Reads a whole knowledge document (taking its `[toolkits]` table) or
    /// the table itself.
    pub fn from_area(node: &Node<'_>) -> Result<Self, TomlError> {
        let mut knowledge =
            <ToolkitKnowledge as FromToml>::from_toml(super::area_table(node, "toolkits"))?;
        knowledge.sort();
        Ok(knowledge)
    }

    /// Adds `other`'s entries; an entry with the same key (release version,
    /// CUDA major, architecture, name) replaces ours.
    pub fn extend(&mut self, other: Self) {
        if other.known_from.is_some() {
            self.known_from = other.known_from;
        }
        for release in other.releases {
            self.releases.retain(|r| r.version != release.version);
            self.releases.push(release);
        }
        for floor in other.minor_compat {
            self.minor_compat.retain(|f| f.major != floor.major);
            self.minor_compat.push(floor);
        }
        let limits = other.limits;
        for (ours, theirs) in [
            (&mut self.limits.below_floor, limits.below_floor),
            (
                &mut self.limits.below_floor_source,
                limits.below_floor_source,
            ),
            (&mut self.limits.minor_compat, limits.minor_compat),
            (
                &mut self.limits.minor_compat_source,
                limits.minor_compat_source,
            ),
            (&mut self.limits.forward_compat, limits.forward_compat),
            (
                &mut self.limits.forward_compat_source,
                limits.forward_compat_source,
            ),
        ] {
            if !theirs.is_empty() {
                *ours = theirs;
            }
        }
        for arch in other.architectures {
            self.architectures.retain(|a| a.arch != arch.arch);
            self.architectures.push(arch);
        }
        for branch in other.driver_branches {
            self.driver_branches.retain(|b| b.branch != branch.branch);
            self.driver_branches.push(branch);
        }
        for name in other.arch_names {
            self.arch_names
                .retain(|n| !n.name.eq_ignore_ascii_case(&name.name));
            self.arch_names.push(name);
        }
        self.sort();
    }

    fn sort(&mut self) {
        self.releases.sort_by_key(|r| r.version);
        self.minor_compat.sort_by_key(|f| f.major);
        self.architectures.sort_by_key(|a| a.arch);
        self.driver_branches
            .sort_by_key(|b| std::cmp::Reverse(b.branch));
    }

    /// The branch of a driver version (`580.95.05` → R580).
    pub fn driver_branch(&self, driver: Version) -> Option<&DriverBranch> {
        self.driver_branches
            .iter()
            .find(|b| b.branch == driver.major())
    }

    /// The release row that governs `cuda`. A full version (`12.4.1`) takes
    /// the row of that update (or the latest update before it); a
    /// `major.minor` (from a `cu124` wheel) takes the minor's GA row, the
    /// least it can need. A bare major has no row.
    pub fn release_for(&self, cuda: Version) -> Option<&Release> {
        if cuda.written < 2 {
            return None;
        }
        let mut same_minor = self
            .releases
            .iter()
            .filter(|r| r.version.major_minor() == cuda.major_minor());
        if cuda.written == 2 {
            return same_minor.next();
        }
        let rows: Vec<&Release> = same_minor.collect();
        rows.iter()
            .rev()
            .find(|r| r.version <= cuda)
            .or_else(|| rows.first())
            .copied()
    }

    /// The newest release whose own minimum `driver` meets: the newest CUDA
    /// that driver runs without minor-version-compatibility limits.
    pub fn newest_release_for_driver(&self, driver: Version) -> Option<&Release> {
        self.releases.iter().rev().find(|r| r.driver <= driver)
    }

    /// The minor-version-compatibility floor of a CUDA major.
    pub fn minor_compat_floor(&self, major: u32) -> Option<&MinorCompat> {
        self.minor_compat.iter().find(|f| f.major == major)
    }

    /// Judges `driver` against what `cuda` needs (see [`DriverVerdict`]).
    pub fn driver_verdict(&self, cuda: Version, driver: Version) -> DriverVerdict<'_> {
        // A row no primary source confirms never decides a finding.
        let release = self.release_for(cuda).filter(|r| r.confirmed);
        if release.is_some_and(|r| driver >= r.driver) {
            return DriverVerdict::Satisfied;
        }
        match (self.minor_compat_floor(cuda.major()), release) {
            (Some(floor), _) if driver < floor.floor => {
                DriverVerdict::BelowFloor { floor, release }
            }
            (Some(floor), Some(release)) => DriverVerdict::MinorCompat { release, floor },
            _ => DriverVerdict::Unknown,
        }
    }

    /// Reads one architecture token as build settings write it: `8.6`,
    /// `8.6+PTX`, `86`, `90a`, `100f`, `sm_90`, `compute_80`, `80-real`,
    /// or a family name (`Ampere`, `Ampere+Tegra`). `all`, `native` and
    /// anything else unrecognised is `None`.
    pub fn parse_arch(&self, token: &str) -> Option<ArchRef<'_>> {
        let token = token.trim();
        let token = strip_suffix_ignore_case(token, "+ptx").unwrap_or(token);
        let token = token
            .strip_suffix("-real")
            .or_else(|| token.strip_suffix("-virtual"))
            .unwrap_or(token);
        let family = strip_suffix_ignore_case(token, "+tegra").unwrap_or(token);
        if let Some(name) = self
            .arch_names
            .iter()
            .find(|n| n.name.eq_ignore_ascii_case(family))
        {
            return Some(ArchRef::Name(name));
        }
        let lower = token.to_ascii_lowercase();
        let number = ["sm_", "compute_", "lto_"]
            .iter()
            .find_map(|prefix| lower.strip_prefix(prefix))
            .unwrap_or(&lower);
        // Arch-specific (`90a`) and family (`100f`) variants build on the
        // same toolkits as the plain architecture for our purposes.
        let number = number
            .strip_suffix(['a', 'f'])
            .filter(|n| !n.is_empty())
            .unwrap_or(number);
        if number.contains('.') {
            let version = Version::parse(number)?;
            return (version.written == 2).then_some(ArchRef::Arch(version));
        }
        if !(2..=3).contains(&number.len()) || !number.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let (major, minor) = number.split_at(number.len() - 1);
        let arch = Version::parse(&format!("{major}.{minor}"))?;
        (arch.major() > 0).then_some(ArchRef::Arch(arch))
    }

    /// Whether `toolkit` can build for `arch`.
    pub fn arch_support(&self, toolkit: Version, arch: Version) -> ArchSupport<'_> {
        let toolkit = toolkit.major_minor();
        if self.known_from.is_none_or(|from| toolkit < from) {
            return ArchSupport::Unknown;
        }
        let Some(entry) = self.architectures.iter().find(|a| a.arch == arch) else {
            return ArchSupport::Unknown;
        };
        if entry.added.is_some_and(|added| toolkit < added) {
            return ArchSupport::NotYet(entry);
        }
        if entry.removed.is_some_and(|removed| toolkit >= removed) {
            return ArchSupport::Dropped(entry);
        }
        ArchSupport::Supported
    }

    /// Like [`Self::arch_support`] for an [`ArchRef`]. A family name is
    /// unsupported only when none of its architectures is buildable, since
    /// what torch expands a name to changes between torch releases.
    pub fn arch_ref_support(&self, toolkit: Version, arch: &ArchRef<'_>) -> ArchSupport<'_> {
        match arch {
            ArchRef::Arch(arch) => self.arch_support(toolkit, *arch),
            ArchRef::Name(name) => {
                let verdicts: Vec<ArchSupport<'_>> = name
                    .archs
                    .iter()
                    .map(|arch| self.arch_support(toolkit, *arch))
                    .collect();
                if verdicts
                    .iter()
                    .any(|v| matches!(v, ArchSupport::Supported | ArchSupport::Unknown))
                {
                    return ArchSupport::Supported;
                }
                verdicts.first().copied().unwrap_or(ArchSupport::Unknown)
            }
        }
    }
}

fn strip_suffix_ignore_case<'t>(text: &'t str, suffix: &str) -> Option<&'t str> {
    let split = text.len().checked_sub(suffix.len())?;
    let (head, tail) = (text.get(..split)?, text.get(split..)?);
    tail.eq_ignore_ascii_case(suffix).then_some(head)
}

/// Where the kernel module reports its version.
const PROC_DRIVER_VERSION: &str = "/proc/driver/nvidia/version";
/// How long `nvidia-smi` may take before we give up on it.
const NVIDIA_SMI_TIMEOUT: Duration = Duration::from_secs(10);

/// The driver version of the machine this runs on, from
/// `/proc/driver/nvidia/version` or `nvidia-smi` (for `--driver host`).
pub fn host_driver_version() -> Result<String, String> {
    let proc_error = match std::fs::read_to_string(PROC_DRIVER_VERSION) {
        Ok(text) => match parse_proc_driver_version(&text) {
            Some(version) => return Ok(version),
            None => format!("{PROC_DRIVER_VERSION} has no \"Kernel Module <version>\" line"),
        },
        Err(error) => format!("cannot read {PROC_DRIVER_VERSION}: {error}"),
    };
    match nvidia_smi_driver_version() {
        Ok(version) => Ok(version),
        Err(smi_error) => Err(format!(
            "cannot find the host's NVIDIA driver version ({proc_error}; {smi_error}); \
             pass the version instead, e.g. `--driver 535.104.05`"
        )),
    }
}

/// The version after "Kernel Module" in `/proc/driver/nvidia/version`, e.g.
/// `NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 …`
/// (the open modules say `… Open Kernel Module for x86_64  580.95.05 …`).
pub fn parse_proc_driver_version(text: &str) -> Option<String> {
    text.lines()
        .filter_map(|line| line.split_once("Kernel Module").map(|(_, rest)| rest))
        .find_map(|rest| {
            rest.split_whitespace()
                .find(|word| Version::parse(word).is_some_and(|v| v.written >= 2))
                .map(str::to_owned)
        })
}

fn nvidia_smi_driver_version() -> Result<String, String> {
    let mut child = Command::new("nvidia-smi")
        .args(["--query-gpu=driver_version", "--format=csv,noheader"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|error| format!("cannot run nvidia-smi: {error}"))?;
    let deadline = Instant::now() + NVIDIA_SMI_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            Ok(None) => {
                // A wedged GPU can hang nvidia-smi for minutes; don't wait on it.
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "nvidia-smi did not answer within {} s",
                    NVIDIA_SMI_TIMEOUT.as_secs()
                ));
            }
            Err(error) => return Err(format!("waiting for nvidia-smi failed: {error}")),
        }
    };
    let mut output = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        stdout
            .read_to_string(&mut output)
            .map_err(|error| format!("reading nvidia-smi output failed: {error}"))?;
    }
    if !status.success() {
        return Err(format!("nvidia-smi failed ({status})"));
    }
    parse_nvidia_smi_output(&output)
        .ok_or_else(|| format!("nvidia-smi printed no driver version: {:?}", output.trim()))
}

/// The first line of `nvidia-smi --query-gpu=driver_version` output (one
/// line per GPU, all the same driver).
pub fn parse_nvidia_smi_output(text: &str) -> Option<String> {
    let first = text.lines().map(str::trim).find(|line| !line.is_empty())?;
    Version::parse(first)
        .filter(|v| v.written >= 2)
        .map(|_| first.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn reads_proc_version_file() {
        let closed = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\nGCC version:  gcc version 12.2.0\n";
        assert_eq!(
            parse_proc_driver_version(closed).as_deref(),
            Some("535.104.05")
        );
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Sep 23 09:55:41 UTC 2025\n";
        assert_eq!(
            parse_proc_driver_version(open).as_deref(),
            Some("580.95.05")
        );
        assert_eq!(parse_proc_driver_version("garbage\n"), None);
    }

    #[test]
    fn reads_nvidia_smi_output() {
        assert_eq!(
            parse_nvidia_smi_output("570.124.06\n570.124.06\n").as_deref(),
            Some("570.124.06")
        );
        assert_eq!(parse_nvidia_smi_output("No devices were found\n"), None);
        assert_eq!(parse_nvidia_smi_output(""), None);
    }

    #[test]
    fn parses_architecture_spellings() {
        let k = ToolkitKnowledge::embedded().unwrap();
        for (token, arch) in [
            ("8.6", "8.6"),
            ("8.6+PTX", "8.6"),
            ("86", "8.6"),
            ("90a", "9.0"),
            ("100f", "10.0"),
            ("sm_90", "9.0"),
            ("compute_120", "12.0"),
            ("80-real", "8.0"),
            ("lto_89", "8.9"),
        ] {
            assert_eq!(k.parse_arch(token), Some(ArchRef::Arch(v(arch))), "{token}");
        }
        assert!(matches!(k.parse_arch("ampere"), Some(ArchRef::Name(n)) if n.name == "Ampere"));
        assert!(matches!(
            k.parse_arch("Ampere+Tegra"),
            Some(ArchRef::Name(_))
        ));
        for token in [
            "all",
            "all-major",
            "native",
            "OFF",
            "",
            "1",
            "sm_",
            "8.6.1",
            "a",
        ] {
            assert_eq!(k.parse_arch(token), None, "{token}");
        }
    }

    #[test]
    fn later_override_replaces_entries() {
        let mut k = ToolkitKnowledge::embedded().unwrap();
        let user = ToolkitKnowledge::from_toml_text(
            r#"
            [[toolkits.releases]]
            version = "12.4.1"
            label = "12.4 Update 1 (site)"
            driver = "550.90.07"
            source = "site policy"
            "#,
        )
        .unwrap();
        let count = k.releases.len();
        k.extend(user);
        assert_eq!(k.releases.len(), count);
        assert_eq!(k.release_for(v("12.4.1")).unwrap().driver, v("550.90.07"));
    }
}
