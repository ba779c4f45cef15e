//! Settings that change what rules look for (target driver, GPUs, trusted
//! registries), which rules run at which severity, and loading
//! `.cudalint.toml`.
//!
//! The file is read into a raw, span-carrying form first so that every
//! mistake in it (unknown key, unknown rule, bad severity) is reported at its
//! `file:line:col`; only then is it turned into the resolved [`Config`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::from_toml::FromToml;
use toml::Spanned;

use crate::diagnostic::Severity;
use crate::rule_meta::RuleMeta;
use crate::source::SourceFile;

/// The name of the configuration file looked up from the current directory.
pub const CONFIG_FILE_NAME: &str = ".cudalint.toml";

/// Facts about where the image will run and what the user trusts.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// Target host driver version, e.g. `535.104.05`.
    pub target_driver: Option<String>,
    /// Target GPU architectures, e.g. `sm_90`.
    pub target_gpus: Vec<String>,
    /// Registries whose images count as known (internal mirrors).
    pub trusted_registries: Vec<String>,
    /// Extra knowledge files (`rules/*.toml` format) layered over the
    /// embedded knowledge, in order.
    pub knowledge_files: Vec<PathBuf>,
    /// The stages the project builds (`targets = [...]`): what CU003 judges
    /// stages against. Empty: not declared.
    pub targets: Vec<String>,
    /// Where the team hosts the rule docs (`doc-url-base`); findings link
    /// to `<base>/<CODE>.md`. None by default: no link rather than a dead one.
    pub doc_url_base: Option<String>,
    /// Thresholds of the image rules (`[image]`).
    pub image: ImageSettings,
}

/// `[image]`: when bytes are worth a finding: wasted layer bytes (CU212, as dive's `.dive-ci`
/// gates), CUDA development content (CU210) and duplicate CUDA libraries (CU211).
#[derive(Clone, Debug, PartialEq, FromToml)]
#[toml(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ImageSettings {
    /// A layer whose added bytes a later layer deletes or overwrites is reported from this many
    /// wasted bytes on (dive's `highestWastedBytes`, per layer).
    #[toml(default = "ImageSettings::default_wasted_bytes")]
    pub wasted_bytes: u64,
    /// The whole image is reported when its wasted bytes reach this share of its bytes
    /// (dive's `highestUserWastedPercent`, 0.0 to 1.0).
    #[toml(default = "ImageSettings::default_wasted_share")]
    pub wasted_share: f64,
    /// A layer's CUDA development content is reported from this many bytes on (CU210).
    #[toml(default = "ImageSettings::default_devel_bytes")]
    pub devel_bytes: u64,
    /// A CUDA library shipped more than once is reported when its extra copies hold this many
    /// bytes (CU211).
    #[toml(default = "ImageSettings::default_duplicate_bytes")]
    pub duplicate_bytes: u64,
}

impl ImageSettings {
    fn default_wasted_bytes() -> u64 {
        1_000_000
    }

    fn default_wasted_share() -> f64 {
        0.1
    }

    fn default_devel_bytes() -> u64 {
        1_000_000
    }

    fn default_duplicate_bytes() -> u64 {
        500_000
    }
}

impl Default for ImageSettings {
    fn default() -> Self {
        ImageSettings {
            wasted_bytes: Self::default_wasted_bytes(),
            wasted_share: Self::default_wasted_share(),
            devel_bytes: Self::default_devel_bytes(),
            duplicate_bytes: Self::default_duplicate_bytes(),
        }
    }
}

/// The lowest severity that makes `cudalint` exit with status 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromToml, serde::Deserialize, clap::ValueEnum)]
#[toml(rename_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum FailureThreshold {
    Error,
    Warning,
    Info,
    Style,
    /// Never fail because of findings.
    None,
}

impl FailureThreshold {
    /// `warning`: errors and warnings fail a build; info and style findings
    /// are printed but are advice, so they do not break CI by default.
    pub const DEFAULT: FailureThreshold = FailureThreshold::Warning;

