//! Every output format, snapshotted over hand-built reports, plus checks
//! that the machine formats parse and carry messages through unchanged.

mod support;

use cudalint::diagnostic::Severity;
use cudalint::render::Format;
use serde_json::Value;
use support::{
    empty, failed_inputs, full, only_failed, rendered, with_failed_inputs, Fixture, ALL_FORMATS,
    NASTY_MESSAGE, NASTY_NAME,
};

fn name(format: Format) -> &'static str {
    match format {
        Format::Text => "text",
        Format::Json => "json",
        Format::Sarif => "sarif",
        Format::Checkstyle => "checkstyle",
        Format::Junit => "junit",
        Format::Gitlab => "gitlab",
        Format::Github => "github",
        Format::Html => "html",
    }
}

#[test]
fn snapshots_of_every_format() {
    for format in ALL_FORMATS {
        insta::assert_snapshot!(
            format!("full_{}", name(format)),
            rendered(format, &full(), false)
        );
        insta::assert_snapshot!(
            format!("empty_{}", name(format)),
            rendered(format, &empty(), false)
        );
        insta::assert_snapshot!(
            format!("failed_{}", name(format)),
            rendered(format, &with_failed_inputs(empty()), false)
        );
    }
}

#[test]
fn text_is_coloured_only_when_asked() {
    let plain = rendered(Format::Text, &full(), false);
    let coloured = rendered(Format::Text, &full(), true);
    assert!(!plain.contains('\x1b'), "no ANSI escapes without colour");
    assert!(coloured.contains("\x1b[1;31merror[CU101]\x1b[0m"));
    // The message's own escape character is neutralised, coloured or not.
    assert!(!plain.contains("\u{1b}[31m"));
}

#[test]
fn text_summary_counts_by_severity() {
    let text = rendered(Format::Text, &full(), false);
    assert!(
        text.ends_with("8 findings: 1 error, 3 warnings, 2 info, 2 style (2 fixable)\n"),
        "{text}"
    );
    assert_eq!(rendered(Format::Text, &empty(), false), "no findings\n");
}

#[test]
fn json_formats_parse_and_keep_messages_exact() {
    let fixture = full();
    let json: Value = serde_json::from_str(&rendered(Format::Json, &fixture, false)).unwrap();
    assert_eq!(json["version"], 1);
    let findings = json["findings"].as_array().unwrap();
    assert_eq!(findings.len(), fixture.diagnostics.len());
    for (finding, diag) in findings.iter().zip(&fixture.diagnostics) {
        assert_eq!(finding["message"], diag.message.as_str());
        assert_eq!(finding["code"], diag.code);
    }
    assert_eq!(json["summary"]["error"], 1);
    assert_eq!(json["summary"]["inputs"], 4);

    let gitlab: Value = serde_json::from_str(&rendered(Format::Gitlab, &fixture, false)).unwrap();
    let issues = gitlab.as_array().unwrap();
    assert_eq!(issues.len(), fixture.diagnostics.len());
    let mut fingerprints: Vec<&str> = issues
        .iter()
        .map(|i| i["fingerprint"].as_str().unwrap())
        .collect();
    fingerprints.sort_unstable();
    fingerprints.dedup();
    assert_eq!(fingerprints.len(), issues.len(), "fingerprints are unique");
    assert!(issues.iter().any(|i| i["description"] == NASTY_MESSAGE));

    let sarif: Value = serde_json::from_str(&rendered(Format::Sarif, &fixture, false)).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(results
        .iter()
        .any(|r| r["message"]["text"] == NASTY_MESSAGE));
    for format in [Format::Json, Format::Sarif, Format::Gitlab] {
        serde_json::from_str::<Value>(&rendered(format, &empty(), false)).unwrap();
    }
}

#[test]
fn gitlab_fingerprints_are_stable_across_runs() {
    assert_eq!(
        rendered(Format::Gitlab, &full(), false),
        rendered(Format::Gitlab, &full(), false)
    );
}

/// XML 1.0 cannot hold most control characters; the renderers swap them
/// for U+FFFD and must keep everything else.
fn xml_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && !matches!(c, '\t' | '\n' | '\r') {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

#[test]
fn checkstyle_is_well_formed_and_lists_clean_files() {
    let fixture = full();
    let xml = rendered(Format::Checkstyle, &fixture, false);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let files: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("file"))
        .collect();
    let names: Vec<_> = files.iter().map(|f| f.attribute("name").unwrap()).collect();
    assert_eq!(
        names,
        fixture
            .inputs
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
    );
    let clean = files
        .iter()
        .find(|f| f.attribute("name") == Some("clean.Dockerfile"))
        .unwrap();
    assert_eq!(clean.children().filter(|n| n.is_element()).count(), 0);
    let errors: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("error"))
        .collect();
    assert_eq!(errors.len(), fixture.diagnostics.len());
    assert!(errors
        .iter()
        .any(|e| e.attribute("message") == Some(xml_safe(NASTY_MESSAGE).as_str())));
    assert!(errors
        .iter()
        .all(|e| e.attribute("source").unwrap().starts_with("cudalint.CU")));
    roxmltree::Document::parse(&rendered(Format::Checkstyle, &empty(), false)).unwrap();
}

