//! What the image's bytes are: every live file sorted into one kind (CUDA development content by
//! category, CUDA runtime, Python packages, base OS, other), the CUDA libraries shipped more than once,
//! and the size breakdown the text report ends with. The kinds come from `rules/image-content.toml`
//! ([`ImageContent`]); this module only applies them to the merged filesystem.
//!
//! Bytes are counted once: a hard link owns no bytes, a duplicate's extra copies count as
//! duplicates and not in their own kind, and wasted bytes are the dead copies earlier layers still
//! ship. So the parts of [`SizeBreakdown`] add up to the bytes the layers add.

use std::collections::BTreeMap;

use serde::Serialize;

use super::facts::Captured;
use super::fs::MergedFs;
use crate::knowledge::image_content::ImageContent;

/// One file of CUDA development content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DevelFile {
    pub path: String,
    pub size: u64,
    pub layer: usize,
    /// The category's name (`compiler`, `headers`, …).
    pub category: String,
}

/// One copy of a CUDA library.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LibraryCopy {
    pub path: String,
    /// Its SONAME (its file name when it has none).
    pub soname: String,
    pub size: u64,
    pub layer: usize,
    /// Its GNU build ID, when it has one: copies with the same one are the same build.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build_id: Option<String>,
    /// The same file under other names in the same directory (`libcupti.so`, `libcupti.so.12`,
    /// `libcupti.so.2025.1.1`): a wheel cannot hold symbolic links, so it ships one copy per name.
    /// They are one library for duplicate purposes, and no bytes a user can save.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
}

impl LibraryCopy {
    /// Whether `other` is the same build (the same build ID, whatever the size: `patchelf` and
    /// `strip` change the bytes around the code, not the build ID), a different build (both have
    /// build IDs, and they differ), or `None`: a copy without a build ID cannot be compared.
    pub fn same_build(&self, other: &LibraryCopy) -> Option<bool> {
        match (&self.build_id, &other.build_id) {
            (Some(mine), Some(theirs)) => Some(mine == theirs),
            _ => None,
        }
    }
}

/// The same CUDA library in several places: the same SONAME, or the same build (build ID) under
/// other names and SONAMEs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DuplicateGroup {
    /// The SONAME of the copy kept (its file name when it has none).
    pub soname: String,
    /// The copy counted as the one to keep (the largest, then the first by path), then the others.
    pub kept: LibraryCopy,
    pub extra: Vec<LibraryCopy>,
}

impl DuplicateGroup {
    /// Bytes saved by keeping one copy.
    pub fn saved_bytes(&self) -> u64 {
        self.extra.iter().map(|copy| copy.size).sum()
    }
}

/// The image's bytes by what they are. The parts add up to `total`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SizeBreakdown {
    pub base_os: u64,
    pub cuda_runtime: u64,
    pub cuda_devel: u64,
    pub python_packages: u64,
    /// Extra copies of CUDA libraries shipped more than once.
    pub duplicates: u64,
    /// Bytes a layer added that a later layer deleted or overwrote.
    pub wasted: u64,
    pub other: u64,
    pub total: u64,
}

impl SizeBreakdown {
    /// The parts with their names, in report order (total excluded).
    pub fn parts(&self) -> [(&'static str, u64); 7] {
        [
            ("base OS", self.base_os),
            ("CUDA runtime", self.cuda_runtime),
            ("CUDA devel content", self.cuda_devel),
            ("Python packages", self.python_packages),
            ("duplicates", self.duplicates),
            ("wasted", self.wasted),
            ("other", self.other),
        ]
    }
}

/// The content of an image as the image rules and the report read it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ContentIndex {
    pub devel: Vec<DevelFile>,
    pub duplicates: Vec<DuplicateGroup>,
    pub breakdown: SizeBreakdown,
}

