//! Which GPUs an image can run on: the objects that carry GPU code (read by `fatbin.rs` while the
//! layers streamed), grouped by library family (`libtorch_cuda.so`, every `libcublasLt.so.*`), and
//! for a GPU how each family reaches it: by SASS, only through PTX the driver must JIT-compile, or
//! not at all. The summary (text inventory, JSON `gpu_code`, the HTML matrix) and the rules CU221 and
//! CU230–CU233 read it; the compatibility rules themselves are data (`knowledge::gpus`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::facts::{Captured, FsView, NodeKind};
use super::fatbin::{arch_name, CodeKind, CodeRow, GpuCode, Variant};
use crate::knowledge::gpus::{Capability, Gpus, Reach};

/// One object with GPU code.
#[derive(Clone, Debug)]
pub struct GpuObject {
    pub path: String,
    pub layer: usize,
    pub code: GpuCode,
}

/// How a GPU gets code from an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coverage {
    /// SASS it runs as is.
    Sass,
    /// Only PTX the driver JIT-compiles: the lowest PTX ISA version among the usable entries, and
    /// their count and decompressed bytes.
    PtxOnly {
        isa: (u16, u16),
        entries: u64,
        bytes: u64,
    },
    /// Neither: "no kernel image is available for execution on the device".
    None,
}

fn reach(variant: Variant) -> Reach {
    match variant {
        Variant::Plain => Reach::Plain,
        Variant::ArchSpecific => Reach::ArchSpecific,
        Variant::Family => Reach::Family,
    }
}

/// How `code` reaches a GPU of compute capability `target`.
pub fn coverage(code: &GpuCode, target: Capability) -> Coverage {
    let runs = |row: &&CodeRow| {
        row.kind == CodeKind::Sass && Gpus::runs_sass(target, row.arch, reach(row.variant))
    };
    if code.rows.iter().any(|row| runs(&row)) {
        return Coverage::Sass;
    }
    let jit: Vec<&CodeRow> = code
        .rows
        .iter()
        .filter(|row| {
            row.kind == CodeKind::Ptx && Gpus::jits_ptx(target, row.arch, reach(row.variant))
        })
        .collect();
    match jit.iter().filter_map(|row| row.ptx_isa).min() {
        Some(isa) => Coverage::PtxOnly {
            isa,
            entries: jit.iter().map(|row| row.count).sum(),
            bytes: jit.iter().map(|row| row.bytes).sum(),
        },
        None => Coverage::None,
    }
}

/// `libtorch_cuda.so`, `libcublasLt.so.13.1.0.3` → `libtorch_cuda`, `libcublasLt`: what one finding
/// and one inventory line stand for (the copies and versions of one library).
pub fn family(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.find(".so") {
        Some(at) => &name[..at],
        None => name,
    }
}

/// Every regular file of the image whose ELF facts carry SASS or PTX, by path.
pub fn gpu_objects(fs: &dyn FsView) -> Vec<GpuObject> {
    fs.walk()
        .filter(|(_, node)| node.kind == NodeKind::File)
        .filter_map(|(path, node)| match node.captured.as_deref() {
            Some(Captured::Elf(elf)) => {
                elf.gpu_code
                    .as_ref()
                    .filter(|code| !code.is_empty())
                    .map(|code| GpuObject {
                        path: path.to_owned(),
                        layer: node.layer,
                        code: code.clone(),
                    })
            }
            _ => None,
        })
        .collect()
}

/// One object's GPU code as the JSON format and the HTML matrix show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GpuCodeEntry {
    pub path: String,
    /// SASS targets as `cuobjdump --list-elf` names them (`sm_80`, `sm_90a`).
    pub sass: Vec<String>,
    /// PTX virtual architectures as `cuobjdump --list-ptx` names them (`sm_90`).
    pub ptx: Vec<String>,
    /// PTX ISA versions of the PTX (`9.0`).
    pub ptx_isa: Vec<String>,
    /// Entries per compression (`none`, `lz4`, `zstd`).
    pub compression: BTreeMap<String, u64>,
    pub sass_entries: u64,
    pub ptx_entries: u64,
    pub containers: u64,
    /// Containers that did not parse to their end.
    #[serde(skip_serializing_if = "is_zero")]
    pub damaged: u64,
    /// The CUDA release whose ptxas built the SASS (`13.5`), from the cubins' toolkit note.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub built_with: Option<String>,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

impl GpuCodeEntry {
    pub fn new(object: &GpuObject) -> GpuCodeEntry {
        let code = &object.code;
        GpuCodeEntry {
            path: object.path.clone(),
            sass: code.sass(),
            ptx: code.ptx(),
            ptx_isa: code
                .ptx_isa()
                .into_iter()
                .map(|(major, minor)| format!("{major}.{minor}"))
                .collect(),
            compression: code
                .compression()
                .into_iter()
                .map(|(compression, count)| (compression.name().to_owned(), count))
                .collect(),
            sass_entries: code.count(CodeKind::Sass),
            ptx_entries: code.count(CodeKind::Ptx),
            containers: code.containers,
            damaged: code.damaged,
            built_with: code
                .toolkit
                .map(|(major, minor)| format!("{major}.{minor}")),
        }
    }
}

/// The text inventory's line for one family: `GPU code: sm_75 sm_80 SASS, no PTX`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GpuFamily {
    pub family: String,
    pub objects: usize,
    pub sass: Vec<String>,
    pub ptx: Vec<String>,
}

