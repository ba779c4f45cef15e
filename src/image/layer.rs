//! The layer reader: turns one layer blob (a tar, plain, gzip or zstd, told apart by magic bytes since
//! media types lie) into the list of changes it makes, hashing the blob and its uncompressed tar while
//! they stream past so a layer whose digest does not match is refused, never read. Each regular file
//! goes past the content probe once; nothing is written to disk. Layers are read independently (in
//! parallel where the source allows) and applied in manifest order by `fs.rs`.

use std::io::{self, BufRead, BufReader, Read};
use std::sync::Arc;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::facts::{Captured, FileBytes};
use super::probe;

/// How a layer blob is compressed, from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// Recognises gzip (`1f 8b`) and zstd (`28 b5 2f fd`) frames; anything else is read as a plain tar.
    pub fn sniff(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }
}

/// What one tar entry does to the merged filesystem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    File {
        size: u64,
        captured: Option<Arc<Captured>>,
    },
    Dir,
    Symlink(String),
    /// A hard link to another path (normalised, absolute) of this or an earlier layer.
    Hardlink(String),
    /// Device nodes and FIFOs: recorded, never read.
    Other,
    /// `.wh.<name>`: the path is deleted.
    Whiteout,
    /// `.wh..wh..opq`: everything earlier layers put in this directory is hidden.
    OpaqueDir,
}

/// One entry of a layer, its path normalised to `/a/b` (a `..` clamps at the root, as it would inside
/// the image root).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerEntry {
    pub path: String,
    pub mode: u32,
    pub change: Change,
}

/// Everything read from one layer blob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerContents {
    pub entries: Vec<LayerEntry>,
    /// `sha256:…` of the blob as stored (compressed or not).
    pub blob_digest: String,
    /// `sha256:…` of the uncompressed tar: the layer's diff ID.
    pub diff_id: String,
    pub compression: Compression,
    pub blob_size: u64,
    pub tar_size: u64,
    /// Entry names that pointed outside the root (`../x`, `/abs`), kept clamped inside it.
    pub clamped_names: Vec<String>,
}

/// What a source knows a layer blob must hash to; `None` where it does not say.
#[derive(Clone, Debug, Default)]
pub struct ExpectedDigests {
    pub blob: Option<String>,
    pub diff_id: Option<String>,
}

/// Reads one layer blob to its end and returns its changes; fails on a malformed tar, a corrupt
/// compressed stream, or a digest that does not match `expected`.
pub fn read_layer(blob: impl Read, expected: &ExpectedDigests) -> anyhow::Result<LayerContents> {
    let mut raw = BufReader::with_capacity(256 * 1024, blob);
    let compression = Compression::sniff(raw.fill_buf().context("reading the layer blob")?);
    let (tar, blob_digest, blob_size) = match compression {
        // The blob is the tar: the tar's hash is the blob's, hashed once.
        Compression::None => {
            let tar = read_tar(raw)?;
            let (digest, size) = (tar.diff_id.clone(), tar.size);
            (tar.split().0, digest, size)
        }
        Compression::Gzip => {
            let (tar, decoder) =
                read_tar(flate2::read::MultiGzDecoder::new(HashingReader::new(raw)))?.split();
            let (digest, size) = drain_blob(decoder.into_inner())?;
            (tar, digest, size)
        }
        Compression::Zstd => {
            let decoder = zstd::stream::read::Decoder::new(HashingReader::new(raw))
                .context("starting the zstd decoder")?;
            let (tar, decoder) = read_tar(decoder)?.split();
            let (digest, size) = drain_blob(decoder.finish().into_inner())?;
            (tar, digest, size)
        }
    };
    check_digest("blob", &blob_digest, expected.blob.as_deref())?;
    check_digest(
        "uncompressed layer (diff ID)",
        &tar.diff_id,
        expected.diff_id.as_deref(),
    )?;
    Ok(LayerContents {
        entries: tar.entries,
        blob_digest,
        diff_id: tar.diff_id,
        compression,
        blob_size,
        tar_size: tar.size,
        clamped_names: tar.clamped,
    })
}

