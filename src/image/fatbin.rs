//! Reads the GPU code an ELF object carries (its fatbins) while the object streams past, from headers
//! only: which SASS architectures (`sm_80`, `sm_90a`), which PTX virtual architectures and PTX ISA
//! versions, and how each entry is compressed. The rules that judge an image against a fleet of GPUs
//! and a driver (CU230–CU233) read nothing else.
//!
//! # Where the code is, and how it is found while streaming
//!
//! nvcc puts fatbin containers back to back in `.nv_fatbin` (relocatable device code in
//! `__nv_relfatbin`), in a loaded segment (read-only, or executable in older layouts); some libraries
//! keep more elsewhere (cuFFT 12: one container in `.nv_fatbin`, 29,342 in its writable `.ldata`).
//! CUPTI and `libcheckpoint` embed a few in `.rodata` and load them themselves. How the containers are
//! found depends on what reading costs:
//!
//! - **A stream** (a member of a compressed layer): the section table sits at the end of the file,
//!   where a forward-only reader cannot ask it anything in time. [`Tap`] wraps the file the ELF reader
//!   reads: once the program headers are known, every byte of a `PT_LOAD` segment that goes past (read
//!   by the ELF reader, or skipped by it, which on a stream decodes it anyway for the layer's digest)
//!   is shown to a [`Scanner`].
//! - **Random access** (a file of an unpacked root filesystem, a member of an uncompressed layer):
//!   skipping costs nothing, so the ELF reader asks the section table, and only the sections a
//!   container can lie in ([`may_hold_containers`]: loaded data, not code, not the linker's own
//!   tables) are searched, with [`scan_file`]. A 1 GB `libtorch_cuda.so` is then its headers, its
//!   `.rodata` and the entry headers of `.nv_fatbin`, not its 700 MB of `.text`.
//!
//! Either way the [`Scanner`] looks for the container magic at 8-byte aligned offsets; inside a
//! container it reads each entry's header and skips its payload. Memory stays at one entry header.
//!
//! # The layouts (little-endian), as public descriptions give them
//!
//! NVIDIA's `fatbinary_section.h`, as quoted in vosen/ZLUDA@3e1a9963:cuda_types/src/dark_api.rs, and
//! jiegec/fatbinary@048d907d:fatbinary/src/lib.rs:
//!
//! - container: `u32 magic 0xBA55ED50, u16 version 1, u16 header size, u64 size of the entries`;
//! - entry: `u16 kind (1 PTX, 2 ELF cubin), u16 version 0x0101, u32 header size, u64 payload size
//!   (padded to 8), u32 compressed size, …, u16 minor @24, u16 major @26 (the PTX ISA version of a PTX
//!   entry), u32 arch @28, …, u64 flags @40`; the payload starts at the entry plus its header size
//!   (64, 80, 96 and 112 are all seen: it is always read from the header) and the next entry follows it.
//! - flags: `0x2000` LZ4, `0x8000` ZSTD (both in ZLUDA's `FatbinFileHeaderFlags`); `0x10_0000` an
//!   arch-specific target (`sm_90a`) and `0x20_0000` a family target (`sm_100f`), read from nvcc 13.0's
//!   output and checked against `cuobjdump --list-elf` / `--list-ptx`, which name a family cubin by its
//!   plain architecture (`sm_100`) and a family PTX with its suffix (`sm_120f`). This reader names
//!   them the same way.
//!
//! Malformed input never panics and never allocates by a size it read: a container that does not
//! parse is counted as damaged and the search goes on after it.

use std::collections::BTreeMap;
use std::io::{self, Read};

use memchr::memmem;

use serde::{Deserialize, Serialize};

use super::facts::FileBytes;

/// The first four bytes of a fatbin container.
pub const CONTAINER_MAGIC: u32 = 0xBA55_ED50;
const CONTAINER_VERSION: u16 = 1;
/// The container header: magic, version, header size, size of what follows.
const CONTAINER_HEADER: usize = 16;
/// The part of an entry header this reader needs; the rest (options, names) is skipped.
const ENTRY_BASE: usize = 64;
/// The entry header version every nvcc since CUDA 4 writes (ZLUDA checks for it).
const ENTRY_VERSION: u16 = 0x0101;
/// Header sizes beyond this are no real container or entry (the largest seen is 112).
const MAX_HEADER: u64 = 4096;
/// Containers and entries start on 8-byte boundaries (`.nv_fatbin` is 8-aligned, payloads are padded).
const ALIGN: u64 = 8;
/// Distinct (kind, architecture, compression, version) rows kept for one object.
const MAX_ROWS: usize = 4096;
/// Bytes read at a time while a segment is searched for containers.
const CHUNK: usize = 256 * 1024;
/// Bytes of a cubin's start read for the toolkit that built it (its `.note.nv.tkinfo` follows the
/// string and symbol tables, which grow with the number of kernels).
const CUBIN_HEAD: u64 = 256 * 1024;
/// Cubins of one object whose start is read before the reader gives up on naming its toolkit.
const CUBIN_TRIES: u32 = 4;
/// The text ptxas writes into every cubin's `.note.nv.tkinfo` note, before `<major>.<minor>, V…`: the
/// same line `nvcc --version` prints (`Cuda compilation tools, release 13.5, V13.5.37`), read with
/// `readelf -n` from cubins of ptxas 13.5.37.
const TOOLKIT_MARKER: &[u8] = b"Cuda compilation tools, release ";

