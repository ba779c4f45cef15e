//! The fixture harness for every rule, and the rule registry's invariants.
//!
//! For each rule in `RULES`: every `fixtures/dockerfile/<CODE>/fail_*.Dockerfile`
//! must yield at least one finding with that code, every `pass_*.Dockerfile`
//! none, and each rule has at least one of both. Each fail fixture's
//! findings are snapshotted as text (`tests/snapshots/`) so reviewers see
//! the exact wording. A fixture may start with
//! `# cudalint-test: --build-arg K=V --target STAGE --driver VERSION`, and
//! may have a build context beside it, `fail_x.context/` for
//! `fail_x.Dockerfile` (the files its `COPY`s and `pip install -r` read).

#[path = "support/fixture.rs"]
mod fixture;

use std::collections::HashSet;
use std::fmt::Write as _;

use cudalint::checks::dockerfile::RULES;
use cudalint::checks::RuleMeta;
use cudalint::diagnostic::Diagnostic;
use cudalint::engine::Engine;
use cudalint::source::SourceFile;

use fixture::{fixture_codes, fixture_options, fixtures, fixtures_dir, lint_fixture};

/// Findings as stable text: `line:col CODE severity message`, then help,
/// notes and the fix, indented.
fn findings_text(findings: &[Diagnostic]) -> String {
    let mut text = String::new();
    for finding in findings {
        let (line, column) = finding.start().map_or((0, 0), |at| (at.line, at.column));
        writeln!(
            text,
            "{line}:{column} {} {} {}",
            finding.code, finding.severity, finding.message
        )
        .unwrap();
        if let Some(help) = &finding.help {
            writeln!(text, "    help: {help}").unwrap();
        }
        for note in &finding.notes {
            writeln!(text, "    note: {note}").unwrap();
        }
        for source in &finding.sources {
            writeln!(text, "    source: {source}").unwrap();
        }
        if let Some(fix) = &finding.fix {
            writeln!(text, "    fix ({:?}): {}", fix.safety, fix.description).unwrap();
        }
    }
    text
}

#[test]
fn every_rule_fires_on_its_fail_fixtures_and_not_on_its_pass_fixtures() {
    let mut problems = Vec::new();
    let mut snapshots = Vec::new();
    for rule in RULES {
        let code = rule.meta().code;
        let (fails, passes) = (fixtures(code, "fail_"), fixtures(code, "pass_"));
        if fails.is_empty() || passes.is_empty() {
            problems.push(format!(
                "{code}: needs at least one fail_*.Dockerfile and one pass_*.Dockerfile in {}",
                fixtures_dir(code).display()
            ));
        }
        for path in &fails {
            let (_, findings) = lint_fixture(path);
            if !findings.iter().any(|f| f.code == code) {
                problems.push(format!(
                    "{}: expected {code}, got:\n{}",
                    path.display(),
                    findings_text(&findings)
                ));
            }
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            snapshots.push((format!("{code}__{stem}"), findings_text(&findings)));
        }
        for path in &passes {
            let (_, findings) = lint_fixture(path);
            let own: Vec<Diagnostic> = findings.into_iter().filter(|f| f.code == code).collect();
            if !own.is_empty() {
                problems.push(format!(
                    "{}: expected no {code}, got:\n{}",
                    path.display(),
                    findings_text(&own)
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for (name, text) in snapshots {
        insta::assert_snapshot!(name, text);
    }
}

#[test]
fn fixture_directories_belong_to_registered_rules() {
    let codes: HashSet<&str> = RULES.iter().map(|r| r.meta().code).collect();
    for name in fixture_codes() {
        assert!(
            codes.contains(name.as_str()),
            "fixtures/dockerfile/{name} has no rule in RULES"
        );
    }
}

fn is_code(code: &str) -> bool {
    code.len() == 5 && code.starts_with("CU") && code[2..].bytes().all(|b| b.is_ascii_digit())
}

fn is_kebab(name: &str) -> bool {
    !name.is_empty()
        && name.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

const HEADINGS: [&str; 5] = [
    "## What it does",
    "## Why is this bad?",
    "## Example",
    "## Use instead",
    "## References",
];

/// The first ```dockerfile block under `heading`.
fn dockerfile_block<'d>(doc: &'d str, heading: &str) -> Option<&'d str> {
    let section = doc.split_once(&format!("{heading}\n"))?.1;
    let section = section.split("\n## ").next()?;
    let body = section.split_once("```dockerfile\n")?.1;
    Some(body.split_once("```")?.0)
}

fn check_doc(meta: &RuleMeta) -> Vec<String> {
    let mut problems = Vec::new();
    let headings: Vec<&str> = meta
        .doc()
        .lines()
        .filter(|line| line.starts_with("## "))
        .collect();
    if headings != HEADINGS {
        problems.push(format!(
            "{}: doc headings must be exactly {HEADINGS:?}, found {headings:?}",
            meta.code
        ));
    }
    // Doc examples take options the way fixtures do (`# cudalint-test:`).
    let lint = |text: &str| {
        Engine::new(fixture_options(text))
            .lint_source(&SourceFile::new(format!("{}.md", meta.code), text))
    };
    match dockerfile_block(meta.doc(), "## Example") {
        Some(example) if lint(example).iter().any(|f| f.code == meta.code) => {}
        Some(example) => problems.push(format!(
            "{}: the `## Example` block does not fire the rule; got:\n{}",
            meta.code,
            findings_text(&lint(example))
        )),
        None => problems.push(format!(
            "{}: `## Example` has no ```dockerfile block",
            meta.code
        )),
    }
    match dockerfile_block(meta.doc(), "## Use instead") {
        Some(good) => {
            let findings = lint(good);
            if findings.iter().any(|f| f.code == meta.code) {
                problems.push(format!(
                    "{}: the `## Use instead` block fires the rule:\n{}",
                    meta.code,
                    findings_text(&findings)
                ));
            }
        }
        None => problems.push(format!(
            "{}: `## Use instead` has no ```dockerfile block",
            meta.code
        )),
    }
    problems
}

#[test]
fn registry_codes_names_and_docs_are_consistent() {
    let mut problems = Vec::new();
    let mut codes = HashSet::new();
    let mut names = HashSet::new();
    let mut previous = "";
    for rule in RULES {
        let meta = rule.meta();
        if !is_code(meta.code) {
            problems.push(format!(
                "{}: code must be CU followed by three digits",
                meta.code
            ));
        }
        if !codes.insert(meta.code) {
            problems.push(format!("{}: duplicate code", meta.code));
        }
        if !names.insert(meta.name) {
            problems.push(format!("{}: duplicate name {}", meta.code, meta.name));
        }
        if !is_kebab(meta.name) {
            problems.push(format!(
                "{}: name `{}` is not kebab-case",
                meta.code, meta.name
            ));
        }
        if meta.code <= previous {
            problems.push(format!("{}: RULES must be in code order", meta.code));
        }
        previous = meta.code;
        if meta.summary.is_empty() {
            problems.push(format!("{}: empty summary", meta.code));
        }
        problems.extend(check_doc(meta));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