#[test]
fn junit_is_well_formed_and_clean_inputs_pass() {
    let fixture = full();
    let xml = rendered(Format::Junit, &fixture, false);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suites: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert_eq!(suites.len(), fixture.inputs.len());
    let failures: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .collect();
    assert_eq!(failures.len(), fixture.diagnostics.len());
    assert!(failures
        .iter()
        .any(|f| f.attribute("message") == Some(xml_safe(NASTY_MESSAGE).as_str())));
    let clean = suites
        .iter()
        .find(|s| s.attribute("name") == Some("clean.Dockerfile"))
        .unwrap();
    assert_eq!(clean.attribute("failures"), Some("0"));
    assert_eq!(
        clean
            .descendants()
            .filter(|n| n.has_tag_name("testcase"))
            .count(),
        1
    );
    roxmltree::Document::parse(&rendered(Format::Junit, &empty(), false)).unwrap();
}

/// Undo the Actions runner's escaping.
fn unescape(text: &str) -> String {
    text.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
}

#[test]
fn github_commands_escape_so_the_runner_recovers_the_text() {
    let fixture = full();
    let output = rendered(Format::Github, &fixture, false);
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(
        lines.len(),
        fixture.diagnostics.len(),
        "one command per line"
    );
    for (line, diag) in lines.iter().zip(&fixture.diagnostics) {
        let expected = match diag.severity {
            Severity::Error => "::error ",
            Severity::Warning => "::warning ",
            Severity::Info | Severity::Style => "::notice ",
        };
        assert!(line.starts_with(expected), "{line}");
        let (properties, data) = line.trim_start_matches("::").split_once("::").unwrap();
        let message: String = diag
            .message
            .chars()
            .map(|c| {
                if c.is_control() && !matches!(c, '\t' | '\r' | '\n') {
                    '\u{FFFD}'
                } else {
                    c
                }
            })
            .collect();
        assert!(unescape(data).contains(&message), "{line}");
        for property in properties.split_once(' ').unwrap().1.split(',') {
            let (key, _) = property.split_once('=').unwrap();
            assert!(["file", "line", "col", "endLine", "endColumn", "title"].contains(&key));
        }
    }
    assert_eq!(rendered(Format::Github, &empty(), false), "");
}

