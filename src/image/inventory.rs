//! The CUDA content of an image, from its merged filesystem and config: CUDA runtimes and the other
//! CUDA libraries (CUPTI, cuDNN, NCCL, cuBLAS) with their SONAMEs and the versions their real file
//! names carry, toolkit `version.json` files, pip `nvidia-*` and CUDA-built Python packages from their
//! dist-info METADATA, torch's `version.py` CUDA, and the `NVIDIA_*` environment and labels. Serialised
//! as JSON as is; [`render_text`] writes the text report.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::facts::{Captured, FsView, NodeKind};

/// The CUDA library families listed, by file-name stem (the part before `.so`).
const LIBRARY_FAMILIES: &[(&str, LibraryFamily)] = &[
    ("libcudart", LibraryFamily::CudaRuntime),
    ("libcupti", LibraryFamily::Cupti),
    ("libcudnn", LibraryFamily::Cudnn),
    ("libnccl", LibraryFamily::Nccl),
    ("libcublas", LibraryFamily::Cublas),
    ("libcublasLt", LibraryFamily::Cublas),
];

/// The pip distribution that ships each family, by a part of its name (`nvidia-cuda-runtime-cu12`,
/// `nvidia-cuda-runtime` for CUDA 13), as the nvidia-* wheels on PyPI are named.
const PIP_DISTRIBUTIONS: &[(LibraryFamily, &str)] = &[
    (LibraryFamily::CudaRuntime, "nvidia-cuda-runtime"),
    (LibraryFamily::Cupti, "nvidia-cuda-cupti"),
    (LibraryFamily::Cudnn, "nvidia-cudnn"),
    (LibraryFamily::Nccl, "nvidia-nccl"),
    (LibraryFamily::Cublas, "nvidia-cublas"),
];

/// Which CUDA library a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LibraryFamily {
    CudaRuntime,
    Cupti,
    Cudnn,
    Nccl,
    Cublas,
}

/// One CUDA library file (a regular file, not the symlinks to it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CudaLibrary {
    pub family: LibraryFamily,
    pub path: String,
    pub soname: Option<String>,
    /// From the file name after `.so.` (`libcudart.so.12.4.127` → `12.4.127`), when it has one.
    pub version: Option<String>,
    /// Inside a pip package (`…/site-packages/nvidia/…`) rather than a system directory.
    pub pip: bool,
    /// The library's own version to at least major.minor: from the file name
    /// (`libcudart.so.11.8.89`), or, for a pip library named by its SONAME only, from the
    /// `nvidia-*` distribution beside it (`nvidia-cuda-runtime-cu12 12.9.79`); `None` when neither
    /// says more than the major.
    pub release: Option<String>,
    pub size: u64,
}

/// A CUDA toolkit's `version.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolkitVersion {
    pub path: String,
    /// `cuda.version` (e.g. `12.4.1`).
    pub version: Option<String>,
}

/// A Python distribution from its dist-info METADATA.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PythonPackage {
    pub name: String,
    pub version: String,
    /// The `.dist-info` directory.
    pub path: String,
}

/// torch's `version.py`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TorchBuild {
    pub path: String,
    pub version: Option<String>,
    /// `cuda = '12.4'`; `None` for a CPU build.
    pub cuda: Option<String>,
}

/// An installed Debian package built for one CUDA release (`libnccl2 2.21.5-1+cuda12.4`), from
/// dpkg's status file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CudaDeb {
    pub name: String,
    pub version: String,
}

impl CudaDeb {
    /// The CUDA release the build is for: the part after `+cuda` (`12.4`).
    pub fn cuda(&self) -> Option<crate::knowledge::Version> {
        crate::knowledge::Version::parse(self.version.rsplit_once("+cuda")?.1)
    }
}

/// Everything CUDA an image holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Inventory {
    pub libraries: Vec<CudaLibrary>,
    pub toolkits: Vec<ToolkitVersion>,
    /// `nvidia-*` pip distributions (the CUDA libraries as wheels).
    pub nvidia_packages: Vec<PythonPackage>,
    /// Other distributions built for CUDA (`+cu124` local versions, names with `cuda`).
    pub cuda_python_packages: Vec<PythonPackage>,
    pub torch: Vec<TorchBuild>,
    /// Installed Debian packages whose version names a CUDA build (`+cuda12.4`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cuda_debs: Vec<CudaDeb>,
    /// `NVIDIA_*` and `CUDA_VERSION` entries of the config's environment.
    pub nvidia_env: BTreeMap<String, String>,
    /// Labels under `com.nvidia.` and `NVIDIA_*`.
    pub nvidia_labels: BTreeMap<String, String>,
}

impl CudaLibrary {
    /// The CUDA major of a runtime library, from its file name's version or else its SONAME
    /// (`libcudart.so.12` → 12).
    pub fn cuda_major(&self) -> Option<u32> {
        let version = self
            .version
            .as_deref()
            .or_else(|| self.soname.as_deref()?.strip_prefix("libcudart.so."))?;
        version.split('.').next()?.parse().ok()
    }

