//! The layer cache (`src/image/cache.rs`) through `cudalint image`: a second scan of an image is served
//! from the cache with an identical report; a second image sharing base layers reads only its own
//! layers, whatever their compression; a cached layer's blob is not decompressed; a corrupt entry is
//! ignored and rewritten; concurrent runs leave a sound cache; the bound holds; `--no-cache` writes
//! nothing. Every run points `XDG_CACHE_HOME` at its own temporary directory. The archives are built
//! here with the tar crate, with the test process's own libc among the files so real ELF facts go
//! through the cache.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use cudalint::image::cache::LayerCache;
use cudalint::image::source::{ImageSource, LoadOptions};
use serde_json::Value;

#[path = "support/archive.rs"]
mod archive_files;
use archive_files::{legacy_docker_archive, oci_layout, sha, write_tar};

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("cudalint-cache-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The C library this test process runs with: a real shared object with a SONAME and DT_NEEDED.
fn host_libc() -> (String, Vec<u8>) {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let path = maps
        .lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|path| path.contains("/libc.so") || path.contains("/libc-"))
        .expect("the test process maps a libc")
        .to_string();
    let name = Path::new(&path)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    (name, std::fs::read(&path).unwrap())
}

/// A layer tar of regular files.
fn layer(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, bytes) in files {
        let mut header = tar::Header::new_gnu();
        header.set_mode(0o755);
        header.set_size(bytes.len() as u64);
        builder.append_data(&mut header, path, *bytes).unwrap();
    }
    builder.into_inner().unwrap()
}

/// Base layers a family of images shares: the C library, a CUDA version file, bulk data.
fn base_layers() -> Vec<Vec<u8>> {
    let (libc_name, libc) = host_libc();
    vec![
        layer(&[
            (&format!("usr/lib/x86_64-linux-gnu/{libc_name}"), &libc),
            ("etc/ld.so.conf", b"include /etc/ld.so.conf.d/*.conf\n"),
        ]),
        layer(&[
            (
                "usr/local/cuda-12.4/version.json",
                br#"{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}"#,
            ),
            ("usr/local/cuda-12.4/bin/data", &[5; 40_000]),
        ]),
    ]
}

fn config(layers: &[Vec<u8>]) -> Vec<u8> {
    let diff_ids: Vec<String> = layers.iter().map(|tar| sha(tar)).collect();
    let history: Vec<Value> = (0..layers.len())
        .map(|index| serde_json::json!({"created_by": format!("RUN step {index}")}))
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "architecture": "amd64", "os": "linux",
        "config": {"Env": ["PATH=/usr/bin", "NVIDIA_VISIBLE_DEVICES=all"]},
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "history": history,
    }))
    .unwrap()
}

/// A legacy `docker save` archive (uncompressed layers, `manifest.json`) tagged `tag`.
fn docker_archive(path: &Path, layers: &[Vec<u8>], tag: &str) {
    write_tar(path, &legacy_docker_archive(&config(layers), layers, tag));
}

/// An OCI archive whose layer blobs are the given (already compressed, or not) `blobs` of `layers`.
fn oci_archive(path: &Path, layers: &[Vec<u8>], blobs: &[Vec<u8>]) {
    write_tar(
        path,
        &oci_layout(
            &config(layers),
            blobs,
            "application/vnd.oci.image.layer.v1.tar+gzip",
        ),
    );
}

fn gzip(tar: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(tar).unwrap();
    encoder.finish().unwrap()
}

fn cudalint_command(cache_home: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cudalint"));
    command
        .arg("image")
        .arg("--quiet")
        .args(args)
        .env("XDG_CACHE_HOME", cache_home)
        .env_remove(cudalint::image::cache::MAX_BYTES_VAR);
    command
}

