//! `cudalint image` end to end on the fixture images built by the real engine from real NVIDIA
//! wheels: the loader model finds what torch's libtorch_cpu.so NEEDs through its $ORIGIN RPATH, lists
//! libcupti.so.12 as unresolved when the CUPTI wheel is missing, and every source form (engine,
//! docker-archive, OCI archives with gzip and zstd layers, OCI layout) gives the same inventory and
//! the same unresolved libraries.

#[path = "support/image_env.rs"]
mod image_env;

use std::process::Command;

use image_env::ImageEnv;
use serde_json::Value;

const TORCH_CPU: &str = "/usr/local/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so";

fn image_json(env: &ImageEnv, reference: &str) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_cudalint"))
        .args(["image", "--quiet", "--format", "json", reference])
        .env("DOCKER_HOST", &env.docker_host)
        .output()
        .expect("cudalint runs");
    // 1: the image rules found something (the torch fixtures are made to); 2 would be a failure.
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{reference}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: Value = serde_json::from_slice(&output.stdout).expect("JSON output");
    json["images"][0].clone()
}

fn unresolved_of(image: &Value, object: &str) -> Vec<String> {
    image["unresolved_libraries"]
        .as_array()
        .expect("unresolved_libraries")
        .iter()
        .filter(|need| need["object"] == object)
        .map(|need| need["needed"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn cupti_through_the_origin_rpath_resolves_and_its_absence_is_listed_the_same_by_every_source() {
    let Some(env) = ImageEnv::get("image_linkage") else {
        return;
    };
    for (fixture, cupti_expected_missing) in
        [("torch-cupti-ok", false), ("torch-cupti-missing", true)]
    {
        let mut first: Option<(String, Value, Value)> = None;
        for (form, reference) in env.source_refs(fixture) {
            let image = image_json(&env, &reference);
            let missing = unresolved_of(&image, TORCH_CPU);
            assert_eq!(
                missing.iter().any(|name| name == "libcupti.so.12"),
                cupti_expected_missing,
                "{fixture} via {form}: libtorch_cpu.so unresolved {missing:?}"
            );
            // libcudart.so.12 comes through the second RPATH entry in both images.
            assert!(
                !missing.iter().any(|name| name == "libcudart.so.12"),
                "{fixture} via {form}"
            );
            let facts = (
                image["inventory"].clone(),
                image["unresolved_libraries"].clone(),
            );
            match &first {
                None => first = Some((form.to_string(), facts.0, facts.1)),
                Some((first_form, inventory, unresolved)) => {
                    assert_eq!(
                        &facts.0, inventory,
                        "{fixture}: inventory of {form} vs {first_form}"
                    );
                    assert_eq!(
                        &facts.1, unresolved,
                        "{fixture}: unresolved of {form} vs {first_form}"
                    );
                }
            }
        }
    }
}
