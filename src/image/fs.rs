//! The merged filesystem: layers applied in manifest order, with OCI whiteouts (`.wh.<name>`, opaque
//! `.wh..wh..opq`), hard links, symlinks resolved inside the image root only, and a directory replaced
//! by a file or the other way round. Every path knows the layer that wrote its current version; every
//! file version a later layer overwrote or deleted is kept as a [`DeadCopy`], so wasted bytes are
//! counted once per dead copy (a file written in three layers wastes two copies, not three).
//!
//! Memory: a path is stored once, as its full text in one shared arena (for `walk` and error messages),
//! with its name interned (each distinct name's text once, in a second arena, found through a table of
//! ids); children are found through one map keyed by (parent, name), so half a million files cost tens
//! of megabytes, not a `String` and a map per directory.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::OnceLock;

use serde::Serialize;

use super::facts::{FsView, Node, NodeKind, ResolveError};
use super::layer::{Change, LayerEntry};

/// Linux's limit on symbolic links followed in one lookup (ELOOP past it).
const MAX_SYMLINKS: usize = 40;
const ROOT: u32 = 0;

/// A file version that a later layer overwrote or deleted: its bytes are still shipped in its layer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeadCopy {
    pub path: String,
    pub size: u64,
    /// The layer that added these bytes.
    pub layer: usize,
    /// The layer that overwrote or deleted them.
    pub by_layer: usize,
    /// Deleted (a whiteout) rather than overwritten.
    pub deleted: bool,
}

/// Bytes and files per layer, as applied.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LayerUsage {
    pub files_added: u64,
    pub bytes_added: u64,
    /// Bytes this layer added that a later layer overwrote or deleted (or this layer wrote twice).
    pub bytes_wasted: u64,
    pub paths_deleted: u64,
}

struct Slot {
    name: u32,
    parent: u32,
    live: bool,
    /// Whether this node's size is its own bytes (false for a hard link to an earlier path).
    owns_bytes: bool,
    path_start: u32,
    path_len: u32,
    children: Vec<u32>,
    node: Node,
}

/// The merged filesystem of an image; build it with [`MergedFs::apply`] layer by layer.
pub struct MergedFs {
    names: Names,
    slots: Vec<Slot>,
    child: HashMap<(u32, u32), u32>,
    path_text: String,
    usage: Vec<LayerUsage>,
    dead: Vec<DeadCopy>,
    sorted: OnceLock<Vec<u32>>,
}

impl Default for MergedFs {
    fn default() -> Self {
        Self::new()
    }
}

impl MergedFs {
    pub fn new() -> Self {
        let root = Slot {
            name: 0,
            parent: ROOT,
            live: true,
            owns_bytes: false,
            path_start: 0,
            path_len: 1,
            children: Vec::new(),
            node: Node {
                kind: NodeKind::Dir,
                size: 0,
                mode: 0o755,
                layer: 0,
                captured: None,
            },
        };
        MergedFs {
            names: Names::new(),
            slots: vec![root],
            child: HashMap::new(),
            path_text: "/".into(),
            usage: Vec::new(),
            dead: Vec::new(),
            sorted: OnceLock::new(),
        }
    }

    /// Per layer, in manifest order, what it added and what of it was wasted.
    pub fn usage(&self) -> &[LayerUsage] {
        &self.usage
    }

    /// Every file version shipped but not visible in the merged filesystem.
    pub fn dead_copies(&self) -> &[DeadCopy] {
        &self.dead
    }

