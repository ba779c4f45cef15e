//! The server's settings and the engines they make.
//!
//! Settings come from the client (`initializationOptions`, then each
//! `workspace/didChangeConfiguration`), either flat or under a `cudalint`
//! key: `driver`, `gpus`, `buildArgs`, `target`, `failureThreshold`,
//! `context` and `debounceMs`. They go over the `.cudalint.toml` found from
//! the document's directory upwards, as the CLI's flags go over the file, so
//! the server reports what `cudalint --driver … --gpu … --build-arg …` would.
//!
//! An engine is built once per configuration file and reused; a change of
//! the file (its modification time or length) or of the settings builds it
//! again, so editing `.cudalint.toml` takes effect on the next lint.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::config::{self, Config, FailureThreshold};
use crate::dockerfile::model::BuildOptions;
use crate::engine::{self, Engine, EngineOptions};
use crate::knowledge::Knowledge;

/// What the client asked for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientSettings {
    /// `--driver`: a version, or `host`.
    pub driver: Option<String>,
    /// `--gpu`, repeated; replaces the configuration's `gpus` when given.
    pub gpus: Option<Vec<String>>,
    /// `--build-arg`: an object `{"K": "V"}` or a list of `"K=V"`.
    pub build_args: Vec<(String, String)>,
    /// `--target`.
    pub target: Option<String>,
    /// `--failure-threshold`: findings below it are published as hints
    /// (they would not fail CI). Unset: every finding at its own severity.
    pub failure_threshold: Option<FailureThreshold>,
    /// `--context`: where requirement files are read (default: each
    /// Dockerfile's directory).
    pub context: Option<PathBuf>,
    /// How long the server waits after an edit before linting. Edits that
    /// arrive while a lint runs are coalesced whatever this is.
    pub debounce: Duration,
}

impl ClientSettings {
    /// Read settings from `value`; what cannot be understood is left at its
    /// default and explained in the returned messages.
    pub fn from_json(value: &Value) -> (ClientSettings, Vec<String>) {
        let value = value.get("cudalint").unwrap_or(value);
        let mut settings = ClientSettings::default();
        let mut problems = Vec::new();
        let Some(object) = value.as_object() else {
            return (settings, problems);
        };
        let text = |key: &str, problems: &mut Vec<String>| match object.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) if !text.trim().is_empty() => Some(text.trim().to_string()),
            Some(other) => {
                problems.push(format!("`{key}` must be a non-empty string, not {other}"));
                None
            }
        };
        settings.driver = text("driver", &mut problems);
        settings.target = text("target", &mut problems);
        settings.context = text("context", &mut problems).map(PathBuf::from);
        if let Some(threshold) = text("failureThreshold", &mut problems) {
            match serde_json::from_value::<FailureThreshold>(Value::String(threshold.clone())) {
                Ok(threshold) => settings.failure_threshold = Some(threshold),
                Err(_) => problems.push(format!(
                    "`failureThreshold` must be error, warning, info, style or none, not `{threshold}`"
                )),
            }
        }
        match object.get("gpus") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                let gpus: Vec<String> = items
                    .iter()
                    .filter_map(|item| item.as_str().map(str::to_string))
                    .collect();
                if gpus.len() != items.len() {
                    problems.push("`gpus` must be a list of strings".into());
                }
                settings.gpus = Some(gpus);
            }
            Some(Value::String(one)) => settings.gpus = Some(vec![one.clone()]),
            Some(other) => problems.push(format!("`gpus` must be a list of strings, not {other}")),
        }
        match object.get("buildArgs") {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (key, value) in map {
                    match value {
                        Value::String(text) => {
                            settings.build_args.push((key.clone(), text.clone()))
                        }
                        Value::Number(number) => {
                            settings.build_args.push((key.clone(), number.to_string()))
                        }
                        other => problems
                            .push(format!("`buildArgs.{key}` must be a string, not {other}")),
                    }
                }
            }
            Some(Value::Array(items)) => {
                for item in items {
                    match item.as_str().and_then(|text| text.split_once('=')) {
                        Some((key, value)) if !key.is_empty() => settings
                            .build_args
                            .push((key.to_string(), value.to_string())),
                        _ => problems
                            .push(format!("`buildArgs` entries are \"KEY=VALUE\", not {item}")),
                    }
                }
            }
            Some(other) => problems.push(format!("`buildArgs` must be an object, not {other}")),
        }
        match object.get("debounceMs") {
            None | Some(Value::Null) => {}
            Some(value) => match value.as_u64() {
                Some(ms) => settings.debounce = Duration::from_millis(ms.min(10_000)),
                None => problems.push(format!("`debounceMs` must be a whole number, not {value}")),
            },
        }
        (settings, problems)
    }
}

