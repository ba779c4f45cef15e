//! The loader model: resolves every DT_NEEDED inside the merged filesystem the way glibc's ld.so does
//! (`elf/dl-load.c`, `_dl_map_object`), starting from one object and loading breadth-first as
//! `_dl_map_object_deps` does. For a name without `/`, in order:
//!
//! 1. an object already loaded under that name or SONAME;
//! 2. when the requesting object has no DT_RUNPATH: the DT_RPATH of the requesting object, then of
//!    each object in the chain that loaded it, then of the main object (each only when it has no
//!    DT_RUNPATH itself);
//! 3. `LD_LIBRARY_PATH` from the image config;
//! 4. the requesting object's own DT_RUNPATH (never its loaders');
//! 5. the ld cache as `ldconfig` would build it from `/etc/ld.so.conf` (with `include` globs relative
//!    to the including file's directory) and the trusted directories: keyed by SONAME, first
//!    directory wins, class and machine must match;
//! 6. the default directories for the object's class and machine (multiarch on Debian-family images).
//!
//! A candidate of another class or machine is skipped, as ld.so does. `$ORIGIN` is the directory the
//! object was found in (as found, not symlink-resolved, as ld.so records it; the main object's is its
//! real path); `$LIB` and `$PLATFORM` come from the machine facts. Symlinks are followed inside the
//! image through [`FsView`]. A name nothing provides but that the NVIDIA Container Toolkit injects from
//! the host (for the image's driver capabilities) counts as provided by the host.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::Serialize;

use super::facts::{Captured, ElfClass, ElfFacts, ElfKind, FsView, NodeKind};
use crate::knowledge::host_libraries::{Capabilities, HostLibraries};

/// Objects loaded for one root at most: a tree beyond this is no real program.
const MAX_OBJECTS: usize = 4096;
/// `include` nesting in ld.so.conf files.
const MAX_INCLUDE_DEPTH: usize = 16;

/// What the loader takes from the image config.
#[derive(Clone, Debug)]
pub struct LoaderEnv {
    /// `LD_LIBRARY_PATH` split on `:` and `;`, empty entries dropped.
    pub ld_library_path: Vec<String>,
    /// The container's working directory: where relative search paths point.
    pub working_dir: String,
    /// The driver capabilities a GPU container of the image gets.
    pub capabilities: Capabilities,
}

impl LoaderEnv {
    /// From the image config's `Env` (`KEY=VALUE` entries) and `WorkingDir`.
    pub fn from_config(
        env: &[String],
        working_dir: Option<&str>,
        host: &HostLibraries,
    ) -> LoaderEnv {
        let lookup = |key: &str| {
            env.iter().rev().find_map(|entry| {
                entry
                    .strip_prefix(key)
                    .and_then(|rest| rest.strip_prefix('='))
            })
        };
        LoaderEnv {
            ld_library_path: lookup("LD_LIBRARY_PATH")
                .map(|value| {
                    value
                        .split([':', ';'])
                        .filter(|dir| !dir.is_empty())
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            working_dir: working_dir
                .filter(|dir| dir.starts_with('/'))
                .unwrap_or("/")
                .to_owned(),
            capabilities: host.capabilities(lookup("NVIDIA_DRIVER_CAPABILITIES")),
        }
    }
}

/// Which search step found a library.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "step")]
pub enum Step {
    /// Already loaded under that name or SONAME.
    AlreadyLoaded,
    /// The NEEDED name holds a `/` and is opened as a path.
    Path,
    /// The DT_RPATH of `owner` (the requesting object or one of its loaders).
    Rpath {
        owner: String,
    },
    LdLibraryPath,
    Runpath,
    LdCache,
    DefaultDirectory,
}

/// How one DT_NEEDED resolves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Resolution {
    /// Found in the image: the path as found and the real file behind it.
    Found {
        path: String,
        real_path: String,
        step: Step,
    },
    /// Not in the image, injected from the host driver at run time.
    Host {
        capability: String,
    },
    Unresolved,
}

/// One DT_NEEDED of a loaded object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Needed {
    pub name: String,
    pub resolution: Resolution,
    /// Files of that name the loader looked at and passed over (another class or machine, not ELF).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

/// One object of a load tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoadedObject {
    /// The path it was found at (the root: as given).
    pub path: String,
    pub real_path: String,
    /// Index of the object whose NEEDED loaded it; `None` for the root.
    pub loader: Option<usize>,
    pub needed: Vec<Needed>,
}

