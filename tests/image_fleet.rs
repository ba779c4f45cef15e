//! Fleets of images in one `cudalint image` run (see docs/fleet.md): several references and
//! `--from-file` lists give one report with each image's own result; an image that cannot be read is
//! reported while the others still are, and the exit status is the worst of them; `--shard I/N` (or
//! `--shard-count N` with `JOB_COMPLETION_INDEX`) splits a list so that N processes, run at once on
//! one shared layer cache, scan every image exactly once. The images are the image tests' fixture
//! images, built by the real engine and exported as docker-archives and OCI layouts.

#[path = "support/image_env.rs"]
mod image_env;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use image_env::ImageEnv;
use serde_json::Value;

/// Small fixture images: debug-env fires CU229, require-disabled fires CU223, nvml-tool is clean.
const FIRING: &str = "debug-env";
const ALSO_FIRING: &str = "require-disabled";
const CLEAN: &str = "nvml-tool";

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("cudalint-fleet-{name}-{}", std::process::id()));
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

/// `cudalint image --quiet ARGS` with its layer cache under `cache_home`.
fn cudalint(cache_home: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cudalint"));
    command
        .args(["image", "--quiet", "--no-config"])
        .args(args)
        .env("XDG_CACHE_HOME", cache_home)
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove(cudalint::image::cache::MAX_BYTES_VAR);
    command
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "{error}: stdout {} stderr {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn docker_archive(env: &ImageEnv, name: &str) -> String {
    format!(
        "docker-archive:{}",
        env.fixture(name).docker_archive.display()
    )
}

fn oci_layout(env: &ImageEnv, name: &str) -> String {
    format!("oci:{}:{name}", env.fixture(name).oci_layout.display())
}

/// The findings of `origin` in a JSON report, as (code, severity, layer, path), sorted.
fn findings_of(report: &Value, origin: &str) -> Vec<(String, String, Value, Value)> {
    let mut found: Vec<_> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|finding| finding["origin"] == origin)
        .map(|finding| {
            (
                finding["code"].as_str().unwrap().to_owned(),
                finding["severity"].as_str().unwrap().to_owned(),
                finding["location"]["layer"].clone(),
                finding["location"]["path"].clone(),
            )
        })
        .collect();
    found.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    found
}

/// Each input's `inputs` entry by name.
fn input_result<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|input| input["name"] == name)
        .unwrap_or_else(|| panic!("{name} not among the inputs: {}", report["inputs"]))
}

/// The references a report scanned or failed, each as often as it appears.
fn covered(report: &Value) -> Vec<String> {
    report["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|input| input["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn three_images_one_broken_give_one_report_and_the_worst_exit() {
    let Some(env) = ImageEnv::get("three_images_one_broken_give_one_report_and_the_worst_exit")
    else {
        return;
    };
    let dir = TempDir::new("three");
    let broken = dir.path("broken.tar");
    std::fs::write(&broken, b"not a tar archive at all").unwrap();
    let broken = format!("docker-archive:{}", broken.display());
    let firing = docker_archive(&env, FIRING);
    let clean = oci_layout(&env, CLEAN);
    let cache = dir.path("cache");

    let output = cudalint(&cache, &["--format", "json", &firing, &broken, &clean])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "a failed image is exit 2");
    let report = json(&output);
    // The broken image is reported, with why, in the report itself and on stderr.
    let failed = report["failed_inputs"].as_array().unwrap();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["name"], broken.as_str());
    assert!(!failed[0]["message"].as_str().unwrap().is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).contains(&broken));
    let broken_result = input_result(&report, &broken);
    assert_eq!(broken_result["status"], "failed");
    assert_eq!(broken_result["message"], failed[0]["message"]);
    // The other two are still scanned, each with the findings it has when scanned alone.
    let images: Vec<&str> = report["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|image| image["reference"].as_str().unwrap())
        .collect();
    assert_eq!(images, [firing.as_str(), clean.as_str()]);
    for reference in [&firing, &clean] {
        let alone = json(
            &cudalint(&cache, &["--format", "json", reference])
                .output()
                .unwrap(),
        );
        assert_eq!(
            findings_of(&report, reference),
            findings_of(&alone, reference),
            "{reference}"
        );
        let result = input_result(&report, reference);
        assert_eq!(result["status"], "linted");
        assert_eq!(result["message"], Value::Null);
        assert_eq!(
            result["findings"].as_u64().unwrap() as usize,
            findings_of(&report, reference).len()
        );
    }
    assert!(findings_of(&report, &firing)
        .iter()
        .any(|(code, ..)| code == "CU229"));
    assert!(findings_of(&report, &clean).is_empty());
    assert_eq!(report["summary"]["inputs"], 2);

    // Without the broken image, the worst is the findings (1); the clean image alone is 0.
    let status = |refs: &[&str]| cudalint(&cache, refs).output().unwrap().status.code();
    assert_eq!(status(&[&firing, &clean]), Some(1));
    assert_eq!(status(&[&clean]), Some(0));
    assert_eq!(status(&[&clean, &broken]), Some(2));
}

