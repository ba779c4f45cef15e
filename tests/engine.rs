//! The engine's one sink (suppressions, selection, severities, locations,
//! order), its crash containment, its input errors, and the fix loop.
//! Test-only rules here are real rules run by the real engine.

use std::collections::BTreeMap;

use cudalint::checks::dockerfile::RULES;
use cudalint::checks::{
    Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta,
};
use cudalint::config::RuleSelection;
use cudalint::diagnostic::{Diagnostic, Edit, Fix, FixSafety, Location, Severity};
use cudalint::engine::{
    Engine, EngineOptions, Input, InputError, RuleThreads, PARALLEL_FROM_INSTRUCTIONS,
};
use cudalint::fix::{fix_source, FixOptions};
use cudalint::source::{LineCol, SourceFile, Span};

static PANICS: RuleMeta = RuleMeta {
    code: "CU990",
    name: "always-panics",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "test rule that panics",
    doc: Doc::Text(""),
};

struct Panics;

impl DockerfileRule for Panics {
    fn meta(&self) -> &'static RuleMeta {
        &PANICS
    }
    fn check(&self, _ctx: &DockerfileContext<'_>, _out: &mut Vec<Diagnostic>) {
        panic!("index out of bounds in test rule");
    }
}

static LATEST: RuleMeta = RuleMeta {
    code: "CU991",
    name: "latest-tag",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::Always,
    summary: "test rule: flags `:latest` and pins it",
    doc: Doc::Text(""),
};

/// Flags every `:latest` and offers a safe fix pinning it to `:1.0`.
struct Latest;

impl DockerfileRule for Latest {
    fn meta(&self) -> &'static RuleMeta {
        &LATEST
    }
    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        for (at, _) in ctx.source.text.match_indices(":latest") {
            let span = Span::new(at + 1, at + ":latest".len());
            out.push(
                Diagnostic::at(&LATEST, span, "image uses the latest tag").with_fix(Fix {
                    description: "pin to 1.0".into(),
                    safety: FixSafety::Safe,
                    edits: vec![Edit {
                        span,
                        replacement: "1.0".into(),
                    }],
                }),
            );
        }
    }
}

/// An engine with the built-in rules and `extra`, for a project that
/// declares `runtime` its only target (so CU003 judges the other stages).
fn engine_with(selection: RuleSelection, extra: &[&'static dyn DockerfileRule]) -> Engine {
    let mut rules: Vec<&'static dyn DockerfileRule> = RULES.to_vec();
    rules.extend_from_slice(extra);
    let mut options = EngineOptions {
        selection,
        ..EngineOptions::default()
    };
    options.settings.targets = vec!["runtime".to_string()];
    Engine::with_rules(options, rules)
}

fn lint(engine: &Engine, text: &str) -> Vec<Diagnostic> {
    engine.lint_source(&SourceFile::new("Dockerfile", text))
}

fn codes(findings: &[Diagnostic]) -> Vec<&'static str> {
    findings.iter().map(|f| f.code).collect()
}

const UNDEFINED_AND_UNUSED: &str = "\
FROM ${BASE} AS tools
RUN echo tools

FROM nvidia/cuda:13.0.2-runtime-ubuntu22.04 AS runtime
RUN echo runtime
";

#[test]
fn a_panicking_rule_becomes_an_internal_error_and_the_others_still_report() {
    let engine = engine_with(RuleSelection::default(), &[&Panics]);
    let findings = lint(&engine, UNDEFINED_AND_UNUSED);
    assert_eq!(codes(&findings), ["CU000", "CU004", "CU003"]);
    let crash = &findings[0];
    assert_eq!(crash.location, Location::File);
    assert_eq!(crash.severity, Severity::Error);
    assert!(
        crash.message.contains("CU990 (always-panics)"),
        "{}",
        crash.message
    );
    assert!(crash.message.contains("index out of bounds in test rule"));
}

#[test]
fn rules_shared_among_threads_find_what_one_thread_finds() {
    // A large file (so its rules run on several threads) with findings of
    // many rules: the example, over and over, and a rule that crashes.
    let example =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Dockerfile.example"))
            .unwrap();
    let instructions = cudalint::dockerfile::parser::parse_bytes(example.as_bytes())
        .unwrap()
        .instructions
        .len();
    let text = example.repeat(PARALLEL_FROM_INSTRUCTIONS / instructions + 1);
    let lint_with = |threads: usize| {
        let mut rules: Vec<&'static dyn DockerfileRule> = RULES.to_vec();
        rules.push(&Panics);
        let options = EngineOptions {
            rule_threads: RuleThreads(threads),
            ..EngineOptions::default()
        };
        format!("{:#?}", lint(&Engine::with_rules(options, rules), &text))
    };
    let one = lint_with(1);
    for code in [
        "CU000", "CU101", "CU104", "CU111", "CU122", "CU131", "CU132",
    ] {
        assert!(one.contains(code), "{code} missing");
    }
    for threads in [2, 4] {
        assert_eq!(lint_with(threads), one, "{threads} threads");
    }
}