/// Everything loading one object pulls in, in load order (the root first).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoadTree {
    pub objects: Vec<LoadedObject>,
}

impl LoadTree {
    /// Every NEEDED of every object that resolves nowhere, with the object that needs it.
    pub fn unresolved(&self) -> impl Iterator<Item = (&LoadedObject, &Needed)> {
        self.objects.iter().flat_map(|object| {
            object
                .needed
                .iter()
                .filter(|needed| needed.resolution == Resolution::Unresolved)
                .map(move |needed| (object, needed))
        })
    }
}

/// One ld cache entry.
#[derive(Clone, Debug, PartialEq, Eq)]
struct CacheEntry {
    class: ElfClass,
    machine: u16,
    path: String,
}

/// The loader of one image: its ld cache built once, then any number of load trees.
pub struct Loader<'a, F: FsView + ?Sized> {
    fs: &'a F,
    env: LoaderEnv,
    host: &'a HostLibraries,
    cache: BTreeMap<String, Vec<CacheEntry>>,
    /// The directories the ld cache was built from, in scan order.
    pub cache_dirs: Vec<String>,
}

/// The ELF facts of the file at `path` (after symlinks), if it is one.
fn elf_facts<'f, F: FsView + ?Sized>(fs: &'f F, path: &str) -> Option<&'f ElfFacts> {
    match fs.stat(path)?.captured.as_deref()? {
        Captured::Elf(facts) => Some(facts),
        Captured::Text(_) => None,
    }
}

