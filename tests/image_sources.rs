//! The image reader on synthetic images built here with the tar crate: every source (docker-archive
//! legacy and OCI layouts, oci-archive, oci directory, gzip and zstd layers, bare paths) gives the same
//! merged filesystem; whiteouts, links and wasted bytes are exact; bad input is a clear error.

use std::io::Write;
use std::path::PathBuf;

use cudalint::image::facts::{FsView, NodeKind};
use cudalint::image::report::ImageReport;
use cudalint::image::source::{ImageSource, LoadOptions};

#[path = "support/archive.rs"]
mod archive_files;
use archive_files::{sha, write_dir, write_tar, Files};

/// One tar entry of a test layer.
enum Item<'a> {
    File(&'a str, &'a [u8]),
    Dir(&'a str),
    Symlink(&'a str, &'a str),
    Hardlink(&'a str, &'a str),
}

fn layer_tar(items: &[Item]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for item in items {
        let mut header = tar::Header::new_gnu();
        header.set_mode(0o755);
        match item {
            Item::File(path, bytes) => {
                header.set_entry_type(tar::EntryType::Regular);
                header.set_size(bytes.len() as u64);
                builder.append_data(&mut header, path, *bytes).unwrap();
            }
            Item::Dir(path) => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_size(0);
                builder.append_data(&mut header, path, &[][..]).unwrap();
            }
            Item::Symlink(path, target) => {
                header.set_entry_type(tar::EntryType::Symlink);
                header.set_size(0);
                builder.append_link(&mut header, path, target).unwrap();
            }
            Item::Hardlink(path, target) => {
                header.set_entry_type(tar::EntryType::Link);
                header.set_size(0);
                builder.append_link(&mut header, path, target).unwrap();
            }
        }
    }
    builder.into_inner().unwrap()
}

#[derive(Clone, Copy)]
enum Pack {
    Plain,
    Gzip,
    Zstd,
}

fn compress(tar: &[u8], pack: Pack) -> Vec<u8> {
    match pack {
        Pack::Plain => tar.to_vec(),
        Pack::Gzip => {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            encoder.write_all(tar).unwrap();
            encoder.finish().unwrap()
        }
        Pack::Zstd => zstd::encode_all(tar, 1).unwrap(),
    }
}

fn config_json(layers: &[Vec<u8>]) -> Vec<u8> {
    let diff_ids: Vec<String> = layers.iter().map(|tar| sha(tar)).collect();
    let history: Vec<serde_json::Value> = (0..layers.len())
        .flat_map(|index| {
            [
                serde_json::json!({"created_by": format!("ENV STEP={index}"), "empty_layer": true}),
                serde_json::json!({"created_by": format!("RUN step {index}")}),
            ]
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "architecture": "amd64", "os": "linux",
        "config": {"Env": ["PATH=/usr/bin", "NVIDIA_VISIBLE_DEVICES=all"], "Labels": {"a": "b"}},
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "history": history,
    }))
    .unwrap()
}

fn legacy_docker_archive(layers: &[Vec<u8>]) -> Files {
    archive_files::legacy_docker_archive(&config_json(layers), layers, "test:v1")
}

/// An OCI layout of `layers` packed as `pack`; with `with_docker_manifest`, also the
/// `manifest.json` that Docker 25+ writes into `docker save` output beside the index.
fn oci_layout(layers: &[Vec<u8>], pack: Pack, with_docker_manifest: bool) -> Files {
    let config = config_json(layers);
    let blobs: Vec<Vec<u8>> = layers.iter().map(|tar| compress(tar, pack)).collect();
    let mut files =
        archive_files::oci_layout(&config, &blobs, "application/vnd.oci.image.layer.v1.tar");
    if with_docker_manifest {
        let config_name = format!("blobs/sha256/{}", &sha(&config)[7..]);
        let blob_names: Vec<String> = blobs
            .iter()
            .map(|blob| format!("blobs/sha256/{}", &sha(blob)[7..]))
            .collect();
        let manifest = serde_json::json!([{"Config": config_name, "RepoTags": ["test:v1"], "Layers": blob_names}]);
        files.push((
            "manifest.json".into(),
            serde_json::to_vec(&manifest).unwrap(),
        ));
    }
    files
}

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("cudalint-image-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn load(reference: &str) -> anyhow::Result<ImageReport> {
    let image = ImageSource::parse(reference)?.load(&LoadOptions::default())?;
    Ok(ImageReport::build(reference, image))
}