/// Loaded, non-executable sections that compilers and linkers fill with their own structures (unwind
/// tables, pointers to relocate, the wrappers that point at `.nv_fatbin`), never with a container; a
/// name ending in `.*` stands for every section it starts.
const NOT_CONTAINERS: &[&str] = &[
    ".interp",
    ".eh_frame",
    ".eh_frame_hdr",
    ".gcc_except_table",
    ".got",
    ".got.plt",
    ".init_array",
    ".fini_array",
    ".preinit_array",
    ".ctors",
    ".dtors",
    ".tdata",
    ".data.rel.ro",
    ".data.rel.ro.*",
    ".nvFatBinSegment",
    ".stapsdt.base",
];

/// Whether a loaded, non-executable section (`SHT_PROGBITS`, `SHF_ALLOC`, not `SHF_EXECINSTR`: the
/// caller checks those) of this name may hold fatbin containers: every one but [`NOT_CONTAINERS`], so
/// that `.nv_fatbin`, `__nv_relfatbin`, cuFFT's `.ldata` and CUPTI's `.rodata` are all searched.
pub fn may_hold_containers(name: &[u8]) -> bool {
    !NOT_CONTAINERS
        .iter()
        .any(|pattern| match pattern.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix.as_bytes()),
            None => name == pattern.as_bytes(),
        })
}

const KIND_PTX: u16 = 1;
const KIND_ELF: u16 = 2;
const FLAG_LZ4: u64 = 0x2000;
const FLAG_ZSTD: u64 = 0x8000;
const FLAG_ARCH_SPECIFIC: u64 = 0x10_0000;
const FLAG_FAMILY: u64 = 0x20_0000;

/// What one fatbin entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum CodeKind {
    /// A cubin: machine code for one real architecture.
    Sass,
    /// PTX: virtual-architecture code the driver compiles at load time.
    Ptx,
    /// Anything else (LTO IR, old cubins): listed, never run by the driver as is.
    Other(u16),
}

/// The target suffix of an entry: `sm_90a` runs only on 9.0; `sm_100f` on the 10.x family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Variant {
    Plain,
    ArchSpecific,
    Family,
}

/// How an entry's payload is stored; a compressed one needs a driver that can decompress it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum CodeCompression {
    None,
    Lz4,
    Zstd,
}

impl CodeCompression {
    pub fn name(self) -> &'static str {
        match self {
            CodeCompression::None => "none",
            CodeCompression::Lz4 => "lz4",
            CodeCompression::Zstd => "zstd",
        }
    }
}

/// Entries of one object that agree in everything this reader keeps, and how many there are.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeRow {
    pub kind: CodeKind,
    /// `major * 10 + minor` of the target (80, 90, 120).
    pub arch: u32,
    pub variant: Variant,
    pub compression: CodeCompression,
    /// For PTX, the PTX ISA version (major, minor) it is written in.
    pub ptx_isa: Option<(u16, u16)>,
    pub count: u64,
    /// Their size once decompressed (the payload size where an entry is not compressed).
    pub bytes: u64,
}

/// The GPU code of one ELF object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuCode {
    pub rows: Vec<CodeRow>,
    pub containers: u64,
    /// Containers whose entries did not parse to their end (what was read before is kept).
    pub damaged: u64,
    /// The CUDA release (major, minor) whose ptxas built the cubins, from the first cubin whose
    /// start names it (LZ4-compressed cubins are not read).
    #[serde(default)]
    pub toolkit: Option<(u16, u16)>,
}

impl GpuCode {
    fn names(&self, kind: CodeKind) -> Vec<String> {
        let mut names: Vec<(u32, Variant)> = self
            .rows
            .iter()
            .filter(|row| row.kind == kind)
            .map(|row| match (kind, row.variant) {
                // cuobjdump names a family cubin by its architecture: it runs where that SASS runs.
                (CodeKind::Sass, Variant::Family) => (row.arch, Variant::Plain),
                _ => (row.arch, row.variant),
            })
            .collect();
        names.sort_unstable();
        names.dedup();
        names
            .into_iter()
            .map(|(arch, variant)| arch_name(arch, variant))
            .collect()
    }

