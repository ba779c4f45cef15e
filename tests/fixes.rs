//! Autofixes round-trip on every fail fixture of every rule.
//!
//! Each `fixtures/dockerfile/<CODE>/fail_*.Dockerfile` is linted, fixed with
//! safe fixes only and then with unsafe fixes too (through the library's
//! `fix_source`), and re-linted. A fix must remove the finding that offered
//! it, keep the file parseable, bring back no finding of its own rule, and
//! a second fixing run must change nothing; safe fixes must also wake no
//! rule that was quiet before. The diffs are snapshotted
//! (`tests/snapshots/fixes__*.snap`) so reviewers see every edit.

#[path = "support/fixture.rs"]
mod fixture;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use cudalint::diagnostic::{Diagnostic, FixSafety};
use cudalint::engine::Engine;
use cudalint::fix::{apply_fixes, fix_source, unified_diff, FixOptions};
use cudalint::source::SourceFile;

use fixture::{fixture_codes, fixture_engine, fixture_source, fixtures};

/// The fixes a run with `options` may apply.
fn allowed(finding: &Diagnostic, options: FixOptions) -> bool {
    finding
        .fix
        .as_ref()
        .is_some_and(|fix| fix.safety == FixSafety::Safe || options.unsafe_fixes)
}

fn count_by_code<'d>(
    findings: impl IntoIterator<Item = &'d Diagnostic>,
) -> BTreeMap<&'static str, usize> {
    let mut counts = BTreeMap::new();
    for finding in findings {
        *counts.entry(finding.code).or_default() += 1;
    }
    counts
}

/// Fix `source` under `options` and check the round trip; problems are
/// pushed to `problems`, the fixed text returned.
fn round_trip(
    engine: &Engine,
    source: &SourceFile,
    before: &[Diagnostic],
    options: FixOptions,
    problems: &mut Vec<String>,
) -> String {
    let label = format!(
        "{} ({})",
        source.name,
        if options.unsafe_fixes {
            "unsafe fixes too"
        } else {
            "safe fixes"
        }
    );
    let outcome = fix_source(engine, source, options);
    let after = &outcome.remaining;

    // (a) + (c): per rule, every finding that offered an allowed fix is
    // gone and nothing of that rule took its place.
    let offered = count_by_code(before.iter().filter(|f| allowed(f, options)));
    let total_before = count_by_code(before);
    let total_after = count_by_code(after);
    for (code, fixed) in &offered {
        let was = total_before.get(code).copied().unwrap_or(0);
        let now = total_after.get(code).copied().unwrap_or(0);
        if now > was - fixed {
            problems.push(format!(
                "{label}: {code} had {was} finding(s), {fixed} with a fix; after fixing {now} remain:\n{}\n{}",
                describe(after.iter().filter(|f| f.code == *code)),
                unified_diff(&source.name, &source.text, &outcome.text)
            ));
        }
    }
    // A safe fix must not break anything another rule can see: no finding
    // of a rule that was quiet before.
    if !options.unsafe_fixes {
        let new: Vec<&Diagnostic> = after
            .iter()
            .filter(|f| !total_before.contains_key(f.code))
            .collect();
        if !new.is_empty() {
            problems.push(format!(
                "{label}: safe fixes brought new findings:\n{}\n{}",
                describe(new),
                unified_diff(&source.name, &source.text, &outcome.text)
            ));
        }
    }
    // A fix still offered at the fixed point either changes nothing or
    // conflicts with another for ever: both are bugs.
    let stuck: Vec<&Diagnostic> = after.iter().filter(|f| allowed(f, options)).collect();
    if !stuck.is_empty() {
        problems.push(format!(
            "{label}: fixes still offered after fixing:\n{}",
            describe(stuck)
        ));
    }

    // (b): the fixed text parses whenever the original did.
    if cudalint::dockerfile::parse(&source.text).is_ok() {
        if let Err(error) = cudalint::dockerfile::parse(&outcome.text) {
            problems.push(format!(
                "{label}: fixed text no longer parses ({error:?}):\n{}",
                outcome.text
            ));
        }
        if after.iter().any(|f| f.code == "CU001") {
            problems.push(format!("{label}: fixed text reports CU001"));
        }
    }

    // (d): fixing the fixed text is a no-op, through the whole loop and
    // through one application of whatever is still offered.
    let fixed = SourceFile::new(source.name.clone(), outcome.text.clone());
    let again = fix_source(engine, &fixed, options);
    if again.applied != 0 || again.text != outcome.text {
        problems.push(format!(
            "{label}: fixing twice is not idempotent:\n{}",
            unified_diff(&source.name, &outcome.text, &again.text)
        ));
    }
    let offered_again = after
        .iter()
        .filter(|f| allowed(f, options))
        .filter_map(|f| f.fix.as_ref());
    let (reapplied, _) = apply_fixes(&outcome.text, offered_again);
    if reapplied != outcome.text {
        problems.push(format!(
            "{label}: applying the remaining fixes changes the fixed text"
        ));
    }
    outcome.text
}

