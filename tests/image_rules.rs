//! The image rules (CU2xx) on the fixture images that `scripts/image-test-env up` builds with the real
//! engine from real NVIDIA wheels and Debian packages. Each fixture's Dockerfile states what it must
//! show, one line per set of flags:
//!
//! ```text
//! # expect: fires=CU201 quiet=CU202
//! # expect --driver 470.57.02: fires=CU221
//! ```
//!
//! Each fixture's plain expectation is checked through every source form (engine, docker-archive, OCI
//! archives with gzip and zstd layers, OCI layout), and the findings must be the same from each; an
//! expectation with flags is checked on the docker-archive. Every image rule
//! must fire on at least one fixture and stay quiet on at least one.

#[path = "support/image_env.rs"]
mod image_env;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use cudalint::checks::image::RULES;
use image_env::ImageEnv;
use serde_json::Value;

struct Expectation {
    fixture: String,
    args: Vec<String>,
    fires: Vec<String>,
    quiet: Vec<String>,
}

fn expectations() -> Vec<Expectation> {
    let mut found = Vec::new();
    for fixture in ImageEnv::fixture_names() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/image")
            .join(&fixture)
            .join("Dockerfile");
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("# expect") else {
                continue;
            };
            let (args, lists) = rest
                .split_once(':')
                .unwrap_or_else(|| panic!("{}: `{line}` has no `:`", path.display()));
            let mut expectation = Expectation {
                fixture: fixture.clone(),
                args: args.split_whitespace().map(str::to_owned).collect(),
                fires: Vec::new(),
                quiet: Vec::new(),
            };
            for list in lists.split_whitespace() {
                let (kind, codes) = list
                    .split_once('=')
                    .unwrap_or_else(|| panic!("{}: bad list `{list}`", path.display()));
                let codes = codes.split(',').map(str::to_owned);
                match kind {
                    "fires" => expectation.fires.extend(codes),
                    "quiet" => expectation.quiet.extend(codes),
                    _ => panic!("{}: unknown list `{kind}`", path.display()),
                }
            }
            found.push(expectation);
        }
    }
    found
}

#[test]
fn every_image_rule_has_a_firing_and_a_quiet_fixture_image() {
    let expectations = expectations();
    let fires: BTreeSet<&str> = expectations
        .iter()
        .flat_map(|e| e.fires.iter().map(String::as_str))
        .collect();
    let quiet: BTreeSet<&str> = expectations
        .iter()
        .flat_map(|e| e.quiet.iter().map(String::as_str))
        .collect();
    let codes: BTreeSet<&str> = RULES.iter().map(|rule| rule.meta().code).collect();
    for code in &codes {
        assert!(
            fires.contains(code),
            "no fixture image expects {code} to fire"
        );
        assert!(
            quiet.contains(code),
            "no fixture image expects {code} to stay quiet"
        );
    }
    for code in fires.union(&quiet) {
        assert!(
            codes.contains(code),
            "fixtures name {code}, which is no image rule"
        );
    }
}

/// The findings of one run, reduced to what must not depend on the source form: code, severity,
/// path, message. (Layer digests differ between compressed and uncompressed forms only in blob
/// digest, not diff ID, but the engine may rebuild fixtures between runs, so they are left out.)
fn findings(env: &ImageEnv, reference: &str, args: &[String]) -> BTreeSet<String> {
    let output = Command::new(env!("CARGO_BIN_EXE_cudalint"))
        .args(["image", "--quiet", "--no-config", "--format", "json"])
        .args(args)
        .arg(reference)
        .env("DOCKER_HOST", &env.docker_host)
        .output()
        .expect("cudalint runs");
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{reference}: exit {:?}: {}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    let json: Value = serde_json::from_slice(&output.stdout).expect("JSON output");
    json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|finding| {
            format!(
                "{} {} {} {}",
                finding["code"].as_str().unwrap(),
                finding["severity"].as_str().unwrap(),
                finding["location"]["path"].as_str().unwrap_or("-"),
                finding["message"]
                    .as_str()
                    .unwrap()
                    .replace(reference, "<image>")
            )
        })
        .collect()
}