fn text_of<F: FsView + ?Sized>(fs: &F, path: &str) -> Option<String> {
    match fs.stat(path)?.captured.as_deref()? {
        Captured::Text(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
        Captured::Elf(_) => None,
    }
}

/// `path` with `.`, `..` and repeated slashes removed (`..` at `/` stays at `/`).
pub fn normalize(path: &str) -> String {
    format!("/{}", crate::paths::components(path).0.join("/"))
}

fn join(dir: &str, name: &str) -> String {
    normalize(&format!("{dir}/{name}"))
}

fn parent(path: &str) -> String {
    normalize(path.rsplit_once('/').map_or("/", |(dir, _)| dir))
}

impl<'a, F: FsView + ?Sized> Loader<'a, F> {
    /// Builds the ld cache of the image in `fs`.
    pub fn new(fs: &'a F, env: LoaderEnv, host: &'a HostLibraries) -> Self {
        let mut loader = Loader {
            fs,
            env,
            host,
            cache: BTreeMap::new(),
            cache_dirs: Vec::new(),
        };
        let mut dirs = Vec::new();
        loader.read_conf("/etc/ld.so.conf", 0, &mut dirs);
        for machine in &host.machines {
            let class = if machine.class == 32 {
                ElfClass::Elf32
            } else {
                ElfClass::Elf64
            };
            dirs.extend(loader.default_dirs(class, machine.e_machine));
        }
        let mut seen = BTreeSet::new();
        dirs.retain(|dir| seen.insert(dir.clone()));
        for dir in &dirs {
            loader.scan_cache_dir(dir);
        }
        loader.cache_dirs = dirs;
        loader
    }

    /// Reads one ld.so.conf file, following `include` lines.
    fn read_conf(&self, path: &str, depth: usize, dirs: &mut Vec<String>) {
        if depth > MAX_INCLUDE_DEPTH {
            return;
        }
        let Some(text) = text_of(self.fs, path) else {
            return;
        };
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            if let Some(patterns) = line
                .strip_prefix("include")
                .filter(|rest| rest.starts_with([' ', '\t']))
            {
                for pattern in patterns.split_whitespace() {
                    let pattern = if pattern.starts_with('/') {
                        normalize(pattern)
                    } else {
                        join(&parent(path), pattern)
                    };
                    for file in self.glob(&pattern) {
                        self.read_conf(&file, depth + 1, dirs);
                    }
                }
            } else if line.starts_with("hwcap") {
                continue;
            } else {
                // Old syntax: `dir=libc5`.
                let dir = line.split('=').next().unwrap_or("").trim();
                if dir.starts_with('/') {
                    dirs.push(normalize(dir));
                }
            }
        }
    }

    /// Files matching `pattern`, a glob in its last component only, in sorted order as glob(3) gives them.
    fn glob(&self, pattern: &str) -> Vec<String> {
        let (dir, name) = pattern.rsplit_once('/').unwrap_or(("", pattern));
        let dir = if dir.is_empty() { "/" } else { dir };
        let Ok(glob) = globset::GlobBuilder::new(name)
            .literal_separator(true)
            .build()
        else {
            return Vec::new();
        };
        let matcher = glob.compile_matcher();
        self.fs
            .read_dir(dir)
            .into_iter()
            .filter(|entry| !entry.starts_with('.') && matcher.is_match(entry))
            .map(|entry| join(dir, &entry))
            .collect()
    }

    /// Adds the libraries of `dir` to the cache as ldconfig does: `lib*.so*` and `ld-*.so*` ELF shared
    /// objects, keyed by SONAME; an earlier directory wins.
    fn scan_cache_dir(&mut self, dir: &str) {
        for name in self.fs.read_dir(dir) {
            if !(name.starts_with("lib") || name.starts_with("ld-")) || !name.contains(".so") {
                continue;
            }
            let path = join(dir, &name);
            let Some(facts) = elf_facts(self.fs, &path) else {
                continue;
            };
            if facts.kind == ElfKind::Other {
                continue;
            }
            let soname = facts.soname.clone().unwrap_or_else(|| name.clone());
            // ldconfig links `dir/SONAME` to the file; the entry names that link.
            let linked = join(dir, &soname);
            let entry_path = if elf_facts(self.fs, &linked).is_some() {
                linked
            } else {
                path
            };
            let entries = self.cache.entry(soname).or_default();
            if !entries
                .iter()
                .any(|entry| entry.class == facts.class && entry.machine == facts.machine)
            {
                entries.push(CacheEntry {
                    class: facts.class,
                    machine: facts.machine,
                    path: entry_path,
                });
            }
        }
    }

    fn multiarch_triplet(&self, machine: u16) -> Option<&str> {
        let facts = self.host.machine(machine)?;
        let is_dir = |path: &str| {
            self.fs
                .stat(path)
                .is_some_and(|node| node.kind == NodeKind::Dir)
        };
        let dir_exists = is_dir(&format!("/usr/lib/{}", facts.triplet))
            || is_dir(&format!("/lib/{}", facts.triplet));
        dir_exists.then_some(facts.triplet.as_str())
    }

    /// The default directories for objects of this class and machine.
    pub fn default_dirs(&self, class: ElfClass, machine: u16) -> Vec<String> {
        match (self.multiarch_triplet(machine), class) {
            (Some(triplet), _) => vec![
                format!("/lib/{triplet}"),
                format!("/usr/lib/{triplet}"),
                "/lib".into(),
                "/usr/lib".into(),
            ],
            (None, ElfClass::Elf64) => vec!["/lib64".into(), "/usr/lib64".into()],
            (None, ElfClass::Elf32) => vec!["/lib".into(), "/usr/lib".into()],
        }
    }

    /// Expands `$ORIGIN`, `$LIB`, `$PLATFORM` (also `${…}`) in one search directory.
    fn expand(&self, dir: &str, origin: &str, facts: &ElfFacts) -> String {
        let lib = match (self.multiarch_triplet(facts.machine), facts.class) {
            (Some(triplet), _) => format!("lib/{triplet}"),
            (None, ElfClass::Elf64) => "lib64".into(),
            (None, ElfClass::Elf32) => "lib".into(),
        };
        let platform = self
            .host
            .machine(facts.machine)
            .map_or_else(String::new, |machine| machine.platform.clone());
        let mut expanded = dir.to_owned();
        for (token, value) in [
            ("ORIGIN", origin),
            ("LIB", lib.as_str()),
            ("PLATFORM", platform.as_str()),
        ] {
            expanded = expanded
                .replace(&format!("${{{token}}}"), value)
                .replace(&format!("${token}"), value);
        }
        if expanded.starts_with('/') {
            normalize(&expanded)
        } else {
            join(&self.env.working_dir, &expanded)
        }
    }

    /// Loads `root` (an executable or a library on its own) and everything it needs.
    pub fn load_tree(&self, root: &str) -> Option<LoadTree> {
        self.load(root, &[], true)
    }

    /// Loads `root` in a process that has already loaded `preloaded` (real paths, loaded by path
    /// before it, as a framework's preload does): a NEEDED that names one of them by SONAME, or by the
    /// name it was loaded under, is already satisfied. The preloaded objects follow the root in the
    /// tree, with no loader and no NEEDED of their own resolved.
    pub fn load_tree_after(&self, root: &str, preloaded: &[String]) -> Option<LoadTree> {
        self.load(root, preloaded, true)
    }

    /// How each DT_NEEDED of `root` itself resolves, exactly as in its load tree (libraries found
    /// earlier in the list count as loaded for later ones), without loading their own dependencies.
    pub fn direct_needs(&self, root: &str) -> Option<Vec<Needed>> {
        let mut tree = self.load(root, &[], false)?;
        Some(std::mem::take(&mut tree.objects[0].needed))
    }

    /// The load tree of `root` after `preloaded`; with `follow` false only the root's own NEEDED are
    /// resolved.
    fn load(&self, root: &str, preloaded: &[String], follow: bool) -> Option<LoadTree> {
        let root = normalize(root);
        let facts = elf_facts(self.fs, &root)?;
        let real = self.fs.canonicalize(&root).unwrap_or_else(|_| root.clone());
        // Per object: its facts, $ORIGIN and the names it was requested by.
        let mut state: Vec<(&ElfFacts, String, Vec<String>)> =
            vec![(facts, parent(&real), Vec::new())];
        let mut objects = vec![LoadedObject {
            path: root,
            real_path: real,
            loader: None,
            needed: Vec::new(),
        }];
        for path in preloaded {
            let Some(facts) = elf_facts(self.fs, path) else {
                continue;
            };
            if objects.iter().any(|object| &object.real_path == path) {
                continue;
            }
            state.push((facts, parent(path), vec![path.clone()]));
            objects.push(LoadedObject {
                path: path.clone(),
                real_path: path.clone(),
                loader: None,
                needed: Vec::new(),
            });
        }
        let mut queue = VecDeque::from([0usize]);
        while let Some(index) = queue.pop_front() {
            let requester = state[index].0;
            let mut needed = Vec::new();
            for name in &requester.needed {
                let mut skipped = Vec::new();
                let resolution = match self.already_loaded(name, &state, &objects) {
                    Some(found) => Resolution::Found {
                        path: objects[found].path.clone(),
                        real_path: objects[found].real_path.clone(),
                        step: Step::AlreadyLoaded,
                    },
                    None => self.search(name, index, &state, &objects, requester, &mut skipped),
                };
                if let Resolution::Found {
                    path,
                    real_path,
                    step,
                } = &resolution
                {
                    if *step != Step::AlreadyLoaded {
                        match objects
                            .iter()
                            .position(|object| &object.real_path == real_path)
                        {
                            Some(same) => state[same].2.push(name.clone()),
                            None if objects.len() < MAX_OBJECTS => {
                                let facts =
                                    elf_facts(self.fs, real_path).expect("checked by search");
                                state.push((facts, parent(path), vec![name.clone()]));
                                objects.push(LoadedObject {
                                    path: path.clone(),
                                    real_path: real_path.clone(),
                                    loader: Some(index),
                                    needed: Vec::new(),
                                });
                                if follow {
                                    queue.push_back(objects.len() - 1);
                                }
                            }
                            None => {}
                        }
                    }
                }
                needed.push(Needed {
                    name: name.clone(),
                    resolution,
                    skipped,
                });
            }
            objects[index].needed = needed;
        }
        Some(LoadTree { objects })
    }

    fn already_loaded(
        &self,
        name: &str,
        state: &[(&ElfFacts, String, Vec<String>)],
        objects: &[LoadedObject],
    ) -> Option<usize> {
        state
            .iter()
            .zip(objects)
            .position(|((facts, _, names), object)| {
                facts.soname.as_deref() == Some(name)
                    || names.iter().any(|n| n == name)
                    || object.path == name
            })
    }

    /// Searches for `name` on behalf of object `index`.
    fn search(
        &self,
        name: &str,
        index: usize,
        state: &[(&ElfFacts, String, Vec<String>)],
        objects: &[LoadedObject],
        requester: &ElfFacts,
        skipped: &mut Vec<String>,
    ) -> Resolution {
        if name.contains('/') {
            let path = if name.starts_with('/') {
                normalize(name)
            } else {
                join(&self.env.working_dir, name)
            };
            return self.try_path(&path, requester, skipped).map_or(
                Resolution::Unresolved,
                |real| Resolution::Found {
                    path,
                    real_path: real,
                    step: Step::Path,
                },
            );
        }
        let mut steps: Vec<(Step, Vec<String>)> = Vec::new();
        if requester.runpath.is_empty() {
            let mut chain = Some(index);
            while let Some(at) = chain {
                let facts = state[at].0;
                if facts.runpath.is_empty() && !facts.rpath.is_empty() {
                    let dirs = facts
                        .rpath
                        .iter()
                        .map(|dir| self.expand(dir, &state[at].1, facts))
                        .collect();
                    steps.push((
                        Step::Rpath {
                            owner: objects[at].path.clone(),
                        },
                        dirs,
                    ));
                }
                chain = objects[at].loader;
            }
        }
        steps.push((
            Step::LdLibraryPath,
            self.env
                .ld_library_path
                .iter()
                .map(|dir| self.expand(dir, "", requester))
                .collect(),
        ));
        let origin = &state[index].1;
        steps.push((
            Step::Runpath,
            requester
                .runpath
                .iter()
                .map(|dir| self.expand(dir, origin, requester))
                .collect(),
        ));
        for (step, dirs) in steps {
            for dir in dirs {
                let path = join(&dir, name);
                if let Some(real) = self.try_path(&path, requester, skipped) {
                    return Resolution::Found {
                        path,
                        real_path: real,
                        step,
                    };
                }
            }
        }
        if let Some(entry) = self.cache.get(name).and_then(|entries| {
            entries
                .iter()
                .find(|entry| entry.class == requester.class && entry.machine == requester.machine)
        }) {
            if let Some(real) = self.try_path(&entry.path, requester, skipped) {
                return Resolution::Found {
                    path: entry.path.clone(),
                    real_path: real,
                    step: Step::LdCache,
                };
            }
        }
        for dir in self.default_dirs(requester.class, requester.machine) {
            let path = join(&dir, name);
            if let Some(real) = self.try_path(&path, requester, skipped) {
                return Resolution::Found {
                    path,
                    real_path: real,
                    step: Step::DefaultDirectory,
                };
            }
        }
        match self.host.group_of(name) {
            Some(group) if self.host.provides(name, &self.env.capabilities) => Resolution::Host {
                capability: group.capability.clone(),
            },
            _ => Resolution::Unresolved,
        }
    }

    /// The real path of `path` when it is an ELF object the requester can load; files passed over are
    /// noted in `skipped`.
    fn try_path(
        &self,
        path: &str,
        requester: &ElfFacts,
        skipped: &mut Vec<String>,
    ) -> Option<String> {
        let real = self.fs.canonicalize(path).ok()?;
        let node = self.fs.lstat(&real)?;
        if node.kind != NodeKind::File {
            return None;
        }
        match elf_facts(self.fs, &real) {
            Some(facts)
                if facts.class == requester.class
                    && facts.machine == requester.machine
                    && facts.kind != ElfKind::Other =>
            {
                Some(real)
            }
            _ => {
                skipped.push(path.to_owned());
                None
            }
        }
    }
}
