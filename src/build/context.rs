//! The build context as the Docker CLI sends it: the context directory walked in name order, each
//! entry kept or dropped by `.dockerignore` ([`super::dockerignore`]) exactly where
//! `moby/go-archive`'s `TarWithOptions` keeps or drops it, written as an uncompressed tar with owner
//! root. The Dockerfile and `.dockerignore` are sent even when `.dockerignore` names them (the
//! engine needs both; it leaves them out of `COPY .` itself), and a Dockerfile from outside the
//! context travels under a generated name that `.dockerignore` then hides, as `docker build -f
//! ../Dockerfile .` does (docker/cli `cli/command/image/build/context.go`).
//!
//! [`BuildContext::scan`] walks and checks everything first, so an unreadable file or a bad pattern
//! stops the command before the engine is asked anything; [`BuildContext::write_tar`] then streams
//! the entries, reading each file as it goes.

use crate::unix_fs::{FileTypeExt, MetadataExt};
use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use sha2::{Digest, Sha256};
use tar::{EntryType, Header};

use super::dockerignore::{read_patterns, MatchInfo, PatternMatcher};

/// The ignore file's name, at the context root.
pub const DOCKERIGNORE: &str = ".dockerignore";

/// Where the Dockerfile comes from.
#[derive(Debug, Clone)]
pub enum DockerfilePlace {
    /// Inside the context, at this slash path relative to its root.
    InContext(String),
    /// Outside it (or standard input): its bytes, added to the tar under a generated name.
    Outside(Vec<u8>),
}