    /// Every live regular file with whether it owns its bytes (false for a hard link to an earlier
    /// path, whose bytes are counted once, at the path that owns them), sorted by path.
    pub fn files_with_ownership(&self) -> impl Iterator<Item = (&str, &Node, bool)> + '_ {
        self.sorted_slots().iter().filter_map(|&slot| {
            let entry = &self.slots[slot as usize];
            (entry.node.kind == NodeKind::File)
                .then(|| (self.path_of(slot), &entry.node, entry.owns_bytes))
        })
    }

    /// Live paths (files, directories, links), the root excluded.
    pub fn len(&self) -> usize {
        self.slots.iter().skip(1).filter(|slot| slot.live).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Applies layer `layer` (they must come in manifest order, from 0).
    pub fn apply(&mut self, layer: usize, entries: &[LayerEntry]) {
        while self.usage.len() <= layer {
            self.usage.push(LayerUsage::default());
        }
        self.sorted = OnceLock::new();
        for entry in entries {
            self.apply_entry(layer, entry);
        }
    }

    fn apply_entry(&mut self, layer: usize, entry: &LayerEntry) {
        let (parent_path, name) = match entry.path.rsplit_once('/') {
            Some((parent, name)) => (parent, name),
            None => ("", entry.path.as_str()),
        };
        if name.is_empty() {
            // The root itself: only an opaque marker at the root means anything.
            if entry.change == Change::OpaqueDir {
                self.hide_earlier_children(ROOT, layer);
            }
            return;
        }
        let parent = self.make_dirs(parent_path, layer);
        let name_id = self.intern(name);
        let existing = self.child.get(&(parent, name_id)).copied();
        match &entry.change {
            Change::Whiteout => {
                if let Some(slot) = existing {
                    self.remove(slot, layer, true);
                    self.usage[layer].paths_deleted += 1;
                }
            }
            Change::OpaqueDir => match existing {
                Some(slot) if self.slots[slot as usize].node.kind == NodeKind::Dir => {
                    self.hide_earlier_children(slot, layer);
                }
                _ => {
                    if let Some(slot) = existing {
                        self.remove(slot, layer, true);
                    }
                    self.insert(parent, name_id, dir_node(layer, 0o755), false);
                }
            },
            Change::Dir => match existing {
                Some(slot) if self.slots[slot as usize].node.kind == NodeKind::Dir => {
                    let node = &mut self.slots[slot as usize].node;
                    node.mode = entry.mode;
                    node.layer = layer;
                }
                _ => {
                    if let Some(slot) = existing {
                        self.remove(slot, layer, false);
                    }
                    self.insert(parent, name_id, dir_node(layer, entry.mode), false);
                }
            },
            change => {
                let (node, owns_bytes) = self.node_for(layer, entry.mode, change);
                if let Some(slot) = existing {
                    self.remove(slot, layer, false);
                }
                if owns_bytes {
                    self.usage[layer].files_added += 1;
                    self.usage[layer].bytes_added += node.size;
                }
                self.insert(parent, name_id, node, owns_bytes);
            }
        }
    }

    /// The node a file, symlink, hard link or device entry becomes, and whether it owns its bytes.
    fn node_for(&self, layer: usize, mode: u32, change: &Change) -> (Node, bool) {
        let mut node = Node {
            kind: NodeKind::Other,
            size: 0,
            mode,
            layer,
            captured: None,
        };
        match change {
            Change::File { size, captured } => {
                node.kind = NodeKind::File;
                node.size = *size;
                node.captured = captured.clone();
                return (node, true);
            }
            Change::Symlink(target) => node.kind = NodeKind::Symlink(target.clone()),
            Change::Hardlink(target) => {
                // A hard link shares its target's bytes and facts; a link to nothing is listed as Other.
                if let Some(target) = self
                    .resolve(target, false)
                    .ok()
                    .map(|slot| &self.slots[slot as usize].node)
                {
                    if target.kind == NodeKind::File {
                        node.kind = NodeKind::File;
                        node.size = target.size;
                        node.captured = target.captured.clone();
                    }
                }
            }
            _ => {}
        }
        (node, false)
    }

    /// The directory at `path` (absolute, normalised, "" for the root), created where missing, with
    /// symlinked components followed inside the root and a non-directory in the way replaced.
    fn make_dirs(&mut self, path: &str, layer: usize) -> u32 {
        let mut current = ROOT;
        for part in path.split('/').filter(|part| !part.is_empty()) {
            let name_id = self.intern(part);
            current = match self.child.get(&(current, name_id)).copied() {
                None => self.insert(current, name_id, dir_node(layer, 0o755), false),
                Some(slot) => match &self.slots[slot as usize].node.kind {
                    NodeKind::Dir => slot,
                    NodeKind::Symlink(_) => {
                        let here = self.path_of(slot).to_string();
                        match self.resolve(&here, true) {
                            Ok(real) if self.slots[real as usize].node.kind == NodeKind::Dir => {
                                real
                            }
                            _ => {
                                self.remove(slot, layer, false);
                                self.insert(current, name_id, dir_node(layer, 0o755), false)
                            }
                        }
                    }
                    _ => {
                        self.remove(slot, layer, false);
                        self.insert(current, name_id, dir_node(layer, 0o755), false)
                    }
                },
            };
        }
        current
    }

    fn intern(&mut self, name: &str) -> u32 {
        self.names.intern(name)
    }

    fn insert(&mut self, parent: u32, name: u32, node: Node, owns_bytes: bool) -> u32 {
        let id = self.slots.len() as u32;
        let path_start = self.path_text.len() as u32;
        let parent_path = self.path_of(parent);
        let parent_text = if parent == ROOT {
            String::new()
        } else {
            parent_path.to_string()
        };
        self.path_text.push_str(&parent_text);
        self.path_text.push('/');
        self.path_text.push_str(self.names.text(name));
        let path_len = self.path_text.len() as u32 - path_start;
        self.slots.push(Slot {
            name,
            parent,
            live: true,
            owns_bytes,
            path_start,
            path_len,
            children: Vec::new(),
            node,
        });
        self.child.insert((parent, name), id);
        self.slots[parent as usize].children.push(id);
        id
    }

    /// Removes `slot` and everything under it, recording each file version as a dead copy.
    fn remove(&mut self, slot: u32, by_layer: usize, deleted: bool) {
        let (parent, name) = (
            self.slots[slot as usize].parent,
            self.slots[slot as usize].name,
        );
        self.child.remove(&(parent, name));
        self.slots[parent as usize]
            .children
            .retain(|&child| child != slot);
        let mut stack = vec![slot];
        while let Some(current) = stack.pop() {
            let entry = &mut self.slots[current as usize];
            entry.live = false;
            let children = std::mem::take(&mut entry.children);
            let (owns, size, layer) = (entry.owns_bytes, entry.node.size, entry.node.layer);
            if owns && size > 0 {
                self.usage[layer].bytes_wasted += size;
                self.dead.push(DeadCopy {
                    path: self.path_of(current).to_string(),
                    size,
                    layer,
                    by_layer,
                    deleted,
                });
            }
            for &child in &children {
                let name = self.slots[child as usize].name;
                self.child.remove(&(current, name));
            }
            stack.extend(children);
        }
    }

    /// An opaque directory: what earlier layers put under `dir` is hidden; what this layer already
    /// wrote there (entries may come before the marker) stays.
    fn hide_earlier_children(&mut self, dir: u32, layer: usize) {
        for child in self.slots[dir as usize].children.clone() {
            let node = &self.slots[child as usize].node;
            if node.layer < layer {
                self.remove(child, layer, true);
            } else if node.kind == NodeKind::Dir {
                self.hide_earlier_children(child, layer);
            }
        }
    }

    fn path_of(&self, slot: u32) -> &str {
        let slot = &self.slots[slot as usize];
        &self.path_text[slot.path_start as usize..(slot.path_start + slot.path_len) as usize]
    }

    fn lookup(&self, dir: u32, name: &str) -> Option<u32> {
        let name = self.names.find(name)?;
        self.child.get(&(dir, name)).copied()
    }

    /// The slot at `path`, following symlinks inside the root (the final one only if `follow_last`).
    fn resolve(&self, path: &str, follow_last: bool) -> Result<u32, ResolveError> {
        let mut pending: Vec<String> = path
            .split('/')
            .filter(|part| !part.is_empty() && *part != ".")
            .rev()
            .map(str::to_string)
            .collect();
        let mut current = ROOT;
        let mut links = 0;
        while let Some(part) = pending.pop() {
            if part == "." {
                continue;
            }
            if part == ".." {
                current = self.slots[current as usize].parent;
                continue;
            }
            if self.slots[current as usize].node.kind != NodeKind::Dir {
                return Err(ResolveError::NotADirectory(path.to_string()));
            }
            let Some(next) = self.lookup(current, &part) else {
                return Err(ResolveError::NotFound(path.to_string()));
            };
            if let NodeKind::Symlink(target) = &self.slots[next as usize].node.kind {
                if !pending.is_empty() || follow_last {
                    links += 1;
                    if links > MAX_SYMLINKS {
                        return Err(ResolveError::Loop(path.to_string()));
                    }
                    if target.starts_with('/') {
                        current = ROOT;
                    }
                    pending.extend(
                        target
                            .split('/')
                            .filter(|part| !part.is_empty())
                            .rev()
                            .map(str::to_string),
                    );
                    continue;
                }
            }
            current = next;
        }
        Ok(current)
    }

    fn sorted_slots(&self) -> &[u32] {
        self.sorted.get_or_init(|| {
            let mut live: Vec<u32> = (1..self.slots.len() as u32)
                .filter(|&slot| self.slots[slot as usize].live)
                .collect();
            live.sort_unstable_by(|&a, &b| self.path_of(a).cmp(self.path_of(b)));
            live
        })
    }
}

