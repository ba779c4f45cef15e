//! One image, read and indexed once for every image rule: the report (config, layers, merged
//! filesystem), the CUDA inventory, the DT_NEEDED entries the loader cannot resolve, and what the
//! bytes are (devel content, duplicates, the size breakdown).

use std::collections::{HashMap, HashSet};

use super::config::HistoryEntry;
use super::content::ContentIndex;
use super::facts::{Captured, ElfClass, FsView, NodeKind};
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
    /// The ELF machine and class most of the image's objects are built for: what its programs run
    /// as. Objects for another machine (an aarch64 target directory of Nsight in an x86-64 image)
    /// are never loaded there.
    pub primary_machine: Option<(u16, ElfClass)>,
    /// Per Python `site-packages`/`dist-packages` directory, the file names and SONAMEs of the
    /// shared objects under it: a Python extension may NEED a library another package of the same
    /// directory loads first (torchvision's `_C.so` NEEDs `libtorch.so`, loaded by `import torch`).
    site_libraries: SiteLibraries,
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
        let (primary_machine, site_libraries) = index_objects(&report);
        ScannedImage {
            report,
            inventory,
            unresolved,
            content,
            primary_machine,
            site_libraries,
        }
    }

    /// Whether a shared object named `needed` lies in the same Python packages directory as
    /// `object`, so that importing its package first makes it loaded.
    pub fn provided_by_sibling_package(&self, object: &str, needed: &str) -> bool {
        site_packages_of(object)
            .and_then(|site| self.site_libraries.get(site))
            .is_some_and(|names| names.contains(needed))
    }

    /// Whether the object at `path` is loaded when the image's programs start or its packages are
    /// imported. Provisional until the start-time model (`startup.rs`) lands: every object built for
    /// the image's machine counts as loaded, which is what the GPU-code rules assumed before it.
    pub fn loaded_at_start(&self, path: &str) -> bool {
        self.runs_here(path)
    }

    /// Whether the object at `path` is built for the image's primary machine and class.
    pub fn runs_here(&self, path: &str) -> bool {
        let Some(primary) = self.primary_machine else {
            return true;
        };
        match self
            .report
            .fs
            .lstat(path)
            .and_then(|node| node.captured.as_deref())
        {
            Some(Captured::Elf(elf)) => (elf.machine, elf.class) == primary,
            _ => true,
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

/// Shared-object names per Python packages directory.
type SiteLibraries = HashMap<String, HashSet<String>>;

/// The `…/site-packages` (or `dist-packages`) directory `path` lies in.
fn site_packages_of(path: &str) -> Option<&str> {
    ["/site-packages/", "/dist-packages/"]
        .iter()
        .filter_map(|marker| path.find(marker).map(|at| &path[..at + marker.len() - 1]))
        .min_by_key(|site| site.len())
}

/// The primary machine (the most common among objects that NEED something) and the shared
/// objects of each Python packages directory.
fn index_objects(report: &ImageReport) -> (Option<(u16, ElfClass)>, SiteLibraries) {
    let mut machines: HashMap<(u16, ElfClass), usize> = HashMap::new();
    let mut sites: HashMap<String, HashSet<String>> = HashMap::new();
    for (path, node) in report.fs.walk() {
        if node.kind != NodeKind::File {
            continue;
        }
        let Some(Captured::Elf(elf)) = node.captured.as_deref() else {
            continue;
        };
        if !elf.needed.is_empty() {
            *machines.entry((elf.machine, elf.class)).or_default() += 1;
        }
        if let Some(site) = site_packages_of(path) {
            let names = sites.entry(site.to_owned()).or_default();
            names.insert(path.rsplit('/').next().unwrap_or(path).to_owned());
            if let Some(soname) = &elf.soname {
                names.insert(soname.clone());
            }
        }
    }
    let primary = machines
        .into_iter()
        .max_by_key(|(machine, count)| (*count, machine.0))
        .map(|(machine, _)| machine);
    (primary, sites)
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
