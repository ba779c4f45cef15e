//! `cudalint image --dockerfile`: the Dockerfile findings that predict what pip installs (CU120
//! here) are confirmed or cleared by what the image holds, and say which. Each image is a root
//! filesystem the test writes (`rootfs:` source): torch's `version.py` and dist-info as a torch
//! wheel installs them, or dpkg's status file as dpkg writes it (CU128), so the same Dockerfile
//! meets an image that holds the predicted build, one that holds another, and one without it.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The CU120 fixture whose unpinned torch resolves to PyPI's CUDA 13.0 build on a CUDA 12.4 base.
const DOCKERFILE: &str =
    "fixtures/dockerfile/CU120/fail_nightly_index_without_pre_gets_pypi_newest.Dockerfile";

const SITE: &str = "usr/local/lib/python3.10/dist-packages";

fn rootfs(name: &str, torch: Option<(&str, &str)>) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "cudalint-image-confirm-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("usr/bin")).unwrap();
    std::fs::write(dir.join("usr/bin/python3"), b"#!/bin/sh\n").unwrap();
    if let Some((version, cuda)) = torch {
        let site = dir.join(SITE);
        std::fs::create_dir_all(site.join("torch")).unwrap();
        std::fs::write(
            site.join("torch/version.py"),
            format!(
                "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']\n__version__ = '{version}'\ndebug = False\ncuda: Optional[str] = '{cuda}'\nhip: Optional[str] = None\nxpu: Optional[str] = None\n"
            ),
        )
        .unwrap();
        let dist_info = site.join(format!("torch-{version}.dist-info"));
        std::fs::create_dir_all(&dist_info).unwrap();
        std::fs::write(
            dist_info.join("METADATA"),
            format!("Metadata-Version: 2.1\nName: torch\nVersion: {version}\n"),
        )
        .unwrap();
    }
    dir
}

/// The CU120 findings of `cudalint image --dockerfile DOCKERFILE rootfs:DIR`, as JSON.
fn cu120(dir: &Path) -> Vec<Value> {
    findings(DOCKERFILE, dir, "CU120")
}

/// The `code` findings of `cudalint image --dockerfile dockerfile rootfs:DIR`, as JSON.
fn findings(dockerfile: &str, dir: &Path, code: &str) -> Vec<Value> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new(env!("CARGO_BIN_EXE_cudalint"))
        .current_dir(root)
        .env("CUDALINT_TODAY", "2026-11-23")
        .args([
            "image",
            "--quiet",
            "--no-config",
            "--format",
            "json",
            "--dockerfile",
            dockerfile,
        ])
        .arg(format!("rootfs:{}", dir.display()))
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "JSON output ({error}): {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|finding| finding["code"] == code)
        .cloned()
        .collect()
}

fn first_note(finding: &Value) -> &str {
    finding["notes"][0].as_str().unwrap_or("")
}