/// Every distinct path component once: the texts end to end in one arena, each id's span into it,
/// and a table of ids found by the text's hash (a map keyed by `Box<str>` would hold each name twice,
/// with two allocations, at half a million names some 35 MB more). Id 0 is the root's empty name.
struct Names {
    text: String,
    spans: Vec<(u32, u32)>,
    ids: hashbrown::HashTable<u32>,
    hasher: RandomState,
}

impl Names {
    fn new() -> Names {
        let mut names = Names {
            text: String::new(),
            spans: Vec::new(),
            ids: hashbrown::HashTable::new(),
            hasher: RandomState::new(),
        };
        names.intern("");
        names
    }

    fn text(&self, id: u32) -> &str {
        let (start, len) = self.spans[id as usize];
        &self.text[start as usize..(start + len) as usize]
    }

    fn find(&self, name: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(name);
        self.ids.find(hash, |&id| self.text(id) == name).copied()
    }

    fn intern(&mut self, name: &str) -> u32 {
        let hash = self.hasher.hash_one(name);
        let Names {
            text,
            spans,
            ids,
            hasher,
        } = self;
        let span_text = |id: u32| {
            let (start, len) = spans[id as usize];
            &text[start as usize..(start + len) as usize]
        };
        if let Some(&id) = ids.find(hash, |&id| span_text(id) == name) {
            return id;
        }
        let id = spans.len() as u32;
        spans.push((text.len() as u32, name.len() as u32));
        text.push_str(name);
        let spans = &*spans;
        let text = &*text;
        ids.insert_unique(hash, id, |&id| {
            let (start, len) = spans[id as usize];
            hasher.hash_one(&text[start as usize..(start + len) as usize])
        });
        id
    }
}

fn dir_node(layer: usize, mode: u32) -> Node {
    Node {
        kind: NodeKind::Dir,
        size: 0,
        mode,
        layer,
        captured: None,
    }
}

impl FsView for MergedFs {
    fn lstat(&self, path: &str) -> Option<&Node> {
        self.resolve(path, false)
            .ok()
            .map(|slot| &self.slots[slot as usize].node)
    }

    fn canonicalize(&self, path: &str) -> Result<String, ResolveError> {
        self.resolve(path, true)
            .map(|slot| self.path_of(slot).to_string())
    }

    fn read_dir(&self, dir: &str) -> Vec<String> {
        let Ok(slot) = self.resolve(dir, true) else {
            return Vec::new();
        };
        let mut names: Vec<String> = self.slots[slot as usize]
            .children
            .iter()
            .map(|&child| self.names.text(self.slots[child as usize].name).to_string())
            .collect();
        names.sort();
        names
    }

    fn walk(&self) -> Box<dyn Iterator<Item = (&str, &Node)> + '_> {
        Box::new(
            self.sorted_slots()
                .iter()
                .map(|&slot| (self.path_of(slot), &self.slots[slot as usize].node)),
        )
    }
}