    /// The SASS targets, as `cuobjdump --list-elf` names them (`sm_80`, `sm_90a`), by architecture.
    pub fn sass(&self) -> Vec<String> {
        self.names(CodeKind::Sass)
    }

    /// The PTX targets, as `cuobjdump --list-ptx` names them (`sm_90`, `sm_120f`), by architecture.
    pub fn ptx(&self) -> Vec<String> {
        self.names(CodeKind::Ptx)
    }

    /// The PTX ISA versions of the PTX entries (`9.0`), lowest first.
    pub fn ptx_isa(&self) -> Vec<(u16, u16)> {
        let mut versions: Vec<(u16, u16)> =
            self.rows.iter().filter_map(|row| row.ptx_isa).collect();
        versions.sort_unstable();
        versions.dedup();
        versions
    }

    /// Entries per compression, in the order none, LZ4, ZSTD (zero counts left out).
    pub fn compression(&self) -> Vec<(CodeCompression, u64)> {
        let mut counts: BTreeMap<CodeCompression, u64> = BTreeMap::new();
        for row in &self.rows {
            *counts.entry(row.compression).or_default() += row.count;
        }
        counts.into_iter().collect()
    }

    /// Number of entries of a kind.
    pub fn count(&self, kind: CodeKind) -> u64 {
        self.rows
            .iter()
            .filter(|row| row.kind == kind)
            .map(|row| row.count)
            .sum()
    }

    /// Whether the object carries any SASS or PTX.
    pub fn is_empty(&self) -> bool {
        self.count(CodeKind::Sass) + self.count(CodeKind::Ptx) == 0
    }
}

/// `sm_90`, `sm_90a`, `sm_120f`.
pub fn arch_name(arch: u32, variant: Variant) -> String {
    let suffix = match variant {
        Variant::Plain => "",
        Variant::ArchSpecific => "a",
        Variant::Family => "f",
    };
    format!("sm_{arch}{suffix}")
}

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

fn align_up(offset: u64) -> u64 {
    offset.saturating_add(ALIGN - 1) / ALIGN * ALIGN
}

/// What the scanner waits for next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Every byte of the watched ranges from this (aligned) offset on: looking for a container.
    Search { from: u64 },
    /// The header of a possible container at `at`.
    Container { at: u64 },
    /// The entry header at `at`, in the container that starts at `container` and ends at `end`;
    /// `first` while the container is not yet believed (its first entry proves it).
    Entry {
        at: u64,
        container: u64,
        end: u64,
        first: bool,
    },
    /// The first `len` bytes of a cubin's payload at `at` (compressed as `compression`), read for the
    /// toolkit that built it; the next entry is at `next`.
    Payload {
        at: u64,
        len: u64,
        compression: CodeCompression,
        next: u64,
        container: u64,
        end: u64,
    },
}

type RowKey = (CodeKind, u32, Variant, CodeCompression, Option<(u16, u16)>);

/// The push parser: shown the bytes of the watched ranges in file order (some of them skipped over
/// when it says it does not need them), it keeps the inventory of the containers it finds.
#[derive(Debug)]
pub struct Scanner {
    /// Loaded segments as `[start, end)` file offsets, sorted.
    ranges: Vec<(u64, u64)>,
    state: State,
    /// The bytes of the header being collected (at most `MAX_HEADER`... in practice 80).
    pending: Vec<u8>,
    rows: BTreeMap<RowKey, (u64, u64)>,
    containers: u64,
    damaged: u64,
    toolkit: Option<(u16, u16)>,
    /// Cubin starts read so far for the toolkit.
    cubins_read: u32,
}

