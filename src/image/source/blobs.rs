//! Where an archive's files live: inside a tar file (indexed once, then each blob read by seeking to
//! its offset, so layers can be read in parallel on their own file handles) or in a directory (an OCI
//! layout, an unpacked `docker save`). Names are relative, `./` stripped.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// JSON documents (manifests, index, config) larger than this are refused: they are never that big.
const MAX_DOCUMENT_BYTES: u64 = 64 * 1024 * 1024;

/// A read-only store of named files.
pub trait BlobStore: Sync {
    /// Whether `name` exists.
    fn contains(&self, name: &str) -> bool;
    /// The whole file `name`, for small JSON documents.
    fn read_document(&self, name: &str) -> anyhow::Result<Vec<u8>> {
        let mut reader = self.open(name)?;
        let mut bytes = Vec::new();
        (&mut reader)
            .take(MAX_DOCUMENT_BYTES + 1)
            .read_to_end(&mut bytes)
            .with_context(|| format!("reading {name}"))?;
        anyhow::ensure!(
            bytes.len() as u64 <= MAX_DOCUMENT_BYTES,
            "{name} is too large for a JSON document"
        );
        Ok(bytes)
    }
    /// A reader over file `name`.
    fn open(&self, name: &str) -> anyhow::Result<Box<dyn Read + Send + '_>>;
    /// Where file `name`'s bytes are: an open file, the offset of its first byte and its length, so
    /// that it can be read at any offset by several threads at once.
    fn locate(&self, name: &str) -> anyhow::Result<(File, u64, u64)>;
    /// The size of file `name` in bytes.
    fn size(&self, name: &str) -> anyhow::Result<u64>;
    /// The first `len` bytes of file `name` (fewer when it is shorter), read without buffering the
    /// rest: a cached layer's blob is only looked at, to name its compression.
    fn head(&self, name: &str, len: usize) -> anyhow::Result<Vec<u8>>;
    /// Where this store is, for messages.
    fn location(&self) -> String;
}

/// The files of a tar archive, by offset.
pub struct TarStore {
    path: PathBuf,
    entries: HashMap<String, (u64, u64)>,
}

impl TarStore {
    /// Reads the archive's headers (seeking over the file contents).
    pub fn index(path: &Path) -> anyhow::Result<TarStore> {
        let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let mut archive = tar::Archive::new(file);
        let mut entries = HashMap::new();
        for entry in archive
            .entries_with_seek()
            .with_context(|| format!("{}: not a tar archive", path.display()))?
        {
            let entry =
                entry.with_context(|| format!("{}: a damaged tar header", path.display()))?;
            let kind = entry.header().entry_type();
            let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
            let name = name
                .trim_start_matches("./")
                .trim_start_matches('/')
                .to_string();
            if kind.is_file() || kind.is_contiguous() {
                entries.insert(name, (entry.raw_file_position(), entry.size()));
            } else if kind.is_symlink() || kind.is_hard_link() {
                // docker save links identical layers; resolve to the target's bytes.
                if let Some(target) = entry.link_name_bytes() {
                    let target = String::from_utf8_lossy(&target).into_owned();
                    let base = if kind.is_symlink() {
                        Path::new(&name)
                            .parent()
                            .unwrap_or(Path::new(""))
                            .join(&target)
                    } else {
                        PathBuf::from(&target)
                    };
                    let target = crate::image::layer::normalize(&base.to_string_lossy()).0;
                    if let Some(&location) = entries.get(target.trim_start_matches('/')) {
                        entries.insert(name, location);
                    }
                }
            }
        }
        let length = std::fs::metadata(path)?.len();
        for (name, (offset, size)) in &entries {
            if offset + size > length {
                bail!(
                    "{}: {name} runs past the end of the archive (truncated?)",
                    path.display()
                );
            }
        }
        Ok(TarStore {
            path: path.to_path_buf(),
            entries,
        })
    }
}

