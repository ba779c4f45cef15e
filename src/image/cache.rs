//! The layer cache: what the layer reader extracts from a layer (its entries with the captured ELF
//! facts and text files, its tar size, the names it clamped) depends only on the layer's uncompressed
//! content, so it is kept on disk keyed by the layer's diff ID and reused by every image that shares
//! the layer. A fleet's images share their CUDA base layers: the second image of a family pays only
//! for its own layers, and a cached layer's blob is not decompressed at all (the sources know a
//! layer's diff ID from the image config before they open its blob; only its first bytes are read, to
//! name its compression in the report).
//!
//! # On disk
//!
//! `$XDG_CACHE_HOME/cudalint/` (else `~/.cache/cudalint/`), marked with a `CACHEDIR.TAG`, holds one
//! directory per format, `layers-v<FORMAT_VERSION>-<fingerprint>`, whose fingerprint hashes the
//! source of the code that decides what a layer's facts are (this file, the layer reader, the probe,
//! the ELF reader and the fact types): a cudalint whose extraction differs never reads another's
//! entries, and the old directories are the first evicted. One file per layer, named by its diff ID:
//!
//! ```text
//! magic (16 bytes) | format version (u32 LE) | payload length (u64 LE) | sha256 of payload | payload
//! ```
//!
//! The payload is the entry (in the cache's own record types, `cache/entry.rs`) encoded with `postcard`, a compact
//! serde format: a layer of 100,000 files is a 6.8 MB entry read back (file, checksum, decoding) in
//! 12 ms, where serde_json takes 11.8 MB and 45 ms to decode alone (`benches/layer_cache.rs`). An
//! entry is trusted only when its magic, version, length, checksum, decoding and the diff ID it
//! records all agree; anything else (a truncated write, a flipped bit, a file from elsewhere) is
//! ignored, counted as rejected, and rewritten when the layer has been read.
//!
//! # Concurrency and size
//!
//! An entry is written to a temporary file in the same directory and renamed into place, so two runs
//! writing the same layer race harmlessly and a reader sees a whole entry or none. The temporary
//! file's name carries a nonce drawn when the cache is opened, and it is created exclusively
//! (`O_EXCL`): runs sharing the cache on a volume from several hosts or containers, each in its own
//! PID namespace and often all PID 1, never write into one another's temporary file. A hit sets the
//! entry's modification time, and once the directory holds more than its bound (2 GiB, or
//! `CUDALINT_CACHE_MAX_BYTES`; `0` turns the cache off) the least recently used entries are removed
//! until it holds 90% of it. Failing to write the cache never fails a scan; the first error is kept
//! for a note.
//!
//! # What a hit trusts
//!
//! A hit trusts the config's diff ID as Docker's layer store does (`docker load` skips a layer whose
//! chain ID it already holds, unread): the blob is not hashed again, since hashing it would cost most
//! of what reading it costs. What costs nothing is checked first, and a blob that fails a check is
//! read and its digests checked as without the cache:
//!
//! - an uncompressed blob must be the cached tar size;
//! - an entry remembers the places its layer was read or served from ([`BlobLocation`]: the file's
//!   device and inode, the blob's offset and length, and the file's modification and status-change
//!   times, as `make` and git's index judge a file unchanged). A blob at a remembered place whose file
//!   has been modified since (a layer changed in place, same size) is read again, so it gives the
//!   digest mismatch that `--no-cache` gives. A blob at a place not seen before (another archive that
//!   shares the layer) is trusted by its diff ID, and the place is remembered from then on.
//!
//! The engine's export carries no such place: its cached layers stream past hashed (see `engine.rs`).

use crate::unix_fs::MetadataExt;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use super::layer::{Compression, LayerContents};
use entry::{decode, encode, header, HEADER_LEN};

mod entry;

/// Bump when the entry layout changes in a way the fingerprint would not catch.
pub const FORMAT_VERSION: u32 = 2;
/// The bound on the cache directory's size unless `CUDALINT_CACHE_MAX_BYTES` says otherwise.
pub const DEFAULT_MAX_BYTES: u64 = 2 << 30;
/// The environment variable that bounds the cache (bytes, or with a K, M or G suffix; 0 = off).
pub const MAX_BYTES_VAR: &str = "CUDALINT_CACHE_MAX_BYTES";

