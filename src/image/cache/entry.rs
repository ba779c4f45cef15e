//! One entry file of the layer cache: a header that proves the file whole (magic, format version,
//! payload length, SHA-256 of the payload) and the payload, the layer's facts encoded with
//! `postcard` in the record types below (see `super` for why these and not the fact types).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{BlobLocation, FORMAT_VERSION, MAGIC};
use crate::image::facts::{Captured, ElfClass, ElfFacts, ElfKind, GpuCode, UnreadString};
use crate::image::layer::{Change, LayerContents, LayerEntry};

/// The header's length: magic, version (u32 LE), payload length (u64 LE), SHA-256 of the payload.
pub(super) const HEADER_LEN: usize = MAGIC.len() + 4 + 8 + 32;

/// An entry's payload is this header, then `entries` records one after another (so neither writing
/// nor reading holds a second list of the layer's entries). The facts are in the cache's own record
/// types, so the encoding never depends on how the fact types serialize for JSON (postcard is not
/// self-describing: a field that JSON skips when empty would shift every byte after it).
#[derive(Serialize, Deserialize)]
pub(super) struct EntryHeader {
    pub(super) diff_id: String,
    pub(super) tar_size: u64,
    pub(super) clamped_names: Vec<String>,
    entries: u64,
    /// Where the layer was read or served from, oldest first.
    pub(super) seen: Vec<BlobLocation>,
}

#[derive(Serialize, Deserialize)]
struct ChangeRecord {
    path: String,
    mode: u32,
    change: ChangeKind,
}

#[derive(Serialize, Deserialize)]
enum ChangeKind {
    File {
        size: u64,
        /// Boxed: most files capture nothing, and an ELF record is large (serde encodes a box as
        /// its content, so the format is the same).
        captured: Option<Box<CapturedRecord>>,
    },
    Dir,
    Symlink(String),
    Hardlink(String),
    Other,
    Whiteout,
    OpaqueDir,
}

#[derive(Serialize, Deserialize)]
enum CapturedRecord {
    Elf(ElfRecord),
    Text(Vec<u8>),
}

#[derive(Serialize, Deserialize)]
struct ElfRecord {
    class: ElfClass,
    machine: u16,
    kind: ElfKind,
    soname: Option<String>,
    needed: Vec<String>,
    rpath: Vec<String>,
    runpath: Vec<String>,
    interpreter: Option<String>,
    build_id: Option<String>,
    unread: Vec<UnreadString>,
    gpu_code: Option<GpuCode>,
}

impl ChangeRecord {
    fn from_entry(entry: &LayerEntry) -> ChangeRecord {
        let change = match &entry.change {
            Change::File { size, captured } => ChangeKind::File {
                size: *size,
                captured: captured.as_deref().map(|captured| {
                    Box::new(match captured {
                        Captured::Elf(facts) => CapturedRecord::Elf(ElfRecord::from_facts(facts)),
                        Captured::Text(text) => CapturedRecord::Text(text.clone()),
                    })
                }),
            },
            Change::Dir => ChangeKind::Dir,
            Change::Symlink(target) => ChangeKind::Symlink(target.clone()),
            Change::Hardlink(target) => ChangeKind::Hardlink(target.clone()),
            Change::Other => ChangeKind::Other,
            Change::Whiteout => ChangeKind::Whiteout,
            Change::OpaqueDir => ChangeKind::OpaqueDir,
        };
        ChangeRecord {
            path: entry.path.clone(),
            mode: entry.mode,
            change,
        }
    }

    fn into_entry(self) -> LayerEntry {
        let change = match self.change {
            ChangeKind::File { size, captured } => Change::File {
                size,
                captured: captured.map(|captured| {
                    Arc::new(match *captured {
                        CapturedRecord::Elf(record) => Captured::Elf(record.into_facts()),
                        CapturedRecord::Text(text) => Captured::Text(text),
                    })
                }),
            },
            ChangeKind::Dir => Change::Dir,
            ChangeKind::Symlink(target) => Change::Symlink(target),
            ChangeKind::Hardlink(target) => Change::Hardlink(target),
            ChangeKind::Other => Change::Other,
            ChangeKind::Whiteout => Change::Whiteout,
            ChangeKind::OpaqueDir => Change::OpaqueDir,
        };
        LayerEntry {
            path: self.path,
            mode: self.mode,
            change,
        }
    }
}