    /// The CUDA release this library belongs to, to major.minor (`12.9`), when its version says so.
    pub fn cuda_release(&self) -> Option<crate::knowledge::Version> {
        self.release
            .as_deref()
            .and_then(crate::knowledge::Version::parse)
            .filter(|version| version.written >= 2)
            .map(crate::knowledge::Version::major_minor)
    }
}

impl Inventory {
    /// The CUDA runtime libraries.
    pub fn cuda_runtimes(&self) -> impl Iterator<Item = &CudaLibrary> {
        self.libraries
            .iter()
            .filter(|library| library.family == LibraryFamily::CudaRuntime)
    }
}

/// Lists the CUDA content of `fs`, given the config's `Env` (`KEY=VALUE`) and labels.
pub fn inventory<F: FsView + ?Sized>(
    fs: &F,
    env: &[String],
    labels: &BTreeMap<String, String>,
) -> Inventory {
    let mut found = Inventory::default();
    for (path, node) in fs.walk() {
        if node.kind != NodeKind::File {
            continue;
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        if let Some(family) = library_family(name) {
            let soname = match node.captured.as_deref() {
                Some(Captured::Elf(facts)) => facts.soname.clone(),
                _ => None,
            };
            found.libraries.push(CudaLibrary {
                family,
                path: path.to_owned(),
                soname,
                version: name
                    .split_once(".so.")
                    .map(|(_, version)| version.to_owned()),
                pip: path.contains("-packages/nvidia/"),
                release: name
                    .split_once(".so.")
                    .map(|(_, version)| version)
                    .filter(|version| version.contains('.'))
                    .map(str::to_owned),
                size: node.size,
            });
            continue;
        }
        let Some(Captured::Text(bytes)) = node.captured.as_deref() else {
            continue;
        };
        let text = String::from_utf8_lossy(bytes);
        if path.starts_with("/usr/local/cuda") && path.ends_with("/version.json") {
            found.toolkits.push(ToolkitVersion {
                path: path.to_owned(),
                version: toolkit_version(&text),
            });
        } else if path.ends_with(".dist-info/METADATA") {
            if let Some((name, version)) = metadata_name_version(&text) {
                let package = PythonPackage {
                    path: path.trim_end_matches("/METADATA").to_owned(),
                    name: name.clone(),
                    version: version.clone(),
                };
                let lower = name.to_ascii_lowercase();
                if lower.starts_with("nvidia-") || lower.starts_with("nvidia_") {
                    found.nvidia_packages.push(package);
                } else if version.contains("+cu")
                    || lower.contains("cuda")
                    || cuda_major_in_name(&lower.replace('_', "-")).is_some()
                {
                    found.cuda_python_packages.push(package);
                }
            }
        } else if path == super::probe::DPKG_STATUS {
            found.cuda_debs = installed_cuda_debs(&text);
        } else if path.ends_with("/torch/version.py") {
            found.torch.push(TorchBuild {
                path: path.to_owned(),
                version: python_assignment(&text, "__version__").flatten(),
                cuda: python_assignment(&text, "cuda").flatten(),
            });
        }
    }
    for library in &mut found.libraries {
        if library.release.is_none() && library.pip {
            library.release = pip_release(library, &found.nvidia_packages);
        }
    }
    for entry in env {
        if let Some((key, value)) = entry.split_once('=') {
            if key.starts_with("NVIDIA_") || key == "CUDA_VERSION" {
                found.nvidia_env.insert(key.to_owned(), value.to_owned());
            }
        }
    }
    for (key, value) in labels {
        if key.starts_with("com.nvidia.") || key.starts_with("NVIDIA_") {
            found.nvidia_labels.insert(key.clone(), value.clone());
        }
    }
    found
}

/// The installed packages of a (condensed) dpkg status file whose version names a CUDA build.
fn installed_cuda_debs(status: &str) -> Vec<CudaDeb> {
    status
        .split("\n\n")
        .filter_map(|stanza| {
            let field = |name: &str| {
                stanza
                    .lines()
                    .find_map(|line| line.strip_prefix(name))
                    .map(str::trim)
            };
            let installed = field("Status:")?.ends_with(" installed");
            let version = field("Version:")?;
            let name = field("Package:")?;
            (installed && version.contains("+cuda")).then(|| CudaDeb {
                name: name.to_owned(),
                version: version.to_owned(),
            })
        })
        .collect()
}

/// The version of the `nvidia-*` distribution that ships a pip library, found in the same
/// site-packages directory.
fn pip_release(library: &CudaLibrary, packages: &[PythonPackage]) -> Option<String> {
    let site = &library.path[..library.path.find("/nvidia/")?];
    let (_, wanted) = PIP_DISTRIBUTIONS
        .iter()
        .find(|(family, _)| *family == library.family)?;
    packages
        .iter()
        .filter(|package| package.path.rsplit_once('/').map(|(dir, _)| dir) == Some(site))
        .find(|package| {
            let name = package.name.to_ascii_lowercase().replace('_', "-");
            name == *wanted
                || name
                    .strip_prefix(wanted)
                    .is_some_and(|rest| rest.starts_with("-cu"))
        })
        .map(|package| package.version.clone())
}

fn library_family(name: &str) -> Option<LibraryFamily> {
    let (stem, _) = name.split_once(".so")?;
    LIBRARY_FAMILIES
        .iter()
        .find(|(family_stem, _)| *family_stem == stem)
        .map(|(_, family)| *family)
}

fn toolkit_version(text: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    value
        .get("cuda")?
        .get("version")?
        .as_str()
        .map(str::to_owned)
}

/// `Name:` and `Version:` from the header block of a METADATA file.
fn metadata_name_version(text: &str) -> Option<(String, String)> {
    let mut name = None;
    let mut version = None;
    for line in text.lines().take_while(|line| !line.is_empty()) {
        if let Some(value) = line.strip_prefix("Name:") {
            name = Some(value.trim().to_owned());
        } else if let Some(value) = line.strip_prefix("Version:") {
            version = Some(value.trim().to_owned());
        }
    }
    Some((name?, version?))
}

/// The value of `name = '…'` (or `name: Optional[str] = '…'`) in a Python file: `Some(None)` for
/// `None`, `None` when there is no such line.
fn python_assignment(text: &str, name: &str) -> Option<Option<String>> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(name)?;
        if !rest.starts_with([' ', '=', ':']) {
            return None;
        }
        let value = rest.split_once('=')?.1.trim();
        if value == "None" {
            return Some(None);
        }
        let quote = value.chars().next().filter(|c| *c == '\'' || *c == '"')?;
        let inner = &value[1..];
        Some(inner.split(quote).next().map(str::to_owned))
    })
}

