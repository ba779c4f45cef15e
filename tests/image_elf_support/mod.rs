//! Test support for the ELF reader and the loader model: a `FileBytes` that refuses to go backwards
//! (and counts what it read), an in-memory `FsView` filled from real files, and real ELFs compiled
//! with gcc at test time.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use cudalint::image::facts::{Captured, FileBytes, FsView, Node, NodeKind, ResolveError};
use cudalint::image::probe;

/// A file's bytes that can only be read forwards, as a compressed layer hands them over (`new`), or
/// as a file on disk is read (`random_access`): skips cost nothing and the reader may start over from
/// the beginning, but still never seeks back otherwise.
pub struct ForwardOnly {
    bytes: Vec<u8>,
    position: u64,
    random_access: bool,
    /// Bytes handed out by `read` (skipped bytes excluded).
    pub bytes_read: u64,
    /// Times the reader started over.
    pub rewinds: u32,
}

impl ForwardOnly {
    pub fn new(bytes: Vec<u8>) -> Self {
        ForwardOnly {
            bytes,
            position: 0,
            random_access: false,
            bytes_read: 0,
            rewinds: 0,
        }
    }

    pub fn random_access(bytes: Vec<u8>) -> Self {
        ForwardOnly {
            random_access: true,
            ..ForwardOnly::new(bytes)
        }
    }
}

impl Read for ForwardOnly {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let start = (self.position as usize).min(self.bytes.len());
        let n = buf.len().min(self.bytes.len() - start);
        buf[..n].copy_from_slice(&self.bytes[start..start + n]);
        self.position += n as u64;
        self.bytes_read += n as u64;
        Ok(n)
    }
}

impl FileBytes for ForwardOnly {
    fn size(&self) -> u64 {
        self.bytes.len() as u64
    }
    fn position(&self) -> u64 {
        self.position
    }
    fn skip_to(&mut self, offset: u64) -> io::Result<()> {
        if offset < self.position {
            panic!("backward seek from {} to {offset}", self.position);
        }
        self.position = offset;
        Ok(())
    }
    fn rewind(&mut self) -> io::Result<bool> {
        if self.random_access {
            self.position = 0;
            self.rewinds += 1;
        }
        Ok(self.random_access)
    }
    fn random_access(&self) -> bool {
        self.random_access
    }
}

/// A merged filesystem held in memory; files are probed as the layer reader would.
#[derive(Default)]
pub struct MemFs {
    nodes: BTreeMap<String, Node>,
}

fn node(kind: NodeKind, size: u64, captured: Option<Captured>) -> Node {
    Node {
        kind,
        size,
        mode: 0o755,
        layer: 0,
        captured: captured.map(Arc::new),
    }
}

impl MemFs {
    fn add_parents(&mut self, path: &str) {
        let mut dir = String::new();
        for part in path
            .trim_start_matches('/')
            .split('/')
            .collect::<Vec<_>>()
            .iter()
            .rev()
            .skip(1)
            .rev()
        {
            dir.push('/');
            dir.push_str(part);
            self.nodes
                .entry(dir.clone())
                .or_insert_with(|| node(NodeKind::Dir, 0, None));
        }
        self.nodes
            .entry("/".into())
            .or_insert_with(|| node(NodeKind::Dir, 0, None));
    }

    /// A file with these bytes, probed through a forward-only reader.
    pub fn file(&mut self, path: &str, bytes: Vec<u8>) -> &mut Self {
        self.add_parents(path);
        let size = bytes.len() as u64;
        let mut reader = ForwardOnly::new(bytes);
        let captured = probe::probe(path, &mut reader).expect("probe");
        self.nodes
            .insert(path.into(), node(NodeKind::File, size, captured));
        self
    }

    pub fn text(&mut self, path: &str, text: &str) -> &mut Self {
        self.file(path, text.as_bytes().to_vec())
    }

    pub fn symlink(&mut self, path: &str, target: &str) -> &mut Self {
        self.add_parents(path);
        self.nodes
            .insert(path.into(), node(NodeKind::Symlink(target.into()), 0, None));
        self
    }

    pub fn dir(&mut self, path: &str) -> &mut Self {
        self.add_parents(&format!("{path}/x"));
        self
    }
}

fn join(dir: &str, name: &str) -> String {
    if dir == "/" {
        format!("/{name}")
    } else {
        format!("{dir}/{name}")
    }
}

impl FsView for MemFs {
    fn lstat(&self, path: &str) -> Option<&Node> {
        let (parent, name) = path.rsplit_once('/')?;
        let parent = if parent.is_empty() {
            "/".to_string()
        } else {
            self.canonicalize(parent).ok()?
        };
        self.nodes
            .get(&join(&parent, name))
            .or_else(|| (path == "/").then(|| self.nodes.get("/")).flatten())
    }