#[test]
fn the_image_confirms_a_predicted_wheel_cuda() {
    let dir = rootfs("confirmed", Some(("2.14.0+cu130", "13.0")));
    let findings = cu120(&dir);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let finding = &findings[0];
    assert_eq!(finding["severity"], "warning");
    assert_eq!(finding["origin"], DOCKERFILE);
    assert_eq!(finding["location"]["line"], 7);
    assert!(
        first_note(finding).starts_with("confirmed by the image rootfs:")
            && first_note(finding).ends_with(": torch 2.14.0+cu130 (CUDA 13.0)"),
        "{finding:#}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_image_clears_a_prediction_it_contradicts() {
    let dir = rootfs("cleared", Some(("2.6.0+cu124", "12.4")));
    let findings = cu120(&dir);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let finding = &findings[0];
    assert_eq!(finding["severity"], "info", "{finding:#}");
    assert!(
        first_note(finding).starts_with("cleared by the image rootfs:")
            && first_note(finding).ends_with(": it holds torch 2.6.0+cu124 (CUDA 12.4)"),
        "{finding:#}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_image_without_the_package_says_nothing_about_it() {
    let dir = rootfs("silent", None);
    assert_eq!(cu120(&dir), Vec::<Value>::new());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The CU120 fixture where an unpinned `tensorrt` resolves to the newest release, which installs
/// `tensorrt-cu13` on a CUDA 12.4 base.
const TENSORRT_DOCKERFILE: &str =
    "fixtures/dockerfile/CU120/fail_unpinned_tensorrt_gets_newest_cu13.Dockerfile";

/// A root filesystem with pip's record of `distribution` `version` (the variant the `tensorrt`
/// sdist installs), as pip writes it in site-packages.
fn dist_rootfs(name: &str, distribution: &str, version: &str) -> PathBuf {
    let dir = rootfs(name, None);
    let dist_info = dir
        .join(SITE)
        .join(format!("{distribution}-{version}.dist-info"));
    std::fs::create_dir_all(&dist_info).unwrap();
    std::fs::write(
        dist_info.join("METADATA"),
        format!("Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n"),
    )
    .unwrap();
    dir
}

#[test]
fn a_build_named_for_its_cuda_confirms_or_clears_the_meta_package() {
    let dir = dist_rootfs("tensorrt-cu13", "tensorrt_cu13", "11.4.0.106");
    let found = findings(TENSORRT_DOCKERFILE, &dir, "CU120");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["severity"], "warning");
    assert!(
        first_note(&found[0]).ends_with(": tensorrt_cu13 11.4.0.106"),
        "{:#}",
        found[0]
    );
    std::fs::remove_dir_all(&dir).unwrap();

    // The image holds TensorRT's CUDA 12 build after all (a pin elsewhere, a constraint file).
    let dir = dist_rootfs("tensorrt-cu12", "tensorrt_cu12", "10.13.0.35");
    let found = findings(TENSORRT_DOCKERFILE, &dir, "CU120");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["severity"], "info", "{:#}", found[0]);
    assert!(
        first_note(&found[0]).ends_with(": it holds tensorrt_cu12 10.13.0.35"),
        "{:#}",
        found[0]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The CU128 fixture: `--allow-change-held-packages` lets apt take the newest NCCL, a CUDA 13 build,
/// on a CUDA 12.4 image.
const NCCL_DOCKERFILE: &str = "fixtures/dockerfile/CU128/fail_nccl_allow_held_on_cuda12.Dockerfile";

/// A root filesystem whose dpkg status lists NCCL at `version` (stanzas as dpkg writes them; the
/// fields other than Package, Status and Version are dropped when the image is read).
fn dpkg_rootfs(name: &str, version: &str) -> PathBuf {
    let dir = rootfs(name, None);
    std::fs::create_dir_all(dir.join("var/lib/dpkg")).unwrap();
    let stanza = |package: &str, status: &str, description: &str| {
        format!(
            "Package: {package}\nStatus: {status}\nPriority: optional\nSection: libdevel\nInstalled-Size: 245760\nMaintainer: cudatools <cudatools@nvidia.com>\nArchitecture: amd64\nSource: nccl\nVersion: {version}\nDescription: {description}\n NCCL (pronounced \"Nickel\") is a stand-alone library of standard collective\n communication routines for GPUs.\nHomepage: https://developer.nvidia.com/nccl\n"
        )
    };
    let status = [
        "Package: libc6\nStatus: install ok installed\nVersion: 2.35-0ubuntu3.8\n".to_string(),
        stanza(
            "libnccl2",
            "hold ok installed",
            "NVIDIA Collective Communication Library (NCCL) Runtime",
        ),
        stanza(
            "libnccl-dev",
            "hold ok installed",
            "NVIDIA Collective Communication Library (NCCL) Development Files",
        ),
    ]
    .join("\n");
    std::fs::write(dir.join("var/lib/dpkg/status"), status).unwrap();
    dir
}

#[test]
fn dpkg_status_confirms_or_clears_the_apt_build() {
    let dir = dpkg_rootfs("nccl13", "2.27.7-1+cuda13.0");
    let confirmed = findings(NCCL_DOCKERFILE, &dir, "CU128");
    assert_eq!(confirmed.len(), 2, "{confirmed:#?}");
    for finding in &confirmed {
        assert_eq!(finding["severity"], "warning");
        assert!(
            first_note(finding).starts_with("confirmed by the image rootfs:")
                && first_note(finding).ends_with(" 2.27.7-1+cuda13.0 (the CUDA 13.0 build)"),
            "{finding:#}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();

    let dir = dpkg_rootfs("nccl12", "2.21.5-1+cuda12.4");
    let cleared = findings(NCCL_DOCKERFILE, &dir, "CU128");
    assert_eq!(cleared.len(), 2, "{cleared:#?}");
    for finding in &cleared {
        assert_eq!(finding["severity"], "info");
        assert!(
            first_note(finding).contains(": it holds libnccl")
                && first_note(finding).ends_with(" 2.21.5-1+cuda12.4 (the CUDA 12.4 build)"),
            "{finding:#}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