impl ContentIndex {
    /// Sorts every live file of `fs`.
    /// `is_stub_dir` tells the directories of link-time stubs, which are not copies of a library;
    /// `is_self_loaded` the copies a package loads from its own path for its own feature (Triton's
    /// CUPTI), which nothing else resolves to and a user cannot drop.
    pub fn build(
        fs: &MergedFs,
        content: &ImageContent,
        is_stub_dir: impl Fn(&str) -> bool,
        is_self_loaded: impl Fn(&str) -> bool,
    ) -> ContentIndex {
        let mut index = ContentIndex::default();
        let mut libraries: BTreeMap<String, Vec<LibraryCopy>> = BTreeMap::new();
        let mut kinds: Vec<(String, u64, Kind)> = Vec::new();
        for (path, node, owns_bytes) in fs.files_with_ownership() {
            if !owns_bytes {
                continue;
            }
            let name = path.rsplit('/').next().unwrap_or(path);
            let kind = if let Some(category) = content.devel_category(path) {
                index.devel.push(DevelFile {
                    path: path.to_owned(),
                    size: node.size,
                    layer: node.layer,
                    category: category.name.clone(),
                });
                Kind::Devel
            } else if content.cuda_library_stem(name).is_some() {
                // Only shared objects are loaded; a `.a` or a linker script of that name is not a copy.
                let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
                if let (Some(Captured::Elf(elf)), false) = (
                    node.captured.as_deref(),
                    is_stub_dir(dir) || is_self_loaded(path),
                ) {
                    let soname = elf.soname.clone().unwrap_or_else(|| name.to_owned());
                    libraries
                        .entry(soname.clone())
                        .or_default()
                        .push(LibraryCopy {
                            path: path.to_owned(),
                            soname,
                            size: node.size,
                            layer: node.layer,
                            build_id: elf.build_id.clone(),
                            aliases: Vec::new(),
                        });
                }
                Kind::CudaRuntime
            } else if content.is_cuda_runtime_path(path) {
                Kind::CudaRuntime
            } else if content.is_python_package(path) {
                Kind::Python
            } else if content.is_base_os(path) {
                Kind::BaseOs
            } else {
                Kind::Other
            };
            kinds.push((path.to_owned(), node.size, kind));
        }
        let mut extra_paths = std::collections::HashSet::new();
        for (soname, copies) in merge_same_builds(libraries) {
            let mut copies = join_aliases(copies);
            if copies.len() < 2 {
                continue;
            }
            copies.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| a.path.cmp(&b.path)));
            let kept = copies.remove(0);
            extra_paths.extend(copies.iter().map(|copy| copy.path.clone()));
            index.duplicates.push(DuplicateGroup {
                soname,
                kept,
                extra: copies,
            });
        }
        let breakdown = &mut index.breakdown;
        for (path, size, kind) in kinds {
            let slot = if extra_paths.contains(&path) {
                &mut breakdown.duplicates
            } else {
                match kind {
                    Kind::Devel => &mut breakdown.cuda_devel,
                    Kind::CudaRuntime => &mut breakdown.cuda_runtime,
                    Kind::Python => &mut breakdown.python_packages,
                    Kind::BaseOs => &mut breakdown.base_os,
                    Kind::Other => &mut breakdown.other,
                }
            };
            *slot += size;
        }
        breakdown.wasted = fs.dead_copies().iter().map(|copy| copy.size).sum();
        breakdown.total = breakdown.parts().iter().map(|(_, bytes)| bytes).sum();
        index
    }
}

/// Joins the SONAME groups that hold a copy of the same build (same build ID): a copy renamed with
/// its SONAME changed (as `auditwheel repair` vendors one) is still a copy. Each joined group keeps
/// the first SONAME (in sorted order) of its parts.
fn merge_same_builds(
    by_soname: BTreeMap<String, Vec<LibraryCopy>>,
) -> BTreeMap<String, Vec<LibraryCopy>> {
    let mut groups: Vec<(String, Vec<LibraryCopy>)> = by_soname.into_iter().collect();
    let mut owner: std::collections::HashMap<String, usize> = Default::default();
    let mut joined_into: Vec<usize> = (0..groups.len()).collect();
    for (index, (_, copies)) in groups.iter().enumerate() {
        for copy in copies {
            let Some(build_id) = &copy.build_id else {
                continue;
            };
            let first = *owner.entry(build_id.clone()).or_insert(index);
            let (root_first, root_here) = (root(&joined_into, first), root(&joined_into, index));
            if root_first != root_here {
                joined_into[root_first.max(root_here)] = root_first.min(root_here);
            }
        }
    }
    let mut merged: BTreeMap<String, Vec<LibraryCopy>> = BTreeMap::new();
    let mut names: Vec<Option<String>> = vec![None; groups.len()];
    for index in 0..groups.len() {
        let into = root(&joined_into, index);
        let name = names[into]
            .get_or_insert_with(|| groups[into].0.clone())
            .clone();
        let copies = std::mem::take(&mut groups[index].1);
        merged.entry(name).or_default().extend(copies);
    }
    merged
}