/// Families with their union of targets, sorted by family name.
pub fn families(entries: &[GpuCodeEntry]) -> Vec<GpuFamily> {
    let mut by_family: BTreeMap<&str, GpuFamily> = BTreeMap::new();
    for entry in entries {
        let name = family(&entry.path);
        let line = by_family.entry(name).or_insert_with(|| GpuFamily {
            family: name.to_owned(),
            objects: 0,
            sass: Vec::new(),
            ptx: Vec::new(),
        });
        line.objects += 1;
        line.sass.extend(entry.sass.iter().cloned());
        line.ptx.extend(entry.ptx.iter().cloned());
    }
    by_family
        .into_values()
        .map(|mut line| {
            sort_arch_names(&mut line.sass);
            sort_arch_names(&mut line.ptx);
            line
        })
        .collect()
}

/// `sm_75`, `sm_80`, `sm_90`, `sm_90a`, `sm_100` (by number, not as text).
fn sort_arch_names(names: &mut Vec<String>) {
    let key = |name: &String| {
        let digits: String = name.chars().filter(char::is_ascii_digit).collect();
        (digits.parse::<u32>().unwrap_or(0), name.clone())
    };
    names.sort_by_key(key);
    names.dedup();
}

/// The GPUs of the data that no object loaded at start can serve with some library: `V100 (sm_70)
/// and older`, then the others one by one. Empty when every GPU the data knows is served.
pub fn no_kernel_for(objects: &[&GpuObject], gpus: &Gpus) -> Vec<String> {
    let known = gpus.known_capabilities();
    let fails: Vec<bool> = known
        .iter()
        .map(|(cc, _)| {
            objects
                .iter()
                .any(|object| coverage(&object.code, *cc) == Coverage::None)
        })
        .collect();
    let older = fails.iter().take_while(|fail| **fail).count();
    let label = |(cc, name): &(Capability, &str)| {
        format!("{name} ({})", arch_name(cc.arch(), Variant::Plain))
    };
    let mut out = Vec::new();
    if older > 1 {
        out.push(format!("{} and older", label(&known[older - 1])));
    } else if older == 1 {
        out.push(label(&known[0]));
    }
    out.extend(
        known
            .iter()
            .zip(&fails)
            .skip(older)
            .filter(|(_, fail)| **fail)
            .map(|(gpu, _)| label(gpu)),
    );
    out
}

/// The text inventory lines: one per family, then what the image cannot run on.
pub fn render_text(families: &[GpuFamily], no_kernel: &[String]) -> String {
    let mut text = String::new();
    for line in families {
        let sass = if line.sass.is_empty() {
            "no SASS".to_owned()
        } else {
            format!("{} SASS", line.sass.join(" "))
        };
        let ptx = if line.ptx.is_empty() {
            "no PTX".to_owned()
        } else {
            format!("PTX {}", line.ptx.join(" "))
        };
        let copies = if line.objects > 1 {
            format!(" ({} objects)", line.objects)
        } else {
            String::new()
        };
        text.push_str(&format!(
            "GPU code: {}{copies}: {sass}, {ptx}\n",
            line.family
        ));
    }
    if !families.is_empty() && !no_kernel.is_empty() {
        text.push_str(&format!(
            "GPU code: no kernel for: {}\n",
            no_kernel.join(", ")
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::fatbin::CodeCompression;

    fn code(rows: &[(CodeKind, u32, Variant)]) -> GpuCode {
        GpuCode {
            rows: rows
                .iter()
                .map(|&(kind, arch, variant)| CodeRow {
                    kind,
                    arch,
                    variant,
                    compression: CodeCompression::None,
                    ptx_isa: (kind == CodeKind::Ptx).then_some((9, 0)),
                    count: 1,
                    bytes: 100,
                })
                .collect(),
            containers: 1,
            damaged: 0,
            toolkit: None,
        }
    }

    #[test]
    fn sass_then_ptx_then_nothing() {
        let torch = code(&[
            (CodeKind::Sass, 75, Variant::Plain),
            (CodeKind::Sass, 90, Variant::ArchSpecific),
            (CodeKind::Ptx, 90, Variant::Plain),
        ]);
        let cc = |text| Capability::parse(text).unwrap();
        assert_eq!(coverage(&torch, cc("7.5")), Coverage::Sass);
        assert_eq!(coverage(&torch, cc("7.0")), Coverage::None);
        assert!(matches!(
            coverage(&torch, cc("12.0")),
            Coverage::PtxOnly { isa: (9, 0), .. }
        ));
        assert!(matches!(coverage(&torch, cc("9.0")), Coverage::Sass));
        assert_eq!(family("/x/libcublasLt.so.13.1.0.3"), "libcublasLt");
    }

    #[test]
    fn the_summary_names_the_oldest_gpus_as_a_range() {
        let object = GpuObject {
            path: "/lib/libx.so".into(),
            layer: 0,
            code: code(&[
                (CodeKind::Sass, 75, Variant::Plain),
                (CodeKind::Sass, 80, Variant::Plain),
            ]),
        };
        let lines = no_kernel_for(&[&object], Gpus::embedded());
        assert_eq!(lines[0], "Jetson AGX Xavier (sm_72) and older");
        assert!(
            lines.iter().any(|line| line.starts_with("H100 (sm_90)")),
            "{lines:?}"
        );
    }
}