#[test]
fn the_sarif_report_is_one_run_with_each_image_located() {
    let Some(env) = ImageEnv::get("the_sarif_report_is_one_run_with_each_image_located") else {
        return;
    };
    let dir = TempDir::new("sarif");
    let firing = docker_archive(&env, FIRING);
    let also = oci_layout(&env, ALSO_FIRING);
    let missing = format!("docker-archive:{}", dir.path("missing.tar").display());
    let output = cudalint(
        &dir.path("cache"),
        &["--format", "sarif", &firing, &missing, &also],
    )
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let sarif = json(&output);
    let runs = sarif["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "one run for the whole fleet");
    let run = &runs[0];
    let invocation = &run["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    let notices = invocation["toolExecutionNotifications"].as_array().unwrap();
    assert!(notices.iter().any(|notice| notice["level"] == "error"
        && notice["message"]["text"]
            .as_str()
            .unwrap()
            .contains(&missing)));
    // Every result names its image: as the outermost logical location, and in its fingerprint.
    let mut images_with_results = BTreeSet::new();
    let mut fingerprints = BTreeSet::new();
    for result in run["results"].as_array().unwrap() {
        let logical = result["locations"][0]["logicalLocations"]
            .as_array()
            .unwrap();
        let image = logical.last().unwrap();
        assert_eq!(image["kind"], "package");
        images_with_results.insert(image["fullyQualifiedName"].as_str().unwrap().to_owned());
        assert!(fingerprints.insert(result["partialFingerprints"].to_string()));
    }
    assert_eq!(
        images_with_results,
        BTreeSet::from([firing.clone(), also.clone()])
    );
}

#[test]
fn a_list_file_takes_comments_blank_lines_and_duplicates() {
    let Some(env) = ImageEnv::get("a_list_file_takes_comments_blank_lines_and_duplicates") else {
        return;
    };
    let dir = TempDir::new("list");
    let firing = docker_archive(&env, FIRING);
    let also = oci_layout(&env, ALSO_FIRING);
    let clean = docker_archive(&env, CLEAN);
    let list = dir.path("refs.txt");
    std::fs::write(
        &list,
        format!("# nightly fleet\n\n{firing}\n  {also}   # indented, with a comment\n\n{firing}\n"),
    )
    .unwrap();
    let cache = dir.path("cache");
    let list_arg = list.display().to_string();
    let output = cudalint(
        &cache,
        &["--format", "json", &clean, "--from-file", &list_arg],
    )
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let report = json(&output);
    // The command line first, then the file; the duplicate scanned once.
    assert_eq!(
        covered(&report),
        [clean.clone(), firing.clone(), also.clone()]
    );
    assert_eq!(report["images"].as_array().unwrap().len(), 3);

    // Standard input works as a list file, and the list alone needs no REF.
    let mut child = cudalint(&cache, &["--format", "json", "--from-file", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(
        child.stdin.as_mut().unwrap(),
        format!("{clean}\n# done\n").as_bytes(),
    )
    .unwrap();
    drop(child.stdin.take());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(covered(&json(&output)), std::slice::from_ref(&clean));

    // A list of nothing, or no list at all, is an error, not a clean run.
    let empty = dir.path("empty.txt");
    std::fs::write(&empty, "# nothing yet\n\n").unwrap();
    let output = cudalint(&cache, &["--from-file", &empty.display().to_string()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("lists no reference"));
    let output = cudalint(
        &cache,
        &["--from-file", &dir.path("absent.txt").display().to_string()],
    )
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("absent.txt"));
}

#[test]
fn shards_run_at_once_on_one_cache_cover_the_list_exactly_once() {
    let Some(env) = ImageEnv::get("shards_run_at_once_on_one_cache_cover_the_list_exactly_once")
    else {
        return;
    };
    let dir = TempDir::new("shards");
    // Each image in two forms (same layers, so the shards share cache entries), and one broken.
    let mut list = Vec::new();
    for name in [FIRING, ALSO_FIRING, CLEAN, "layers-waste"] {
        list.push(docker_archive(&env, name));
        list.push(oci_layout(&env, name));
    }
    list.push(format!(
        "docker-archive:{}",
        dir.path("missing.tar").display()
    ));
    let file = dir.path("refs.txt");
    std::fs::write(&file, list.join("\n")).unwrap();
    let file = file.display().to_string();
    let cache = dir.path("cache");

    let shards = 3;
    let children: Vec<_> = (0..shards)
        .map(|index| {
            cudalint(
                &cache,
                &[
                    "--format",
                    "json",
                    "--from-file",
                    &file,
                    "--shard",
                    &format!("{index}/{shards}"),
                ],
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    let mut seen: Vec<String> = Vec::new();
    let mut reports = Vec::new();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            matches!(output.status.code(), Some(0..=2)),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let report = json(&output);
        seen.extend(covered(&report));
        reports.push(report);
    }
    seen.sort();
    let mut expected = list.clone();
    expected.sort();
    assert_eq!(seen, expected, "every reference in exactly one shard");

    // The cache the shards wrote at once is sound: a rescan of everything is served from it whole.
    let output = cudalint(&cache, &["--format", "json", "--from-file", &file])
        .output()
        .unwrap();
    let whole = json(&output);
    for image in whole["images"].as_array().unwrap() {
        let cache = &image["cache"];
        assert_eq!(
            (cache["misses"].as_u64(), cache["rejected"].as_u64()),
            (Some(0), Some(0)),
            "{}",
            image["reference"]
        );
    }
    let leftovers: Vec<_> = walk(&cache.join("cudalint"))
        .into_iter()
        .filter(|path| path.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // Each shard's findings are the whole run's findings for its images.
    for report in &reports {
        for reference in covered(report) {
            assert_eq!(
                findings_of(report, &reference),
                findings_of(&whole, &reference)
            );
        }
    }

    // A Kubernetes Indexed Job's pod finds its shard in JOB_COMPLETION_INDEX.
    for (index, by_flag) in reports.iter().enumerate() {
        let output = cudalint(
            &cache,
            &[
                "--format",
                "json",
                "--from-file",
                &file,
                "--shard-count",
                "3",
            ],
        )
        .env("JOB_COMPLETION_INDEX", index.to_string())
        .output()
        .unwrap();
        assert_eq!(covered(&json(&output)), covered(by_flag));
    }
}

#[test]
fn shard_flags_refuse_what_cannot_be_a_shard() {
    let dir = TempDir::new("shard-flags");
    let cache = dir.path("cache");
    let run = |args: &[&str], index: Option<&str>| {
        let mut command = cudalint(&cache, args);
        if let Some(index) = index {
            command.env("JOB_COMPLETION_INDEX", index);
        }
        let output = command.output().unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, stderr) = run(&["--shard", "3/3", "./missing.tar"], None);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("numbered from 0 to 2"), "{stderr}");
    let (code, stderr) = run(&["--shard-count", "3", "./missing.tar"], None);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("JOB_COMPLETION_INDEX"), "{stderr}");
    let (code, stderr) = run(&["--shard-count", "3", "./missing.tar"], Some("7"));
    assert_eq!(code, Some(2));
    assert!(stderr.contains("JOB_COMPLETION_INDEX=7"), "{stderr}");
    let (code, _) = run(
        &["--shard", "0/3", "--shard-count", "3", "./missing.tar"],
        None,
    );
    assert_eq!(code, Some(2));
    let (code, _) = run(&["--shard-count", "0", "./missing.tar"], None);
    assert_eq!(code, Some(2));
    // An empty shard of a short list is a clean run, not an error.
    let mut empty = None;
    for index in 0..64 {
        let shard = format!("{index}/64");
        let output = cudalint(
            &cache,
            &["--format", "json", "--shard", &shard, "./missing.tar"],
        )
        .output()
        .unwrap();
        if output.status.code() == Some(0) {
            empty = Some(json(&output));
            break;
        }
    }
    let empty = empty.expect("63 of 64 shards of one reference are empty");
    assert_eq!(empty["inputs"], Value::Array(Vec::new()));
}

#[test]
fn facts_take_any_reference_that_names_an_image() {
    let facts = |reference: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_cudalint"))
            .args(["facts", "--format", "json", reference])
            .output()
            .unwrap();
        (output.status.code(), output.stdout, output.stderr)
    };
    let name = "nvidia/cuda:12.4.1-runtime-ubuntu22.04";
    let (code, bare, _) = facts(name);
    assert_eq!(code, Some(0));
    let (code, prefixed, _) = facts(&format!("docker-daemon:{name}"));
    assert_eq!(code, Some(0));
    assert_eq!(
        serde_json::from_slice::<Value>(&prefixed).unwrap()["facts"],
        serde_json::from_slice::<Value>(&bare).unwrap()["facts"]
    );
    let (code, _, stderr) = facts("docker-archive:/tmp/image.tar");
    assert_eq!(code, Some(2));
    assert!(String::from_utf8_lossy(&stderr).contains("looks base images up by name"));
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}
