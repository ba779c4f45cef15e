//! The layer cache's entry encoding on a layer of 100,000 files (one in twenty an ELF library with
//! its dynamic-linking facts, a few text files): `LayerCache::put` (postcard, checksum, temporary file,
//! rename) and `LayerCache::get` (read, checksum, decode) against serde_json encoding and decoding the
//! same entries, which is why the cache does not store JSON.
//!
//! Run with `cargo bench --bench layer_cache`. Prints the best time of repeated passes and the size
//! of each encoding.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudalint::image::cache::{BlobInfo, LayerCache};
use cudalint::image::facts::{Captured, ElfClass, ElfFacts, ElfKind};
use cudalint::image::layer::{Change, Compression, LayerContents, LayerEntry};
use serde::{Deserialize, Serialize};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const FILES: usize = 100_000;

/// The same facts in a form serde_json can write and read.
#[derive(Serialize, Deserialize)]
struct JsonEntry {
    path: String,
    mode: u32,
    size: u64,
    captured: Option<Captured>,
}

fn layer() -> LayerContents {
    let entries = (0..FILES)
        .map(|index| {
            let captured = match index % 20 {
                0 => Some(Arc::new(Captured::Elf(ElfFacts {
                    class: ElfClass::Elf64,
                    machine: 62,
                    kind: ElfKind::SharedObject,
                    soname: Some(format!("libmodule{index}.so.1")),
                    needed: vec![
                        "libc.so.6".into(),
                        "libstdc++.so.6".into(),
                        "libcudart.so.12".into(),
                    ],
                    rpath: Vec::new(),
                    runpath: vec!["$ORIGIN/../lib".into()],
                    interpreter: None,
                    build_id: Some(format!("{index:040x}")),
                    unread: Vec::new(),
                    gpu_code: None,
                }))),
                7 if index % 1000 == 7 => Some(Arc::new(Captured::Text(
                    b"Metadata-Version: 2.1\nName: nvidia-cuda-runtime-cu12\nVersion: 12.4.127\n"
                        .to_vec(),
                ))),
                _ => None,
            };
            LayerEntry {
                path: format!(
                    "/usr/lib/python3/dist-packages/package{}/module{index}.py",
                    index % 500
                ),
                mode: 0o644,
                change: Change::File {
                    size: 1000 + index as u64,
                    captured,
                },
            }
        })
        .collect();
    LayerContents {
        entries,
        blob_digest: format!("sha256:{}", "ab".repeat(32)),
        diff_id: format!("sha256:{}", "ab".repeat(32)),
        compression: Compression::None,
        blob_size: 1 << 30,
        tar_size: 1 << 30,
        clamped_names: Vec::new(),
    }
}

fn best(passes: usize, mut work: impl FnMut()) -> Duration {
    (0..passes)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this once to show it works.
    let passes = if std::env::args().any(|arg| arg == "--bench") {
        10
    } else {
        1
    };
    let layer = layer();
    let dir = std::env::temp_dir().join(format!("cudalint-bench-cache-{}", std::process::id()));
    let cache = LayerCache::open(&dir, 1 << 40);
    let blob = BlobInfo {
        digest: layer.blob_digest.clone(),
        size: layer.blob_size,
        compression: Compression::None,
        at: None,
    };
    let put = best(passes, || cache.put(black_box(&layer), None));
    let get = best(passes, || {
        black_box(cache.get(&layer.diff_id, blob.clone()));
    });
    assert_eq!(
        cache.get(&layer.diff_id, blob.clone()).as_ref(),
        Some(&layer),
        "the entry reads back as written"
    );
    let entry_size = std::fs::metadata(cache.entry_path(&layer.diff_id).unwrap())
        .unwrap()
        .len();

    let json_entries: Vec<JsonEntry> = layer
        .entries
        .iter()
        .map(|entry| match &entry.change {
            Change::File { size, captured } => JsonEntry {
                path: entry.path.clone(),
                mode: entry.mode,
                size: *size,
                captured: captured.as_deref().cloned(),
            },
            _ => unreachable!(),
        })
        .collect();
    let mut json = Vec::new();
    let json_encode = best(passes, || {
        json = serde_json::to_vec(black_box(&json_entries)).unwrap();
    });
    let json_decode = best(passes, || {
        black_box(serde_json::from_slice::<Vec<JsonEntry>>(&json).unwrap());
    });
    let _ = std::fs::remove_dir_all(&dir);

    let ms = |duration: Duration| duration.as_secs_f64() * 1000.0;
    println!("layer cache, one layer of {FILES} files (best of {passes}):");
    println!(
        "  postcard entry  {:>9} bytes   put {:>7.1} ms   get {:>7.1} ms",
        entry_size,
        ms(put),
        ms(get)
    );
    println!(
        "  serde_json      {:>9} bytes   encode {:>4.1} ms   decode {:>4.1} ms (no file, no checksum)",
        json.len(),
        ms(json_encode),
        ms(json_decode)
    );
}