/// A listing of the merged filesystem that every source must reproduce.
fn listing(report: &ImageReport) -> Vec<String> {
    report
        .fs
        .walk()
        .map(|(path, node)| format!("{path} {:?} {} layer{}", node.kind, node.size, node.layer))
        .collect()
}

fn three_layers() -> Vec<Vec<u8>> {
    vec![
        layer_tar(&[
            Item::Dir("usr/"),
            Item::Dir("usr/lib/"),
            Item::File("usr/lib/libfoo.so.1", &[1; 1000]),
            Item::Symlink("usr/lib/libfoo.so", "libfoo.so.1"),
            Item::Symlink("lib", "usr/lib"),
            Item::File("big.bin", &[7; 5000]),
            Item::Dir("cache/"),
            Item::File("cache/a", &[2; 300]),
            Item::File("cache/b", &[3; 200]),
            Item::File("etc/ld.so.conf", b"include /etc/ld.so.conf.d/*.conf\n"),
        ]),
        layer_tar(&[
            Item::File("big.bin", &[8; 5000]),
            Item::File(".wh.cache", b""),
            Item::File("lib/libbar.so", &[4; 100]),
            Item::Hardlink("usr/lib/libbar-hard.so", "usr/lib/libbar.so"),
        ]),
        layer_tar(&[Item::File("big.bin", &[9; 5000]), Item::Dir("opt/")]),
    ]
}