/// One entry of the context, as it will be written.
#[derive(Debug, Clone)]
pub struct ContextEntry {
    /// Slash path relative to the context root.
    pub name: String,
    pub kind: EntryKind,
    path: PathBuf,
    mode: u32,
    mtime: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    File {
        size: u64,
    },
    Directory,
    Symlink {
        target: PathBuf,
    },
    /// A second name of a file already in the tar (same inode): a hard link to it.
    HardLink {
        target: String,
    },
    /// A FIFO or device node: a header without data.
    Special {
        kind: SpecialKind,
        major: u32,
        minor: u32,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecialKind {
    Fifo,
    CharDevice,
    BlockDevice,
}

/// A context directory, walked and checked, ready to send.
#[derive(Debug)]
pub struct BuildContext {
    entries: Vec<ContextEntry>,
    /// The Dockerfile's path in the tar, for the engine's `dockerfile` parameter.
    dockerfile_name: String,
    /// A Dockerfile from outside the context, and the `.dockerignore` text that hides it.
    added: Option<AddedDockerfile>,
}

#[derive(Debug)]
struct AddedDockerfile {
    bytes: Vec<u8>,
    dockerignore: Vec<u8>,
}

impl BuildContext {
    /// Walk `root` (a directory) with its `.dockerignore`, checking that every entry to be sent can
    /// be read.
    pub fn scan(root: &Path, dockerfile: DockerfilePlace) -> anyhow::Result<BuildContext> {
        let ignore_path = root.join(DOCKERIGNORE);
        let ignore_text = match fs::read(&ignore_path) {
            Ok(bytes) => Some(bytes),
            Err(error) if error.kind() == io::ErrorKind::NotFound => None,
            Err(error) => {
                return Err(error).with_context(|| format!("cannot read {}", ignore_path.display()))
            }
        };
        let mut patterns = ignore_text
            .as_deref()
            .map(|bytes| read_patterns(&String::from_utf8_lossy(bytes)))
            .unwrap_or_default();
        let matcher = PatternMatcher::new(&patterns)
            .with_context(|| format!("in {}", ignore_path.display()))?;
        // docker/cli TrimBuildFilesFromExcludes: the engine needs both files, so a pattern that
        // excludes them is overridden.
        if matcher.matches_single_parent(DOCKERIGNORE) {
            patterns.push(format!("!{DOCKERIGNORE}"));
        }
        if let DockerfilePlace::InContext(name) = &dockerfile {
            if matcher.matches_single_parent(name) {
                patterns.push(format!("!{name}"));
            }
        }
        let matcher = PatternMatcher::new(&patterns)
            .with_context(|| format!("in {}", ignore_path.display()))?;

        let mut walk = Walk {
            matcher: &matcher,
            entries: Vec::new(),
            inodes: HashMap::new(),
        };
        walk.directory(root, "", &MatchInfo::default())?;

        let (dockerfile_name, added) = match dockerfile {
            DockerfilePlace::InContext(name) => (name, None),
            DockerfilePlace::Outside(bytes) => {
                let name = generated_dockerfile_name(&bytes);
                // As AddDockerfileToBuildContext: the name is appended to `.dockerignore`, or a
                // new one hides itself and the Dockerfile.
                let mut dockerignore =
                    ignore_text.unwrap_or_else(|| DOCKERIGNORE.as_bytes().to_vec());
                dockerignore.extend_from_slice(format!("\n{name}\n").as_bytes());
                (
                    name,
                    Some(AddedDockerfile {
                        bytes,
                        dockerignore,
                    }),
                )
            }
        };
        Ok(BuildContext {
            entries: walk.entries,
            dockerfile_name,
            added,
        })
    }

    /// What will be sent, in order (the generated Dockerfile and a generated `.dockerignore` not
    /// included).
    pub fn entries(&self) -> &[ContextEntry] {
        &self.entries
    }

    /// The Dockerfile's name in the tar, as the engine's build request names it.
    pub fn dockerfile_name(&self) -> &str {
        &self.dockerfile_name
    }

    /// Bytes of file content to send.
    pub fn content_bytes(&self) -> u64 {
        self.entries
            .iter()
            .map(|entry| match entry.kind {
                EntryKind::File { size } => size,
                _ => 0,
            })
            .sum()
    }

    /// Write the context as an uncompressed tar to `out`.
    pub fn write_tar(&self, out: impl Write) -> io::Result<()> {
        let mut tar = tar::Builder::new(out);
        let mut dockerignore_written = false;
        for entry in &self.entries {
            if entry.name == DOCKERIGNORE {
                if let Some(added) = &self.added {
                    let mut header = entry.header(EntryType::Regular);
                    header.set_size(added.dockerignore.len() as u64);
                    tar.append_data(&mut header, &entry.name, added.dockerignore.as_slice())?;
                    dockerignore_written = true;
                    continue;
                }
            }
            match &entry.kind {
                EntryKind::File { size } => {
                    let mut header = entry.header(EntryType::Regular);
                    header.set_size(*size);
                    let file = File::open(&entry.path).map_err(|error| named(error, entry))?;
                    let exact = ExactLength {
                        inner: file,
                        left: *size,
                    };
                    tar.append_data(&mut header, &entry.name, exact)
                        .map_err(|error| named(error, entry))?;
                }
                EntryKind::Directory => {
                    let mut header = entry.header(EntryType::Directory);
                    tar.append_data(&mut header, format!("{}/", entry.name), io::empty())?;
                }
                EntryKind::Symlink { target } => {
                    let mut header = entry.header(EntryType::Symlink);
                    tar.append_link(&mut header, &entry.name, target)?;
                }
                EntryKind::HardLink { target } => {
                    let mut header = entry.header(EntryType::Link);
                    tar.append_link(&mut header, &entry.name, target)?;
                }
                EntryKind::Special { kind, major, minor } => {
                    let mut header = entry.header(match kind {
                        SpecialKind::Fifo => EntryType::Fifo,
                        SpecialKind::CharDevice => EntryType::Char,
                        SpecialKind::BlockDevice => EntryType::Block,
                    });
                    header.set_device_major(*major)?;
                    header.set_device_minor(*minor)?;
                    tar.append_data(&mut header, &entry.name, io::empty())?;
                }
            }
        }
        if let Some(added) = &self.added {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.as_secs());
            let mut generated = |name: &str, bytes: &[u8]| {
                let mut header = Header::new_gnu();
                header.set_entry_type(EntryType::Regular);
                header.set_mode(0o600);
                header.set_mtime(now);
                header.set_uid(0);
                header.set_gid(0);
                header.set_size(bytes.len() as u64);
                tar.append_data(&mut header, name, bytes)
            };
            generated(&self.dockerfile_name, &added.bytes)?;
            if !dockerignore_written {
                generated(DOCKERIGNORE, &added.dockerignore)?;
            }
        }
        tar.into_inner()?.flush()
    }
}

impl ContextEntry {
    /// A header with this entry's mode and time, owned by root (the CLI's `ChownOpts`).
    fn header(&self, kind: EntryType) -> Header {
        let mut header = Header::new_gnu();
        header.set_entry_type(kind);
        header.set_mode(self.mode);
        header.set_mtime(self.mtime);
        header.set_uid(0);
        header.set_gid(0);
        header.set_size(0);
        header
    }
}

fn named(error: io::Error, entry: &ContextEntry) -> io::Error {
    io::Error::new(error.kind(), format!("{}: {error}", entry.path.display()))
}

/// The directory walk of `TarWithOptions`, with the checks of `ValidateContextDirectory`.
struct Walk<'m> {
    matcher: &'m PatternMatcher,
    entries: Vec<ContextEntry>,
    /// (device, inode) of files with several names, to the first name sent.
    inodes: HashMap<(u64, u64), String>,
}

