//! What the loader finds outside the image's own search: the driver libraries the NVIDIA Container
//! Toolkit injects from the host at run time (by driver capability), and the per-machine facts of the
//! loader's default directories (multiarch triplet, `$PLATFORM`). Read from
//! `rules/host-libraries.toml`; the loader model (`image::ldso`) asks through the methods here.
//!
//! The file is its own knowledge table (`[host_libraries]`), parsed on first use; it does not take
//! part in the user's `--knowledge` files yet.

use std::collections::BTreeSet;

use crate::from_toml::FromToml;

/// The embedded data file.
pub fn embedded_toml() -> &'static str {
    super::embedded::file("rules/host-libraries.toml")
}

#[derive(FromToml)]
#[toml(deny_unknown_fields)]
struct File {
    /// When these facts were last checked against their sources (read by the freshness check).
    #[allow(dead_code)]
    checked: Option<toml::value::Datetime>,
    host_libraries: HostLibraries,
}

/// Everything `rules/host-libraries.toml` says.
#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct HostLibraries {
    /// Driver capabilities in force when `NVIDIA_DRIVER_CAPABILITIES` is unset.
    pub default_capabilities: Vec<String>,
    pub default_capabilities_source: String,
    #[toml(default, rename = "library")]
    pub libraries: Vec<InjectedGroup>,
    #[toml(default, rename = "machine")]
    pub machines: Vec<MachineFacts>,
}

/// Libraries injected under one driver capability.
#[derive(Clone, Debug, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct InjectedGroup {
    pub capability: String,
    /// File names up to `.so`: `libcuda.so` covers `libcuda.so.1` and `libcuda.so.550.54.15`.
    pub stems: Vec<String>,
    pub source: String,
}

/// Loader facts of one ELF machine.
#[derive(Clone, Debug, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct MachineFacts {
    pub e_machine: u16,
    /// 32 or 64.
    pub class: u8,
    /// The Debian multiarch directory name (`x86_64-linux-gnu`).
    pub triplet: String,
    /// What `$PLATFORM` expands to.
    pub platform: String,
    pub source: String,
}

/// The driver capabilities a container of the image gets: `NVIDIA_DRIVER_CAPABILITIES` as written
/// (`all` for every one), or the defaults when unset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Capabilities {
    All,
    Some(BTreeSet<String>),
}

impl HostLibraries {
    /// The embedded facts (parsed once per process).
    pub fn embedded() -> &'static HostLibraries {
        static EMBEDDED: std::sync::OnceLock<HostLibraries> = std::sync::OnceLock::new();
        EMBEDDED.get_or_init(|| {
            Self::from_toml_text(embedded_toml())
                .expect("rules/host-libraries.toml is valid (tested)")
        })
    }

    /// Parses a file holding a `[host_libraries]` table.
    pub fn from_toml_text(text: &str) -> Result<HostLibraries, String> {
        let file: File = crate::from_toml::from_str(text).map_err(|error| error.located(text))?;
        let facts = file.host_libraries;
        for group in &facts.libraries {
            if let Some(stem) = group.stems.iter().find(|stem| !stem.ends_with(".so")) {
                return Err(format!("host library stem {stem:?} must end in .so"));
            }
            if group.source.trim().is_empty() {
                return Err(format!(
                    "host libraries of {:?} need a source",
                    group.capability
                ));
            }
        }
        Ok(facts)
    }

    /// The capabilities in force for an image whose config sets `NVIDIA_DRIVER_CAPABILITIES` to `value`.
    pub fn capabilities(&self, value: Option<&str>) -> Capabilities {
        let names: BTreeSet<String> = match value {
            None => self.default_capabilities.iter().cloned().collect(),
            Some(value) => value
                .split(',')
                .map(|name| name.trim().to_owned())
                .filter(|name| !name.is_empty())
                .collect(),
        };
        if names.contains("all") {
            Capabilities::All
        } else {
            Capabilities::Some(names)
        }
    }

    /// The injected group `name` (a NEEDED or a file name) belongs to, whatever the capabilities.
    pub fn group_of(&self, name: &str) -> Option<&InjectedGroup> {
        self.libraries.iter().find(|group| {
            group.stems.iter().any(|stem| {
                name.strip_prefix(stem.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
            })
        })
    }

    /// Whether a container with `capabilities` gets `name` from the host.
    pub fn provides(&self, name: &str, capabilities: &Capabilities) -> bool {
        self.group_of(name).is_some_and(|group| match capabilities {
            Capabilities::All => true,
            Capabilities::Some(names) => names.contains(&group.capability),
        })
    }

    /// The loader facts of ELF machine `e_machine`.
    pub fn machine(&self, e_machine: u16) -> Option<&MachineFacts> {
        self.machines
            .iter()
            .find(|machine| machine.e_machine == e_machine)
    }
}
