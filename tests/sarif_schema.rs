//! SARIF output validated against the official SARIF 2.1.0 JSON schema.
//!
//! The schema is not committed: `scripts/fetch-test-deps` puts it in
//! `.cache/`, or `CUDALINT_SARIF_SCHEMA` names another copy. Without it the
//! test fails under CI and skips loudly elsewhere.

mod support;

use std::io::Write as _;
use std::path::PathBuf;

use cudalint::render::Format;
use jsonschema::Validator;
use serde_json::{json, Value};
use support::{empty, full, only_failed, rendered, with_failed_inputs, Fixture};

fn schema_path() -> PathBuf {
    match std::env::var_os("CUDALINT_SARIF_SCHEMA") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".cache/sarif-schema-2.1.0.json"),
    }
}

/// The validator, or `None` (after a loud message) when the schema is
/// missing outside CI.
fn validator() -> Option<Validator> {
    let path = schema_path();
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) => {
            let message = format!(
                "SARIF schema not readable at {} ({error}); run scripts/fetch-test-deps \
                 or set CUDALINT_SARIF_SCHEMA",
                path.display()
            );
            if std::env::var_os("CI").is_some() {
                panic!("{message}");
            }
            // Straight to stderr: the harness captures `eprintln!`, and a
            // skipped validation must not pass unnoticed.
            let _ = writeln!(
                std::io::stderr(),
                "\n*** SKIPPED SARIF SCHEMA VALIDATION: {message} ***\n"
            );
            return None;
        }
    };
    let mut schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    apply_errata(&mut schema);
    // Formats (`uri`, `date-time`) are checked too, not only structure.
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles");
    Some(validator)
}

/// This edition of the schema has `language` patterns with a stray
/// `]` that strict validators refuse to compile; OASIS Errata 01 corrected
/// it to the form below. Only those patterns, which our output never
/// exercises (it sets no `language`), are replaced.
fn apply_errata(schema: &mut Value) {
    const BROKEN: &str = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";
    const ERRATA_01: &str = "^[a-zA-Z]{2}(-[a-zA-Z]{2})?$";
    for owner in ["run", "toolComponent"] {
        let pointer = format!("/definitions/{owner}/properties/language/pattern");
        if let Some(pattern) = schema.pointer_mut(&pointer) {
            if pattern == BROKEN {
                *pattern = Value::from(ERRATA_01);
            }
        }
    }
}

fn errors(validator: &Validator, document: &Value) -> Vec<String> {
    validator
        .iter_errors(document)
        .map(|error| format!("{} at {}", error, error.instance_path()))
        .collect()
}

fn sarif(fixture: &Fixture) -> Value {
    serde_json::from_str(&rendered(Format::Sarif, fixture, false)).expect("SARIF is JSON")
}

#[test]
fn sarif_output_is_valid_sarif_2_1_0() {
    let Some(validator) = validator() else { return };
    let reports = [
        ("full", full()),
        ("empty", empty()),
        (
            "no inputs",
            Fixture {
                sources: Vec::new(),
                diagnostics: Vec::new(),
                inputs: Vec::new(),
                failed_inputs: Vec::new(),
            },
        ),
        // Inputs that could not be read: a failed invocation with notifications.
        ("failed inputs", with_failed_inputs(full())),
        ("only failed inputs", only_failed()),
        // Findings whose sources are missing: no snippet, no line numbers.
        (
            "sourceless",
            Fixture {
                sources: Vec::new(),
                ..full()
            },
        ),
    ];
    for (name, fixture) in &reports {
        let document = sarif(fixture);
        let problems = errors(&validator, &document);
        assert!(
            problems.is_empty(),
            "{name}: SARIF schema violations:\n{}",
            problems.join("\n")
        );
    }
}

#[test]
fn the_validator_rejects_broken_sarif() {
    let Some(validator) = validator() else { return };
    let mut document = sarif(&full());
    assert!(errors(&validator, &document).is_empty());

    type Breakage = fn(&mut Value);
    let broken: [(&str, Breakage); 4] = [
        ("wrong version", |d| d["version"] = json!("2.0.0")),
        ("unknown level", |d| {
            d["runs"][0]["results"][0]["level"] = json!("fatal")
        }),
        ("line 0", |d| {
            d["runs"][0]["results"][1]["locations"][0]["physicalLocation"]["region"]["startLine"] =
                json!(0)
        }),
        ("driver without name", |d| {
            d["runs"][0]["tool"]["driver"]
                .as_object_mut()
                .unwrap()
                .remove("name");
        }),
    ];
    for (what, breakage) in broken {
        let original = document.clone();
        breakage(&mut document);
        assert_ne!(document, original, "{what}: the breakage changed nothing");
        assert!(
            !errors(&validator, &document).is_empty(),
            "{what} was accepted"
        );
        document = original;
    }
}