/// The first bytes of every entry file.
pub const MAGIC: &[u8; 16] = b"cudalint-layers\0";
/// A temporary file older than this was left by a run that died: it may be removed.
const STALE_TEMP: Duration = Duration::from_secs(3600);
/// The places an entry remembers (the most recent): a layer is rarely in more archives than this.
const MAX_PLACES: usize = 16;

/// The fingerprint of the code that decides what a layer's facts are: a change to any of it changes
/// the facts. `build.rs` hashes that code's source (this file, the entry encoding, the fact types,
/// the layer reader, the probe, the ELF and fatbin readers), so the binary carries the hash rather
/// than the source.
const EXTRACTOR_FINGERPRINT: &str = env!("CUDALINT_EXTRACTOR_FINGERPRINT");

/// A layer's blob as its source describes it without reading it: what the report says of the blob
/// on a hit (a layer shared by two images may be stored gzip in one and zstd in the other).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobInfo {
    pub digest: String,
    pub size: u64,
    pub compression: Compression,
    /// Where the blob lies in a file, for the sources that read files; `None` for a stream.
    pub at: Option<BlobLocation>,
}

/// A blob's place in a file and the file's state, read with one `fstat`: the same place with the
/// same times holds the same bytes. A write sets both times; `touch` can set the modification time
/// back, but no call sets the status-change time to a chosen value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlobLocation {
    device: u64,
    inode: u64,
    offset: u64,
    len: u64,
    /// Modification and status-change times, in nanoseconds since the epoch.
    modified: i128,
    changed: i128,
}

impl BlobLocation {
    /// The place of `[offset, offset + len)` of `file`, as it is now; `None` where it cannot be read.
    pub fn of(file: &File, offset: u64, len: u64) -> Option<BlobLocation> {
        let meta = file.metadata().ok()?;
        let nanos =
            |seconds: i64, nanos: i64| i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
        Some(BlobLocation {
            device: meta.dev(),
            inode: meta.ino(),
            offset,
            len,
            modified: nanos(meta.mtime(), meta.mtime_nsec()),
            changed: nanos(meta.ctime(), meta.ctime_nsec()),
        })
    }

    fn same_place(&self, other: &BlobLocation) -> bool {
        (self.device, self.inode, self.offset, self.len)
            == (other.device, other.inode, other.offset, other.len)
    }
}

/// Whether an entry may serve a blob at a place, by what the entry remembers of it.
#[derive(Debug, PartialEq, Eq)]
enum Place {
    /// Read or served from there, and the file is unchanged since.
    Known,
    /// Read or served from there, and the file was modified since: the blob is read again.
    Changed,
    /// Not seen there before (or the source gives no place): trusted by the diff ID.
    New,
}

fn judge(seen: &[BlobLocation], at: Option<&BlobLocation>) -> Place {
    let Some(at) = at else { return Place::New };
    match seen.iter().find(|place| place.same_place(at)) {
        Some(place) if place == at => Place::Known,
        Some(_) => Place::Changed,
        None => Place::New,
    }
}

/// `seen` with `at` as its most recent place (replacing what it remembered of that place).
fn remember(mut seen: Vec<BlobLocation>, at: Option<BlobLocation>) -> Vec<BlobLocation> {
    if let Some(at) = at {
        seen.retain(|place| !place.same_place(&at));
        seen.push(at);
        let excess = seen.len().saturating_sub(MAX_PLACES);
        seen.drain(..excess);
    }
    seen
}

/// How the cache served one run or one image.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    /// Layers whose facts came from the cache (their blobs were not decompressed).
    pub hits: u64,
    /// Layers read from their blobs (and then written to the cache).
    pub misses: u64,
    /// Entries found but not trusted (corrupt, truncated, another format): counted among the misses.
    pub rejected: u64,
}

impl std::ops::Sub for CacheStats {
    type Output = CacheStats;
    fn sub(self, earlier: CacheStats) -> CacheStats {
        CacheStats {
            hits: self.hits - earlier.hits,
            misses: self.misses - earlier.misses,
            rejected: self.rejected - earlier.rejected,
        }
    }
}