    /// Whether a finding of `severity` reaches this threshold.
    pub fn is_reached_by(self, severity: Severity) -> bool {
        match self {
            FailureThreshold::Error => severity >= Severity::Error,
            FailureThreshold::Warning => severity >= Severity::Warning,
            FailureThreshold::Info => severity >= Severity::Info,
            FailureThreshold::Style => true,
            FailureThreshold::None => false,
        }
    }
}

/// Which rules run, and at which severity.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleSelection {
    /// When set, only these rules run (codes).
    pub enable: Option<Vec<&'static str>>,
    /// Rules that never run (codes); wins over `enable`.
    pub disable: Vec<&'static str>,
    /// Severity overrides by code.
    pub severity: BTreeMap<&'static str, Severity>,
}

impl RuleSelection {
    pub fn is_enabled(&self, code: &str) -> bool {
        let selected = self
            .enable
            .as_ref()
            .is_none_or(|enable| enable.contains(&code));
        selected && !self.disable.contains(&code)
    }

    /// The severity findings of `code` are reported at.
    pub fn severity_of(&self, code: &str, default: Severity) -> Severity {
        self.severity.get(code).copied().unwrap_or(default)
    }
}

/// A loaded `.cudalint.toml`, resolved.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The file it came from (`None`: no file, defaults).
    pub path: Option<PathBuf>,
    pub failure_threshold: Option<FailureThreshold>,
    pub rules: RuleSelection,
    pub settings: Settings,
}

/// Why a configuration file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}")]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
}

/// The raw file, as written, with spans for everything we validate.
#[derive(Debug, Default, FromToml)]
#[toml(deny_unknown_fields, rename_all = "kebab-case")]
struct RawConfig {
    failure_threshold: Option<FailureThreshold>,
    #[toml(default)]
    rules: RawRules,
    #[toml(default)]
    target: RawTarget,
    #[toml(default)]
    registries: RawRegistries,
    #[toml(default)]
    knowledge: Vec<String>,
    #[toml(default)]
    targets: Vec<String>,
    doc_url_base: Option<String>,
    image: Option<Spanned<ImageSettings>>,
}

#[derive(Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
struct RawRules {
    enable: Option<Vec<Spanned<String>>>,
    #[toml(default)]
    disable: Vec<Spanned<String>>,
    #[toml(default)]
    severity: BTreeMap<Spanned<String>, Spanned<String>>,
}

#[derive(Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
struct RawTarget {
    driver: Option<String>,
    #[toml(default)]
    gpus: Vec<String>,
}

#[derive(Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
struct RawRegistries {
    #[toml(default)]
    trusted: Vec<String>,
}

/// The nearest `.cudalint.toml` in `start` or one of its parents.
pub fn discover(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|dir| dir.join(CONFIG_FILE_NAME))
        .find(|candidate| candidate.is_file())
}