/// Reads what is left of a compressed blob after its stream ended (bytes after it still belong to
/// the blob the digest covers; bytes a decoder buffered were hashed when it read them) and returns
/// the blob's digest and size.
fn drain_blob<R: Read>(mut hashing: HashingReader<R>) -> anyhow::Result<(String, u64)> {
    io::copy(&mut hashing, &mut io::sink()).context("reading the end of the layer blob")?;
    Ok(hashing.finish())
}

fn check_digest(what: &str, actual: &str, expected: Option<&str>) -> anyhow::Result<()> {
    match expected {
        Some(expected) if !expected.eq_ignore_ascii_case(actual) => {
            bail!("layer {what} digest mismatch: expected {expected}, the bytes hash to {actual}")
        }
        _ => Ok(()),
    }
}

/// What [`read_tar`] read: the entries, the names it clamped, the tar's digest and size, and the
/// stream it read from (drained to its end).
struct TarRead<R> {
    entries: Vec<LayerEntry>,
    clamped: Vec<String>,
    diff_id: String,
    size: u64,
    rest: R,
}

impl<R> TarRead<R> {
    /// The facts apart from the stream, which the caller drains further.
    fn split(self) -> (TarRead<()>, R) {
        let facts = TarRead {
            entries: self.entries,
            clamped: self.clamped,
            diff_id: self.diff_id,
            size: self.size,
            rest: (),
        };
        (facts, self.rest)
    }
}

/// Reads the tar entries from `tar`, then drains it so the diff ID covers every byte.
fn read_tar<R: Read>(tar: R) -> anyhow::Result<TarRead<R>> {
    let mut archive = tar::Archive::new(HashingReader::new(tar));
    let mut entries = Vec::new();
    let mut clamped = Vec::new();
    for (index, entry) in archive
        .entries()
        .context("reading the layer tar")?
        .enumerate()
    {
        let mut entry = entry.with_context(|| format!("layer tar entry {}", index + 1))?;
        let raw_name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let (path, escaped) = normalize(&raw_name);
        if escaped {
            clamped.push(raw_name.clone());
        }
        let mode = entry.header().mode().unwrap_or(0o644);
        let base = path.rsplit('/').next().unwrap_or("");
        let parent = &path[..path.len() - base.len()];
        if base == ".wh..wh..opq" {
            let dir = parent.trim_end_matches('/');
            entries.push(LayerEntry {
                path: if dir.is_empty() {
                    "/".into()
                } else {
                    dir.into()
                },
                mode,
                change: Change::OpaqueDir,
            });
            continue;
        }
        if let Some(hidden) = base.strip_prefix(".wh.") {
            entries.push(LayerEntry {
                path: format!("{parent}{hidden}"),
                mode,
                change: Change::Whiteout,
            });
            continue;
        }
        let kind = entry.header().entry_type();
        let change = if kind.is_dir() {
            Change::Dir
        } else if kind.is_symlink() {
            let target = entry.link_name_bytes().unwrap_or_default();
            Change::Symlink(String::from_utf8_lossy(&target).into_owned())
        } else if kind.is_hard_link() {
            let target = entry.link_name_bytes().unwrap_or_default();
            Change::Hardlink(normalize(&String::from_utf8_lossy(&target)).0)
        } else if kind.is_file() || kind.is_contiguous() || kind.is_gnu_sparse() {
            let size = entry.size();
            let mut bytes = EntryBytes {
                entry: &mut entry,
                size,
                position: 0,
            };
            let captured = probe::probe(&path, &mut bytes)
                .with_context(|| format!("reading {path} in the layer"))?;
            Change::File {
                size,
                captured: captured.map(Arc::new),
            }
        } else if kind.is_pax_global_extensions() || kind.is_pax_local_extensions() {
            continue;
        } else {
            Change::Other
        };
        if path == "/" && change == Change::Dir {
            continue;
        }
        entries.push(LayerEntry { path, mode, change });
    }
    let mut rest = archive.into_inner();
    io::copy(&mut rest, &mut io::sink()).context("reading the end of the layer tar")?;
    let (diff_id, size) = rest.digest();
    Ok(TarRead {
        entries,
        clamped,
        diff_id,
        size,
        rest: rest.inner,
    })
}

