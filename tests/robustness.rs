//! Hostile shapes through the whole engine: each input is generated, linted
//! by every rule, and must finish with its findings (no timing assertions;
//! the sizes keep each test to a few seconds in a debug build, and every
//! path they exercise is linear or budgeted — see `dockerfile/stages.rs`).

use std::fmt::Write as _;

use cudalint::diagnostic::Diagnostic;
use cudalint::dockerfile::model::BuildOptions;
use cudalint::engine::{Engine, EngineOptions};
use cudalint::source::SourceFile;

fn lint(text: &str) -> Vec<Diagnostic> {
    Engine::new(EngineOptions::default())
        .lint_bytes("Dockerfile".to_string(), text.as_bytes())
        .diagnostics
}

fn count(findings: &[Diagnostic], code: &str) -> usize {
    findings.iter().filter(|f| f.code == code).count()
}

#[test]
fn chained_stages_that_each_add_env_stay_within_the_env_budget() {
    let mut text = String::from("FROM ubuntu:22.04 AS s0\nENV V0=0\n");
    for i in 1..3000 {
        writeln!(text, "FROM s{} AS s{i}\nENV V{i}={i}", i - 1).unwrap();
    }
    let findings = lint(&text);
    // 3000 stages inheriting ~1500 entries each is past the budget: said once.
    assert_eq!(count(&findings, "CU006"), 1, "{findings:?}");
    assert_eq!(count(&findings, "CU000"), 0);
}

#[test]
fn a_short_chain_inherits_everything_and_is_not_too_complex() {
    let mut text = String::from("FROM ubuntu:22.04 AS s0\nENV V0=0\n");
    for i in 1..200 {
        writeln!(text, "FROM s{} AS s{i}\nENV V{i}={i}", i - 1).unwrap();
    }
    let source = SourceFile::new("Dockerfile", text.clone());
    let dockerfile = cudalint::dockerfile::parse(&source.text).unwrap();
    let model = cudalint::dockerfile::build_model(&dockerfile, &Default::default());
    assert!(model.limits_hit.is_empty());
    assert_eq!(model.stages.last().unwrap().env.len(), 200);
    assert_eq!(model.env_value(199, "V0"), Some("0"));
    assert_eq!(count(&lint(&text), "CU006"), 0);
}

#[test]
fn many_independent_stages() {
    let mut text = String::new();
    for i in 0..20_000 {
        writeln!(text, "FROM ubuntu:22.04 AS s{i}\nRUN echo {i}").unwrap();
    }
    // Only a declared target makes CU003 judge the others: the last one.
    let findings = Engine::new(EngineOptions {
        build: BuildOptions {
            target: Some("s19999".to_string()),
            ..BuildOptions::default()
        },
        ..EngineOptions::default()
    })
    .lint_bytes("Dockerfile".to_string(), text.as_bytes())
    .diagnostics;
    assert_eq!(count(&findings, "CU003"), 19_999);
}

#[test]
fn many_copy_from_edges_to_a_deep_chain() {
    let n = 5_000;
    let mut text = String::from("FROM nvidia/cuda:12.8.1-runtime-ubuntu22.04 AS s0\n");
    for i in 1..n {
        writeln!(text, "FROM s{} AS s{i}", i - 1).unwrap();
    }
    writeln!(text, "FROM nvidia/cuda:12.8.1-runtime-ubuntu22.04").unwrap();
    for i in 0..n {
        writeln!(text, "COPY --from=s{} /a{i} /b{i}", n - 1).unwrap();
    }
    let findings = lint(&text);
    assert_eq!(count(&findings, "CU000"), 0);
    assert_eq!(
        count(&findings, "CU003"),
        0,
        "every stage is in the copied chain"
    );
}

#[test]
fn self_doubling_env_values_stop_at_the_substitution_budget() {
    let mut text = String::from("FROM ubuntu:22.04\nENV A0=0123456789abcdef\n");
    for i in 1..3_000 {
        writeln!(text, "ENV A{i}=${{A{p}}}${{A{p}}}", p = i - 1).unwrap();
    }
    writeln!(text, "RUN echo $A2999").unwrap();
    let findings = lint(&text);
    assert_eq!(count(&findings, "CU006"), 1, "{findings:?}");
}

#[test]
fn a_run_with_a_long_and_chain() {
    let mut text = String::from("FROM ubuntu:22.04\nRUN true");
    for i in 0..20_000 {
        write!(text, " \\\n && echo {i}").unwrap();
    }
    text.push('\n');
    let findings = lint(&text);
    assert_eq!(count(&findings, "CU000"), 0);
    assert_eq!(count(&findings, "CU001"), 0);
}

#[test]
fn a_line_over_buildkits_limit_is_a_syntax_error() {
    let mut text = String::from("FROM ubuntu:22.04\nRUN true");
    for i in 0..100_000 {
        write!(text, " && echo {i}").unwrap();
    }
    text.push('\n');
    assert_eq!(count(&lint(&text), "CU001"), 1);
}

#[test]
fn deeply_nested_sh_c() {
    let mut script = String::from("apt-get install -y cuda-toolkit-12-4");
    for _ in 0..10 {
        script = format!("sh -c '{}'", script.replace('\'', "'\\''"));
    }
    let text = format!("FROM ubuntu:22.04\nRUN {script}\n");
    let findings = lint(&text);
    assert_eq!(count(&findings, "CU000"), 0);
}

#[test]
fn many_instruction_errors_are_each_reported() {
    let mut text = String::from("FROM ubuntu:22.04\n");
    for i in 0..10_000 {
        writeln!(text, "COPY only{i}").unwrap();
    }
    assert_eq!(count(&lint(&text), "CU001"), 10_000);
}
