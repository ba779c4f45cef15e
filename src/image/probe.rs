//! The content probe: called once for every regular file as its layer streams past, it decides what
//! of the file to keep (ELF dynamic-linking facts, small text files the rules read) and reads only
//! those bytes. Everything else is skipped, so a 1 GiB `libtorch_cuda.so` costs a few header reads.

use std::io::{self, Read};

use super::elf;
use super::facts::{Captured, FileBytes};

/// Text files larger than this are never kept whole (a METADATA or ld.so.conf is a few KiB).
pub const MAX_TEXT_BYTES: u64 = 256 * 1024;

/// Whether the rules read the file at `path` whole (ld.so configuration, CUDA and Python version files).
pub fn wants_text(path: &str) -> bool {
    path == "/etc/ld.so.conf"
        || path.starts_with("/etc/ld.so.conf.d/")
        || path.ends_with("/version.json")
        || path.ends_with(".dist-info/METADATA")
        || path.ends_with("/torch/version.py")
}

/// Keeps what the rules need of one regular file at `path`; `None` when nothing is worth keeping.
pub fn probe(path: &str, file: &mut dyn FileBytes) -> io::Result<Option<Captured>> {
    if wants_text(path) && file.size() <= MAX_TEXT_BYTES {
        let mut text = Vec::with_capacity(file.size() as usize);
        Read::take(&mut *file, MAX_TEXT_BYTES).read_to_end(&mut text)?;
        return Ok(Some(Captured::Text(text)));
    }
    // A malformed ELF is no library the loader would open: it is kept as nothing, like any other file.
    // Strings the forward pass left unread are read now where the source can go back; a stream keeps
    // them in `unread` for the layer reader's second pass.
    let read = elf::read_elf(file).and_then(|facts| match facts {
        Some(mut facts) if !facts.unread.is_empty() && file.rewind()? => {
            elf::complete(file, &mut facts)?;
            Ok(Some(facts))
        }
        facts => Ok(facts),
    });
    match read {
        Ok(facts) => Ok(facts.map(Captured::Elf)),
        Err(elf::ElfError::Io(error)) => Err(error),
        Err(elf::ElfError::Malformed(_)) => Ok(None),
    }
}