/// What a message or name looks like after a format replaced the control
/// characters it cannot carry.
fn controls_replaced(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && !matches!(c, '\t' | '\r' | '\n') {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

fn failed_count(fixture: &Fixture) -> usize {
    fixture.failed_inputs.len()
}

#[test]
fn text_reports_each_failed_input_and_counts_them() {
    let text = rendered(Format::Text, &with_failed_inputs(full()), false);
    assert!(
        text.ends_with(
            "8 findings: 1 error, 3 warnings, 2 info, 2 style (2 fixable); \
             2 inputs could not be linted\n"
        ),
        "{text}"
    );
    assert!(text.contains(
        "error: cannot lint missing.Dockerfile: No such file or directory (os error 2)\n"
    ));
    // A name or message cannot smuggle terminal escapes in.
    assert!(!text.contains('\u{1b}'), "{text}");
    assert_eq!(
        rendered(Format::Text, &only_failed(), false),
        "error: cannot lint Dockerfile: it is a directory\n\n\
         no findings; 1 input could not be linted\n"
    );
}

#[test]
fn json_lists_failed_inputs_always() {
    let fixture = with_failed_inputs(full());
    let json: Value = serde_json::from_str(&rendered(Format::Json, &fixture, false)).unwrap();
    let failed = json["failed_inputs"].as_array().unwrap();
    assert_eq!(failed.len(), failed_count(&fixture));
    for (entry, input) in failed.iter().zip(&fixture.failed_inputs) {
        assert_eq!(entry["name"], input.name.as_str());
        assert_eq!(entry["message"], input.message.as_str());
    }
    assert_eq!(json["findings"].as_array().unwrap().len(), 8);

    let clean: Value = serde_json::from_str(&rendered(Format::Json, &empty(), false)).unwrap();
    assert_eq!(clean["failed_inputs"], Value::Array(Vec::new()));
}

#[test]
fn sarif_invocation_fails_with_a_notification_per_failed_input() {
    let fixture = with_failed_inputs(full());
    let sarif: Value = serde_json::from_str(&rendered(Format::Sarif, &fixture, false)).unwrap();
    let invocations = sarif["runs"][0]["invocations"].as_array().unwrap();
    assert_eq!(invocations.len(), 1);
    assert_eq!(invocations[0]["executionSuccessful"], false);
    let notifications = invocations[0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    assert_eq!(notifications.len(), failed_count(&fixture));
    assert_eq!(notifications[0]["level"], "error");
    assert_eq!(
        notifications[0]["message"]["text"],
        "cannot lint missing.Dockerfile: No such file or directory (os error 2)"
    );
    assert_eq!(
        notifications[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "missing.Dockerfile"
    );
    let nasty = notifications[1]["message"]["text"].as_str().unwrap();
    assert!(nasty.contains(NASTY_NAME) && nasty.contains(NASTY_MESSAGE));
    // Results are unaffected.
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), 8);

    let clean: Value = serde_json::from_str(&rendered(Format::Sarif, &full(), false)).unwrap();
    let invocation = &clean["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], true);
    assert!(invocation.get("toolExecutionNotifications").is_none());
}

#[test]
fn checkstyle_gives_failed_inputs_an_input_error() {
    let fixture = with_failed_inputs(full());
    let xml = rendered(Format::Checkstyle, &fixture, false);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let input_errors: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("error") && n.attribute("source") == Some("cudalint.input"))
        .collect();
    assert_eq!(input_errors.len(), failed_count(&fixture));
    for (error, input) in input_errors.iter().zip(&fixture.failed_inputs) {
        assert_eq!(error.attribute("severity"), Some("error"));
        let file = error.parent_element().unwrap();
        assert_eq!(file.attribute("name"), Some(input.name.as_str()));
        let message = error.attribute("message").unwrap();
        assert_eq!(message, controls_replaced(&input.sentence()));
    }
    let rule_errors = doc
        .descendants()
        .filter(|n| n.has_tag_name("error"))
        .count()
        - input_errors.len();
    assert_eq!(rule_errors, fixture.diagnostics.len());
}

#[test]
fn junit_reports_failed_inputs_as_errors_not_failures() {
    let fixture = with_failed_inputs(full());
    let xml = rendered(Format::Junit, &fixture, false);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let root = doc.root_element();
    assert_eq!(root.attribute("errors"), Some("2"));
    assert_eq!(root.attribute("failures"), Some("8"));
    // 8 findings, one passing case for clean.Dockerfile, 2 errors.
    assert_eq!(root.attribute("tests"), Some("11"));
    let errors: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("error"))
        .collect();
    assert_eq!(errors.len(), failed_count(&fixture));
    let nasty_suite = errors[1]
        .ancestors()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    assert_eq!(nasty_suite.attribute("name"), Some(NASTY_NAME));
    assert_eq!(nasty_suite.attribute("errors"), Some("1"));
    assert_eq!(
        errors[1].text(),
        Some(controls_replaced(&fixture.failed_inputs[1].sentence()).as_str())
    );
    let failures = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .count();
    assert_eq!(failures, fixture.diagnostics.len());
}

#[test]
fn gitlab_has_a_critical_issue_per_failed_input_with_a_stable_fingerprint() {
    let fixture = with_failed_inputs(full());
    let gitlab: Value = serde_json::from_str(&rendered(Format::Gitlab, &fixture, false)).unwrap();
    let issues = gitlab.as_array().unwrap();
    assert_eq!(issues.len(), fixture.diagnostics.len() + 2);
    let failed: Vec<_> = issues
        .iter()
        .filter(|i| i["check_name"] == "cudalint-input-error")
        .collect();
    assert_eq!(failed.len(), 2);
    assert_eq!(failed[0]["severity"], "critical");
    assert_eq!(failed[0]["location"]["path"], "missing.Dockerfile");
    assert_eq!(failed[0]["location"]["lines"]["begin"], 1);
    assert_eq!(failed[1]["location"]["path"], NASTY_NAME);

    // The wording of the operating system's error is not part of the
    // identity; the input is.
    let mut reworded = with_failed_inputs(empty());
    reworded.failed_inputs[0].message = "The system cannot find the file specified.".into();
    let reworded: Value =
        serde_json::from_str(&rendered(Format::Gitlab, &reworded, false)).unwrap();
    assert_eq!(reworded[0]["fingerprint"], failed[0]["fingerprint"]);
    assert_ne!(failed[0]["fingerprint"], failed[1]["fingerprint"]);

    // The same input named twice still gets unique fingerprints.
    let mut twice = empty();
    twice.failed_inputs = vec![failed_inputs()[0].clone(), failed_inputs()[0].clone()];
    let twice: Value = serde_json::from_str(&rendered(Format::Gitlab, &twice, false)).unwrap();
    assert_ne!(twice[0]["fingerprint"], twice[1]["fingerprint"]);
}

#[test]
fn github_annotates_each_failed_input_as_an_error_on_its_file() {
    let fixture = with_failed_inputs(full());
    let output = rendered(Format::Github, &fixture, false);
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(lines.len(), fixture.diagnostics.len() + 2);
    for (line, input) in lines[fixture.diagnostics.len()..]
        .iter()
        .zip(&fixture.failed_inputs)
    {
        let (properties, data) = line
            .strip_prefix("::error ")
            .unwrap()
            .split_once("::")
            .unwrap();
        assert_eq!(unescape(properties), format!("file={}", input.name));
        assert_eq!(unescape(data), controls_replaced(&input.sentence()));
    }
}
