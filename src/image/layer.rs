//! The layer reader: turns one layer blob (a tar, plain, gzip or zstd, told apart by magic bytes since
//! media types lie) into the list of changes it makes, hashing the blob and its uncompressed tar while
//! they stream past so a layer whose digest does not match is refused, never read. Each regular file
//! goes past the content probe once; nothing is written to disk. Layers are read independently (in
//! parallel where the source allows) and applied in manifest order by `fs.rs`.

use crate::unix_fs::FileExt;
use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::sync::Arc;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::decode;
use super::elf;
use super::facts::{Captured, ElfFacts, FileBytes};
use super::positional::{hash_range, RangeBytes, RangeReader};
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
/// compressed stream, or a digest that does not match `expected`. A compressed blob is decoded on a
/// thread of its own beside the tar reader ([`decode`]): two cores for one layer.
pub fn read_layer(
    blob: impl Read + Send,
    expected: &ExpectedDigests,
) -> anyhow::Result<LayerContents> {
    read_layer_with(blob, expected, read_decoded_beside)
}

/// [`read_layer`] for a blob that cannot leave this thread (an entry of the engine's export
/// stream): a compressed blob is decoded here, between the tar reader's reads.
pub fn read_layer_here(
    blob: impl Read,
    expected: &ExpectedDigests,
) -> anyhow::Result<LayerContents> {
    read_layer_with(blob, expected, read_decoded_here)
}

/// What reading a compressed blob gave: the tar's facts, and the blob's digest and size.
type DecodedRead = (TarRead<()>, String, u64);

fn read_layer_with<R: Read>(
    blob: R,
    expected: &ExpectedDigests,
    read_compressed: impl FnOnce(BufReader<R>, Compression) -> anyhow::Result<DecodedRead>,
) -> anyhow::Result<LayerContents> {
    let mut raw = BufReader::with_capacity(256 * 1024, blob);
    let compression = Compression::sniff(raw.fill_buf().context("reading the layer blob")?);
    let (tar, blob_digest, blob_size) = match compression {
        // The blob is the tar: the tar's hash is the blob's, hashed once.
        Compression::None => {
            let tar = read_tar(raw)?;
            let (digest, size) = (tar.diff_id.clone(), tar.size);
            (tar.split().0, digest, size)
        }
        Compression::Gzip | Compression::Zstd => read_compressed(raw, compression)?,
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

/// A compressed blob read, hashed and decoded on a thread of its own while this one hashes and walks
/// the tar.
fn read_decoded_beside<R: Read + Send>(
    raw: R,
    compression: Compression,
) -> anyhow::Result<DecodedRead> {
    let (blob, tar) = decode::decode_beside(
        |decoded| {
            let mut decoder = Decoder::new(compression, HashingReader::new(raw))?;
            if !decoded.send_all(&mut decoder)? {
                // The tar reader stopped before the end: it failed, and its error says why.
                return Ok(None);
            }
            drain_blob(decoder.into_blob()).map(Some)
        },
        |decoded| read_tar(decoded).map(|tar| tar.split().0),
    );
    // The tar reader's error first: a corrupt stream reaches it too, where it was reading.
    let tar = tar?;
    let (digest, size) = blob?.context("the layer blob was not read to its end")?;
    Ok((tar, digest, size))
}

/// A compressed blob decoded on this thread as the tar reader asks for bytes.
fn read_decoded_here<R: Read>(raw: R, compression: Compression) -> anyhow::Result<DecodedRead> {
    let decoder = Decoder::new(compression, HashingReader::new(raw))?;
    let (tar, decoder) = read_tar(decoder)?.split();
    let (digest, size) = drain_blob(decoder.into_blob())?;
    Ok((tar, digest, size))
}

/// A gzip (several members, as `pigz` writes) or zstd decoder over a hashing blob. The gzip decoder
/// is boxed: it is some 400 bytes larger than the zstd one, and there is one per layer.
enum Decoder<R: Read> {
    Gzip(Box<flate2::read::MultiGzDecoder<HashingReader<R>>>),
    Zstd(zstd::stream::read::Decoder<'static, BufReader<HashingReader<R>>>),
}

impl<R: Read> Decoder<R> {
    fn new(compression: Compression, blob: HashingReader<R>) -> anyhow::Result<Self> {
        Ok(match compression {
            Compression::Zstd => Decoder::Zstd(
                zstd::stream::read::Decoder::new(blob).context("starting the zstd decoder")?,
            ),
            _ => Decoder::Gzip(Box::new(flate2::read::MultiGzDecoder::new(blob))),
        })
    }

    /// The blob back, positioned after what the decoder read (it hashed what it buffered).
    fn into_blob(self) -> HashingReader<R> {
        match self {
            Decoder::Gzip(decoder) => (*decoder).into_inner(),
            Decoder::Zstd(decoder) => decoder.finish().into_inner(),
        }
    }
}

impl<R: Read> Read for Decoder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Decoder::Gzip(decoder) => decoder.read(buf),
            Decoder::Zstd(decoder) => decoder.read(buf),
        }
    }
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
    let walked = walk_entries(
        archive.entries().context("reading the layer tar")?,
        |path, entry| probe::probe(path, &mut EntryBytes::of(entry)),
    )?;
    let mut rest = archive.into_inner();
    io::copy(&mut rest, &mut io::sink()).context("reading the end of the layer tar")?;
    let (diff_id, size) = rest.digest();
    Ok(TarRead {
        entries: walked.entries,
        clamped: walked.clamped,
        diff_id,
        size,
        rest: rest.inner,
    })
}

