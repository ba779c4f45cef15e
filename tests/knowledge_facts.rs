//! `cudalint facts`, the knowledge-age notice and the doc-url setting, end
//! to end through the binary, plus snapshots of the facts of one image per
//! CUDA major.

use std::process::Command;

use cudalint::dockerfile::model::ImageRef;
use cudalint::facts::facts_for;
use cudalint::knowledge::clock::Date;
use cudalint::knowledge::freshness::stale_notice;
use cudalint::knowledge::Knowledge;

const CHECKED_ON: &str = "2026-11-23";

fn facts_text(image: &str) -> String {
    let knowledge = Knowledge::embedded().unwrap();
    let image = ImageRef::parse(image).unwrap();
    let mut text = String::new();
    for fact in facts_for(&knowledge, &image, Date::parse(CHECKED_ON).unwrap()) {
        text.push_str(&format!("{}: {}\n", fact.name, fact.value));
        if let Some(source) = fact.source {
            text.push_str(&format!("  source: {source}\n"));
        }
    }
    text
}

#[test]
fn facts_of_one_image_per_major() {
    insta::assert_snapshot!(
        "facts_cuda11",
        facts_text("nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04")
    );
    insta::assert_snapshot!(
        "facts_cuda12",
        facts_text("nvidia/cuda:12.4.1-devel-ubuntu22.04")
    );
    insta::assert_snapshot!(
        "facts_cuda13",
        facts_text("nvidia/cuda:13.4.2-runtime-ubuntu24.04")
    );
}

#[test]
fn facts_say_what_a_rule_rests_on() {
    let text = facts_text("nvidia/cuda:13.3.1-cudnn-runtime-ubuntu24.04");
    assert!(
        text.contains("minimum driver: 610.43.02 (CUDA 13.3 Update 1)"),
        "{text}"
    );
    assert!(text.contains("CUPTI: no"), "{text}");
    assert!(text.contains("support: supported"), "{text}");
    let old = facts_text("nvidia/cuda:12.6.3-runtime-ubuntu24.04");
    assert!(
        old.contains("end of life since 2026-06-01; to be deleted on 2026-12-01"),
        "{old}"
    );
    let later = {
        let knowledge = Knowledge::embedded().unwrap();
        let image = ImageRef::parse("nvidia/cuda:12.6.3-runtime-ubuntu24.04").unwrap();
        facts_for(&knowledge, &image, Date::parse("2027-01-10").unwrap())
            .into_iter()
            .find(|f| f.name == "support")
            .unwrap()
            .value
    };
    assert!(later.contains("deleted (due on 2026-12-01)"), "{later}");
}

#[test]
fn the_knowledge_says_when_it_is_old() {
    let knowledge = Knowledge::embedded().unwrap();
    assert_eq!(knowledge.checked.as_deref(), Some(CHECKED_ON));
    assert_eq!(
        stale_notice(&knowledge, Date::parse("2027-05-01").unwrap()),
        None
    );
    let notice = stale_notice(&knowledge, Date::parse("2027-06-01").unwrap()).unwrap();
    assert!(
        notice.contains("last checked on 2026-11-23 (190 days ago)"),
        "{notice}"
    );
}

fn cudalint(args: &[&str], today: &str, dir: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cudalint"))
        .args(args)
        .current_dir(dir)
        .env("CUDALINT_TODAY", today)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("knowledge-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("Dockerfile"),
        "FROM nvidia/cuda:12.6.3-cudnn-runtime-ubuntu24.04\nCMD [\"bash\"]\n",
    )
    .unwrap();
    dir
}

#[test]
fn a_stale_catalogue_is_said_once_per_run() {
    let dir = temp_dir("stale");
    let fresh = cudalint(&["--no-config", "Dockerfile"], "2026-12-01", &dir);
    assert!(!String::from_utf8_lossy(&fresh.stderr).contains("last checked"));
    let stale = cudalint(
        &["--no-config", "Dockerfile", "Dockerfile"],
        "2027-09-01",
        &dir,
    );
    let stderr = String::from_utf8_lossy(&stale.stderr);
    assert_eq!(
        stderr.matches("last checked on 2026-11-23").count(),
        1,
        "{stderr}"
    );
    let sarif = cudalint(
        &["--no-config", "--format", "sarif", "Dockerfile"],
        "2027-09-01",
        &dir,
    );
    let log: serde_json::Value = serde_json::from_slice(&sarif.stdout).unwrap();
    let notes = &log["runs"][0]["invocations"][0]["toolExecutionNotifications"];
    assert_eq!(notes[0]["descriptor"]["id"], "knowledge-age", "{log}");
    assert!(!String::from_utf8_lossy(&sarif.stderr).contains("last checked"));
}

#[test]
fn sources_and_doc_links_go_where_asked() {
    let dir = temp_dir("sources");
    let text = cudalint(&["--no-config", "Dockerfile"], CHECKED_ON, &dir);
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(out.contains("CU131") && !out.contains("source:"), "{out}");
    let shown = cudalint(
        &["--no-config", "--show-sources", "Dockerfile"],
        CHECKED_ON,
        &dir,
    );
    assert!(String::from_utf8_lossy(&shown.stdout).contains("source: "));

    let json = cudalint(
        &["--no-config", "--format", "json", "Dockerfile"],
        CHECKED_ON,
        &dir,
    );
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let finding = &json["findings"][0];
    assert!(
        finding["sources"].as_array().is_some_and(|s| !s.is_empty()),
        "{json}"
    );
    assert!(finding.get("doc_url").is_none(), "no base, no link: {json}");

    std::fs::write(
        dir.join(".cudalint.toml"),
        "doc-url-base = \"https://docs.example.com/cudalint/rules\"\n",
    )
    .unwrap();
    let sarif = cudalint(&["--format", "sarif", "Dockerfile"], CHECKED_ON, &dir);
    let log: serde_json::Value = serde_json::from_slice(&sarif.stdout).unwrap();
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    assert!(rules.iter().all(|r| r["helpUri"]
        .as_str()
        .is_some_and(|u| u.starts_with("https://docs.example.com/cudalint/rules/CU"))));
    let result = &log["runs"][0]["results"][0];
    assert!(
        result["properties"]["sources"]
            .as_array()
            .is_some_and(|s| !s.is_empty()),
        "{result}"
    );
}