#[test]
fn findings_get_origin_line_column_and_a_stable_order() {
    let engine = engine_with(RuleSelection::default(), &[]);
    let findings = lint(&engine, UNDEFINED_AND_UNUSED);
    assert_eq!(codes(&findings), ["CU004", "CU003"]);
    assert!(findings.iter().all(|f| f.origin == "Dockerfile"));
    // `${BASE}` starts at column 6; `tools` (the stage name) at column 17.
    assert_eq!(findings[0].start(), Some(LineCol { line: 1, column: 6 }));
    assert_eq!(
        findings[0].end(),
        Some(LineCol {
            line: 1,
            column: 13
        })
    );
    assert_eq!(
        findings[1].start(),
        Some(LineCol {
            line: 1,
            column: 17
        })
    );
}

#[test]
fn selection_and_severity_overrides_apply_in_one_place() {
    let mut severity = BTreeMap::new();
    severity.insert("CU003", Severity::Error);
    let engine = engine_with(
        RuleSelection {
            enable: None,
            disable: vec!["CU004"],
            severity,
        },
        &[],
    );
    let findings = lint(&engine, UNDEFINED_AND_UNUSED);
    assert_eq!(codes(&findings), ["CU003"]);
    assert_eq!(findings[0].severity, Severity::Error);

    let only_cu004 = engine_with(
        RuleSelection {
            enable: Some(vec!["CU004"]),
            ..RuleSelection::default()
        },
        &[],
    );
    assert_eq!(codes(&lint(&only_cu004, UNDEFINED_AND_UNUSED)), ["CU004"]);
}

#[test]
fn an_ignore_comment_covers_only_the_instruction_right_below_it() {
    let engine = engine_with(RuleSelection::default(), &[]);
    let text = "\
# why: BASE comes from CI
# cudalint ignore=undefined-arg-in-from, CU003
FROM ${BASE} AS tools
RUN echo tools

FROM ${OTHER}
";
    assert_eq!(codes(&lint(&engine, text)), ["CU004"]);
    assert_eq!(lint(&engine, text)[0].start().unwrap().line, 6);

    // A blank line detaches the comment.
    let detached = "# cudalint ignore=CU004\n\nFROM ${BASE}\n";
    assert_eq!(codes(&lint(&engine, detached)), ["CU004"]);
}

#[test]
fn a_global_ignore_covers_the_whole_file_from_anywhere() {
    let engine = engine_with(RuleSelection::default(), &[]);
    let text = format!("{UNDEFINED_AND_UNUSED}# cudalint global ignore=CU004,CU003\n");
    assert!(lint(&engine, &text).is_empty());
}

#[test]
fn unknown_rules_in_suppressions_are_reported_at_the_comment() {
    let engine = engine_with(RuleSelection::default(), &[]);
    let text = "\
FROM nvidia/cuda:13.0.2-runtime-ubuntu22.04
# cudalint ignore=CU999
RUN echo hi
";
    let findings = lint(&engine, text);
    assert_eq!(codes(&findings), ["CU005"]);
    assert_eq!(findings[0].start(), Some(LineCol { line: 2, column: 1 }));
    assert!(findings[0].message.contains("`CU999`"));
}

#[test]
fn a_syntax_error_is_a_located_finding() {
    let engine = engine_with(RuleSelection::default(), &[]);
    let findings = lint(
        &engine,
        "FROM nvidia/cuda:13.0.2-runtime-ubuntu22.04\nCOPY app.py\n",
    );
    assert_eq!(codes(&findings), ["CU001"]);
    assert_eq!(findings[0].start().unwrap().line, 2);
    assert_eq!(findings[0].origin, "Dockerfile");
}

#[test]
fn missing_files_and_directories_are_errors_naming_the_path() {
    let engine = engine_with(RuleSelection::default(), &[]);
    let missing = engine.lint_input(&Input::from_arg("no/such/Dockerfile"));
    assert!(matches!(missing, Err(InputError::Read { .. })));
    assert!(missing
        .unwrap_err()
        .to_string()
        .contains("no/such/Dockerfile"));
    let dir = engine.lint_input(&Input::from_arg(env!("CARGO_MANIFEST_DIR")));
    assert!(matches!(dir, Err(InputError::Directory { .. })));
}