/// An engine for one configuration, or why there is none.
pub type EngineResult = Result<Arc<Engine>, String>;

/// The configuration file that applies and how it looked when read.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let metadata = std::fs::metadata(path).ok()?;
    Some(Stamp {
        modified: metadata.modified().ok(),
        len: metadata.len(),
    })
}

/// Engines by configuration file (`None`: no file applies).
#[derive(Default)]
pub struct Engines {
    client: ClientSettings,
    built: HashMap<Option<PathBuf>, (Option<Stamp>, EngineResult)>,
}

impl Engines {
    pub fn client(&self) -> &ClientSettings {
        &self.client
    }

    /// New settings; every engine is built again when next needed.
    pub fn set_client(&mut self, client: ClientSettings) {
        self.client = client;
        self.built.clear();
    }

    /// Forget every engine (a configuration or knowledge file changed).
    pub fn invalidate(&mut self) {
        self.built.clear();
    }

    /// The engine for a document in `dir` (`None`: not on disk; no
    /// configuration file applies).
    pub fn for_dir(&mut self, dir: Option<&Path>) -> EngineResult {
        let config_path = dir.and_then(config::discover);
        let current = config_path.as_deref().and_then(stamp);
        if let Some((seen, engine)) = self.built.get(&config_path) {
            if *seen == current {
                return engine.clone();
            }
        }
        let engine = build_engine(config_path.as_deref(), &self.client).map(Arc::new);
        self.built.insert(config_path, (current, engine.clone()));
        engine
    }
}

/// What `cudalint --config FILE` with the client's flags would build.
fn build_engine(config_path: Option<&Path>, client: &ClientSettings) -> Result<Engine, String> {
    let rules = engine::all_rule_metas();
    let config = match config_path {
        Some(path) => {
            config::load(path, &rules).map_err(|error| crate::cli::error_chain(&error))?
        }
        None => Config::default(),
    };
    let mut settings = config.settings;
    if let Some(driver) = &client.driver {
        settings.target_driver = Some(if driver == "host" {
            crate::knowledge::toolkits::host_driver_version()
                .map_err(|reason| format!("driver `host`: {reason}"))?
        } else {
            driver.clone()
        });
    }
    let from = match &client.gpus {
        Some(gpus) => {
            settings.target_gpus = gpus.clone();
            "the `gpus` setting"
        }
        None => "[target] gpus",
    };
    let fleet = crate::knowledge::gpus::Gpus::embedded();
    for gpu in &settings.target_gpus {
        fleet
            .parse_target(gpu)
            .map_err(|reason| format!("{from}: {reason}"))?;
    }
    let knowledge =
        Knowledge::load(&settings.knowledge_files).map_err(|error| error.to_string())?;
    Ok(Engine::new(EngineOptions {
        selection: config.rules,
        settings,
        build: BuildOptions {
            build_args: client.build_args.clone(),
            target: client.target.clone(),
            platform: None,
        },
        knowledge,
        context: client.context.clone(),
        // One thread: the rules of an ordinary Dockerfile share too little work for a second
        // thread to pay, and beside an editor and a build the wait for the slower thread is what
        // the slow edits were (877-line file: p99 7.3-7.6 ms on one thread, 8.2-8.6 on two).
        rule_threads: crate::engine::RuleThreads(1),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_read_flat_or_under_cudalint() {
        let value = serde_json::json!({"cudalint": {
            "driver": "535.104.05", "gpus": ["sm_80"], "buildArgs": {"CUDA": "12.4.1"},
            "target": "runtime", "failureThreshold": "error", "debounceMs": 5
        }});
        let (settings, problems) = ClientSettings::from_json(&value);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(settings.driver.as_deref(), Some("535.104.05"));
        assert_eq!(settings.gpus, Some(vec!["sm_80".to_string()]));
        assert_eq!(
            settings.build_args,
            [("CUDA".to_string(), "12.4.1".to_string())]
        );
        assert_eq!(settings.failure_threshold, Some(FailureThreshold::Error));
        assert_eq!(settings.debounce, Duration::from_millis(5));

        let (settings, problems) = ClientSettings::from_json(
            &serde_json::json!({"buildArgs": ["A=1", "bad"], "failureThreshold": "loud"}),
        );
        assert_eq!(settings.build_args, [("A".to_string(), "1".to_string())]);
        assert_eq!(problems.len(), 2, "{problems:?}");
    }
}
