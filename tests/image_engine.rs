//! The Docker engine source against a real engine: an image built `FROM scratch` here is read from the
//! engine and from its `docker save` archive, and both give the same filesystem; a missing image is a
//! clear error, never a pull. Runs when an engine answers (`DOCKER_HOST`, or scripts/image-test-env's);
//! otherwise it says it skipped, and with `CI=true` it fails.

use std::path::PathBuf;
use std::process::Command;

use cudalint::image::facts::FsView;
use cudalint::image::report::ImageReport;
use cudalint::image::source::{ImageSource, LoadOptions};

fn engine_reachable() -> bool {
    Command::new("docker")
        .arg("version")
        .output()
        .is_ok_and(|output| output.status.success())
}

fn require_engine() -> bool {
    if engine_reachable() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|value| value == "true") {
        panic!("no Docker engine reachable (set DOCKER_HOST, or run scripts/image-test-env) and CI=true");
    }
    // Straight to stderr, not eprintln!, so the test harness does not swallow the notice.
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "NOTICE: image_engine tests skipped: no Docker engine reachable (set DOCKER_HOST)"
    );
    false
}

fn load(reference: &str) -> anyhow::Result<ImageReport> {
    let image = ImageSource::parse(reference)?.load(&LoadOptions::default())?;
    Ok(ImageReport::build(reference, image))
}

#[test]
fn engine_and_saved_archive_agree() {
    if !require_engine() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("cudalint-engine-test-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("ctx")).unwrap();
    std::fs::write(dir.join("ctx/a.txt"), b"first").unwrap();
    std::fs::write(dir.join("ctx/b.bin"), vec![7u8; 50_000]).unwrap();
    std::fs::write(
        dir.join("ctx/Dockerfile"),
        "FROM scratch\nCOPY b.bin /data/b.bin\nENV NVIDIA_VISIBLE_DEVICES=all\nCOPY a.txt /data/b.bin\nLABEL team=ml\n",
    )
    .unwrap();
    let tag = format!("cudalint-engine-test:{}", std::process::id());
    let built = Command::new("docker")
        .args(["build", "-q", "-t", &tag])
        .arg(dir.join("ctx"))
        .env("DOCKER_BUILDKIT", "0")
        .status()
        .unwrap();
    assert!(built.success(), "docker build failed");
    let archive: PathBuf = dir.join("saved.tar");
    assert!(Command::new("docker")
        .args(["save", "-o"])
        .arg(&archive)
        .arg(&tag)
        .status()
        .unwrap()
        .success());

    let from_engine = load(&tag).unwrap();
    let from_daemon_prefix = load(&format!("docker-daemon:{tag}")).unwrap();
    let from_archive = load(&format!("docker-archive:{}", archive.display())).unwrap();
    let listing = |report: &ImageReport| -> Vec<String> {
        report
            .fs
            .walk()
            .map(|(path, node)| format!("{path} {:?} {}", node.kind, node.size))
            .collect()
    };
    assert_eq!(listing(&from_engine), listing(&from_archive));
    assert_eq!(listing(&from_daemon_prefix), listing(&from_archive));
    assert_eq!(from_engine.fs.lstat("/data/b.bin").unwrap().size, 5);
    assert_eq!(from_engine.bytes_wasted(), 50_000);
    assert_eq!(
        from_engine.config.env_var("NVIDIA_VISIBLE_DEVICES"),
        Some("all")
    );
    assert_eq!(
        from_engine.config.labels.get("team").map(String::as_str),
        Some("ml")
    );
    assert_eq!(
        from_engine.layers[1].created_by,
        from_archive.layers[1].created_by
    );

    let missing = load("cudalint-no-such-image:never").err().unwrap();
    assert!(
        format!("{missing:#}").contains("never pulls"),
        "{missing:#}"
    );
    let _ = Command::new("docker").args(["rmi", &tag]).output();
    let _ = std::fs::remove_dir_all(&dir);
}