impl Scanner {
    /// A scanner for the given `[start, end)` ranges of a file of `size` bytes.
    pub fn new(mut ranges: Vec<(u64, u64)>, size: u64) -> Scanner {
        ranges.retain_mut(|(start, end)| {
            *end = (*end).min(size);
            start < end
        });
        ranges.sort_unstable();
        // Segments may share a page: merge what overlaps or touches.
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
        for (start, end) in ranges {
            match merged.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        let ranges = merged;
        let from = ranges
            .first()
            .map_or(u64::MAX, |&(start, _)| align_up(start));
        Scanner {
            ranges,
            state: State::Search { from },
            pending: Vec::new(),
            rows: BTreeMap::new(),
            containers: 0,
            damaged: 0,
            toolkit: None,
            cubins_read: 0,
        }
    }

    /// The end of the watched range holding `offset`, if any.
    fn range_end(&self, offset: u64) -> Option<u64> {
        self.ranges
            .iter()
            .find(|&&(start, end)| start <= offset && offset < end)
            .map(|&(_, end)| end)
    }

    /// The bytes of the structure being collected: `(start, length)`. A container not yet believed
    /// is collected whole up to its first entry header, so that when it proves false its bytes can be
    /// searched again: the scanner finds the same whatever pieces the bytes arrive in.
    fn wanted_header(&self) -> Option<(u64, u64)> {
        match self.state {
            State::Search { .. } => None,
            State::Container { at } => Some((at, CONTAINER_HEADER as u64)),
            State::Entry {
                at,
                container,
                first: true,
                ..
            } => Some((container, at - container + ENTRY_BASE as u64)),
            State::Entry { at, .. } => Some((at, ENTRY_BASE as u64)),
            State::Payload { at, len, .. } => Some((at, len)),
        }
    }

    /// A candidate container at `start` proved false: search its `bytes` again from `start + 8`.
    fn replay(&mut self, start: u64, bytes: &[u8]) {
        self.state = State::Search {
            from: start + ALIGN,
        };
        self.pending.clear();
        self.feed(start, bytes);
    }

    /// The next byte range within `[from, to)` the scanner needs to see, if any.
    pub fn wanted(&self, from: u64, to: u64) -> Option<(u64, u64)> {
        let (start, end) = match self.state {
            State::Search { from: search } => {
                let start = search.max(from);
                let &(range_start, range_end) =
                    self.ranges.iter().find(|&&(_, end)| end > start)?;
                (start.max(range_start), range_end)
            }
            _ => {
                let (at, len) = self.wanted_header()?;
                (at + self.pending.len() as u64, at + len)
            }
        };
        let (start, end) = (start.max(from), end.min(to));
        (start < end).then_some((start, end))
    }

    /// Shows the scanner `bytes`, which sit at file offset `offset`.
    pub fn feed(&mut self, offset: u64, bytes: &[u8]) {
        let end = offset + bytes.len() as u64;
        let mut at = offset;
        while at < end {
            match self.state {
                State::Search { from } => {
                    // Bytes before `offset` were shown earlier or never: search what is here.
                    let from = if from < offset {
                        align_up(offset)
                    } else {
                        from
                    };
                    match self.search(from, offset, bytes) {
                        Some(found) => {
                            self.state = State::Container { at: found };
                            self.pending.clear();
                            at = found;
                        }
                        None => {
                            self.state = State::Search {
                                from: align_up(end).max(from),
                            };
                            return;
                        }
                    }
                }
                _ => {
                    let Some((start, len)) = self.wanted_header() else {
                        return;
                    };
                    let next = start + self.pending.len() as u64;
                    if next < at {
                        // Bytes of this header went past unseen: the structure is lost.
                        self.lost(at);
                        continue;
                    }
                    if next >= end {
                        return;
                    }
                    let take = (start + len).min(end) - next;
                    let from = (next - offset) as usize;
                    self.pending
                        .extend_from_slice(&bytes[from..from + take as usize]);
                    at = next + take;
                    if self.pending.len() as u64 == len {
                        self.header_complete();
                    }
                }
            }
        }
    }

    /// The first aligned offset ≥ `from` inside a watched range where `bytes` (at `offset`) hold the
    /// container magic, or where it may start and `bytes` end (the header check decides).
    fn search(&self, from: u64, offset: u64, bytes: &[u8]) -> Option<u64> {
        let magic = CONTAINER_MAGIC.to_le_bytes();
        let end = offset + bytes.len() as u64;
        let mut candidate = from;
        while candidate < end {
            let Some(range_end) = self.range_end(candidate) else {
                // Jump to the next watched range.
                let &(next, _) = self.ranges.iter().find(|&&(start, _)| start > candidate)?;
                candidate = align_up(next);
                continue;
            };
            let stop = range_end.min(end);
            // Whole magics that start before `stop`, found by memmem, the first aligned one wins.
            let mut position = candidate;
            let haystack_end = (stop + 3).min(end);
            while position < stop {
                let index = (position - offset) as usize;
                let window = &bytes[index..(haystack_end - offset) as usize];
                let Some(found) = memmem::find(window, &magic) else {
                    break;
                };
                let at = position + found as u64;
                if at.is_multiple_of(ALIGN) {
                    return Some(at);
                }
                position = align_up(at + 1);
            }
            if stop == end {
                // A magic may start in the last three bytes and go on in the next piece.
                let tail = align_up(candidate.max(end.saturating_sub(3)));
                return (tail < end).then_some(tail);
            }
            candidate = align_up(range_end);
        }
        None
    }

    /// The structure being collected went past unseen, or did not parse as part of a container.
    fn lost(&mut self, at: u64) {
        self.state = match self.state {
            State::Entry {
                end, first: false, ..
            } => {
                self.damaged += 1;
                State::Search {
                    from: align_up(end),
                }
            }
            State::Entry { container, .. } | State::Container { at: container } => State::Search {
                from: align_up((container + ALIGN).max(at)),
            },
            // A cubin start that went past unseen names no toolkit; the entries go on after it.
            State::Payload {
                next,
                container,
                end,
                ..
            } => Self::after_entry(next, container, end),
            search => search,
        };
        self.pending.clear();
    }

    /// The state after an entry that ends at `next`, in the container `[container, end)`.
    fn after_entry(next: u64, container: u64, end: u64) -> State {
        if next >= end {
            State::Search {
                from: align_up(end),
            }
        } else {
            State::Entry {
                at: next,
                container,
                end,
                first: false,
            }
        }
    }

    fn header_complete(&mut self) {
        let header = std::mem::take(&mut self.pending);
        match self.state {
            State::Container { at } => {
                let magic = u32_at(&header, 0);
                let version = u16_at(&header, 4);
                let header_size = u64::from(u16_at(&header, 6));
                let size = u64_at(&header, 8);
                let end = at
                    .checked_add(header_size)
                    .and_then(|entries| entries.checked_add(size));
                let fits =
                    end.is_some_and(|end| self.range_end(at).is_some_and(|last| end <= last));
                if magic != CONTAINER_MAGIC
                    || version != CONTAINER_VERSION
                    || !(CONTAINER_HEADER as u64..=MAX_HEADER).contains(&header_size)
                    || !fits
                {
                    self.replay(at, &header);
                    return;
                }
                let end = end.unwrap_or(at);
                if size == 0 {
                    self.containers += 1;
                    self.state = State::Search {
                        from: align_up(end),
                    };
                } else {
                    self.state = State::Entry {
                        at: at + header_size,
                        container: at,
                        end,
                        first: true,
                    };
                    self.pending = header;
                }
            }
            State::Entry {
                at,
                container,
                end,
                first,
            } => {
                let candidate = header;
                let header = if first {
                    &candidate[(at - container) as usize..]
                } else {
                    &candidate[..]
                };
                let kind = u16_at(header, 0);
                let version = u16_at(header, 2);
                let header_size = u64::from(u32_at(header, 4));
                let payload = u64_at(header, 8);
                let next = at
                    .checked_add(header_size)
                    .and_then(|start| start.checked_add(payload))
                    .filter(|next| *next <= end);
                let valid = (ENTRY_BASE as u64..=MAX_HEADER).contains(&header_size)
                    && (!first
                        || (version == ENTRY_VERSION && matches!(kind, KIND_PTX | KIND_ELF)));
                let Some(next) = next.filter(|_| valid) else {
                    if first {
                        self.replay(container, &candidate);
                    } else {
                        self.damaged += 1;
                        self.state = State::Search {
                            from: align_up(end),
                        };
                    }
                    return;
                };
                if first {
                    self.containers += 1;
                }
                let compression = self.record(header);
                let payload_start = at + header_size;
                let on_disk = match (compression, u64::from(u32_at(header, 16))) {
                    (CodeCompression::None, _) | (_, 0) => payload,
                    (_, compressed) => compressed.min(payload),
                };
                self.state = if u16_at(header, 0) == KIND_ELF
                    && self.toolkit.is_none()
                    && self.cubins_read < CUBIN_TRIES
                    && compression != CodeCompression::Lz4
                    && on_disk > 0
                {
                    self.cubins_read += 1;
                    State::Payload {
                        at: payload_start,
                        len: on_disk.min(CUBIN_HEAD),
                        compression,
                        next,
                        container,
                        end,
                    }
                } else {
                    Self::after_entry(next, container, end)
                };
            }
            State::Payload {
                compression,
                next,
                container,
                end,
                ..
            } => {
                self.toolkit = cubin_toolkit(&header, compression);
                self.state = Self::after_entry(next, container, end);
            }
            State::Search { .. } => {}
        }
    }

    /// Counts the entry whose header is `header`; returns how its payload is compressed.
    fn record(&mut self, header: &[u8]) -> CodeCompression {
        let kind = match u16_at(header, 0) {
            KIND_PTX => CodeKind::Ptx,
            KIND_ELF => CodeKind::Sass,
            other => CodeKind::Other(other),
        };
        let flags = u64_at(header, 40);
        let variant = if flags & FLAG_ARCH_SPECIFIC != 0 {
            Variant::ArchSpecific
        } else if flags & FLAG_FAMILY != 0 {
            Variant::Family
        } else {
            Variant::Plain
        };
        let compression = if flags & FLAG_ZSTD != 0 {
            CodeCompression::Zstd
        } else if flags & FLAG_LZ4 != 0 {
            CodeCompression::Lz4
        } else {
            CodeCompression::None
        };
        let ptx_isa = (kind == CodeKind::Ptx).then(|| (u16_at(header, 26), u16_at(header, 24)));
        let key = (kind, u32_at(header, 28), variant, compression, ptx_isa);
        let bytes = match (compression, u64_at(header, 56)) {
            (CodeCompression::None, _) | (_, 0) => u64_at(header, 8),
            (_, uncompressed) => uncompressed,
        };
        if self.rows.len() < MAX_ROWS || self.rows.contains_key(&key) {
            let (count, total) = self.rows.entry(key).or_default();
            *count += 1;
            *total = total.saturating_add(bytes);
        }
        compression
    }

    /// The end of the last watched range: where a final pass stops.
    pub fn last_end(&self) -> u64 {
        self.ranges.last().map_or(0, |&(_, end)| end)
    }

    /// What was found; `None` when the object holds no container.
    pub fn finish(self) -> Option<GpuCode> {
        let mut damaged = self.damaged;
        if matches!(
            self.state,
            State::Entry { first: false, .. } | State::Payload { .. }
        ) {
            damaged += 1;
        }
        (self.containers > 0).then(|| GpuCode {
            rows: self
                .rows
                .into_iter()
                .map(
                    |((kind, arch, variant, compression, ptx_isa), (count, bytes))| CodeRow {
                        kind,
                        arch,
                        variant,
                        compression,
                        ptx_isa,
                        count,
                        bytes,
                    },
                )
                .collect(),
            containers: self.containers,
            damaged,
            toolkit: self.toolkit,
        })
    }
}

/// The CUDA release named by the toolkit note at the start of a cubin payload, decompressing a
/// ZSTD payload as far as its first bytes go (a truncated frame yields what it decoded).
fn cubin_toolkit(payload: &[u8], compression: CodeCompression) -> Option<(u16, u16)> {
    match compression {
        CodeCompression::None => toolkit_in(payload),
        CodeCompression::Zstd => {
            let mut decoder = zstd::stream::read::Decoder::new(payload).ok()?;
            let mut head = vec![0u8; CUBIN_HEAD as usize];
            let mut filled = 0;
            while filled < head.len() {
                match decoder.read(&mut head[filled..]) {
                    Ok(0) | Err(_) => break,
                    Ok(read) => filled += read,
                }
            }
            toolkit_in(&head[..filled])
        }
        CodeCompression::Lz4 => None,
    }
}

/// `(13, 5)` from `…Cuda compilation tools, release 13.5, V13.5.37…`.
fn toolkit_in(bytes: &[u8]) -> Option<(u16, u16)> {
    let at = memmem::find(bytes, TOOLKIT_MARKER)? + TOOLKIT_MARKER.len();
    let rest = &bytes[at..bytes.len().min(at + 16)];
    let text = std::str::from_utf8(rest.split(|&b| b == b',').next()?).ok()?;
    let (major, minor) = text.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// Reads `[from, to)` of a whole in-memory object for the containers in `ranges` (the fuzz target and
/// tests use it; the layer reader goes through [`Tap`]).
pub fn scan_bytes(bytes: &[u8], ranges: Vec<(u64, u64)>) -> Option<GpuCode> {
    let mut scanner = Scanner::new(ranges, bytes.len() as u64);
    let mut position = 0;
    while let Some((start, end)) = scanner.wanted(position, bytes.len() as u64) {
        let end = end.min(start + CHUNK as u64);
        scanner.feed(start, &bytes[start as usize..end as usize]);
        position = end;
    }
    scanner.finish()
}

/// Searches `ranges` of a file that can be read in any order (see [`FileBytes::random_access`]) for
/// containers: from the start of the first range on, skipping what the scanner does not need. Rewinds
/// first where the file is already past it; `None` when it cannot, or when there is no container.
pub fn scan_file(file: &mut dyn FileBytes, ranges: Vec<(u64, u64)>) -> io::Result<Option<GpuCode>> {
    let Some((first, _)) = Scanner::new(ranges.clone(), file.size()).wanted(0, file.size()) else {
        return Ok(None);
    };
    if first < file.position() && !file.rewind()? {
        return Ok(None);
    }
    // The tap's skip reads what the scanner wants on the way: skipping to the end is the search.
    let mut tap = Tap::new(file);
    tap.watch(ranges);
    tap.finish()
}

/// The file the ELF reader reads, with a [`Scanner`] looking over its shoulder once
/// [`Tap::watch`] has named the ranges to scan: the bytes the reader reads are shown to the scanner,
/// and a skip over bytes the scanner needs becomes a read of those bytes.
pub struct Tap<'a> {
    file: &'a mut dyn FileBytes,
    scanner: Option<Scanner>,
    chunk: Vec<u8>,
}

impl<'a> Tap<'a> {
    pub fn new(file: &'a mut dyn FileBytes) -> Tap<'a> {
        Tap {
            file,
            scanner: None,
            chunk: Vec::new(),
        }
    }

    /// Starts scanning the `[start, end)` ranges (the loaded segments).
    pub fn watch(&mut self, ranges: Vec<(u64, u64)>) {
        let scanner = Scanner::new(ranges, self.file.size());
        if scanner.last_end() > self.file.position() {
            self.scanner = Some(scanner);
        }
    }

    /// Scans what is left of the watched ranges and returns what was found.
    pub fn finish(&mut self) -> io::Result<Option<GpuCode>> {
        let Some(end) = self.scanner.as_ref().map(Scanner::last_end) else {
            return Ok(None);
        };
        if end > self.file.position() {
            self.skip_to(end)?;
        }
        Ok(self.scanner.take().and_then(Scanner::finish))
    }
}

impl Read for Tap<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let offset = self.file.position();
        let read = self.file.read(buf)?;
        if let Some(scanner) = &mut self.scanner {
            scanner.feed(offset, &buf[..read]);
        }
        Ok(read)
    }
}

