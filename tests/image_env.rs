//! The image test environment is complete: every fixture image spec was built by the real engine and
//! exported in every source form. This is what keeps the source-equivalence tests from passing on an
//! empty set of images.

#[path = "support/image_env.rs"]
mod image_env;

use std::process::Command;

use image_env::ImageEnv;

#[test]
fn every_fixture_image_is_built_and_exported_in_every_form() {
    let Some(env) = ImageEnv::get("every_fixture_image_is_built_and_exported_in_every_form") else {
        return;
    };
    let names = ImageEnv::fixture_names();
    assert!(names.len() >= 7, "fixture image specs: {names:?}");
    for name in &names {
        let image = env.fixture(name);
        for archive in [
            &image.docker_archive,
            &image.oci_archive_gzip,
            &image.oci_archive_zstd,
        ] {
            let size = std::fs::metadata(archive).map(|m| m.len()).unwrap_or(0);
            assert!(size > 1024, "{}: missing or empty", archive.display());
        }
        assert!(
            image.oci_layout.join("index.json").is_file(),
            "{name}: no OCI layout"
        );
        let inspect = Command::new("docker")
            .args(["image", "inspect", "--format", "{{.Id}}", &image.engine_ref])
            .env("DOCKER_HOST", &env.docker_host)
            .output()
            .expect("docker client");
        assert!(
            inspect.status.success(),
            "{}: not in the engine at {}: {}",
            image.engine_ref,
            env.docker_host,
            String::from_utf8_lossy(&inspect.stderr)
        );
    }
}
