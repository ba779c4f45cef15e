//! One image, read and indexed once for every image rule: the report (config, layers, merged
//! filesystem), the CUDA inventory, the DT_NEEDED entries the loader cannot resolve, and what the
//! bytes are (devel content, duplicates, the size breakdown).

use super::config::HistoryEntry;
use super::content::ContentIndex;
use super::inventory::{inventory, Inventory};
use super::linkage::{unresolved_needs, UnresolvedNeed};
use super::report::ImageReport;
use crate::knowledge::image_content::ImageContent;
use crate::knowledge::Knowledge;

/// An image with everything the image rules read.
pub struct ScannedImage {
    pub report: ImageReport,
    pub inventory: Inventory,
    pub unresolved: Vec<UnresolvedNeed>,
    pub content: ContentIndex,
}

impl ScannedImage {
    /// Indexes a read image.
    pub fn scan(report: ImageReport, knowledge: &Knowledge) -> ScannedImage {
        let config = &report.config;
        let inventory = inventory(&report.fs, &config.env, &config.labels);
        let unresolved = unresolved_needs(&report.fs, &config.env, config.working_dir.as_deref());
        let runtime = &knowledge.cupti.runtime;
        let content = ContentIndex::build(&report.fs, ImageContent::embedded(), |dir| {
            runtime.is_stub_dir(dir)
        });
        ScannedImage {
            report,
            inventory,
            unresolved,
            content,
        }
    }

    /// The name the user gave the image.
    pub fn reference(&self) -> &str {
        &self.report.reference
    }

    /// How findings name layer `index` (0-based): its diff ID, or its 1-based number when the
    /// source has none (a rootfs).
    pub fn layer_name(&self, index: usize) -> String {
        match self.report.layers.get(index) {
            Some(layer) if !layer.diff_id.is_empty() => layer.diff_id.clone(),
            _ => format!("#{}", index + 1),
        }
    }

    /// The history entry of the instruction that made layer `index`.
    pub fn history_of(&self, index: usize) -> Option<&HistoryEntry> {
        self.report
            .config
            .layer_history(self.report.layers.len())
            .get(index)
            .copied()
            .flatten()
    }

    /// `layer 3 (RUN pip install …)`: a layer as a person reads it in a note.
    pub fn describe_layer(&self, index: usize) -> String {
        match self.history_of(index) {
            Some(entry) => format!("layer {} made by `{}`", index + 1, short(&entry.created_by)),
            None => format!("layer {}", index + 1),
        }
    }
}

/// A history line on one line, at most 120 characters.
pub fn short(created_by: &str) -> String {
    let one_line = created_by.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 120 {
        let cut: String = one_line.chars().take(117).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}