/// `a/./b/../c` → `/a/c`; a `..` at the root stays at the root. Returns whether the name tried to leave
/// the root (a `..` above it, or an absolute name), which a well-formed layer never does.
pub fn normalize(name: &str) -> (String, bool) {
    let mut escaped = name.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    escaped = true;
                }
            }
            other => parts.push(other),
        }
    }
    let mut path = String::with_capacity(name.len() + 1);
    for part in &parts {
        path.push('/');
        path.push_str(part);
    }
    if path.is_empty() {
        path.push('/');
    }
    (path, escaped)
}

/// A tar entry's bytes as the probe sees them. Skipping decodes and discards: the layer's digest covers
/// every byte, so they are read in any case.
struct EntryBytes<'e, E: Read> {
    entry: &'e mut E,
    size: u64,
    position: u64,
}

impl<E: Read> Read for EntryBytes<'_, E> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.entry.read(buf)?;
        self.position += read as u64;
        Ok(read)
    }
}

impl<E: Read> FileBytes for EntryBytes<'_, E> {
    fn size(&self) -> u64 {
        self.size
    }
    fn position(&self) -> u64 {
        self.position
    }
    fn skip_to(&mut self, offset: u64) -> io::Result<()> {
        if offset < self.position {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot skip backwards in a layer stream",
            ));
        }
        let wanted = offset - self.position;
        let skipped = io::copy(&mut (&mut *self).take(wanted), &mut io::sink())?;
        if skipped < wanted {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(())
    }
}

/// Counts and hashes (sha256) every byte read through it.
pub struct HashingReader<R> {
    inner: R,
    hasher: Sha256,
    count: u64,
}

impl<R> HashingReader<R> {
    pub fn new(inner: R) -> Self {
        HashingReader {
            inner,
            hasher: Sha256::new(),
            count: 0,
        }
    }
    fn digest(&self) -> (String, u64) {
        (
            sha256_name(self.hasher.clone().finalize().as_slice()),
            self.count,
        )
    }
    /// `sha256:…` of what was read, and how many bytes.
    pub fn finish(self) -> (String, u64) {
        self.digest()
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.hasher.update(&buf[..read]);
        self.count += read as u64;
        Ok(read)
    }
}

/// `sha256:` and the lowercase hex of `digest`.
pub fn sha256_name(digest: &[u8]) -> String {
    let mut name = String::with_capacity(7 + 64);
    name.push_str("sha256:");
    for byte in digest {
        name.push_str(&format!("{byte:02x}"));
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_clamps_at_the_root() {
        assert_eq!(normalize("./usr/lib/"), ("/usr/lib".into(), false));
        assert_eq!(normalize("../../etc/passwd"), ("/etc/passwd".into(), true));
        assert_eq!(normalize("/abs"), ("/abs".into(), true));
        assert_eq!(normalize("a/b/../c"), ("/a/c".into(), false));
        assert_eq!(normalize("./"), ("/".into(), false));
    }

    #[test]
    fn sniff_tells_compressions_apart() {
        assert_eq!(Compression::sniff(&[0x1f, 0x8b, 8]), Compression::Gzip);
        assert_eq!(
            Compression::sniff(&[0x28, 0xb5, 0x2f, 0xfd]),
            Compression::Zstd
        );
        assert_eq!(Compression::sniff(b"usr/"), Compression::None);
    }
}
