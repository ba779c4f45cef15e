//! Bad archives given to `cudalint image`: each is a clear error with exit status 2 (or, where the
//! input is legal but odd, handled), never a panic, and nothing is extracted to disk. The archives are
//! built here with the tar crate.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "support/archive.rs"]
mod archive_files;
use archive_files::{sha, write_tar};

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("image-bad-input-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A legacy docker-archive with one layer blob, whose config claims `diff_id`.
fn archive(path: &Path, layer: &[u8], diff_id: &str, layer_name: &str) {
    let config =
        serde_json::to_vec(&serde_json::json!({"rootfs": {"diff_ids": [diff_id]}})).unwrap();
    let manifest = serde_json::json!([{"Config": "config.json", "Layers": [layer_name]}]);
    write_tar(
        path,
        &[
            ("config.json".into(), config),
            (
                "manifest.json".into(),
                serde_json::to_vec(&manifest).unwrap(),
            ),
            ("l/layer.tar".into(), layer.to_vec()),
        ],
    );
}

fn layer_with(entries: &[(&[u8], &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, bytes) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        // Names are written raw: the tar crate refuses `..` through its path setters.
        let field = &mut header.as_old_mut().name;
        field[..name.len()].copy_from_slice(name);
        header.set_cksum();
        builder.append(&header, *bytes).unwrap();
    }
    builder.into_inner().unwrap()
}

fn cudalint(reference: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cudalint"))
        .args(["image", "--quiet", reference])
        .output()
        .unwrap()
}

/// The input was refused as unreadable (exit 2), without a panic.
fn assert_refused(output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn assert_error(output: &Output, needle: &str) {
    assert_refused(output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(needle), "expected {needle:?} in: {stderr}");
}

#[test]
fn digest_mismatch_is_refused() {
    let dir = temp_dir("digest");
    let layer = layer_with(&[(b"a", b"x")]);
    archive(
        &dir.join("a.tar"),
        &layer,
        &sha(b"something else"),
        "l/layer.tar",
    );
    assert_error(
        &cudalint(dir.join("a.tar").to_str().unwrap()),
        "digest mismatch",
    );
}

#[test]
fn a_manifest_naming_a_missing_blob_is_refused() {
    let dir = temp_dir("missing");
    let layer = layer_with(&[(b"a", b"x")]);
    archive(
        &dir.join("a.tar"),
        &layer,
        &sha(&layer),
        "nothere/layer.tar",
    );
    assert_error(&cudalint(dir.join("a.tar").to_str().unwrap()), "missing");
}

#[test]
fn corrupt_gzip_and_zstd_are_refused() {
    let dir = temp_dir("corrupt");
    let layer = layer_with(&[(b"a", &[1u8; 4096])]);
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gzip.write_all(&layer).unwrap();
    let mut gzip = gzip.finish().unwrap();
    let middle = gzip.len() / 2;
    gzip[middle] ^= 0xff;
    archive(&dir.join("g.tar"), &gzip, &sha(&layer), "l/layer.tar");
    assert_refused(&cudalint(dir.join("g.tar").to_str().unwrap()));
    let mut zstd = zstd::encode_all(&layer[..], 1).unwrap();
    zstd.truncate(zstd.len() - 8);
    archive(&dir.join("z.tar"), &zstd, &sha(&layer), "l/layer.tar");
    assert_refused(&cudalint(dir.join("z.tar").to_str().unwrap()));
}

#[test]
fn a_truncated_outer_archive_is_refused() {
    let dir = temp_dir("truncated");
    let layer = layer_with(&[(b"a", &[1u8; 100_000])]);
    archive(&dir.join("a.tar"), &layer, &sha(&layer), "l/layer.tar");
    let bytes = std::fs::read(dir.join("a.tar")).unwrap();
    std::fs::write(dir.join("cut.tar"), &bytes[..bytes.len() - 60_000]).unwrap();
    assert_refused(&cudalint(dir.join("cut.tar").to_str().unwrap()));
}

#[test]
fn escaping_and_non_utf8_names_stay_inside_the_image() {
    let dir = temp_dir("escape");
    let layer = layer_with(&[(b"../../escape", b"x"), (b"/abs", b"y"), (b"caf\xe9", b"z")]);
    archive(&dir.join("a.tar"), &layer, &sha(&layer), "l/layer.tar");
    let output = cudalint(dir.join("a.tar").to_str().unwrap());
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("points outside the root"), "{stdout}");
    assert!(!dir.join("escape").exists() && !Path::new("/tmp/escape").exists());
}

#[test]
fn not_an_archive_and_a_missing_path_are_clear_errors() {
    let dir = temp_dir("garbage");
    std::fs::write(dir.join("x.tar"), b"this is not a tar archive at all").unwrap();
    assert_refused(&cudalint(dir.join("x.tar").to_str().unwrap()));
    assert_error(
        &cudalint("docker-archive:/nonexistent/cudalint.tar"),
        "cudalint.tar",
    );
}

/// A GNU sparse entry claiming 10 GB with 512 real bytes at its end: read without materialising it.
fn sparse_layer() -> Vec<u8> {
    const TEN_GB: u64 = 10 * 1000 * 1000 * 1000;
    let mut header = tar::Header::new_gnu();
    header.set_path("huge.sparse").unwrap();
    header.set_mode(0o644);
    header.set_entry_type(tar::EntryType::GNUSparse);
    header.set_size(512);
    {
        let gnu = header.as_gnu_mut().unwrap();
        gnu.sparse[0].set_offset(TEN_GB - 512);
        gnu.sparse[0].set_length(512);
        gnu.set_real_size(TEN_GB);
    }
    header.set_cksum();
    let mut builder = tar::Builder::new(Vec::new());
    builder.append(&header, &[b'x'; 512][..]).unwrap();
    builder.into_inner().unwrap()
}

#[test]
fn a_ten_gigabyte_sparse_entry_costs_nothing() {
    let dir = temp_dir("sparse");
    let layer = sparse_layer();
    archive(&dir.join("a.tar"), &layer, &sha(&layer), "l/layer.tar");
    let output = Command::new(env!("CARGO_BIN_EXE_cudalint"))
        .args(["image", "--quiet", "--format", "json"])
        .arg(dir.join("a.tar"))
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["images"][0]["bytes_added"], 10_000_000_000u64);
}

#[test]
fn a_decompression_bomb_streams_in_bounded_memory() {
    // 16 MB of zeros in a few kB of gzip: decoded as a stream, never held.
    let dir = temp_dir("bomb");
    let mut tar = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    let size = 16u64 << 20;
    header.set_size(size);
    header.set_mode(0o644);
    tar.append_data(&mut header, "zeros", std::io::repeat(0).take(size))
        .unwrap();
    let layer = tar.into_inner().unwrap();
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gzip.write_all(&layer).unwrap();
    let gzip = gzip.finish().unwrap();
    assert!(gzip.len() < 2 << 20);
    archive(&dir.join("a.tar"), &gzip, &sha(&layer), "l/layer.tar");
    drop(layer);
    let output = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(env!("CARGO_BIN_EXE_cudalint"))
        .args(["image", "--quiet"])
        .arg(dir.join("a.tar"))
        .output();
    let Ok(output) = output else { return };
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let peak_kb: u64 = String::from_utf8_lossy(&output.stderr)
        .trim()
        .lines()
        .last()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        peak_kb < 100 * 1024,
        "peak memory {peak_kb} kB for a 16 MB bomb"
    );
}