impl FileBytes for Tap<'_> {
    fn size(&self) -> u64 {
        self.file.size()
    }

    fn position(&self) -> u64 {
        self.file.position()
    }

    fn skip_to(&mut self, offset: u64) -> io::Result<()> {
        while let Some((start, end)) = self
            .scanner
            .as_ref()
            .and_then(|scanner| scanner.wanted(self.file.position(), offset))
        {
            self.file.skip_to(start)?;
            let len = (end - start).min(CHUNK as u64) as usize;
            self.chunk.resize(len, 0);
            self.file.read_exact(&mut self.chunk[..len])?;
            if let Some(scanner) = &mut self.scanner {
                scanner.feed(start, &self.chunk[..len]);
            }
        }
        self.file.skip_to(offset)
    }

    fn rewind(&mut self) -> io::Result<bool> {
        // A second pass reads strings, not GPU code: the scanner has seen what it will see.
        self.scanner = None;
        self.file.rewind()
    }

    fn random_access(&self) -> bool {
        self.file.random_access()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(
        kind: u16,
        arch: u32,
        flags: u64,
        header: u32,
        payload: &[u8],
        isa: (u16, u16),
    ) -> Vec<u8> {
        let padded = payload.len().div_ceil(8) * 8;
        let mut bytes = vec![0u8; header as usize];
        bytes[0..2].copy_from_slice(&kind.to_le_bytes());
        bytes[2..4].copy_from_slice(&ENTRY_VERSION.to_le_bytes());
        bytes[4..8].copy_from_slice(&header.to_le_bytes());
        bytes[8..16].copy_from_slice(&(padded as u64).to_le_bytes());
        bytes[24..26].copy_from_slice(&isa.1.to_le_bytes());
        bytes[26..28].copy_from_slice(&isa.0.to_le_bytes());
        bytes[28..32].copy_from_slice(&arch.to_le_bytes());
        bytes[40..48].copy_from_slice(&flags.to_le_bytes());
        bytes.extend_from_slice(payload);
        bytes.resize(header as usize + padded, 0);
        bytes
    }

    fn container(entries: &[Vec<u8>]) -> Vec<u8> {
        let body: Vec<u8> = entries.concat();
        let mut bytes = CONTAINER_MAGIC.to_le_bytes().to_vec();
        bytes.extend_from_slice(&1u16.to_le_bytes());
        bytes.extend_from_slice(&16u16.to_le_bytes());
        bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
        bytes.extend(body);
        bytes
    }

    /// A cubin payload as ptxas writes it: an ELF start, tables, then the toolkit note's text.
    fn cubin(release: &str, tables: usize) -> Vec<u8> {
        let mut bytes = b"\x7fELF".to_vec();
        bytes.resize(tables, 0x11);
        bytes.extend_from_slice(b"ptxas\0Cuda compilation tools, release ");
        bytes.extend_from_slice(release.as_bytes());
        bytes.extend_from_slice(b", V13.5.37\0Build cuda_13.5\0");
        bytes
    }

    #[test]
    fn the_toolkit_is_read_from_a_plain_or_zstd_cubin_start_and_not_from_lz4() {
        let plain = cubin("13.5", 900);
        let zstd_payload = zstd::encode_all(&plain[..], 3).unwrap();
        let mut zstd_entry = entry(KIND_ELF, 90, FLAG_ZSTD, 64, &zstd_payload, (1, 8));
        zstd_entry[16..20].copy_from_slice(&(zstd_payload.len() as u32).to_le_bytes());
        for (entries, expected) in [
            (
                vec![entry(KIND_ELF, 80, 0, 64, &plain, (1, 8))],
                Some((13, 5)),
            ),
            (vec![zstd_entry.clone()], Some((13, 5))),
            (
                vec![entry(KIND_ELF, 80, FLAG_LZ4, 64, &plain, (1, 8))],
                None,
            ),
            // PTX names its ISA, not the toolkit that built it.
            (vec![entry(KIND_PTX, 80, 0, 64, &plain, (9, 0))], None),
            // A cubin start without the note, then one with it: the tries go on.
            (
                vec![
                    entry(KIND_ELF, 80, 0, 64, b"\x7fELF no note here", (1, 8)),
                    entry(KIND_ELF, 90, 0, 64, &cubin("12.9", 64), (1, 8)),
                ],
                Some((12, 9)),
            ),
        ] {
            let mut file = vec![0u8; 64];
            file.extend(container(&entries));
            let len = file.len() as u64;
            let code = scan_bytes(&file, vec![(0, len)]).expect("a container");
            assert_eq!(code.toolkit, expected, "{entries:?}");
            assert_eq!(code.damaged, 0);
        }
    }

    #[test]
    fn a_cubin_whose_note_lies_past_the_head_names_no_toolkit() {
        let far = cubin("13.5", CUBIN_HEAD as usize + 10);
        let mut file = container(&[entry(KIND_ELF, 80, 0, 64, &far, (1, 8))]);
        file.extend([0u8; 8]);
        let len = file.len() as u64;
        let code = scan_bytes(&file, vec![(0, len)]).expect("a container");
        assert_eq!(code.toolkit, None);
        assert_eq!(code.count(CodeKind::Sass), 1);
    }

    #[test]
    fn names_variants_compression_and_isa_as_cuobjdump_does() {
        let mut file = vec![0xAAu8; 64];
        file.extend(container(&[
            entry(2, 80, 0x11, 64, b"cubin", (1, 8)),
            entry(2, 90, 0x10_0011, 64, b"cubin", (1, 8)),
            entry(2, 100, 0x120_0011, 112, b"cubin", (1, 8)),
            entry(1, 120, 0x20_8011, 80, b"ptx", (9, 0)),
        ]));
        file.extend(container(&[entry(1, 90, 0x2011, 80, b"ptx", (8, 7))]));
        file.extend([0u8; 40]);
        let code = scan_bytes(&file, vec![(0, file.len() as u64)]).unwrap();
        assert_eq!(code.sass(), ["sm_80", "sm_90a", "sm_100"]);
        assert_eq!(code.ptx(), ["sm_90", "sm_120f"]);
        assert_eq!(code.ptx_isa(), [(8, 7), (9, 0)]);
        assert_eq!(
            code.compression(),
            [
                (CodeCompression::None, 3),
                (CodeCompression::Lz4, 1),
                (CodeCompression::Zstd, 1)
            ]
        );
        assert_eq!((code.containers, code.damaged), (2, 0));
    }

    #[test]
    fn only_watched_ranges_are_searched_and_a_truncated_container_is_damaged() {
        let one = container(&[entry(2, 75, 0x11, 64, b"x", (1, 8))]);
        let mut file = one.clone();
        file.extend(&one);
        assert_eq!(
            scan_bytes(&file, vec![(one.len() as u64, file.len() as u64)])
                .unwrap()
                .containers,
            1
        );
        assert!(scan_bytes(&file, vec![(4, 8)]).is_none());
        // A container whose size runs past its segment is no container.
        assert!(scan_bytes(&file[..one.len() - 8], vec![(0, one.len() as u64 - 8)]).is_none());
        // A second entry whose payload runs past the container's end: the first is kept.
        let mut broken = container(&[
            entry(2, 75, 0x11, 64, b"x", (1, 8)),
            entry(2, 80, 0x11, 64, b"y", (1, 8)),
        ]);
        broken[16 + 72 + 8..16 + 72 + 16].copy_from_slice(&u64::MAX.to_le_bytes());
        let code = scan_bytes(&broken, vec![(0, broken.len() as u64)]).unwrap();
        assert_eq!((code.sass(), code.damaged), (vec!["sm_75".to_owned()], 1));
    }
}