#[test]
fn every_source_gives_the_same_filesystem() {
    let layers = three_layers();
    let dir = temp_dir("sources");
    write_tar(&dir.join("legacy.tar"), &legacy_docker_archive(&layers));
    write_tar(
        &dir.join("docker25.tar"),
        &oci_layout(&layers, Pack::Plain, true),
    );
    write_tar(
        &dir.join("oci-gzip.tar"),
        &oci_layout(&layers, Pack::Gzip, false),
    );
    write_dir(
        &dir.join("oci-zstd"),
        &oci_layout(&layers, Pack::Zstd, false),
    );
    write_dir(&dir.join("legacy-dir"), &legacy_docker_archive(&layers));
    let references = [
        format!("docker-archive:{}", dir.join("legacy.tar").display()),
        format!(
            "docker-archive:{}:test:v1",
            dir.join("legacy.tar").display()
        ),
        format!("docker-archive:{}", dir.join("docker25.tar").display()),
        format!("oci-archive:{}", dir.join("oci-gzip.tar").display()),
        format!("oci-archive:{}:v1", dir.join("oci-gzip.tar").display()),
        format!("oci:{}", dir.join("oci-zstd").display()),
        format!("oci:{}:v1", dir.join("oci-zstd").display()),
        dir.join("legacy.tar").display().to_string(),
        dir.join("oci-gzip.tar").display().to_string(),
        dir.join("legacy-dir").display().to_string(),
    ];
    let first = load(&references[0]).unwrap();
    let expected = listing(&first);
    for reference in &references[1..] {
        let report = load(reference).unwrap_or_else(|error| panic!("{reference}: {error:#}"));
        assert_eq!(listing(&report), expected, "{reference}");
        assert_eq!(report.bytes_wasted(), first.bytes_wasted(), "{reference}");
        assert_eq!(report.config, first.config, "{reference}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn whiteouts_links_and_wasted_bytes_are_exact() {
    let layers = three_layers();
    let dir = temp_dir("merge");
    write_tar(&dir.join("image.tar"), &legacy_docker_archive(&layers));
    let report = load(&format!(
        "docker-archive:{}",
        dir.join("image.tar").display()
    ))
    .unwrap();
    let fs = &report.fs;
    // Whiteout of a directory removes it and everything under it.
    assert!(fs.lstat("/cache").is_none());
    assert!(fs.lstat("/cache/a").is_none());
    // A file written through a symlinked directory lands in its target.
    assert_eq!(fs.lstat("/usr/lib/libbar.so").unwrap().size, 100);
    assert_eq!(
        fs.canonicalize("/lib/libfoo.so").unwrap(),
        "/usr/lib/libfoo.so.1"
    );
    // A hard link shares its target's size; it adds no bytes.
    let hard = fs.lstat("/usr/lib/libbar-hard.so").unwrap();
    assert_eq!((hard.kind.clone(), hard.size), (NodeKind::File, 100));
    // big.bin written in three layers: two dead copies, each counted once.
    assert_eq!(fs.lstat("/big.bin").unwrap().layer, 2);
    let dead_big: Vec<_> = fs
        .dead_copies()
        .iter()
        .filter(|dead| dead.path == "/big.bin")
        .collect();
    assert_eq!(dead_big.len(), 2);
    assert_eq!(report.layers[0].usage.bytes_wasted, 5000 + 300 + 200);
    assert_eq!(report.layers[1].usage.bytes_wasted, 5000);
    assert_eq!(report.layers[2].usage.bytes_wasted, 0);
    assert_eq!(report.bytes_wasted(), 10_500);
    assert_eq!(report.layers[1].usage.bytes_added, 5000 + 100);
    // History pairs with layers, skipping empty_layer entries.
    assert_eq!(report.layers[2].created_by.as_deref(), Some("RUN step 2"));
    // Small text files the rules read are kept.
    let conf = fs.lstat("/etc/ld.so.conf").unwrap();
    assert!(conf.captured.is_some());
    assert_eq!(
        fs.read_dir("/lib"),
        ["libbar-hard.so", "libbar.so", "libfoo.so", "libfoo.so.1"]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn opaque_directories_and_type_changes() {
    let layers = vec![
        layer_tar(&[
            Item::File("d/old", &[1; 10]),
            Item::File("x/y", &[1; 20]),
            Item::File("f", &[1; 5]),
        ]),
        layer_tar(&[
            Item::File("d/new", &[2; 10]),
            Item::File("d/.wh..wh..opq", b""),
            Item::File("x", &[3; 7]),
            Item::File("f/inside", &[4; 3]),
        ]),
    ];
    let dir = temp_dir("opaque");
    write_tar(&dir.join("image.tar"), &legacy_docker_archive(&layers));
    let report = load(dir.join("image.tar").to_str().unwrap()).unwrap();
    assert!(report.fs.lstat("/d/old").is_none());
    assert!(report.fs.lstat("/d/new").is_some());
    assert_eq!(report.fs.lstat("/x").unwrap().kind, NodeKind::File);
    assert_eq!(report.fs.lstat("/f").unwrap().kind, NodeKind::Dir);
    assert_eq!(report.layers[0].usage.bytes_wasted, 10 + 20 + 5);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn symlink_loops_are_reported_not_followed_forever() {
    let layers = vec![layer_tar(&[
        Item::Symlink("a", "b"),
        Item::Symlink("b", "a"),
        Item::Symlink("up", "../../.."),
    ])];
    let dir = temp_dir("loops");
    write_tar(&dir.join("image.tar"), &legacy_docker_archive(&layers));
    let report = load(dir.join("image.tar").to_str().unwrap()).unwrap();
    assert!(matches!(
        report.fs.canonicalize("/a/x"),
        Err(cudalint::image::facts::ResolveError::Loop(_))
    ));
    assert_eq!(report.fs.canonicalize("/up").unwrap(), "/");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rootfs_reads_a_directory_as_one_layer() {
    let dir = temp_dir("rootfs");
    std::fs::create_dir_all(dir.join("usr/lib")).unwrap();
    std::fs::write(dir.join("usr/lib/libx.so.1"), [0u8; 64]).unwrap();
    std::os::unix::fs::symlink("libx.so.1", dir.join("usr/lib/libx.so")).unwrap();
    let report = load(&format!("rootfs:{}", dir.display())).unwrap();
    assert_eq!(report.layers.len(), 1);
    assert_eq!(report.fs.stat("/usr/lib/libx.so").unwrap().size, 64);
    std::fs::remove_dir_all(&dir).unwrap();
}
