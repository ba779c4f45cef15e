//! The image configuration as the rules read it: environment, labels, history, platform and the layer
//! diff IDs. Read tolerantly from Docker's and OCI's config JSON (the same document, give or take
//! fields), or from the engine's inspect answer.

use std::collections::BTreeMap;

use anyhow::Context;
use serde::Serialize;
use serde_json::Value;

/// One history entry (`docker history`): which instruction made which layer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HistoryEntry {
    pub created_by: String,
    pub created: Option<String>,
    pub comment: Option<String>,
    /// True for instructions that made no layer (ENV, LABEL, …): skipped when pairing with layers.
    pub empty_layer: bool,
}

/// What the image config says.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ImageConfig {
    pub architecture: Option<String>,
    pub os: Option<String>,
    pub variant: Option<String>,
    /// `KEY=VALUE`, in order.
    pub env: Vec<String>,
    pub labels: BTreeMap<String, String>,
    pub user: Option<String>,
    pub entrypoint: Vec<String>,
    pub cmd: Vec<String>,
    pub working_dir: Option<String>,
    pub history: Vec<HistoryEntry>,
    /// `rootfs.diff_ids`: the sha256 of each uncompressed layer, in order.
    pub diff_ids: Vec<String>,
}

impl ImageConfig {
    /// Parses a Docker or OCI image config document.
    pub fn from_json(bytes: &[u8]) -> anyhow::Result<ImageConfig> {
        let doc: Value =
            serde_json::from_slice(bytes).context("the image config is not valid JSON")?;
        anyhow::ensure!(doc.is_object(), "the image config is not a JSON object");
        let inner = doc
            .get("config")
            .or_else(|| doc.get("Config"))
            .unwrap_or(&Value::Null);
        Ok(ImageConfig {
            architecture: text(&doc, "architecture"),
            os: text(&doc, "os"),
            variant: text(&doc, "variant"),
            env: strings(inner.get("Env")),
            labels: labels(inner.get("Labels")),
            user: text(inner, "User").filter(|user| !user.is_empty()),
            entrypoint: strings(inner.get("Entrypoint")),
            cmd: strings(inner.get("Cmd")),
            working_dir: text(inner, "WorkingDir").filter(|dir| !dir.is_empty()),
            history: doc
                .get("history")
                .and_then(Value::as_array)
                .map(|entries| entries.iter().map(history_entry).collect())
                .unwrap_or_default(),
            diff_ids: strings(doc.get("rootfs").and_then(|rootfs| rootfs.get("diff_ids"))),
        })
    }

    /// The value of `name` in the config's environment (the last one wins, as in a container).
    pub fn env_var(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .rev()
            .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
    }

    /// `created_by` of the history entry that made each non-empty layer, in layer order.
    pub fn layer_history(&self, layers: usize) -> Vec<Option<&HistoryEntry>> {
        let mut made_layers = self.history.iter().filter(|entry| !entry.empty_layer);
        (0..layers).map(|_| made_layers.next()).collect()
    }
}

fn text(doc: &Value, key: &str) -> Option<String> {
    doc.get(key).and_then(Value::as_str).map(str::to_string)
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn labels(value: Option<&Value>) -> BTreeMap<String, String> {
    value
        .and_then(Value::as_object)
        .map(|map| {
            map.iter()
                .filter_map(|(key, value)| Some((key.clone(), value.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

fn history_entry(entry: &Value) -> HistoryEntry {
    HistoryEntry {
        created_by: text(entry, "created_by").unwrap_or_default(),
        created: text(entry, "created"),
        comment: text(entry, "comment"),
        empty_layer: entry
            .get("empty_layer")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_pairs_with_layers_skipping_empty_ones() {
        let config = ImageConfig::from_json(
            br#"{"config":{"Env":["A=1","A=2"]},"rootfs":{"diff_ids":["sha256:a","sha256:b"]},
                "history":[{"created_by":"ADD x"},{"created_by":"ENV A=2","empty_layer":true},{"created_by":"RUN y"}]}"#,
        )
        .unwrap();
        assert_eq!(config.env_var("A"), Some("2"));
        let paired: Vec<_> = config
            .layer_history(2)
            .into_iter()
            .map(|entry| entry.unwrap().created_by.as_str())
            .collect();
        assert_eq!(paired, ["ADD x", "RUN y"]);
    }
}