impl Walk<'_> {
    fn directory(&mut self, dir: &Path, prefix: &str, parent: &MatchInfo) -> anyhow::Result<()> {
        let read = fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
        let mut children: Vec<(String, PathBuf)> = Vec::new();
        for child in read {
            let child = child.with_context(|| format!("cannot read {}", dir.display()))?;
            let Some(name) = child.file_name().to_str().map(str::to_string) else {
                bail!(
                    "{}: the name is not UTF-8; cudalint cannot match it against .dockerignore",
                    child.path().display()
                );
            };
            children.push((name, child.path()));
        }
        // filepath.WalkDir's order: by name, bytewise.
        children.sort();
        for (name, path) in children {
            let relative = format!("{prefix}{name}");
            let metadata = fs::symlink_metadata(&path)
                .with_context(|| format!("cannot stat {}", path.display()))?;
            let (excluded, info) = self.matcher.matches_using_parent_results(&relative, parent);
            let is_dir = metadata.is_dir();
            if excluded {
                // An excluded directory is still walked when a `!` pattern names something
                // inside it (a prefix test on the pattern's text, as go-archive does), but the
                // directory itself is not sent.
                let reincluded = is_dir
                    && self.matcher.has_exclusions()
                    && self.matcher.patterns().iter().any(|pattern| {
                        pattern.is_exclusion()
                            && format!("{}/", pattern.text()).starts_with(&format!("{relative}/"))
                    });
                if reincluded {
                    self.directory(&path, &format!("{relative}/"), &info)?;
                }
                continue;
            }
            let Some(kind) = self.kind(&path, &relative, &metadata)? else {
                continue;
            };
            self.entries.push(ContextEntry {
                name: relative.clone(),
                kind,
                path: path.clone(),
                mode: metadata.mode() & 0o7777,
                mtime: u64::try_from(metadata.mtime()).unwrap_or(0),
            });
            if is_dir {
                self.directory(&path, &format!("{relative}/"), &info)?;
            }
        }
        Ok(())
    }

    /// What `relative` is sent as; `None` for a socket, which tar cannot hold (Docker skips it).
    fn kind(
        &mut self,
        path: &Path,
        relative: &str,
        metadata: &fs::Metadata,
    ) -> anyhow::Result<Option<EntryKind>> {
        let file_type = metadata.file_type();
        let device = || {
            let rdev = metadata.rdev();
            // glibc's gnu_dev_major / gnu_dev_minor.
            let major = ((rdev >> 8) & 0xfff) | ((rdev >> 32) & !0xfff);
            let minor = (rdev & 0xff) | ((rdev >> 12) & !0xff);
            (major as u32, minor as u32)
        };
        Ok(Some(if file_type.is_dir() {
            EntryKind::Directory
        } else if file_type.is_symlink() {
            let target = fs::read_link(path)
                .with_context(|| format!("cannot read the link {}", path.display()))?;
            EntryKind::Symlink { target }
        } else if file_type.is_file() {
            // ValidateContextDirectory: every file sent must open.
            File::open(path).with_context(|| {
                format!(
                    "cannot read {} (it is in the build context)",
                    path.display()
                )
            })?;
            if metadata.nlink() > 1 {
                let inode = (metadata.dev(), metadata.ino());
                if let Some(first) = self.inodes.get(&inode) {
                    return Ok(Some(EntryKind::HardLink {
                        target: first.clone(),
                    }));
                }
                self.inodes.insert(inode, relative.to_string());
            }
            EntryKind::File {
                size: metadata.len(),
            }
        } else if file_type.is_fifo() {
            EntryKind::Special {
                kind: SpecialKind::Fifo,
                major: 0,
                minor: 0,
            }
        } else if file_type.is_char_device() || file_type.is_block_device() {
            let (major, minor) = device();
            let kind = if file_type.is_char_device() {
                SpecialKind::CharDevice
            } else {
                SpecialKind::BlockDevice
            };
            EntryKind::Special { kind, major, minor }
        } else {
            return Ok(None);
        }))
    }
}

/// `.dockerfile.` and 20 hex digits, as the Docker CLI names a Dockerfile it adds to the context;
/// Docker draws them at random, these come from the content, the process and the time, which is
/// as unlikely to meet a file already in the context.
fn generated_dockerfile_name(bytes: &[u8]) -> String {
    let mut digest = Sha256::new();
    digest.update(bytes);
    digest.update(std::process::id().to_le_bytes());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    digest.update(now.to_le_bytes());
    let hex: String = digest
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!(".dockerfile.{}", &hex[..20])
}

/// A file read for exactly the size its header announced: a file that shrank or grew while the
/// context was being sent is an error, never a tar whose sizes disagree with its content.
struct ExactLength {
    inner: File,
    left: u64,
}

impl Read for ExactLength {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::other("the file grew while it was being sent")),
            };
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let count = self.inner.read(&mut buf[..want])?;
        if count == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file shrank while it was being sent",
            ));
        }
        self.left -= count as u64;
        Ok(count)
    }
}
