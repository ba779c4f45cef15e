//! `rootfs:/path`: an unpacked filesystem (a chroot, a container's merged directory, `/` of a GPU
//! host) read as one pseudo-layer. It stays on the root's filesystem (as `find -xdev`), so /proc,
//! /sys and other mounts are not walked; symlinks are recorded, never followed; files are probed with
//! real seeks.

use crate::unix_fs::OsStrExt;
use crate::unix_fs::{FileTypeExt, MetadataExt};
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;

use crate::image::facts::FileBytes;
use crate::image::layer::{Change, Compression, LayerContents, LayerEntry};
use crate::image::probe;

/// Reads the tree under `root` as one layer.
pub fn read_rootfs(root: &Path) -> anyhow::Result<LayerContents> {
    let meta = fs::metadata(root).with_context(|| format!("rootfs:{}", root.display()))?;
    anyhow::ensure!(meta.is_dir(), "rootfs:{}: not a directory", root.display());
    let root_device = meta.dev();
    let mut entries = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, image_dir)) = stack.pop() {
        let Ok(listing) = fs::read_dir(&dir) else {
            continue; // unreadable directories are listed but not entered
        };
        let mut children: Vec<_> = listing.filter_map(Result::ok).collect();
        children.sort_by_key(|child| child.file_name());
        for child in children {
            let name = String::from_utf8_lossy(child.file_name().as_bytes()).into_owned();
            let path = format!("{image_dir}/{name}");
            let Ok(meta) = child.metadata() else { continue };
            let kind = meta.file_type();
            let mode = meta.mode() & 0o7777;
            let change = if kind.is_dir() {
                if meta.dev() == root_device {
                    stack.push((child.path(), path.clone()));
                }
                Change::Dir
            } else if kind.is_symlink() {
                let target = fs::read_link(child.path()).unwrap_or_default();
                Change::Symlink(String::from_utf8_lossy(target.as_os_str().as_bytes()).into_owned())
            } else if kind.is_file() {
                let captured = match File::open(child.path()) {
                    Ok(file) => {
                        let mut bytes = SeekableFile {
                            file,
                            size: meta.len(),
                            position: 0,
                        };
                        probe::probe(&path, &mut bytes).ok().flatten().map(Arc::new)
                    }
                    Err(_) => None,
                };
                Change::File {
                    size: meta.len(),
                    captured,
                }
            } else if kind.is_block_device()
                || kind.is_char_device()
                || kind.is_fifo()
                || kind.is_socket()
            {
                Change::Other
            } else {
                continue;
            };
            entries.push(LayerEntry { path, mode, change });
        }
    }
    Ok(LayerContents {
        entries,
        blob_digest: String::new(),
        diff_id: String::new(),
        compression: Compression::None,
        blob_size: 0,
        tar_size: 0,
        clamped_names: Vec::new(),
    })
}

/// A file on disk: skipping seeks.
pub struct SeekableFile {
    pub file: File,
    pub size: u64,
    pub position: u64,
}

impl Read for SeekableFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.file.read(buf)?;
        self.position += read as u64;
        Ok(read)
    }
}

impl FileBytes for SeekableFile {
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
                "cannot skip backwards",
            ));
        }
        self.file.seek(SeekFrom::Start(offset))?;
        self.position = offset;
        Ok(())
    }
    fn rewind(&mut self) -> io::Result<bool> {
        self.file.seek(SeekFrom::Start(0))?;
        self.position = 0;
        Ok(true)
    }
    fn random_access(&self) -> bool {
        true
    }
}
