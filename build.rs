//! Build-time work that keeps text out of the binary (issue 22: a stripped release binary under
//! 10 MB):
//!
//! - The built-in knowledge (`rules/*.toml`, 257,445 bytes of text) is packed into one zstd frame that
//!   `src/knowledge/embedded.rs` decompresses once, at first use, with the zstd decoder the image
//!   reader already links.
//! - The rules' doc pages (`docs/rules/*.md`, 176,926 bytes of Markdown) are packed the same way,
//!   read by `src/rule_docs.rs` at the first page asked for.
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

/// zstd's highest regular level: each frame is made once per build and read at most once per
/// process, so the slowest compression costs nothing that matters (a fraction of a second here).
const PACK_LEVEL: i32 = 19;

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    extractor_fingerprint();
    // The knowledge's files are named by their path (`rules/cupti.toml`), as its errors and
    // sources cite them; doc pages by their rule code.
    pack(&out, "rules", ".toml", "knowledge", &|name| {
        format!("rules/{name}")
    });
    pack(&out, "docs/rules", ".md", "rule_docs", &|name| {
        name.strip_suffix(".md")
            .expect("filtered on .md")
            .to_string()
    });
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

/// Writes `NAME.zst` (every `DIR/*EXTENSION`, concatenated in file-name order) and `NAME_index.rs`
/// (`INDEX`: each file's key and its byte range in the concatenation; `LEN`: the concatenation's
/// length).
fn pack(out: &Path, dir: &str, extension: &str, name: &str, key: &dyn Fn(&str) -> String) {
    // A directory: Cargo reruns the script when any file under it changes, or one is added.
    println!("cargo:rerun-if-changed={dir}");
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir}/: {e}"))
        .map(|entry| entry.unwrap_or_else(|e| panic!("{dir}/: {e}")).file_name())
        .filter_map(|name| name.into_string().ok())
        .filter(|name| name.ends_with(extension))
        .collect();
    names.sort();

    let mut text = Vec::new();
    let mut index = String::from("const INDEX: &[(&str, usize, usize)] = &[\n");
    for file in &names {
        let path = Path::new(dir).join(file);
        let bytes = read(&path);
        std::str::from_utf8(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let start = text.len();
        text.extend_from_slice(&bytes);
        writeln!(index, "    ({:?}, {start}, {}),", key(file), text.len())
            .expect("writing to a String");
    }
    index.push_str("];\n");
    writeln!(index, "const LEN: usize = {};", text.len()).expect("writing to a String");

    let packed = zstd::bulk::compress(&text, PACK_LEVEL).expect("zstd compresses in memory");
    write(&out.join(format!("{name}.zst")), &packed);
    write(&out.join(format!("{name}_index.rs")), index.as_bytes());
}

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write(path: &Path, bytes: &[u8]) {
    fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