/// Joins the copies of one library that are the same file under several names in one directory
/// (the same build ID, or the same size where there is none): the first name by path keeps the
/// others as aliases.
fn join_aliases(mut copies: Vec<LibraryCopy>) -> Vec<LibraryCopy> {
    copies.sort_by(|a, b| a.path.cmp(&b.path));
    let mut joined: Vec<LibraryCopy> = Vec::with_capacity(copies.len());
    for copy in copies {
        let dir = |path: &str| path.rsplit_once('/').map_or("", |(dir, _)| dir).to_owned();
        let same_file = |kept: &LibraryCopy| {
            dir(&kept.path) == dir(&copy.path)
                && match (&kept.build_id, &copy.build_id) {
                    (Some(a), Some(b)) => a == b,
                    (None, None) => kept.size == copy.size,
                    _ => false,
                }
        };
        match joined.iter_mut().find(|kept| same_file(kept)) {
            Some(kept) => kept.aliases.push(copy.path),
            None => joined.push(copy),
        }
    }
    joined
}

/// The group a group was joined into, following the chain.
fn root(joined_into: &[usize], mut index: usize) -> usize {
    while joined_into[index] != index {
        index = joined_into[index];
    }
    index
}

#[derive(Clone, Copy)]
enum Kind {
    Devel,
    CudaRuntime,
    Python,
    BaseOs,
    Other,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(path: &str, size: u64, build_id: Option<&str>) -> LibraryCopy {
        LibraryCopy {
            path: path.into(),
            soname: path.rsplit('/').next().unwrap().into(),
            size,
            layer: 0,
            build_id: build_id.map(str::to_owned),
            aliases: Vec::new(),
        }
    }

    #[test]
    fn a_wheels_copies_under_each_name_are_one_library() {
        let joined = join_aliases(vec![
            copy("/t/cupti/libcupti.so.12", 7, Some("aa")),
            copy("/t/cupti/libcupti.so", 7, Some("aa")),
            copy("/t/cupti/libcupti.so.2025.1.1", 7, Some("aa")),
            copy("/n/lib/libcupti.so.12", 7, Some("aa")),
            copy("/t/cupti/libnvperf_host.so", 5, None),
            copy("/t/cupti/libnvperf_host.so.1", 6, None),
        ]);
        let paths: Vec<&str> = joined.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/n/lib/libcupti.so.12",
                "/t/cupti/libcupti.so",
                "/t/cupti/libnvperf_host.so",
                "/t/cupti/libnvperf_host.so.1"
            ]
        );
        assert_eq!(
            joined[1].aliases,
            ["/t/cupti/libcupti.so.12", "/t/cupti/libcupti.so.2025.1.1"]
        );
    }

    #[test]
    fn copies_of_the_same_build_join_across_sonames() {
        let mut by_soname = BTreeMap::new();
        by_soname.insert(
            "libcudart-1a2b3c4d.so.12".to_string(),
            vec![copy("/w/libcudart-1a2b3c4d.so.12", 700, Some("aa"))],
        );
        by_soname.insert(
            "libcudart.so.12".to_string(),
            vec![
                copy("/usr/local/cuda/lib64/libcudart.so.12", 700, Some("aa")),
                copy("/opt/libcudart.so.12", 650, Some("bb")),
            ],
        );
        // Same build ID, another size (stripped, or patched by patchelf): the same build, joined.
        by_soname.insert(
            "libcudart.so.12.9".to_string(),
            vec![copy("/x/libcudart.so.12.9", 1, Some("aa"))],
        );
        by_soname.insert(
            "libcublas.so.12".to_string(),
            vec![copy("/x/libcublas.so.12", 1, Some("cc"))],
        );
        by_soname.insert(
            "libnvrtc.so.12".to_string(),
            vec![copy("/x/libnvrtc.so.12", 9, None)],
        );
        let merged = merge_same_builds(by_soname);
        let names: Vec<&str> = merged.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "libcublas.so.12",
                "libcudart-1a2b3c4d.so.12",
                "libnvrtc.so.12"
            ]
        );
        // Joined in sorted order: libcudart-1a2b3c4d.so.12, libcudart.so.12 (two), libcudart.so.12.9.
        let copies = &merged["libcudart-1a2b3c4d.so.12"];
        assert_eq!(copies.len(), 4);
        assert_eq!(copies[0].same_build(&copies[1]), Some(true));
        assert_eq!(copies[1].same_build(&copies[2]), Some(false));
        assert_eq!(copies[0].same_build(&copies[3]), Some(true));
        assert_eq!(
            copy("/a", 1, None).same_build(&copy("/b", 1, Some("aa"))),
            None
        );
    }
}