/// Read and resolve the configuration file at `path`, checking rule names
/// against `rules`.
pub fn load(path: &Path, rules: &[&'static RuleMeta]) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, path, rules)
}

/// Resolve configuration `text` that was read from `path` (used for error
/// locations and to make knowledge paths relative to the file).
pub fn parse(text: &str, path: &Path, rules: &[&'static RuleMeta]) -> Result<Config, ConfigError> {
    let source = SourceFile::new(path.display().to_string(), text);
    let invalid = |offset: usize, message: String| {
        let at = source.line_col(offset);
        ConfigError::Invalid {
            path: path.to_path_buf(),
            line: at.line,
            column: at.column,
            message,
        }
    };

    let raw: RawConfig = crate::from_toml::from_str(text).map_err(|error| {
        let offset = error.span.map_or(0, |span| span.start);
        invalid(offset, error.message)
    })?;

    let resolve = |name: &Spanned<String>| -> Result<&'static str, ConfigError> {
        find_rule(rules, name.get_ref())
            .map(|meta| meta.code)
            .ok_or_else(|| invalid(name.span().start, unknown_rule_message(name.get_ref())))
    };

    let enable = match &raw.rules.enable {
        Some(names) => Some(names.iter().map(resolve).collect::<Result<Vec<_>, _>>()?),
        None => None,
    };
    let disable = raw
        .rules
        .disable
        .iter()
        .map(resolve)
        .collect::<Result<Vec<_>, _>>()?;
    let mut severity = BTreeMap::new();
    for (name, level) in &raw.rules.severity {
        let code = resolve(name)?;
        let level = Severity::parse(level.get_ref()).ok_or_else(|| {
            invalid(
                level.span().start,
                format!(
                    "unknown severity `{}`; expected one of error, warning, info, style",
                    level.get_ref()
                ),
            )
        })?;
        severity.insert(code, level);
    }

    let image = match raw.image {
        Some(image) => {
            let share = image.get_ref().wasted_share;
            if !(0.0..=1.0).contains(&share) {
                return Err(invalid(
                    image.span().start,
                    format!("[image] wasted-share must be between 0.0 and 1.0, got {share}"),
                ));
            }
            image.into_inner()
        }
        None => ImageSettings::default(),
    };
    let base_dir = path.parent().unwrap_or_else(|| Path::new(""));
    Ok(Config {
        path: Some(path.to_path_buf()),
        failure_threshold: raw.failure_threshold,
        rules: RuleSelection {
            enable,
            disable,
            severity,
        },
        settings: Settings {
            target_driver: raw.target.driver,
            target_gpus: raw.target.gpus,
            trusted_registries: raw.registries.trusted,
            knowledge_files: raw.knowledge.iter().map(|f| base_dir.join(f)).collect(),
            targets: raw.targets,
            doc_url_base: raw.doc_url_base,
            image,
        },
    })
}

/// The rule `name` names: a code (`CU104`, any case) or a kebab-case name.
pub fn find_rule(rules: &[&'static RuleMeta], name: &str) -> Option<&'static RuleMeta> {
    let name = name.trim();
    rules
        .iter()
        .copied()
        .find(|meta| meta.code.eq_ignore_ascii_case(name) || meta.name == name)
}

/// The message for a rule reference that matches no rule.
pub fn unknown_rule_message(name: &str) -> String {
    format!("unknown rule `{name}` (see `cudalint rules` for codes and names)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule_meta::{Category, Doc, FixAvailability};

    static RULE: RuleMeta = RuleMeta {
        code: "CU104",
        name: "some-rule",
        category: Category::Size,
        default_severity: Severity::Warning,
        fix: FixAvailability::None,
        summary: "",
        doc: Doc::Text(""),
    };

    fn parse_str(text: &str) -> Result<Config, ConfigError> {
        parse(text, Path::new("dir/.cudalint.toml"), &[&RULE])
    }

    #[test]
    fn resolves_names_and_relative_paths() {
        let config = parse_str(
            "failure-threshold = \"error\"\nknowledge = [\"k.toml\"]\ntargets = [\"server\", \"light\"]\n[rules]\ndisable = [\"some-rule\"]\n[rules.severity]\ncu104 = \"info\"\n[target]\ndriver = \"535.104.05\"\n",
        )
        .unwrap();
        assert_eq!(config.failure_threshold, Some(FailureThreshold::Error));
        assert_eq!(config.rules.disable, vec!["CU104"]);
        assert_eq!(config.rules.severity.get("CU104"), Some(&Severity::Info));
        assert_eq!(
            config.settings.knowledge_files,
            vec![PathBuf::from("dir/k.toml")]
        );
        assert!(!config.rules.is_enabled("CU104"));
        assert_eq!(config.settings.targets, vec!["server", "light"]);
    }

    #[test]
    fn errors_point_at_the_offending_text() {
        let error = parse_str("[rules]\ndisable = [\"CU104\", \"CU999\"]\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "dir/.cudalint.toml:2:21: unknown rule `CU999` (see `cudalint rules` for codes and names)"
        );
        let error = parse_str("[rules.severity]\nCU104 = \"loud\"\n").unwrap_err();
        assert!(error
            .to_string()
            .starts_with("dir/.cudalint.toml:2:9: unknown severity `loud`"));
        let error = parse_str("[rules.severity]\nCU105 = \"info\"\n").unwrap_err();
        assert!(error
            .to_string()
            .starts_with("dir/.cudalint.toml:2:1: unknown rule `CU105`"));
        let error = parse_str("[target]\ndrivr = \"1\"\n").unwrap_err();
        assert!(error
            .to_string()
            .starts_with("dir/.cudalint.toml:2:1: unknown field `drivr`"));
    }
}