#[test]
fn fixture_images_fire_and_stay_quiet_as_stated_with_the_same_findings_from_every_source() {
    let Some(env) = ImageEnv::get("image_rules") else {
        return;
    };
    let mut problems = Vec::new();
    for expectation in expectations() {
        // Every source form for the plain expectation; the ones with flags judge the same content
        // differently, so one form suffices for them.
        let mut by_form: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        for (form, reference) in env.source_refs(&expectation.fixture) {
            if expectation.args.is_empty() || form == "docker-archive" {
                by_form.insert(form, findings(&env, &reference, &expectation.args));
            }
        }
        let label = format!("{} {:?}", expectation.fixture, expectation.args);
        let (first_form, first) = by_form.iter().next().unwrap();
        for (form, set) in &by_form {
            if set != first {
                problems.push(format!(
                    "{label}: {form} differs from {first_form}:\n  only {form}: {:?}\n  only {first_form}: {:?}",
                    set.difference(first).collect::<Vec<_>>(),
                    first.difference(set).collect::<Vec<_>>()
                ));
            }
        }
        let codes: BTreeSet<&str> = first
            .iter()
            .map(|line| line.split(' ').next().unwrap())
            .collect();
        for code in &expectation.fires {
            if !codes.contains(code.as_str()) {
                problems.push(format!(
                    "{label}: expected {code}, got:\n  {}",
                    first.iter().cloned().collect::<Vec<_>>().join("\n  ")
                ));
            }
        }
        for code in &expectation.quiet {
            if codes.contains(code.as_str()) {
                let own: Vec<&String> = first
                    .iter()
                    .filter(|l| l.starts_with(code.as_str()))
                    .collect();
                problems.push(format!("{label}: expected no {code}, got {own:?}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn image_rule_docs_have_the_five_headings_and_examples() {
    const HEADINGS: [&str; 5] = [
        "## What it does",
        "## Why is this bad?",
        "## Example",
        "## Use instead",
        "## References",
    ];
    for rule in RULES {
        let meta = rule.meta();
        let headings: Vec<&str> = meta
            .doc()
            .lines()
            .filter(|line| line.starts_with("## "))
            .collect();
        assert_eq!(headings, HEADINGS, "{}: doc headings", meta.code);
        assert!(
            meta.doc()
                .starts_with(&format!("# {} {}\n", meta.code, meta.name)),
            "{}: the doc's title must be `# {} {}`",
            meta.code,
            meta.code,
            meta.name
        );
        for heading in ["## Example", "## Use instead"] {
            let section = meta.doc().split(heading).nth(1).unwrap();
            let section = section.split("\n## ").next().unwrap();
            assert!(
                section.contains("```dockerfile\n"),
                "{}: `{heading}` needs a ```dockerfile block",
                meta.code
            );
        }
        let references = meta.doc().split("## References").nth(1).unwrap();
        assert!(
            references.contains("https://") || references.contains('@'),
            "{}: References cite nothing",
            meta.code
        );
    }
}

#[test]
fn rule_names_are_unique_across_dockerfile_and_image_rules() {
    let mut seen = BTreeMap::new();
    for meta in cudalint::engine::all_rule_metas() {
        if let Some(other) = seen.insert(meta.name, meta.code) {
            panic!("{} and {} share the name {}", other, meta.code, meta.name);
        }
    }
}

#[test]
fn with_the_dockerfile_a_finding_points_at_the_instruction_that_made_its_layer() {
    let Some(env) = ImageEnv::get("image_rules") else {
        return;
    };
    let dockerfile =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/image/devel-content/Dockerfile");
    let text = std::fs::read_to_string(&dockerfile).unwrap();
    let line_of = |needle: &str| {
        1 + text
            .lines()
            .position(|line| line.starts_with("COPY") && line.contains(needle))
            .unwrap_or_else(|| panic!("no COPY with {needle}"))
    };
    let image = env.fixture("devel-content");
    let output = Command::new(env!("CARGO_BIN_EXE_cudalint"))
        .args([
            "image",
            "--quiet",
            "--no-config",
            "--format",
            "json",
            "--dockerfile",
        ])
        .arg(&dockerfile)
        .arg(format!("docker-archive:{}", image.docker_archive.display()))
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&output.stdout).expect("JSON output");
    let made_by: BTreeMap<String, Vec<u64>> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|finding| finding["code"] == "CU210")
        .map(|finding| {
            (
                finding["location"]["path"].as_str().unwrap().to_owned(),
                finding["related"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|related| related["line"].as_u64().unwrap())
                    .collect(),
            )
        })
        .collect();
    // The headers came with the COPY of the wheel's include/, the static libraries with its lib/.
    assert_eq!(
        made_by.get("/usr/local/cuda-12.9/targets/x86_64-linux/include"),
        Some(&vec![line_of("cuda_runtime/include/") as u64]),
        "{made_by:?}"
    );
    assert_eq!(
        made_by.get("/usr/local/cuda-12.9/targets/x86_64-linux/lib"),
        Some(&vec![line_of("cuda_runtime/lib/") as u64]),
        "{made_by:?}"
    );
    // Text shows it as `made by`, SARIF as a related location.
    let sarif = Command::new(env!("CARGO_BIN_EXE_cudalint"))
        .args([
            "image",
            "--quiet",
            "--no-config",
            "--format",
            "sarif",
            "--dockerfile",
        ])
        .arg(&dockerfile)
        .arg(format!("docker-archive:{}", image.docker_archive.display()))
        .output()
        .unwrap();
    let sarif: Value = serde_json::from_slice(&sarif.stdout).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(results
        .iter()
        .any(
            |result| result["relatedLocations"][0]["physicalLocation"]["region"]["startLine"]
                == line_of("cuda_runtime/include/") as u64
        ));
    // GitHub annotations land on that line of the Dockerfile in the diff.
    let github = Command::new(env!("CARGO_BIN_EXE_cudalint"))
        .args([
            "image",
            "--quiet",
            "--no-config",
            "--format",
            "github",
            "--dockerfile",
        ])
        .arg(&dockerfile)
        .arg(format!("docker-archive:{}", image.docker_archive.display()))
        .output()
        .unwrap();
    let github = String::from_utf8(github.stdout).unwrap();
    let include_line = line_of("cuda_runtime/include/");
    let annotation = github
        .lines()
        .find(|line| line.starts_with("::warning") && line.contains("CU210"))
        .unwrap_or_else(|| panic!("no CU210 annotation in {github}"));
    assert!(
        annotation.contains(&format!(
            "file={},line=",
            dockerfile.display().to_string().replace(':', "%3A")
        )),
        "{annotation}"
    );
    assert!(
        github.lines().any(|line| line.contains("CU210")
            && line.contains(&format!(",line={include_line},endLine={include_line},"))),
        "{github}"
    );
    // GitLab Code Quality issues too.
    let gitlab = Command::new(env!("CARGO_BIN_EXE_cudalint"))
        .args([
            "image",
            "--quiet",
            "--no-config",
            "--format",
            "gitlab",
            "--dockerfile",
        ])
        .arg(&dockerfile)
        .arg(format!("docker-archive:{}", image.docker_archive.display()))
        .output()
        .unwrap();
    let gitlab: Value = serde_json::from_slice(&gitlab.stdout).unwrap();
    assert!(
        gitlab
            .as_array()
            .unwrap()
            .iter()
            .any(|issue| issue["check_name"] == "CU210"
                && issue["location"]["path"] == dockerfile.display().to_string()
                && issue["location"]["lines"]["begin"] == include_line as u64),
        "{gitlab:#}"
    );
}

#[test]
fn a_copy_vendored_under_another_soname_is_joined_by_its_build_id() {
    let Some(env) = ImageEnv::get("image_rules") else {
        return;
    };
    let image = env.fixture("vendored-copy");
    let output = Command::new(env!("CARGO_BIN_EXE_cudalint"))
        .args(["image", "--quiet", "--no-config", "--format", "json"])
        .arg(format!("oci:{}", image.oci_layout.display()))
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&output.stdout).expect("JSON output");
    let duplicates: Vec<String> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|finding| finding["code"] == "CU211")
        .map(|finding| {
            let notes: Vec<&str> = finding["notes"]
                .as_array()
                .map(|notes| notes.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            format!(
                "{} | {} | {}",
                finding["location"]["path"].as_str().unwrap_or_default(),
                finding["message"].as_str().unwrap_or_default(),
                notes.join(" | ")
            )
        })
        .collect();
    // One finding for the library, listing both copies: the wheel's libcudart.so.12 and the vendored
    // libcudart-<hash>.so.12; the notes say how each compares with the copy kept.
    assert_eq!(duplicates.len(), 1, "{duplicates:?}");
    let finding = &duplicates[0];
    assert!(
        finding.contains("/nvidia/cuda_runtime/lib/libcudart.so.12")
            && finding.contains("/cuda_app.libs/libcudart-"),
        "{finding}"
    );
    assert!(
        finding.contains("the same build (same build ID)"),
        "{finding}"
    );
}