fn succeeded(output: Output) -> Output {
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// `cudalint image --format json` on one image: the image's report and its `cache` field apart.
fn scan(cache_home: &Path, reference: &str, extra: &[&str]) -> (Value, Value) {
    let mut args = vec!["--format", "json", reference];
    args.extend(extra);
    let output = succeeded(cudalint_command(cache_home, &args).output().unwrap());
    let mut report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut image = report["images"][0].take();
    let cache = image.as_object_mut().unwrap().remove("cache").unwrap();
    (image, cache)
}

fn counts(cache: &Value) -> (u64, u64, u64) {
    (
        cache["hits"].as_u64().unwrap(),
        cache["misses"].as_u64().unwrap(),
        cache["rejected"].as_u64().unwrap(),
    )
}

/// The entry files of the cache under `cache_home` (temporary files excluded).
fn entries(cache_home: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(formats) = std::fs::read_dir(cache_home.join("cudalint")) else {
        return found;
    };
    for format in formats
        .filter_map(Result::ok)
        .filter(|dir| dir.path().is_dir())
    {
        for file in std::fs::read_dir(format.path())
            .unwrap()
            .filter_map(Result::ok)
        {
            found.push(file.path());
        }
    }
    found.sort();
    found
}

#[test]
fn a_second_scan_is_served_from_the_cache_with_an_identical_report() {
    let dir = TempDir::new("second");
    let cache_home = dir.path("cache");
    let mut layers = base_layers();
    layers.push(layer(&[("app/run.sh", b"#!/bin/sh\n")]));
    docker_archive(&dir.path("a.tar"), &layers, "app:v1");
    let reference = format!("docker-archive:{}", dir.path("a.tar").display());

    let (first, cache) = scan(&cache_home, &reference, &[]);
    assert_eq!(counts(&cache), (0, 3, 0));
    assert_eq!(entries(&cache_home).len(), 3, "one entry per layer");
    // The facts that went through the cache are real: the libc's own DT_NEEDED (the dynamic loader,
    // not in this image) is unresolved, and the CUDA version file was read.
    assert!(
        first["unresolved_libraries"]
            .as_array()
            .is_some_and(|needs| !needs.is_empty()),
        "{first:#}"
    );
    assert!(
        first["inventory"].to_string().contains("12.4.1"),
        "{first:#}"
    );

    let (second, cache) = scan(&cache_home, &reference, &[]);
    assert_eq!(counts(&cache), (3, 0, 0));
    assert_eq!(first, second);
    let text = |extra: &[&str]| {
        let mut args = vec![reference.as_str()];
        args.extend(extra);
        String::from_utf8(succeeded(cudalint_command(&cache_home, &args).output().unwrap()).stdout)
            .unwrap()
    };
    assert_eq!(text(&[]), text(&["--no-cache"]));
}

#[test]
fn cached_layers_equal_the_layers_read_from_their_blobs() {
    let dir = TempDir::new("exact");
    let mut layers = base_layers();
    layers.push(layer(&[("a", b"x")]));
    docker_archive(&dir.path("a.tar"), &layers, "app:v1");
    let source =
        ImageSource::parse(&format!("docker-archive:{}", dir.path("a.tar").display())).unwrap();
    let cache = Arc::new(LayerCache::open(&dir.path("cudalint"), 1 << 30));
    let options = LoadOptions {
        cache: Some(cache.clone()),
        ..LoadOptions::default()
    };
    let uncached = source.load(&LoadOptions::default()).unwrap();
    let written = source.load(&options).unwrap();
    let read_back = source.load(&options).unwrap();
    assert_eq!(cache.stats().hits, 3);
    assert_eq!(uncached.layers, written.layers);
    assert_eq!(uncached.layers, read_back.layers);
}

#[test]
fn a_second_image_sharing_base_layers_reads_only_its_own() {
    let dir = TempDir::new("family");
    let cache_home = dir.path("cache");
    let base = base_layers();
    let mut first = base.clone();
    first.push(layer(&[("app/first", &[1; 1000])]));
    docker_archive(&dir.path("first.tar"), &first, "first:v1");
    // The second image stores the same layers gzip-compressed, in an OCI archive, with two of its own.
    let mut second = base.clone();
    second.push(layer(&[("app/second", &[2; 1000])]));
    second.push(layer(&[("app/more", &[3; 1000])]));
    let blobs: Vec<Vec<u8>> = second.iter().map(|tar| gzip(tar)).collect();
    oci_archive(&dir.path("second.tar"), &second, &blobs);
    let second_ref = format!("oci-archive:{}", dir.path("second.tar").display());

    let (_, cache) = scan(
        &cache_home,
        &format!("docker-archive:{}", dir.path("first.tar").display()),
        &[],
    );
    assert_eq!(counts(&cache), (0, 3, 0));
    let (cached, cache) = scan(&cache_home, &second_ref, &[]);
    assert_eq!(
        counts(&cache),
        (2, 2, 0),
        "the base layers come from the cache"
    );
    // What the report says of each blob is the second image's own (gzip, its digest and size).
    let (read, cache) = scan(&cache_home, &second_ref, &["--no-cache"]);
    assert_eq!(cache, Value::Null);
    assert_eq!(cached, read);
    assert_eq!(cached["layers"][0]["compression"], "gzip");
    assert_eq!(cached["layers"][0]["blob_digest"], sha(&blobs[0]));
}

#[test]
fn a_cached_layer_blob_is_not_decompressed() {
    let dir = TempDir::new("untouched");
    let cache_home = dir.path("cache");
    let layers = base_layers();
    let blobs: Vec<Vec<u8>> = layers.iter().map(|tar| gzip(tar)).collect();
    oci_archive(&dir.path("whole.tar"), &layers, &blobs);
    let (whole, _) = scan(
        &cache_home,
        &format!("oci-archive:{}", dir.path("whole.tar").display()),
        &[],
    );
    // The same image with its first blob cut short: the gzip stream would fail if it were decoded.
    let mut cut = blobs.clone();
    let half = cut[0].len() / 2;
    cut[0].truncate(half);
    oci_archive(&dir.path("cut.tar"), &layers, &cut);
    let cut_ref = format!("oci-archive:{}", dir.path("cut.tar").display());
    let (served, cache) = scan(&cache_home, &cut_ref, &[]);
    assert_eq!(counts(&cache), (2, 0, 0));
    assert_eq!(served["files"], whole["files"]);
    let refused = cudalint_command(&cache_home, &["--no-cache", &cut_ref])
        .output()
        .unwrap();
    assert_eq!(
        refused.status.code(),
        Some(2),
        "read without the cache, the blob is refused"
    );
}

#[test]
fn a_corrupt_entry_is_ignored_and_rewritten() {
    let dir = TempDir::new("corrupt");
    let cache_home = dir.path("cache");
    let mut layers = base_layers();
    layers.push(layer(&[("a", b"x")]));
    docker_archive(&dir.path("a.tar"), &layers, "app:v1");
    let reference = format!("docker-archive:{}", dir.path("a.tar").display());
    let (first, _) = scan(&cache_home, &reference, &[]);
    let files = entries(&cache_home);
    assert_eq!(files.len(), 3);
    let originals: Vec<Vec<u8>> = files
        .iter()
        .map(|file| std::fs::read(file).unwrap())
        .collect();
    // Truncated, one bit flipped in the payload, and replaced by garbage.
    std::fs::write(&files[0], &originals[0][..originals[0].len() / 2]).unwrap();
    let mut flipped = originals[1].clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    std::fs::write(&files[1], flipped).unwrap();
    std::fs::write(&files[2], b"not a cache entry").unwrap();

    let (second, cache) = scan(&cache_home, &reference, &[]);
    assert_eq!(counts(&cache), (0, 3, 3));
    assert_eq!(first, second);
    for (file, original) in files.iter().zip(&originals) {
        assert_eq!(
            &std::fs::read(file).unwrap(),
            original,
            "{} rewritten",
            file.display()
        );
    }
    let (_, cache) = scan(&cache_home, &reference, &[]);
    assert_eq!(counts(&cache), (3, 0, 0));
}

#[test]
fn concurrent_runs_leave_a_sound_cache() {
    let dir = TempDir::new("concurrent");
    let cache_home = dir.path("cache");
    let mut images = Vec::new();
    for index in 0..4u8 {
        let mut layers = base_layers();
        layers.push(layer(&[("own", &[index; 5000])]));
        let path = dir.path(&format!("image{index}.tar"));
        docker_archive(&path, &layers, "app:v1");
        images.push(format!("docker-archive:{}", path.display()));
    }
    let expected: Vec<Value> = images
        .iter()
        .map(|image| scan(&dir.path("private"), image, &["--no-cache"]).0)
        .collect();
    // Eight runs at once, two per image, all writing the shared base layers; then again with a bound
    // so small that they evict each other's entries while they write.
    for bound in [None, Some("1")] {
        let children: Vec<_> = images
            .iter()
            .chain(&images)
            .map(|image| {
                let mut command = cudalint_command(&cache_home, &["--format", "json", image]);
                if let Some(bound) = bound {
                    command.env(cudalint::image::cache::MAX_BYTES_VAR, format!("{bound}K"));
                }
                command
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for (child, expected) in children.into_iter().zip(expected.iter().cycle()) {
            let output = succeeded(child.wait_with_output().unwrap());
            let mut report: Value = serde_json::from_slice(&output.stdout).unwrap();
            let mut image = report["images"][0].take();
            image.as_object_mut().unwrap().remove("cache");
            assert_eq!(&image, expected);
        }
    }
    let leftovers: Vec<_> = entries(&cache_home)
        .into_iter()
        .filter(|file| file.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    for (image, expected) in images.iter().zip(&expected) {
        let (report, cache) = scan(&cache_home, image, &[]);
        assert_eq!(
            counts(&cache).2,
            0,
            "no entry written by the racing runs is damaged"
        );
        assert_eq!(&report, expected);
    }
    let (_, cache) = scan(&cache_home, &images[0], &[]);
    assert_eq!(counts(&cache), (3, 0, 0));
}

#[test]
fn no_cache_writes_nothing() {
    let dir = TempDir::new("nocache");
    let cache_home = dir.path("cache");
    docker_archive(&dir.path("a.tar"), &base_layers(), "app:v1");
    let reference = format!("docker-archive:{}", dir.path("a.tar").display());
    let (_, cache) = scan(&cache_home, &reference, &["--no-cache"]);
    assert_eq!(cache, Value::Null);
    assert!(
        !cache_home.exists(),
        "--no-cache created {}",
        cache_home.display()
    );
    let zero_bound = cudalint_command(&cache_home, &[&reference])
        .env(cudalint::image::cache::MAX_BYTES_VAR, "0")
        .output()
        .unwrap();
    assert_eq!(zero_bound.status.code(), Some(0));
    assert!(!cache_home.exists(), "a bound of 0 turns the cache off");
    let bad_bound = cudalint_command(&cache_home, &[&reference])
        .env(cudalint::image::cache::MAX_BYTES_VAR, "lots")
        .output()
        .unwrap();
    assert_eq!(bad_bound.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_bound.stderr).contains("CUDALINT_CACHE_MAX_BYTES=lots"));
}

#[test]
fn the_cache_stays_within_its_bound_evicting_old_formats_first() {
    let dir = TempDir::new("bound");
    let cache_home = dir.path("cache");
    let mut images = Vec::new();
    for index in 0..6u8 {
        let path = dir.path(&format!("image{index}.tar"));
        docker_archive(&path, &[layer(&[("data", &[index; 2_000])])], "app:v1");
        images.push(format!("docker-archive:{}", path.display()));
    }
    // Every image's one layer makes an entry of the same size: room for three and a half.
    scan(&dir.path("probe"), &images[0], &[]);
    let entry_size = std::fs::metadata(&entries(&dir.path("probe"))[0])
        .unwrap()
        .len();
    let bound = entry_size * 7 / 2;
    // An entry of a format this cudalint no longer reads: evicted before anything current.
    let old_format = cache_home.join("cudalint/layers-v0-old");
    std::fs::create_dir_all(&old_format).unwrap();
    std::fs::write(old_format.join("sha256-00"), vec![0u8; entry_size as usize]).unwrap();
    for (index, image) in images.iter().enumerate() {
        let output = cudalint_command(&cache_home, &[image])
            .env(cudalint::image::cache::MAX_BYTES_VAR, bound.to_string())
            .output()
            .unwrap();
        succeeded(output);
        let total: u64 = entries(&cache_home)
            .iter()
            .map(|file| std::fs::metadata(file).unwrap().len())
            .sum();
        assert!(total <= bound, "{total} bytes in the cache, bound {bound}");
        assert_eq!(old_format.exists(), index < 2, "after image {index}");
    }
    assert_eq!(entries(&cache_home).len(), 3);
    let bounded = |image: &str| {
        let output = cudalint_command(&cache_home, &["--format", "json", image])
            .env(cudalint::image::cache::MAX_BYTES_VAR, bound.to_string())
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&succeeded(output).stdout).unwrap();
        counts(&report["images"][0]["cache"])
    };
    // The three most recently used remain; the oldest current entry went.
    assert_eq!(bounded(&images[5]), (1, 0, 0));
    assert_eq!(bounded(&images[3]), (1, 0, 0));
    assert_eq!(bounded(&images[2]), (0, 1, 0));
}

fn engine_reachable() -> bool {
    let reachable = Command::new("docker")
        .arg("version")
        .output()
        .is_ok_and(|output| output.status.success());
    if !reachable {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "no Docker engine reachable (set DOCKER_HOST, or run scripts/image-test-env) and CI=true"
        );
        // Straight to stderr, not eprintln!, so the test harness does not swallow the notice.
        let _ = writeln!(
            std::io::stderr(),
            "NOTICE: image_cache engine test skipped: no Docker engine reachable (set DOCKER_HOST)"
        );
    }
    reachable
}

#[test]
fn the_engine_export_streams_cached_layers_past() {
    if !engine_reachable() {
        return;
    }
    let dir = TempDir::new("engine");
    let cache_home = dir.path("cache");
    let tag = format!("cudalint-cache-test:{}", std::process::id());
    let mut layers = base_layers();
    layers.push(layer(&[("own", b"engine")]));
    docker_archive(&dir.path("a.tar"), &layers, &tag);
    let loaded = Command::new("docker")
        .args(["load", "-q", "-i"])
        .arg(dir.path("a.tar"))
        .output()
        .unwrap();
    assert!(
        loaded.status.success(),
        "{}",
        String::from_utf8_lossy(&loaded.stderr)
    );
    let engine_ref = format!("docker-daemon:{tag}");
    let (first, cache) = scan(&cache_home, &engine_ref, &[]);
    let (second, second_cache) = scan(&cache_home, &engine_ref, &[]);
    let (archive, _) = scan(
        &cache_home,
        &format!("docker-archive:{}", dir.path("a.tar").display()),
        &[],
    );
    let _ = Command::new("docker").args(["rmi", &tag]).output();
    assert_eq!(first, second);
    assert_eq!(first["files"], archive["files"]);
    assert_eq!(first["inventory"], archive["inventory"]);
    assert_eq!(counts(&cache), (0, 3, 0));
    // Docker 25+ names layer blobs by digest in the export, so every layer is a hit; an older engine's
    // legacy export names none, and its layers are read (and cached for the archive sources).
    let version = Command::new("docker")
        .args(["version", "--format", "{{.Server.Version}}"])
        .output()
        .unwrap();
    let major: u32 = String::from_utf8_lossy(&version.stdout)
        .split('.')
        .next()
        .and_then(|major| major.trim().parse().ok())
        .unwrap_or(0);
    let expected = if major >= 25 { (3, 0, 0) } else { (0, 3, 0) };
    assert_eq!(counts(&second_cache), expected, "engine {major}");
}

/// Turns one byte of the file at `path` over in place (same size, same file).
fn flip_byte(path: &Path, at: u64) {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut byte = [0u8; 1];
    file.seek(SeekFrom::Start(at)).unwrap();
    file.read_exact(&mut byte).unwrap();
    file.seek(SeekFrom::Start(at)).unwrap();
    file.write_all(&[byte[0] ^ 0x20]).unwrap();
}

/// A layer changed in place after a cached scan (same size, same offset in the same file) is read
/// again: the cached run fails as `--no-cache` does (the digest mismatch, exit 2), in an uncompressed
/// docker-archive and in a gzip OCI archive alike. A copy of the unchanged archive (a place not seen
/// before) is served from the cache, trusted by its diff ID, and remembered: changed in place in its
/// turn, it is read again too.
#[test]
fn a_layer_changed_in_place_after_a_cached_scan_is_read_again() {
    let dir = TempDir::new("in-place");
    let mut layers = base_layers();
    layers.push(layer(&[("app/marker", b"cudalint-in-place-marker")]));
    let gzipped: Vec<Vec<u8>> = layers.iter().map(|tar| gzip(tar)).collect();
    docker_archive(&dir.path("plain.tar"), &layers, "app:v1");
    oci_archive(&dir.path("gzip.tar"), &layers, &gzipped);
    let find = |path: &Path, needle: &[u8]| {
        std::fs::read(path)
            .unwrap()
            .windows(needle.len())
            .position(|window| window == needle)
            .expect("the archive holds the bytes to change") as u64
    };
    let last = &gzipped[gzipped.len() - 1];
    // Where a byte changes: inside the marker file, or inside the last gzip blob's deflate data.
    let plain_at = find(&dir.path("plain.tar"), b"cudalint-in-place-marker") + 3;
    let gzip_at = find(&dir.path("gzip.tar"), last) + last.len() as u64 / 2;

    for (file, at, kind) in [
        ("plain.tar", plain_at, "docker-archive"),
        ("gzip.tar", gzip_at, "oci-archive"),
    ] {
        let cache_home = dir.path(&format!("cache-{kind}"));
        let path = dir.path(file);
        let copy_path = dir.path(&format!("copy-{file}"));
        std::fs::copy(&path, &copy_path).unwrap();
        let reference = format!("{kind}:{}", path.display());
        let copy = format!("{kind}:{}", copy_path.display());
        let run = |reference: &str, extra: &[&str]| {
            let mut args = extra.to_vec();
            args.push(reference);
            let output = cudalint_command(&cache_home, &args).output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            (output.status.code(), stderr)
        };
        let (_, cache) = scan(&cache_home, &reference, &[]);
        assert_eq!(counts(&cache), (0, 3, 0), "{kind}");
        let (_, cache) = scan(&cache_home, &reference, &[]);
        assert_eq!(counts(&cache), (3, 0, 0), "{kind}: unchanged, served");

        flip_byte(&path, at);
        let uncached = run(&reference, &["--no-cache"]);
        assert_eq!(uncached.0, Some(2), "{kind}: {}", uncached.1);
        if kind == "docker-archive" {
            assert!(uncached.1.contains("digest mismatch"), "{}", uncached.1);
        }
        assert_eq!(run(&reference, &[]), uncached, "{kind}: cached as uncached");
        assert_eq!(
            run(&reference, &[]),
            uncached,
            "{kind}: and every time after"
        );

        let (_, cache) = scan(&cache_home, &copy, &[]);
        assert_eq!(
            counts(&cache),
            (3, 0, 0),
            "{kind}: the unchanged copy is served"
        );
        flip_byte(&copy_path, at);
        let (code, stderr) = run(&copy, &[]);
        assert_eq!(code, Some(2), "{kind}: the copy changed in place: {stderr}");
        assert_eq!(
            (code, stderr.clone()),
            run(&copy, &["--no-cache"]),
            "{kind}"
        );
    }
}