/// The inventory as the text report prints it.
pub fn render_text(inventory: &Inventory) -> String {
    let mut out = String::new();
    let family_name = |family: LibraryFamily| match family {
        LibraryFamily::CudaRuntime => "CUDA runtime",
        LibraryFamily::Cupti => "CUPTI",
        LibraryFamily::Cudnn => "cuDNN",
        LibraryFamily::Nccl => "NCCL",
        LibraryFamily::Cublas => "cuBLAS",
    };
    let mut libraries: Vec<&CudaLibrary> = inventory.libraries.iter().collect();
    libraries.sort_by(|a, b| (a.family, &a.path).cmp(&(b.family, &b.path)));
    if !libraries.is_empty() {
        out.push_str("CUDA libraries:\n");
        for library in libraries {
            let _ = writeln!(
                out,
                "  {:<13} {:<10} {}{}{}",
                family_name(library.family),
                library.version.as_deref().unwrap_or("?"),
                library.path,
                library
                    .soname
                    .as_deref()
                    .map(|soname| format!(" (SONAME {soname})"))
                    .unwrap_or_default(),
                if library.pip { " [pip]" } else { "" },
            );
        }
    }
    for toolkit in &inventory.toolkits {
        let _ = writeln!(
            out,
            "CUDA toolkit {} ({})",
            toolkit.version.as_deref().unwrap_or("?"),
            toolkit.path
        );
    }
    for torch in &inventory.torch {
        let _ = writeln!(
            out,
            "torch {} built for CUDA {} ({})",
            torch.version.as_deref().unwrap_or("?"),
            torch.cuda.as_deref().unwrap_or("none (CPU)"),
            torch.path
        );
    }
    for (title, packages) in [
        ("NVIDIA pip packages", &inventory.nvidia_packages),
        ("CUDA Python packages", &inventory.cuda_python_packages),
    ] {
        if !packages.is_empty() {
            let _ = writeln!(out, "{title}:");
            for package in packages {
                let _ = writeln!(out, "  {} {}", package.name, package.version);
            }
        }
    }
    if !inventory.cuda_debs.is_empty() {
        let _ = writeln!(out, "Debian packages built per CUDA release:");
        for deb in &inventory.cuda_debs {
            let _ = writeln!(out, "  {} {}", deb.name, deb.version);
        }
    }
    for (title, map) in [
        ("NVIDIA environment", &inventory.nvidia_env),
        ("NVIDIA labels", &inventory.nvidia_labels),
    ] {
        if !map.is_empty() {
            let _ = writeln!(out, "{title}:");
            for (key, value) in map {
                let _ = writeln!(out, "  {key}={value}");
            }
        }
    }
    if out.is_empty() {
        out.push_str("No CUDA content found.\n");
    }
    out
}

/// The CUDA major a distribution name carries in one of its `-`-separated words: `cu13`,
/// `cuda12`, `cuda12x`, or `cu118`/`cuda118` (major and minor: 11).
pub fn cuda_major_in_name(name: &str) -> Option<u32> {
    name.split('-').find_map(|word| {
        let rest = word
            .strip_prefix("cuda")
            .or_else(|| word.strip_prefix("cu"))?;
        let digits = rest.strip_suffix('x').unwrap_or(rest);
        if !digits.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        match digits.len() {
            2 => digits.parse().ok(),
            3 => digits[..2].parse().ok(),
            _ => None,
        }
    })
}
