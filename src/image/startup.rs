//! Which objects of an image are loaded at start, and which only on demand. A program's start loads
//! its executable and everything it NEEDs; an `import` loads a Python extension module and
//! everything it NEEDs; a framework may load libraries by path before its own modules (PyTorch's
//! preload of the nvidia-* wheels). Those are the roots: each is loaded with the loader model
//! (`ldso.rs`), after the libraries its framework preloads, and every object of their load trees is
//! loaded at start. A NEEDED that stays unresolved in such a tree is a start failure: the program or
//! the import fails. Every other object is a plugin that `dlopen` opens when a feature asks for it
//! (what the feature is comes from `rules/image-loading.toml`): its unresolved NEEDs break that
//! feature only.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use super::facts::{Captured, ElfKind, FsView, NodeKind};
use super::ldso::{Loader, LoaderEnv};
use crate::knowledge::host_libraries::HostLibraries;
use crate::knowledge::image_loading::{ImageLoading, Preload};

/// A NEEDED that fails when the image's programs start or its packages are imported.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StartFailure {
    /// The object that NEEDs it (its real path).
    pub object: String,
    /// The SONAME it asks for.
    pub needed: String,
    /// The program or extension module whose loading fails with it (the first by path).
    pub root: String,
    /// How many programs and extension modules fail with it.
    pub roots: usize,
    /// The layer that wrote the object.
    pub layer: usize,
}

/// What a framework preloads in one packages directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PreloadSite {
    /// The framework (`PyTorch`).
    pub name: String,
    /// The packages directory.
    pub site: String,
    /// The files it loads by path, sorted.
    pub files: Vec<String>,
}

/// The start-time view of an image.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Startup {
    /// Programs and extension modules, the roots of the start-time load trees.
    pub roots: usize,
    /// Real paths of the objects loaded at start.
    #[serde(skip)]
    at_start: BTreeSet<String>,
    /// The NEEDED entries that fail at start, by object then name.
    pub failures: Vec<StartFailure>,
    /// The frameworks' preloads found in the image.
    pub preloads: Vec<PreloadSite>,
    /// Per packages directory, the names (file names and SONAMEs) that a package loaded first
    /// provides to the objects that depend on it: its own libraries and its preloads.
    #[serde(skip)]
    provided_to_dependents: BTreeMap<String, Vec<Provision>>,
}

/// The `…/site-packages` (or `dist-packages`) directory `path` lies in, the outermost one.
pub fn site_packages_of(path: &str) -> Option<&str> {
    ["/site-packages/", "/dist-packages/"]
        .iter()
        .filter_map(|marker| path.find(marker).map(|at| &path[..at + marker.len() - 1]))
        .min_by_key(|site| site.len())
}

/// A package loaded first, as its dependents see it: the names that tell a dependent (its own
/// libraries' file names and SONAMEs) and the names it provides (those and its preloads').
type Provision = (BTreeSet<String>, BTreeSet<String>);

/// Per packages directory, the files under it (relative path → absolute path).
type SiteFiles<'a> = BTreeMap<&'a str, Vec<(&'a str, &'a str)>>;

/// A preload that runs in one packages directory: its data and the files it loads.
struct ActivePreload<'a> {
    preload: &'a Preload,
    site: String,
    /// Files it loads by path (real paths).
    files: Vec<String>,
    /// The package's own libraries (real paths), loaded before a dependent's modules.
    package_libraries: Vec<String>,
    /// Their file names and SONAMEs, to tell a dependent by its NEEDED.
    package_names: BTreeSet<String>,
}

impl Startup {
    /// Works out the start-time set of `fs` with the image config's `env` and working directory.
    /// `runs_here` tells the objects built for the image's own machine; `excluded` the objects that
    /// are no root of their own (a launcher loads them with its own search path).
    pub fn build<F: FsView + ?Sized>(
        fs: &F,
        env: &[String],
        working_dir: Option<&str>,
        loading: &ImageLoading,
        runs_here: impl Fn(&str) -> bool,
        excluded: impl Fn(&str) -> bool,
    ) -> Startup {
        let host = HostLibraries::embedded();
        let loader = Loader::new(fs, LoaderEnv::from_config(env, working_dir, host), host);
        let mut roots: Vec<String> = Vec::new();
        let mut sites: SiteFiles<'_> = BTreeMap::new();
        let mut layers: HashMap<&str, usize> = HashMap::new();
        for (path, node) in fs.walk() {
            if node.kind != NodeKind::File {
                continue;
            }
            let Some(Captured::Elf(elf)) = node.captured.as_deref() else {
                continue;
            };
            if elf.kind == ElfKind::Other || !runs_here(path) {
                continue;
            }
            layers.insert(path, node.layer);
            if let Some(site) = site_packages_of(path) {
                sites
                    .entry(site)
                    .or_default()
                    .push((&path[site.len() + 1..], path));
            }
            if excluded(path) || loading.plugin(path).is_some() {
                continue;
            }
            if elf.kind == ElfKind::Executable || loading.is_extension_module(path) {
                roots.push(path.to_owned());
            }
        }
        let active = active_preloads(fs, loading, &sites);
        let mut startup = Startup {
            preloads: active
                .iter()
                .map(|active| PreloadSite {
                    name: active.preload.name.clone(),
                    site: active.site.clone(),
                    files: active.files.clone(),
                })
                .collect(),
            ..Startup::default()
        };
        for active in active.iter().filter(|a| a.preload.dependents_import_it) {
            let mut provided = active.package_names.clone();
            for file in &active.files {
                provided.insert(file.rsplit('/').next().unwrap_or(file).to_owned());
                if let Some(Captured::Elf(elf)) =
                    fs.lstat(file).and_then(|node| node.captured.as_deref())
                {
                    provided.extend(elf.soname.clone());
                }
            }
            startup
                .provided_to_dependents
                .entry(active.site.clone())
                .or_default()
                .push((active.package_names.clone(), provided));
        }
        // The preloaded files are loaded by path at start: roots of their own.
        for active in &active {
            roots.extend(active.files.iter().cloned());
        }
        roots.sort();
        roots.dedup();
        startup.roots = roots.len();
        let mut failures: BTreeMap<(String, String), (String, usize)> = BTreeMap::new();
        for root in &roots {
            let preloaded = preloaded_for(fs, root, &active);
            let Some(tree) = loader.load_tree_after(root, &preloaded) else {
                continue;
            };
            for object in &tree.objects {
                if object.loader.is_some() || object.path == *root {
                    startup.at_start.insert(object.real_path.clone());
                }
            }
            for (object, needed) in tree.unresolved() {
                if needed.name.is_empty() {
                    continue;
                }
                failures
                    .entry((object.real_path.clone(), needed.name.clone()))
                    .and_modify(|(_, count)| *count += 1)
                    .or_insert_with(|| (root.clone(), 1));
            }
        }
        startup.failures = failures
            .into_iter()
            .map(|((object, needed), (root, roots))| StartFailure {
                layer: layers.get(object.as_str()).copied().unwrap_or(0),
                object,
                needed,
                root,
                roots,
            })
            .collect();
        startup
    }

