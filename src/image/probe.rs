//! The content probe: called once for every regular file as its layer streams past, it decides what
//! of the file to keep (ELF dynamic-linking facts, small text files the rules read, the package lines
//! of dpkg's status) and reads only those bytes. Everything else is skipped, so a 1 GiB
//! `libtorch_cuda.so` costs a few header reads.

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

/// dpkg's database of installed packages: a few MiB at most, of which only the package, status and
/// version lines are kept.
pub const DPKG_STATUS: &str = "/var/lib/dpkg/status";

/// dpkg status files larger than this are not read (a full desktop system's is under 10 MiB).
const MAX_DPKG_STATUS_BYTES: u64 = 32 * 1024 * 1024;

/// The `Package:`, `Status:` and `Version:` lines of a dpkg status file, one stanza per package, in
/// the file's order: what [`super::inventory`] reads, a few percent of the file.
pub fn condense_dpkg_status(text: &str) -> String {
    let mut kept = String::new();
    for line in text.lines() {
        if line.is_empty() {
            kept.push('\n');
        } else if ["Package:", "Status:", "Version:"]
            .iter()
            .any(|field| line.starts_with(field))
        {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

/// Keeps what the rules need of one regular file at `path`; `None` when nothing is worth keeping.
pub fn probe(path: &str, file: &mut dyn FileBytes) -> io::Result<Option<Captured>> {
    if path == DPKG_STATUS && file.size() <= MAX_DPKG_STATUS_BYTES {
        let mut text = Vec::with_capacity(file.size() as usize);
        Read::take(&mut *file, MAX_DPKG_STATUS_BYTES).read_to_end(&mut text)?;
        let condensed = condense_dpkg_status(&String::from_utf8_lossy(&text));
        return Ok(Some(Captured::Text(condensed.into_bytes())));
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dpkg_status_keeps_package_status_and_version_per_stanza() {
        let status = "Package: libnccl2\nStatus: hold ok installed\nPriority: optional\nVersion: 2.27.7-1+cuda13.0\nDescription: NCCL\n NCCL (pronounced \"Nickel\")\n Version: not a field\n\nPackage: libc6\nStatus: install ok installed\nVersion: 2.35\n";
        assert_eq!(
            condense_dpkg_status(status),
            "Package: libnccl2\nStatus: hold ok installed\nVersion: 2.27.7-1+cuda13.0\n\nPackage: libc6\nStatus: install ok installed\nVersion: 2.35\n"
        );
    }
}
