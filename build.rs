//! Build-time work that keeps text out of the binary (issue 22: a stripped release binary under
//! 10 MB):
//!
//! - The built-in knowledge (`rules/*.toml`, 257,445 bytes of text) is packed into one zstd frame that
//!   `src/knowledge/embedded.rs` decompresses once, at first use, with the zstd decoder the image
//!   reader already links.
//! - The layer cache's directory name carries a fingerprint of the source of the code that
//!   extracts a layer's facts (`src/image/cache.rs` says why). It is hashed here, so the binary
//!   holds the 12 hex digits rather than the 143,000 bytes of source they are computed from.
//!
//! Cargo reruns this script when any of the files it reads changes.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The files whose source decides what a layer's facts are, in the order they are hashed (the
/// order and hash the binary used when it embedded their source and hashed it at run time).
const EXTRACTOR_SOURCES: [&str; 8] = [
    "src/image/cache.rs",
    "src/image/cache/entry.rs",
    "src/image/facts.rs",
    "src/image/layer.rs",
    "src/image/positional.rs",
    "src/image/probe.rs",
    "src/image/elf.rs",
    "src/image/fatbin.rs",
];

/// zstd's highest regular level: the frame is made once per build and read once per process, so
/// the slowest compression costs nothing that matters (a fraction of a second here).
const KNOWLEDGE_LEVEL: i32 = 19;

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    extractor_fingerprint();
    pack_knowledge(&out);
}

fn extractor_fingerprint() {
    let mut hasher = Sha256::new();
    for source in EXTRACTOR_SOURCES {
        println!("cargo:rerun-if-changed={source}");
        hasher.update(read(Path::new(source)));
    }
    let mut hex = String::new();
    for byte in &hasher.finalize()[..6] {
        write!(hex, "{byte:02x}").expect("writing to a String");
    }
    println!("cargo:rustc-env=CUDALINT_EXTRACTOR_FINGERPRINT={hex}");
}

/// Writes `knowledge.zst` (every `rules/*.toml`, concatenated in name order) and
/// `knowledge_index.rs` (`INDEX`: each file's name and its byte range in the concatenation;
/// `LEN`: the concatenation's length).
fn pack_knowledge(out: &Path) {
    // A directory: Cargo reruns the script when any file under it changes, or one is added.
    println!("cargo:rerun-if-changed=rules");
    let mut names: Vec<String> = fs::read_dir("rules")
        .expect("rules/ is readable")
        .map(|entry| entry.expect("rules/ is readable").file_name())
        .filter_map(|name| name.into_string().ok())
        .filter(|name| name.ends_with(".toml"))
        .collect();
    names.sort();

    let mut text = Vec::new();
    let mut index = String::from("const INDEX: &[(&str, usize, usize)] = &[\n");
    for name in &names {
        let path = Path::new("rules").join(name);
        let bytes = read(&path);
        std::str::from_utf8(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let start = text.len();
        text.extend_from_slice(&bytes);
        writeln!(
            index,
            "    ({:?}, {start}, {}),",
            format!("rules/{name}"),
            text.len()
        )
        .expect("writing to a String");
    }
    index.push_str("];\n");
    writeln!(index, "const LEN: usize = {};", text.len()).expect("writing to a String");

    let packed = zstd::bulk::compress(&text, KNOWLEDGE_LEVEL).expect("zstd compresses in memory");
    write(&out.join("knowledge.zst"), &packed);
    write(&out.join("knowledge_index.rs"), index.as_bytes());
}

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write(path: &Path, bytes: &[u8]) {
    fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