impl ElfRecord {
    fn from_facts(facts: &ElfFacts) -> ElfRecord {
        // Destructured whole: a field added to ElfFacts fails to compile here until it is cached.
        let ElfFacts {
            class,
            machine,
            kind,
            soname,
            needed,
            rpath,
            runpath,
            interpreter,
            build_id,
            unread,
            gpu_code,
        } = facts.clone();
        ElfRecord {
            class,
            machine,
            kind,
            soname,
            needed,
            rpath,
            runpath,
            interpreter,
            build_id,
            unread,
            gpu_code,
        }
    }

    fn into_facts(self) -> ElfFacts {
        let ElfRecord {
            class,
            machine,
            kind,
            soname,
            needed,
            rpath,
            runpath,
            interpreter,
            build_id,
            unread,
            gpu_code,
        } = self;
        ElfFacts {
            class,
            machine,
            kind,
            soname,
            needed,
            rpath,
            runpath,
            interpreter,
            build_id,
            unread,
            gpu_code,
        }
    }
}

/// The payload of `layer`'s entry, which remembers the places `seen`.
pub(super) fn encode(layer: &LayerContents, seen: Vec<BlobLocation>) -> postcard::Result<Vec<u8>> {
    let header = EntryHeader {
        diff_id: layer.diff_id.clone(),
        tar_size: layer.tar_size,
        clamped_names: layer.clamped_names.clone(),
        entries: layer.entries.len() as u64,
        seen,
    };
    layer
        .entries
        .iter()
        .try_fold(postcard::to_stdvec(&header)?, |payload, entry| {
            postcard::to_extend(&ChangeRecord::from_entry(entry), payload)
        })
}

/// The header of an entry whose payload is `payload`.
pub(super) fn header(payload: &[u8]) -> Vec<u8> {
    let mut header = Vec::with_capacity(HEADER_LEN);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    header.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    header.extend_from_slice(&Sha256::digest(payload));
    header
}

/// The entry in `bytes` when every check passes and it is the entry of `diff_id`: its header, its
/// entries, and where in the payload its records start.
pub(super) fn decode(bytes: &[u8], diff_id: &str) -> Option<(EntryHeader, Vec<LayerEntry>, usize)> {
    let (header, payload) = bytes.split_at_checked(HEADER_LEN)?;
    let (magic, rest) = header.split_at(MAGIC.len());
    let (version, rest) = rest.split_at(4);
    let (length, checksum) = rest.split_at(8);
    let length_ok = u64::from_le_bytes(length.try_into().ok()?) == payload.len() as u64;
    let intact = magic == MAGIC
        && u32::from_le_bytes(version.try_into().ok()?) == FORMAT_VERSION
        && length_ok
        && Sha256::digest(payload).as_slice() == checksum;
    if !intact {
        return None;
    }
    let (header, mut rest) = postcard::take_from_bytes::<EntryHeader>(payload).ok()?;
    if header.diff_id != diff_id {
        return None;
    }
    let records = payload.len() - rest.len();
    // Every record takes bytes: a count beyond them is damage, not a reason to allocate.
    let mut entries = Vec::with_capacity(usize::try_from(header.entries).ok()?.min(rest.len()));
    for _ in 0..header.entries {
        let (record, tail) = postcard::take_from_bytes::<ChangeRecord>(rest).ok()?;
        entries.push(record.into_entry());
        rest = tail;
    }
    rest.is_empty().then_some((header, entries, records))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::layer::Compression;

    #[test]
    fn decode_refuses_every_kind_of_damage() {
        let payload = encode(
            &LayerContents {
                entries: vec![LayerEntry {
                    path: "/a".into(),
                    mode: 0o644,
                    change: Change::File {
                        size: 1,
                        captured: Some(Arc::new(Captured::Text(b"x".to_vec()))),
                    },
                }],
                blob_digest: "sha256:00".into(),
                diff_id: "sha256:00".into(),
                compression: Compression::None,
                blob_size: 1024,
                tar_size: 1024,
                clamped_names: Vec::new(),
            },
            Vec::new(),
        )
        .unwrap();
        let mut bytes = header(&payload);
        bytes.extend(&payload);
        let (header, entries, _) = decode(&bytes, "sha256:00").unwrap();
        assert_eq!((header.tar_size, entries.len()), (1024, 1));
        assert!(
            decode(&bytes, "sha256:01").is_none(),
            "another layer's entry"
        );
        assert!(decode(&bytes[..bytes.len() - 1], "sha256:00").is_none());
        assert!(decode(&bytes[..10], "sha256:00").is_none());
        for at in [
            0,
            MAGIC.len(),
            MAGIC.len() + 4,
            HEADER_LEN - 1,
            bytes.len() - 1,
        ] {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x40;
            assert!(decode(&damaged, "sha256:00").is_none(), "byte {at} flipped");
        }
    }
}