    fn canonicalize(&self, path: &str) -> Result<String, ResolveError> {
        let mut pending: Vec<String> = path
            .split('/')
            .filter(|p| !p.is_empty())
            .rev()
            .map(str::to_owned)
            .collect();
        let mut current = "/".to_string();
        let mut links = 0;
        while let Some(part) = pending.pop() {
            match part.as_str() {
                "." => continue,
                ".." => {
                    current = current
                        .rsplit_once('/')
                        .map(|(p, _)| {
                            if p.is_empty() {
                                "/".to_string()
                            } else {
                                p.to_string()
                            }
                        })
                        .unwrap_or_else(|| "/".into());
                    continue;
                }
                _ => {}
            }
            let next = join(&current, &part);
            match self.nodes.get(&next).map(|n| &n.kind) {
                None => return Err(ResolveError::NotFound(path.into())),
                Some(NodeKind::Symlink(target)) => {
                    links += 1;
                    if links > 40 {
                        return Err(ResolveError::Loop(path.into()));
                    }
                    if target.starts_with('/') {
                        current = "/".into();
                    }
                    pending.extend(
                        target
                            .split('/')
                            .filter(|p| !p.is_empty())
                            .rev()
                            .map(str::to_owned),
                    );
                }
                Some(_) => current = next,
            }
        }
        Ok(current)
    }

    fn read_dir(&self, dir: &str) -> Vec<String> {
        let Ok(dir) = self.canonicalize(dir) else {
            return Vec::new();
        };
        let prefix = if dir == "/" {
            "/".to_string()
        } else {
            format!("{dir}/")
        };
        self.nodes
            .keys()
            .filter_map(|p| p.strip_prefix(&prefix))
            .filter(|rest| !rest.is_empty() && !rest.contains('/'))
            .map(str::to_owned)
            .collect()
    }

    fn walk(&self) -> Box<dyn Iterator<Item = (&str, &Node)> + '_> {
        Box::new(self.nodes.iter().map(|(p, n)| (p.as_str(), n)))
    }
}

/// A scratch directory under the target dir, fresh for each test name.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("image_elf")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles `source` (C) into `out` with gcc and these extra flags; returns the bytes.
pub fn gcc(dir: &Path, out: &str, source: &str, flags: &[&str]) -> Vec<u8> {
    let src = dir.join(format!("{out}.c"));
    std::fs::write(&src, source).unwrap();
    let status = Command::new("gcc")
        .args(flags)
        .arg("-o")
        .arg(dir.join(out))
        .arg(&src)
        .current_dir(dir)
        .status()
        .expect("gcc runs");
    assert!(status.success(), "gcc {out} failed");
    std::fs::read(dir.join(out)).unwrap()
}

/// A shared library with this SONAME, NEEDing the given libraries (found by `-L dir`), with extra
/// linker flags (`-Wl,-rpath,...`).
pub fn shared_lib(dir: &Path, file: &str, soname: &str, needs: &[&str], extra: &[&str]) -> Vec<u8> {
    let mut flags = vec![
        "-shared".to_string(),
        "-fPIC".to_string(),
        format!("-Wl,-soname,{soname}"),
        "-L.".to_string(),
        "-Wl,--no-as-needed".to_string(),
    ];
    flags.extend(extra.iter().map(|s| s.to_string()));
    for need in needs {
        flags.push(format!("-l:{need}"));
    }
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    // -l must follow the source: gcc is given flags before the source, which is fine for -shared with --no-as-needed.
    let src = format!(
        "int {}(void) {{ return 1; }}\n",
        file.replace(['.', '-'], "_")
    );
    gcc_link_after(dir, file, &src, &flags)
}

/// As `gcc`, but library flags go after the source file (link order).
pub fn gcc_link_after(dir: &Path, out: &str, source: &str, flags: &[&str]) -> Vec<u8> {
    let src = dir.join(format!("{out}.c"));
    std::fs::write(&src, source).unwrap();
    let (libs, other): (Vec<&str>, Vec<&str>) = flags.iter().partition(|f| f.starts_with("-l"));
    let status = Command::new("gcc")
        .args(&other)
        .arg("-o")
        .arg(dir.join(out))
        .arg(&src)
        .args(&libs)
        .current_dir(dir)
        .status()
        .expect("gcc runs");
    assert!(status.success(), "gcc {out} failed");
    std::fs::read(dir.join(out)).unwrap()
}

/// `readelf -d` of a file: (SONAME, NEEDED list, RPATH, RUNPATH), as the reference.
pub fn readelf_dynamic(
    path: &Path,
) -> (Option<String>, Vec<String>, Option<String>, Option<String>) {
    let out = Command::new("readelf")
        .arg("-dW")
        .arg(path)
        .output()
        .expect("readelf runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let value = |line: &str| {
        line.rsplit_once('[')
            .map(|(_, v)| v.trim_end_matches(']').to_string())
    };
    let (mut soname, mut needed, mut rpath, mut runpath) = (None, Vec::new(), None, None);
    for line in text.lines() {
        if line.contains("(NEEDED)") {
            needed.extend(value(line));
        } else if line.contains("(SONAME)") {
            soname = value(line);
        } else if line.contains("(RPATH)") {
            rpath = value(line);
        } else if line.contains("(RUNPATH)") {
            runpath = value(line);
        }
    }
    (soname, needed, rpath, runpath)
}

/// The GNU build ID that `readelf -n` prints for a file, as the reference.
pub fn readelf_build_id(path: &Path) -> Option<String> {
    let out = Command::new("readelf")
        .arg("-nW")
        .arg(path)
        .output()
        .expect("readelf runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|line| line.split_once("Build ID: "))
        .map(|(_, id)| id.trim().to_owned())
}