#[test]
fn safe_fixes_are_applied_and_the_finding_is_gone_after_relinting() {
    let engine = engine_with(RuleSelection::default(), &[&Latest]);
    let source = SourceFile::new(
        "Dockerfile",
        "FROM ubuntu:latest AS a\nRUN echo\nFROM busybox:latest\nCOPY --from=a /x /x\n",
    );
    let outcome = fix_source(&engine, &source, FixOptions::default());
    assert_eq!(
        outcome.text,
        "FROM ubuntu:1.0 AS a\nRUN echo\nFROM busybox:1.0\nCOPY --from=a /x /x\n"
    );
    assert_eq!(outcome.applied, 2);
    assert!(outcome.remaining.iter().all(|f| f.code != "CU991"));
}

#[test]
fn unsafe_fixes_need_opting_in() {
    let engine = engine_with(RuleSelection::default(), &[]);
    let source = SourceFile::new(
        "Dockerfile",
        "FROM ubuntu:22.04 AS builder\nRUN echo > /out\nFROM ubuntu:22.04 AS runtime\nCOPY --from=buidler /out /out\n",
    );
    let safe_only = fix_source(&engine, &source, FixOptions::default());
    assert_eq!(safe_only.text, source.text);
    // The typo also leaves `builder` unused by the target (CU003) until it is fixed.
    assert_eq!(codes(&safe_only.remaining), ["CU003", "CU002"]);

    let with_unsafe = fix_source(&engine, &source, FixOptions { unsafe_fixes: true });
    assert!(with_unsafe.text.contains("COPY --from=builder /out /out"));
    assert!(
        with_unsafe.remaining.is_empty(),
        "{:?}",
        with_unsafe.remaining
    );
}

#[test]
fn the_documented_config_example_is_valid() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cudalint.toml.example");
    let rules = cudalint::engine::all_rule_metas();
    let config = cudalint::config::load(&path, &rules).unwrap();
    assert_eq!(config.rules.disable, ["CU003"]);
    assert_eq!(config.rules.severity.get("CU004"), Some(&Severity::Error));
    assert_eq!(config.settings.target_gpus, ["sm_80", "sm_90"]);
}

#[test]
fn invalid_utf8_is_a_syntax_error_at_the_bad_byte() {
    let engine = engine_with(RuleSelection::default(), &[]);
    let linted = engine.lint_bytes("Dockerfile".into(), b"FROM ubuntu:22.04\nRUN echo \xff\n");
    assert_eq!(codes(&linted.diagnostics), ["CU001"]);
    assert_eq!(
        linted.diagnostics[0].start(),
        Some(LineCol {
            line: 2,
            column: 10
        })
    );
    assert!(linted.diagnostics[0].message.contains("byte 27"));
}

#[test]
fn an_instruction_error_is_reported_and_the_rules_still_check_the_file() {
    let engine = Engine::new(EngineOptions::default());
    let findings = lint(
        &engine,
        "FROM nvidia/cuda:13.0.2-runtime-ubuntu22.04\n\
         COPY app.py\n\
         RUN apt-get update && apt-get install -y --no-install-recommends python3-pip\n",
    );
    let located: Vec<(&str, usize)> = findings
        .iter()
        .map(|f| (f.code, f.start().unwrap().line))
        .collect();
    assert!(located.contains(&("CU001", 2)), "{located:?}");
    assert!(located.contains(&("CU104", 3)), "{located:?}");
}

#[test]
fn each_bad_instruction_is_its_own_syntax_error() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/dockerfile/CU001/fail_two_bad_instructions.Dockerfile"
    );
    let engine = Engine::new(EngineOptions::default());
    let linted = engine.lint_input(&Input::from_arg(path)).unwrap();
    let lines: Vec<usize> = linted
        .diagnostics
        .iter()
        .filter(|f| f.code == "CU001")
        .map(|f| f.start().unwrap().line)
        .collect();
    assert_eq!(lines, [3, 8]);
}

#[test]
fn a_bad_flag_does_not_hide_the_stage_a_later_flag_copies_from() {
    let engine = Engine::new(EngineOptions::default());
    let findings = lint(
        &engine,
        "FROM ubuntu:22.04 AS build\nRUN make\n\
         FROM ubuntu:22.04\nCOPY --chmod=755 --bogus --from=build /out /out\n",
    );
    assert_eq!(codes(&findings), ["CU001"], "{findings:?}");
}

#[test]
fn a_structural_error_is_the_only_finding() {
    let engine = Engine::new(EngineOptions::default());
    let findings = lint(
        &engine,
        "FROM nvidia/cuda:13.0.2-devel-ubuntu22.04\nRUN <<EOF\napt-get install -y gcc\n",
    );
    assert_eq!(codes(&findings), ["CU001"]);
    assert!(findings[0].message.contains("unterminated heredoc"));
}
