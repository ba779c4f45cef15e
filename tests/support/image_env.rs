//! The environment `scripts/image-test-env up` prepares for the image tests: a running Docker engine
//! and the fixture images built from fixtures/image/<name>/Dockerfile, exported in every source form.
//! Outside CI a missing environment skips the test with a visible notice; with `CI=true` it fails,
//! because CI must never pass by skipping the image tests.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where one fixture image can be read from, one entry per source form.
pub struct FixtureImage {
    pub name: String,
    /// `cudalint-fixture/<name>:test` in the engine at `docker_host`.
    pub engine_ref: String,
    pub docker_archive: PathBuf,
    pub oci_archive_gzip: PathBuf,
    pub oci_archive_zstd: PathBuf,
    pub oci_layout: PathBuf,
}

pub struct ImageEnv {
    pub docker_host: String,
    pub fixtures_dir: PathBuf,
    pub tag_prefix: String,
}

impl ImageEnv {
    /// The prepared environment, or `None` (with a notice on stderr) when it is absent outside CI.
    pub fn get(test: &str) -> Option<ImageEnv> {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(".cache/image-test/env");
        let Ok(text) = std::fs::read_to_string(&file) else {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!(
                    "{test}: {} is missing: `scripts/image-test-env up` did not prepare the \
                     Docker engine and fixture images, and CI must not skip the image tests",
                    file.display()
                );
            }
            eprintln!(
                "NOTICE {test}: skipped: no image test environment (run `scripts/image-test-env up` as root)"
            );
            return None;
        };
        let vars: BTreeMap<&str, &str> = text
            .lines()
            .filter_map(|line| line.split_once('='))
            .collect();
        let get = |key: &str| {
            vars.get(key)
                .unwrap_or_else(|| panic!("{}: no {key}", file.display()))
                .to_string()
        };
        Some(ImageEnv {
            docker_host: get("DOCKER_HOST"),
            fixtures_dir: PathBuf::from(get("CUDALINT_IMAGE_FIXTURES")),
            tag_prefix: get("CUDALINT_IMAGE_TAG_PREFIX"),
        })
    }

    pub fn fixture(&self, name: &str) -> FixtureImage {
        let dir = self.fixtures_dir.join(name);
        FixtureImage {
            name: name.to_string(),
            engine_ref: format!("{}/{name}:test", self.tag_prefix),
            docker_archive: dir.join("docker-archive.tar"),
            oci_archive_gzip: dir.join("oci-gzip.tar"),
            oci_archive_zstd: dir.join("oci-zstd.tar"),
            oci_layout: dir.join("oci-layout"),
        }
    }

    /// Every fixture image spec in fixtures/image (a directory with a Dockerfile), sorted.
    pub fn fixture_names() -> Vec<String> {
        let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/image");
        let mut names: Vec<String> = std::fs::read_dir(specs)
            .expect("fixtures/image")
            .filter_map(|entry| entry.ok())
            .filter(|entry| entry.path().join("Dockerfile").is_file())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// The image reference for each source form of a fixture, as `cudalint image` takes it.
    pub fn source_refs(&self, name: &str) -> Vec<(&'static str, String)> {
        let image = self.fixture(name);
        vec![
            ("engine", format!("docker-daemon:{}", image.engine_ref)),
            (
                "docker-archive",
                format!("docker-archive:{}", image.docker_archive.display()),
            ),
            (
                "oci-archive-gzip",
                format!("oci-archive:{}", image.oci_archive_gzip.display()),
            ),
            (
                "oci-archive-zstd",
                format!("oci-archive:{}", image.oci_archive_zstd.display()),
            ),
            (
                "oci-layout",
                format!("oci:{}:{name}", image.oci_layout.display()),
            ),
        ]
    }
}
