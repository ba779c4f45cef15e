//! One image, read and indexed once for every image rule: the report (config, layers, merged
//! filesystem), the CUDA inventory, the DT_NEEDED entries the loader cannot resolve, which objects
//! load at start and which only on demand, and what the bytes are (devel content, duplicates, the
//! size breakdown).

use std::collections::HashMap;

use super::config::HistoryEntry;
use super::content::ContentIndex;
use super::facts::{Captured, ElfClass, FsView, NodeKind};
use super::inventory::{inventory, Inventory};
use super::linkage::{unresolved_needs, UnresolvedNeed};
use super::report::ImageReport;
use super::startup::Startup;
use crate::knowledge::image_content::ImageContent;
use crate::knowledge::image_loading::ImageLoading;
use crate::knowledge::Knowledge;

/// An image with everything the image rules read.
pub struct ScannedImage {
    pub report: ImageReport,
    pub inventory: Inventory,
    pub unresolved: Vec<UnresolvedNeed>,
    pub content: ContentIndex,
    /// The ELF machine and class most of the image's objects are built for: what its programs run
    /// as. Objects for another machine (an aarch64 target directory of Nsight in an x86-64 image)
    /// are never loaded there.
    pub primary_machine: Option<(u16, ElfClass)>,
    /// Which objects load at start (programs, extension modules, framework preloads and what they
    /// NEED) and which NEEDs fail there.
    pub startup: Startup,
}

impl ScannedImage {
    /// Indexes a read image.
    pub fn scan(report: ImageReport, knowledge: &Knowledge) -> ScannedImage {
        let config = &report.config;
        let inventory = inventory(&report.fs, &config.env, &config.labels);
        let unresolved = unresolved_needs(&report.fs, &config.env, config.working_dir.as_deref());
        let runtime = &knowledge.cupti.runtime;
        let image_content = ImageContent::embedded();
        let loading = ImageLoading::embedded();
        let content = ContentIndex::build(
            &report.fs,
            image_content,
            |dir| runtime.is_stub_dir(dir),
            |path| loading.is_self_loaded(path),
        );
        let primary_machine = primary_machine(&report);
        let startup = Startup::build(
            &report.fs,
            &config.env,
            config.working_dir.as_deref(),
            loading,
            |path| runs_on(&report, primary_machine, path),
            |path| image_content.is_launcher_loaded(path),
        );
        ScannedImage {
            report,
            inventory,
            unresolved,
            content,
            primary_machine,
            startup,
        }
    }

    /// Whether the object at `path` (a real path) is loaded when the image's programs start or its
    /// Python packages are imported; `false` for a plugin that is opened only on demand.
    pub fn loaded_at_start(&self, path: &str) -> bool {
        self.startup.loaded_at_start(path)
    }

    /// Whether the object at `path` is built for the image's primary machine and class.
    pub fn runs_here(&self, path: &str) -> bool {
        runs_on(&self.report, self.primary_machine, path)
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

/// Whether the object at `path` is built for `primary` (every object is, when no machine is known).
fn runs_on(report: &ImageReport, primary: Option<(u16, ElfClass)>, path: &str) -> bool {
    let Some(primary) = primary else {
        return true;
    };
    match report
        .fs
        .lstat(path)
        .and_then(|node| node.captured.as_deref())
    {
        Some(Captured::Elf(elf)) => (elf.machine, elf.class) == primary,
        _ => true,
    }
}

/// The primary machine: the most common among objects that NEED something.
fn primary_machine(report: &ImageReport) -> Option<(u16, ElfClass)> {
    let mut machines: HashMap<(u16, ElfClass), usize> = HashMap::new();
    for (_, node) in report.fs.walk() {
        if node.kind != NodeKind::File {
            continue;
        }
        if let Some(Captured::Elf(elf)) = node.captured.as_deref() {
            if !elf.needed.is_empty() {
                *machines.entry((elf.machine, elf.class)).or_default() += 1;
            }
        }
    }
    machines
        .into_iter()
        .max_by_key(|(machine, count)| (*count, machine.0))
        .map(|(machine, _)| machine)
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
