//! The contract between the layer reader and the fact extractors: what is kept of each file while its
//! bytes stream past, and the read-only view of the merged filesystem that the loader model, the
//! inventory and the image rules work on. Sources and the merged filesystem produce these types; the
//! readers of facts consume them and never see a tar entry or a layer blob.

use std::io::{self, Read};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use super::fatbin::GpuCode;

/// ELF file class: which default library directories and which ld cache entries apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ElfClass {
    Elf32,
    Elf64,
}

/// What kind of ELF object a file is (from `e_type` and `PT_INTERP`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ElfKind {
    /// `ET_DYN` without an interpreter: a shared library.
    SharedObject,
    /// `ET_EXEC`, or `ET_DYN` with `PT_INTERP` (a position-independent executable).
    Executable,
    /// Relocatable objects, core files and the like: nothing the loader opens.
    Other,
}

/// The dynamic-linking facts of one ELF file, read from its headers and dynamic section only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ElfFacts {
    pub class: ElfClass,
    /// `e_machine` (62 = x86-64, 183 = AArch64): a library of another machine never satisfies a NEEDED.
    pub machine: u16,
    pub kind: ElfKind,
    pub soname: Option<String>,
    /// DT_NEEDED entries, in order.
    pub needed: Vec<String>,
    /// DT_RPATH split on `:`, unexpanded (`$ORIGIN` kept as written).
    pub rpath: Vec<String>,
    /// DT_RUNPATH split on `:`, unexpanded.
    pub runpath: Vec<String>,
    /// PT_INTERP, for executables.
    pub interpreter: Option<String>,
    /// The GNU build ID (lowercase hex): two files with the same one are the same build, whatever
    /// their names and SONAMEs (auditwheel renames copies and their SONAMEs; the build ID stays).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_id: Option<String>,
    /// Strings of the dynamic section that a forward-only pass could not keep (a huge library whose
    /// string table lies far before `.dynamic` and holds an unusual name). Their places above hold
    /// nothing (`needed` holds `""` at the entry's index) until `elf::complete` reads them in a second,
    /// targeted pass; empty for nearly every file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<UnreadString>,
    /// The GPU code of its fatbins (`fatbin.rs`); `None` when it carries no fatbin container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_code: Option<GpuCode>,
}

/// Which dynamic-section string an [`UnreadString`] stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DynString {
    /// The DT_NEEDED entry at this index of `needed`.
    Needed(usize),
    Soname,
    Rpath,
    Runpath,
}

/// A dynamic-section string not yet read: where it is in the file and what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct UnreadString {
    pub field: DynString,
    /// Offset of its first byte from the start of the file.
    pub offset: u64,
}

/// What the content probe kept of one regular file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Captured {
    Elf(ElfFacts),
    /// A small text file the rules read whole (bounded by the probe's size limit).
    Text(Vec<u8>),
}

/// The kind of one path in the merged filesystem. Hard links are resolved when the layer is read: the
/// link becomes a `File` sharing its target's size and captured facts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NodeKind {
    File,
    Dir,
    /// A symbolic link and its target as written in the layer.
    Symlink(String),
    /// Device nodes, FIFOs: listed, never read.
    Other,
}

/// One path of the merged filesystem as the last layer that touched it left it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub kind: NodeKind,
    pub size: u64,
    pub mode: u32,
    /// Index (in manifest order, from 0) of the layer that wrote this version of the path.
    pub layer: usize,
    pub captured: Option<Arc<Captured>>,
}

/// Why a path could not be resolved inside the image root.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("{0}: no such file in the image")]
    NotFound(String),
    #[error("{0}: too many levels of symbolic links (a loop?)")]
    Loop(String),
    #[error("{0}: a path component is not a directory")]
    NotADirectory(String),
}

/// The read-only view of the merged filesystem. Paths are absolute and normalised (`/usr/lib/x.so`);
/// symlinks resolve inside the image root only (`..` at `/` stays at `/`, absolute targets start at
/// the image root), so nothing on the host is ever consulted.
pub trait FsView {
    /// The node at `path` without following a final symlink (symlinked parent directories are followed).
    fn lstat(&self, path: &str) -> Option<&Node>;
    /// `path` with every symlink followed inside the image root; at most 40 links, as Linux's ELOOP.
    fn canonicalize(&self, path: &str) -> Result<String, ResolveError>;
    /// The node at `path` after following symlinks.
    fn stat(&self, path: &str) -> Option<&Node> {
        self.canonicalize(path)
            .ok()
            .and_then(|real| self.lstat(&real))
    }
    /// The names in directory `dir` (after following symlinks to it), sorted; empty when it is none.
    fn read_dir(&self, dir: &str) -> Vec<String>;
    /// Every path with its node, sorted by path, for whole-image scans.
    fn walk(&self) -> Box<dyn Iterator<Item = (&str, &Node)> + '_>;
}

/// A file's bytes as a layer hands them over: read forwards, and skip ahead cheaply where the source
/// can seek (a directory, an uncompressed tar); a compressed stream skips by decoding and discarding.
pub trait FileBytes: Read {
    /// The file's size in bytes.
    fn size(&self) -> u64;
    /// Bytes consumed so far from the start of the file.
    fn position(&self) -> u64;
    /// Advance to `offset` (never backwards; an offset behind the position is an error).
    fn skip_to(&mut self, offset: u64) -> io::Result<()>;
    /// Go back to the start of the file for a second pass; `Ok(false)` where the source cannot (a
    /// compressed stream), and the position is then unchanged.
    fn rewind(&mut self) -> io::Result<bool> {
        Ok(false)
    }
    /// Whether skipping and rewinding cost no reading (a file on disk, or a range of one): then a
    /// second, targeted look at a few byte ranges is cheaper than watching every byte go past.
    fn random_access(&self) -> bool {
        false
    }
}