/// What one walk over a layer's tar entries found.
struct Walked {
    entries: Vec<LayerEntry>,
    clamped: Vec<String>,
}

/// Turns each tar entry into the change it makes; `probe_file` is handed every regular file (its
/// normalised path and its entry) and says what to keep of it.
fn walk_entries<'a, R: Read + 'a>(
    entries: tar::Entries<'a, R>,
    mut probe_file: impl FnMut(&str, &mut tar::Entry<'a, R>) -> io::Result<Option<Captured>>,
) -> anyhow::Result<Walked> {
    let mut walked = Walked {
        entries: Vec::new(),
        clamped: Vec::new(),
    };
    for (index, entry) in entries.enumerate() {
        let mut entry = entry.with_context(|| format!("layer tar entry {}", index + 1))?;
        let raw_name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let (path, escaped) = normalize(&raw_name);
        if escaped {
            walked.clamped.push(raw_name.clone());
        }
        let mode = entry.header().mode().unwrap_or(0o644);
        let base = path.rsplit('/').next().unwrap_or("");
        let parent = &path[..path.len() - base.len()];
        if base == ".wh..wh..opq" {
            let dir = parent.trim_end_matches('/');
            walked.entries.push(LayerEntry {
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
            walked.entries.push(LayerEntry {
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
            let captured = probe_file(&path, &mut entry)
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
        walked.entries.push(LayerEntry { path, mode, change });
    }
    Ok(walked)
}

/// Reads the layer blob at `[start, start + len)` of `file`, which can be read at any offset. An
/// uncompressed layer is read in two threads: one hashes every byte in large reads while the other
/// walks the tar headers, seeking over contents and reading only what the probe asks for (and going
/// back for the ELF reader's second pass). The facts are returned only when the digest matches. A
/// compressed blob is decoded as a stream, and read a second time, should any ELF string lie behind
/// the first pass.
pub fn read_layer_at(
    file: &File,
    start: u64,
    len: u64,
    expected: &ExpectedDigests,
) -> anyhow::Result<LayerContents> {
    let mut head = [0u8; 4];
    let head_len = (len as usize).min(head.len());
    file.read_exact_at(&mut head[..head_len], start)
        .context("reading the layer blob")?;
    let compression = Compression::sniff(&head[..head_len]);
    if compression != Compression::None {
        let mut layer = read_layer(RangeReader::new(file, start, len), expected)?;
        if needs_completion(&layer) {
            complete_unread(RangeReader::new(file, start, len), &mut layer)?;
        }
        return Ok(layer);
    }
    let (walked, digest) = std::thread::scope(|scope| {
        let hashing = scope.spawn(|| hash_range(file, start, len));
        let walked = walk_seeking(file, start, len);
        (walked, hashing.join())
    });
    let digest = match digest {
        Ok(digest) => digest.context("reading the layer blob")?,
        Err(_) => bail!("hashing the layer blob failed"),
    };
    check_digest("blob", &digest, expected.blob.as_deref())?;
    check_digest(
        "uncompressed layer (diff ID)",
        &digest,
        expected.diff_id.as_deref(),
    )?;
    let walked = walked?;
    Ok(LayerContents {
        entries: walked.entries,
        blob_digest: digest.clone(),
        diff_id: digest,
        compression,
        blob_size: len,
        tar_size: len,
        clamped_names: walked.clamped,
    })
}

/// Walks an uncompressed layer's headers, seeking over contents; each regular file is probed through
/// its own reader at its offset. An entry whose contents run past the blob is a truncated layer.
fn walk_seeking(file: &File, start: u64, len: u64) -> anyhow::Result<Walked> {
    let mut archive = tar::Archive::new(RangeReader::new(file, start, len));
    let entries = archive
        .entries_with_seek()
        .context("reading the layer tar")?;
    walk_entries(entries, |path, entry| {
        if entry.header().entry_type().is_gnu_sparse() {
            // The stored bytes of a sparse file are not the file: read it through the tar reader.
            return probe::probe(path, &mut EntryBytes::of(entry));
        }
        let size = entry.size();
        let offset = entry.raw_file_position();
        if offset.checked_add(size).is_none_or(|end| end > len) {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file runs past the end of the layer (truncated?)",
            ));
        }
        probe::probe(path, &mut RangeBytes::new(file, start + offset, size))
    })
}

/// Whether an ELF string of `layer` was left for a second pass.
pub fn needs_completion(layer: &LayerContents) -> bool {
    layer
        .entries
        .iter()
        .any(|entry| unread_elf(entry).is_some())
}

fn unread_elf(entry: &LayerEntry) -> Option<&ElfFacts> {
    match &entry.change {
        Change::File {
            captured: Some(captured),
            ..
        } => match captured.as_ref() {
            Captured::Elf(facts) if !facts.unread.is_empty() => Some(facts),
            _ => None,
        },
        _ => None,
    }
}

/// The second pass over a layer blob (read again from its start): reads the ELF strings that the
/// first pass left in `unread`, for those files only, and puts them in place. Everything else streams
/// past unread; the digests were checked by the first pass.
pub fn complete_unread(blob: impl Read, layer: &mut LayerContents) -> anyhow::Result<()> {
    let mut waiting: HashMap<String, VecDeque<usize>> = HashMap::new();
    for (index, entry) in layer.entries.iter().enumerate() {
        if unread_elf(entry).is_some() {
            waiting
                .entry(entry.path.clone())
                .or_default()
                .push_back(index);
        }
    }
    let mut raw = BufReader::with_capacity(256 * 1024, blob);
    let compression = Compression::sniff(raw.fill_buf().context("reading the layer blob")?);
    let tar: Box<dyn Read> = match compression {
        Compression::None => Box::new(raw),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(raw)),
        Compression::Zstd => Box::new(
            zstd::stream::read::Decoder::with_buffer(raw).context("starting the zstd decoder")?,
        ),
    };
    let mut archive = tar::Archive::new(tar);
    for entry in archive.entries().context("reading the layer tar again")? {
        if waiting.is_empty() {
            break;
        }
        let mut entry = entry.context("reading the layer tar again")?;
        let path = normalize(&String::from_utf8_lossy(&entry.path_bytes())).0;
        let Some(index) = waiting.get_mut(&path).and_then(VecDeque::pop_front) else {
            continue;
        };
        let Some(mut facts) = unread_elf(&layer.entries[index]).cloned() else {
            continue;
        };
        // A string that cannot be read now is malformed: the library is kept as the first pass saw it.
        if elf::complete(&mut EntryBytes::of(&mut entry), &mut facts).is_ok() {
            if let Change::File { captured, .. } = &mut layer.entries[index].change {
                *captured = Some(Arc::new(Captured::Elf(facts)));
            }
        }
        if waiting.get(&path).is_some_and(VecDeque::is_empty) {
            waiting.remove(&path);
        }
    }
    Ok(())
}

/// `a/./b/../c` → `/a/c`; a `..` at the root stays at the root. Returns whether the name tried to leave
/// the root (a `..` above it, or an absolute name), which a well-formed layer never does.
pub fn normalize(name: &str) -> (String, bool) {
    let (parts, above_root) = crate::paths::components(name);
    let escaped = above_root || name.starts_with('/');
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

impl<'e, 'a, R: Read + 'a> EntryBytes<'e, tar::Entry<'a, R>> {
    /// The bytes of `entry`, from its start.
    fn of(entry: &'e mut tar::Entry<'a, R>) -> Self {
        let size = entry.size();
        EntryBytes {
            entry,
            size,
            position: 0,
        }
    }
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