/// The on-disk layer cache of one run (shared by the threads that read layers).
#[derive(Debug)]
pub struct LayerCache {
    /// `…/cudalint`: every format's directory, for eviction.
    root: PathBuf,
    /// `…/cudalint/layers-v1-<fingerprint>`: this format's entries.
    dir: PathBuf,
    max_bytes: u64,
    hits: AtomicU64,
    misses: AtomicU64,
    rejected: AtomicU64,
    written_since_trim: AtomicU64,
    trimmed: AtomicBool,
    temp_serial: AtomicU64,
    /// Names this handle's temporary files apart from every other writer's (see the module's
    /// "Concurrency and size").
    temp_nonce: u64,
    write_error: Mutex<Option<String>>,
}

impl LayerCache {
    /// The cache the environment asks for: under `$XDG_CACHE_HOME` (absolute) or `~/.cache`, bounded by
    /// `CUDALINT_CACHE_MAX_BYTES`. `None` when the bound is 0 or there is no home to put it in.
    pub fn from_env() -> anyhow::Result<Option<LayerCache>> {
        let max_bytes = match std::env::var(MAX_BYTES_VAR) {
            Ok(text) => parse_size(&text).with_context(|| format!("{MAX_BYTES_VAR}={text}"))?,
            Err(std::env::VarError::NotPresent) => DEFAULT_MAX_BYTES,
            Err(std::env::VarError::NotUnicode(_)) => bail!("{MAX_BYTES_VAR} is not text"),
        };
        if max_bytes == 0 {
            return Ok(None);
        }
        let absolute = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|path| path.is_absolute())
        };
        let base =
            absolute("XDG_CACHE_HOME").or_else(|| absolute("HOME").map(|home| home.join(".cache")));
        Ok(base.map(|base| LayerCache::open(&base.join("cudalint"), max_bytes)))
    }

    /// A cache rooted at `root` (created on the first write), at most `max_bytes` on disk.
    pub fn open(root: &Path, max_bytes: u64) -> LayerCache {
        LayerCache {
            root: root.to_path_buf(),
            dir: root.join(format!("layers-v{FORMAT_VERSION}-{EXTRACTOR_FINGERPRINT}")),
            max_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            written_since_trim: AtomicU64::new(0),
            trimmed: AtomicBool::new(false),
            temp_serial: AtomicU64::new(0),
            temp_nonce: temp_nonce(),
            write_error: Mutex::new(None),
        }
    }

    /// The directory this format's entries live in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the entry of `diff_id` lives; `None` for anything but `algorithm:hex` (a path is never
    /// built from other text).
    pub fn entry_path(&self, diff_id: &str) -> Option<PathBuf> {
        let (algorithm, hex) = diff_id.split_once(':')?;
        let valid = !algorithm.is_empty()
            && algorithm.len() <= 16
            && algorithm.bytes().all(|byte| byte.is_ascii_alphanumeric())
            && (32..=128).contains(&hex.len())
            && hex.bytes().all(|byte| byte.is_ascii_hexdigit());
        valid.then(|| {
            self.dir
                .join(format!("{algorithm}-{}", hex.to_ascii_lowercase()))
        })
    }

    /// The layer `diff_id` from the cache, described by `blob`; counts a hit, or a miss the caller then
    /// reads from the blob. An entry that is not trusted, whose tar size an uncompressed `blob`
    /// contradicts, or that was read from `blob`'s place before the file there changed, is a miss (see
    /// the module's "What a hit trusts").
    pub fn get(&self, diff_id: &str, blob: BlobInfo) -> Option<LayerContents> {
        let found = self.entry_path(diff_id).and_then(|path| {
            let bytes = read_bounded(&path, self.max_bytes)?;
            let Some(entry) = decode(&bytes, diff_id) else {
                self.rejected.fetch_add(1, Ordering::Relaxed);
                return None;
            };
            Some((path, bytes, entry))
        });
        let consistent = found.filter(|(_, _, (header, _, _))| {
            (blob.compression != Compression::None || blob.size == header.tar_size)
                && judge(&header.seen, blob.at.as_ref()) != Place::Changed
        });
        let consistent = consistent.map(|(path, bytes, (mut header, entries, records))| {
            if judge(&header.seen, blob.at.as_ref()) == Place::New && blob.at.is_some() {
                // Remembered from now on, so a change in place there is seen; the records are kept
                // as they are. A write that fails only forgets the place.
                header.seen = remember(std::mem::take(&mut header.seen), blob.at);
                if let Ok(mut payload) = postcard::to_stdvec(&header) {
                    payload.extend_from_slice(&bytes[HEADER_LEN + records..]);
                    let _ = self.write_entry(&path, &payload);
                }
            } else if let Ok(file) = File::options().write(true).open(&path) {
                // Least recently used goes first: a hit makes the entry young again.
                let _ = file.set_modified(SystemTime::now());
            }
            (header, entries)
        });
        match consistent {
            Some((header, entries)) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some(LayerContents {
                    entries,
                    blob_digest: blob.digest,
                    diff_id: header.diff_id,
                    compression: blob.compression,
                    blob_size: blob.size,
                    tar_size: header.tar_size,
                    clamped_names: header.clamped_names,
                })
            }
            None => {
                self.count_miss();
                None
            }
        }
    }

    /// Counts a layer read from its blob without a lookup (its diff ID was not known beforehand).
    pub fn count_miss(&self) {
        self.misses.fetch_add(1, Ordering::Relaxed);
    }

    /// Writes `layer`'s facts under its diff ID (atomically: a temporary file renamed into place), then
    /// trims the cache when enough was written since the last trim. `at` is where the layer was just
    /// read from (its place taken before the read), remembered with the places an entry already there
    /// remembers. Errors are kept, never raised.
    pub fn put(&self, layer: &LayerContents, at: Option<BlobLocation>) {
        let Some(path) = self.entry_path(&layer.diff_id) else {
            return;
        };
        let seen = read_bounded(&path, self.max_bytes)
            .and_then(|bytes| decode(&bytes, &layer.diff_id))
            .map(|(header, _, _)| header.seen)
            .unwrap_or_default();
        let payload = match encode(layer, remember(seen, at)) {
            Ok(payload) => payload,
            Err(error) => return self.keep_error(format!("encoding {}: {error}", layer.diff_id)),
        };
        let length = (HEADER_LEN + payload.len()) as u64;
        if length > self.max_bytes {
            return;
        }
        if let Err(error) = self.write_entry(&path, &payload) {
            return self.keep_error(format!("writing {}: {error}", path.display()));
        }
        let written = self.written_since_trim.fetch_add(length, Ordering::Relaxed) + length;
        if !self.trimmed.swap(true, Ordering::Relaxed) || written >= self.max_bytes / 64 {
            self.written_since_trim.store(0, Ordering::Relaxed);
            if let Err(error) = self.trim() {
                self.keep_error(format!("trimming {}: {error}", self.root.display()));
            }
        }
    }

    fn write_entry(&self, path: &Path, payload: &[u8]) -> io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        let tag = self.root.join("CACHEDIR.TAG");
        if !tag.exists() {
            // Backup tools skip a directory with this tag (https://bford.info/cachedir/).
            let _ = fs::write(
                &tag,
                "Signature: 8a477f597d28d172789f06886806bc55\n# cudalint's layer cache\n",
            );
        }
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let (temp, mut file) = loop {
            let serial = self.temp_serial.fetch_add(1, Ordering::Relaxed);
            let temp = self
                .dir
                .join(format!(".{name}.{:016x}.{serial}.tmp", self.temp_nonce));
            match File::options().write(true).create_new(true).open(&temp) {
                Ok(file) => break (temp, file),
                // Another writer's name (a nonce drawn twice): take the next serial.
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(error) => return Err(error),
            }
        };
        let written = (|| {
            file.write_all(&header(payload))?;
            file.write_all(payload)?;
            drop(file);
            fs::rename(&temp, path)
        })();
        if written.is_err() {
            let _ = fs::remove_file(&temp);
        }
        written
    }

    fn keep_error(&self, message: String) {
        let mut kept = self
            .write_error
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        kept.get_or_insert(message);
    }

    /// The first error met while writing the cache, if any.
    pub fn write_error(&self) -> Option<String> {
        self.write_error
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
    }

    /// Hits, misses and rejected entries so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            rejected: self.rejected.load(Ordering::Relaxed),
        }
    }

    /// Removes entries until every format's directories together hold at most 90% of the bound:
    /// other formats' entries first, then this format's least recently used. Temporary files of
    /// running writers are left alone; those older than an hour were left by a run that died.
    pub fn trim(&self) -> io::Result<()> {
        let now = SystemTime::now();
        let mut files = Vec::new();
        let mut total = 0u64;
        let Ok(formats) = fs::read_dir(&self.root) else {
            return Ok(()); // nothing written yet
        };
        for format in formats.filter_map(Result::ok) {
            let dir = format.path();
            let name = format.file_name();
            if !name.to_string_lossy().starts_with("layers-") || !dir.is_dir() {
                continue;
            }
            let current = dir == self.dir;
            for file in fs::read_dir(&dir)?.filter_map(Result::ok) {
                let Ok(meta) = file.metadata() else { continue };
                if !meta.is_file() {
                    continue;
                }
                let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                let age = now.duration_since(modified).unwrap_or_default();
                if file.file_name().to_string_lossy().ends_with(".tmp") {
                    if age > STALE_TEMP && fs::remove_file(file.path()).is_ok() {
                        continue;
                    }
                    total += meta.len();
                    continue;
                }
                total += meta.len();
                files.push((current, modified, meta.len(), file.path()));
            }
        }
        if total <= self.max_bytes {
            return Ok(());
        }
        // Other formats first (false < true), then the oldest.
        files.sort_by_key(|&(current, modified, _, _)| (current, modified));
        let target = self.max_bytes / 10 * 9;
        for (current, _, size, path) in files {
            if total <= target {
                break;
            }
            match fs::remove_file(&path) {
                Ok(()) => total -= size,
                Err(error) if error.kind() == io::ErrorKind::NotFound => total -= size,
                Err(error) => return Err(error),
            }
            if !current {
                // An emptied directory of an old format goes too (fails harmlessly while not empty).
                if let Some(dir) = path.parent() {
                    let _ = fs::remove_dir(dir);
                }
            }
        }
        Ok(())
    }
}