fn describe<'d>(findings: impl IntoIterator<Item = &'d Diagnostic>) -> String {
    let mut text = String::new();
    for finding in findings {
        let (line, column) = finding.start().map_or((0, 0), |at| (at.line, at.column));
        writeln!(
            text,
            "  {line}:{column} {} {}",
            finding.code, finding.message
        )
        .unwrap();
    }
    text
}

/// The snapshot of one fixture: the fixes offered, then each diff.
fn snapshot_text(source: &SourceFile, before: &[Diagnostic], safe: &str, all: &str) -> String {
    let mut text = String::from("offered:\n");
    for finding in before {
        if let Some(fix) = &finding.fix {
            let line = finding.start().map_or(0, |at| at.line);
            writeln!(
                text,
                "  {line} {} ({:?}): {}",
                finding.code, fix.safety, fix.description
            )
            .unwrap();
        }
    }
    text.push_str("\nsafe fixes:\n");
    if safe == source.text {
        text.push_str("(none)\n");
    } else {
        text.push_str(&unified_diff(&source.name, &source.text, safe));
    }
    text.push_str("\nwith --unsafe-fixes:\n");
    if all == safe {
        text.push_str("(same)\n");
    } else {
        text.push_str(&unified_diff(&source.name, &source.text, all));
    }
    text
}

#[test]
fn fixes_remove_their_findings_keep_the_file_valid_and_are_idempotent() {
    let mut problems = Vec::new();
    let mut snapshots = Vec::new();
    // Rule code → fail fixtures where it offered a fix, per safety.
    let mut safe_fixtures: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
    let mut unsafe_fixtures: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
    for code in fixture_codes() {
        for path in fixtures(&code, "fail_") {
            let source = fixture_source(&path);
            let engine = fixture_engine(&source.text);
            let before = engine.lint_source(&source);
            let fixture_id = fixture_id(&code, &path);
            for finding in &before {
                let Some(fix) = &finding.fix else { continue };
                let map = match fix.safety {
                    FixSafety::Safe => &mut safe_fixtures,
                    FixSafety::Unsafe => &mut unsafe_fixtures,
                };
                map.entry(finding.code)
                    .or_default()
                    .insert(fixture_id.clone());
            }
            if before.iter().all(|f| f.fix.is_none()) {
                continue;
            }
            let safe = round_trip(
                &engine,
                &source,
                &before,
                FixOptions::default(),
                &mut problems,
            );
            let all = round_trip(
                &engine,
                &source,
                &before,
                FixOptions { unsafe_fixes: true },
                &mut problems,
            );
            if safe == source.text && all == source.text {
                problems.push(format!("{fixture_id}: fixes were offered but none applied"));
            }
            snapshots.push((fixture_id, snapshot_text(&source, &before, &safe, &all)));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));

    let safe_codes: BTreeSet<&str> = safe_fixtures.keys().copied().collect();
    for required in ["CU101", "CU104", "CU111"] {
        assert!(
            safe_codes.contains(required),
            "no fail fixture exercises a safe {required} fix; safe fixes seen: {safe_codes:?}"
        );
    }
    assert!(safe_codes.len() >= 3, "safe fixes seen: {safe_codes:?}");
    assert!(
        unsafe_fixtures.contains_key("CU002"),
        "no fail fixture exercises the unsafe CU002 fix: {unsafe_fixtures:?}"
    );

    for (name, text) in snapshots {
        insta::assert_snapshot!(name, text);
    }
}

fn fixture_id(code: &str, path: &Path) -> String {
    format!("{code}__{}", path.file_stem().unwrap().to_string_lossy())
}

/// Two safe fixes must not add up to an unsafe one: once CU111 points
/// `LD_LIBRARY_PATH` at `targets/x86_64-linux/lib`, where the devel base
/// keeps libcupti, CU101's switch to a runtime base (which has no CUPTI)
/// must stay unsafe in the next pass.
#[test]
fn safe_fixes_in_later_passes_keep_the_cupti_the_image_uses() {
    let text = "\
FROM --platform=linux/amd64 nvidia/cuda:13.0.2-cudnn-devel-ubuntu24.04
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip
ENV LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64
CMD [\"python3\", \"-m\", \"http.server\"]
";
    let engine = Engine::new(Default::default());
    let source = SourceFile::new("Dockerfile", text);
    let safe = fix_source(&engine, &source, FixOptions::default());
    assert!(
        safe.text.contains("cudnn-devel-ubuntu24.04")
            && safe
                .text
                .contains("LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib")
            && safe.text.contains("&& rm -rf /var/lib/apt/lists/*"),
        "{}",
        safe.text
    );
    let cu101 = safe.remaining.iter().find(|f| f.code == "CU101");
    assert_eq!(
        cu101.and_then(|f| f.fix.as_ref()).map(|fix| fix.safety),
        Some(FixSafety::Unsafe)
    );
}