    /// Whether the object at `path` (a real path) is loaded at start.
    pub fn loaded_at_start(&self, path: &str) -> bool {
        self.at_start.contains(path)
    }

    /// Whether `needed`, a NEED of `object` whose own search does not find it, is already loaded
    /// whenever `object` is: `object` depends on a package that imports first (it NEEDs one of that
    /// package's libraries) and the package or its preload provides `needed`. A plugin that
    /// torchcodec opens after `import torch` finds torch's libraries loaded.
    pub fn provided_by_dependency(
        &self,
        fs: &(impl FsView + ?Sized),
        object: &str,
        needed: &str,
    ) -> bool {
        let Some(site) = site_packages_of(object) else {
            return false;
        };
        let Some(providers) = self.provided_to_dependents.get(site) else {
            return false;
        };
        let needs = match fs.lstat(object).and_then(|node| node.captured.as_deref()) {
            Some(Captured::Elf(elf)) => elf.needed.as_slice(),
            _ => &[],
        };
        providers.iter().any(|(package, provided)| {
            provided.contains(needed) && needs.iter().any(|name| package.contains(name))
        })
    }

    /// How many objects are loaded at start.
    pub fn objects_at_start(&self) -> usize {
        self.at_start.len()
    }
}

/// The preloads that run in the image: a packages directory holding the package (and what the
/// preload requires), with the files its globs find there.
fn active_preloads<'a, F: FsView + ?Sized>(
    fs: &F,
    loading: &'a ImageLoading,
    sites: &SiteFiles<'_>,
) -> Vec<ActivePreload<'a>> {
    let mut active = Vec::new();
    for (site, files) in sites {
        for preload in &loading.preloads {
            let present = |relative: &str| {
                fs.lstat(&format!("{site}/{relative}"))
                    .is_some_and(|node| node.kind == NodeKind::Dir)
            };
            if !preload.packages.iter().any(|package| present(package))
                || !preload.requires.iter().all(|required| present(required))
            {
                continue;
            }
            let mut loaded = Vec::new();
            let mut package_libraries = Vec::new();
            let mut package_names = BTreeSet::new();
            for (relative, path) in files {
                if preload.globs.is_match(relative) {
                    loaded.push((*path).to_owned());
                }
                if preload.package_libraries.is_match(relative) {
                    package_libraries.push((*path).to_owned());
                    package_names
                        .insert(relative.rsplit('/').next().unwrap_or(relative).to_owned());
                    if let Some(Captured::Elf(elf)) =
                        fs.lstat(path).and_then(|node| node.captured.as_deref())
                    {
                        package_names.extend(elf.soname.clone());
                    }
                }
            }
            active.push(ActivePreload {
                preload,
                site: (*site).to_owned(),
                files: loaded,
                package_libraries,
                package_names,
            });
        }
    }
    active
}

/// What is already loaded when `root` is: the preloads of its packages directory when it belongs
/// to the preloading package, and also that package's own libraries when it is a dependent (an
/// extension elsewhere that NEEDs one of them, so imports the package first).
fn preloaded_for<F: FsView + ?Sized>(
    fs: &F,
    root: &str,
    active: &[ActivePreload<'_>],
) -> Vec<String> {
    let Some(site) = site_packages_of(root) else {
        return Vec::new();
    };
    let relative = &root[site.len() + 1..];
    let needed = match fs.lstat(root).and_then(|node| node.captured.as_deref()) {
        Some(Captured::Elf(elf)) => elf.needed.as_slice(),
        _ => &[],
    };
    let mut preloaded = Vec::new();
    for active in active.iter().filter(|active| active.site == site) {
        let in_package = active.preload.packages.iter().any(|package| {
            relative
                .strip_prefix(package.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
        });
        let dependent = !in_package
            && active.preload.dependents_import_it
            && needed
                .iter()
                .any(|name| active.package_names.contains(name));
        if in_package || dependent {
            preloaded.extend(active.files.iter().cloned());
        }
        if dependent {
            preloaded.extend(active.package_libraries.iter().cloned());
        }
    }
    preloaded
}
