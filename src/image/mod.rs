//! Built images: where they come from, how their layers merge into one filesystem, and the facts the
//! image rules read.
//!
//! The pipeline: a source (`source/`) yields the image config and its layers in manifest order; the
//! layer reader applies each layer to the merged filesystem (`fs.rs`: whiteouts, links, the layer that
//! owns each path, bytes wasted) and, while a file's bytes stream past, hands it to the content probe
//! (`probe.rs`), which keeps only what the rules need: the ELF dynamic-linking facts (`elf.rs`) and small
//! text files (ld.so.conf, version.json, dist-info METADATA), and the GPU code of fatbins (`fatbin.rs`,
//! read through the ELF reader; `gpu.rs` says which GPUs it serves). Nothing is extracted to disk. The loader
//! model (`ldso.rs`) then resolves DT_NEEDED inside the merged tree and the inventory (`inventory.rs`)
//! lists the CUDA content. `facts.rs` is the contract between those parts.
//!
//! For the rules: `scan.rs` indexes an image once (inventory, unresolved libraries, and `content.rs`:
//! what the bytes are and the size breakdown), `provenance.rs` pairs layers with the Dockerfile
//! instructions that made them, `confirm.rs` judges what Dockerfile findings predicted, and
//! `summary.rs` keeps what the report shows besides findings.
//!
//! This module is a library: it knows nothing of the engine, the renderers or the commands. Running
//! the image rules over an image is `crate::image_lint`; `cudalint image` is `crate::cli::image`.

pub mod cache;
pub mod config;
pub mod confirm;
pub mod content;
mod decode;
pub mod elf;
pub mod facts;
pub mod fatbin;
pub mod fs;
pub mod gpu;
pub mod inventory;
pub mod layer;
pub mod ldso;
pub mod linkage;
pub mod positional;
pub mod probe;
pub mod provenance;
pub mod report;
pub mod scan;
pub mod source;
pub mod startup;
pub mod summary;