impl BlobStore for TarStore {
    fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }
    fn open(&self, name: &str) -> anyhow::Result<Box<dyn Read + Send + '_>> {
        let Some(&(offset, size)) = self.entries.get(name) else {
            bail!("{}: the archive has no {name}", self.path.display());
        };
        let mut file = File::open(&self.path)?;
        file.seek(SeekFrom::Start(offset))?;
        Ok(Box::new(io::BufReader::with_capacity(
            1 << 20,
            file.take(size),
        )))
    }
    fn locate(&self, name: &str) -> anyhow::Result<(File, u64, u64)> {
        let Some(&(offset, size)) = self.entries.get(name) else {
            bail!("{}: the archive has no {name}", self.path.display());
        };
        let file =
            File::open(&self.path).with_context(|| format!("opening {}", self.path.display()))?;
        Ok((file, offset, size))
    }
    fn size(&self, name: &str) -> anyhow::Result<u64> {
        match self.entries.get(name) {
            Some(&(_, size)) => Ok(size),
            None => bail!("{}: the archive has no {name}", self.path.display()),
        }
    }
    fn head(&self, name: &str, len: usize) -> anyhow::Result<Vec<u8>> {
        let Some(&(offset, size)) = self.entries.get(name) else {
            bail!("{}: the archive has no {name}", self.path.display());
        };
        let mut file = File::open(&self.path)?;
        file.seek(SeekFrom::Start(offset))?;
        read_head(file.take(size), len)
    }
    fn location(&self) -> String {
        self.path.display().to_string()
    }
}

/// The files of a directory.
pub struct DirStore {
    root: PathBuf,
}

impl DirStore {
    pub fn new(root: &Path) -> DirStore {
        DirStore {
            root: root.to_path_buf(),
        }
    }
    fn path(&self, name: &str) -> Option<PathBuf> {
        // Names come from manifests: never let one leave the directory.
        let clean = crate::image::layer::normalize(name);
        (!clean.1).then(|| self.root.join(clean.0.trim_start_matches('/')))
    }
}

impl BlobStore for DirStore {
    fn contains(&self, name: &str) -> bool {
        self.path(name).is_some_and(|path| path.is_file())
    }
    fn open(&self, name: &str) -> anyhow::Result<Box<dyn Read + Send + '_>> {
        let Some(path) = self.path(name) else {
            bail!("{name}: a blob name outside {}", self.root.display());
        };
        let file = File::open(&path).with_context(|| format!("opening {}", path.display()))?;
        Ok(Box::new(io::BufReader::with_capacity(1 << 20, file)))
    }
    fn locate(&self, name: &str) -> anyhow::Result<(File, u64, u64)> {
        let Some(path) = self.path(name) else {
            bail!("{name}: a blob name outside {}", self.root.display());
        };
        let file = File::open(&path).with_context(|| format!("opening {}", path.display()))?;
        let len = file
            .metadata()
            .with_context(|| format!("{}", path.display()))?
            .len();
        Ok((file, 0, len))
    }
    fn size(&self, name: &str) -> anyhow::Result<u64> {
        let Some(path) = self.path(name) else {
            bail!("{name}: a blob name outside {}", self.root.display());
        };
        Ok(std::fs::metadata(&path)
            .with_context(|| format!("{}", path.display()))?
            .len())
    }
    fn head(&self, name: &str, len: usize) -> anyhow::Result<Vec<u8>> {
        let Some(path) = self.path(name) else {
            bail!("{name}: a blob name outside {}", self.root.display());
        };
        read_head(
            File::open(&path).with_context(|| format!("opening {}", path.display()))?,
            len,
        )
    }
    fn location(&self) -> String {
        self.root.display().to_string()
    }
}

fn read_head(reader: impl Read, len: usize) -> anyhow::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(len);
    reader.take(len as u64).read_to_end(&mut head)?;
    Ok(head)
}