/// A number no other cache handle draws: the hasher keys the standard library seeds from the
/// operating system's randomness, over the process ID and the time.
fn temp_nonce() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH);
    hasher.write_u128(now.map_or(0, |since| since.as_nanos()));
    hasher.finish()
}

/// The file at `path` when it is no larger than `limit`.
fn read_bounded(path: &Path, limit: u64) -> Option<Vec<u8>> {
    let meta = fs::metadata(path).ok()?;
    (meta.is_file() && meta.len() <= limit)
        .then(|| fs::read(path).ok())
        .flatten()
}

/// `2147483648`, `512M`, `2G` (binary units), as `CUDALINT_CACHE_MAX_BYTES` takes it.
pub fn parse_size(text: &str) -> anyhow::Result<u64> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().last() {
        Some((at, suffix)) if suffix.is_ascii_alphabetic() => (&text[..at], suffix),
        _ => (text, 'B'),
    };
    let shift = match unit.to_ascii_uppercase() {
        'B' => 0,
        'K' => 10,
        'M' => 20,
        'G' => 30,
        'T' => 40,
        other => bail!("unknown unit {other:?} (use a number of bytes, or K, M, G, T)"),
    };
    let number: u64 = digits
        .trim()
        .parse()
        .context("not a number of bytes (e.g. 2147483648 or 2G)")?;
    number
        .checked_mul(1 << shift)
        .context("more bytes than fit in 64 bits")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_units() {
        assert_eq!(parse_size("1024").unwrap(), 1024);
        assert_eq!(parse_size("2G").unwrap(), 2 << 30);
        assert_eq!(parse_size("512m").unwrap(), 512 << 20);
        assert_eq!(parse_size("0").unwrap(), 0);
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5X").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    #[test]
    fn a_place_is_known_changed_or_new_and_few_are_remembered() {
        let place = |inode, modified| BlobLocation {
            device: 1,
            inode,
            offset: 512,
            len: 4096,
            modified,
            changed: modified,
        };
        let seen = remember(Vec::new(), Some(place(7, 100)));
        assert_eq!(judge(&seen, Some(&place(7, 100))), Place::Known);
        assert_eq!(judge(&seen, Some(&place(7, 101))), Place::Changed);
        let moved = BlobLocation {
            offset: 1024,
            ..place(7, 101)
        };
        assert_eq!(judge(&seen, Some(&moved)), Place::New);
        assert_eq!(judge(&seen, Some(&place(8, 100))), Place::New);
        assert_eq!(judge(&seen, None), Place::New);
        // Remembering a place again replaces what was known of it; the oldest places go first.
        let seen = remember(seen, Some(place(7, 101)));
        assert_eq!(seen, [place(7, 101)]);
        let seen = (0..MAX_PLACES as u64 + 3).fold(seen, |seen, inode| {
            remember(seen, Some(place(100 + inode, 1)))
        });
        assert_eq!(seen.len(), MAX_PLACES);
        assert_eq!(judge(&seen, Some(&place(7, 101))), Place::New);
        assert_eq!(judge(&seen, Some(&place(102, 1))), Place::New);
        assert_eq!(judge(&seen, Some(&place(103, 1))), Place::Known);
    }

    /// Writers on several hosts or containers sharing the cache on a volume: each in its own PID
    /// namespace, so the same process ID, and each with its own counter of temporary files. Two
    /// handles in one process are exactly that.
    #[test]
    fn writers_with_the_same_process_id_do_not_share_temporary_files() {
        use crate::image::facts::Captured;
        use crate::image::layer::{Change, LayerEntry};
        use std::sync::Arc;
        let root = std::env::temp_dir().join(format!("cudalint-cache-pids-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let diff_id = format!("sha256:{}", "ab".repeat(32));
        let blob_digest = format!("sha256:{}", "cd".repeat(32));
        let layer = |seed: u8| LayerContents {
            entries: (0..2000)
                .map(|index| LayerEntry {
                    path: format!("/usr/lib/file{index}"),
                    mode: 0o644,
                    change: Change::File {
                        size: index,
                        captured: Some(Arc::new(Captured::Text(vec![seed; 64]))),
                    },
                })
                .collect(),
            blob_digest: blob_digest.clone(),
            diff_id: diff_id.clone(),
            compression: Compression::Gzip,
            blob_size: 1,
            tar_size: 1 << 20,
            clamped_names: Vec::new(),
        };
        let handles: Vec<LayerCache> = (0..4).map(|_| LayerCache::open(&root, 1 << 30)).collect();
        std::thread::scope(|scope| {
            for (seed, cache) in handles.iter().enumerate() {
                let layer = layer(seed as u8);
                scope.spawn(move || {
                    for _ in 0..25 {
                        cache.put(&layer, None);
                    }
                });
            }
        });
        for cache in &handles {
            assert_eq!(cache.write_error(), None);
        }
        let blob = BlobInfo {
            digest: blob_digest,
            size: 1,
            compression: Compression::Gzip,
            at: None,
        };
        let read = handles[0].get(&diff_id, blob);
        assert_eq!(read.map(|layer| layer.entries.len()), Some(2000));
        assert_eq!(handles[0].stats().rejected, 0);
        let files: Vec<_> = fs::read_dir(handles[0].dir())
            .unwrap()
            .map(|file| file.unwrap().file_name())
            .collect();
        assert_eq!(files.len(), 1, "one entry and no temporary file: {files:?}");
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn only_digests_name_entries() {
        let cache = LayerCache::open(Path::new("/nonexistent/cudalint"), 1 << 20);
        let hex = "ab".repeat(32);
        let path = cache.entry_path(&format!("sha256:{hex}")).unwrap();
        assert!(path.starts_with(cache.dir()));
        assert!(path.ends_with(format!("sha256-{hex}")));
        assert_eq!(cache.entry_path("sha256:../../etc/passwd"), None);
        assert_eq!(cache.entry_path(&format!("../x:{hex}")), None);
        assert_eq!(cache.entry_path("no-colon"), None);
    }
}
