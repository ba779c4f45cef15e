//! Fuzz target: the whole lint path (tolerant parse, build model, every
//! rule, suppressions, fixes) never panics on any input, and every finding
//! it reports points into the input. A rule that panicked would show up as
//! a `CU000 internal-error` finding, so that counts as a crash here too.

#![no_main]

use std::sync::OnceLock;

use cudalint::diagnostic::Location;
use cudalint::engine::{Engine, EngineOptions};
use libfuzzer_sys::fuzz_target;

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| Engine::new(EngineOptions::default()))
}

fuzz_target!(|data: &[u8]| {
    let linted = engine().lint_bytes("fuzz.Dockerfile".into(), data);
    let text = &linted.source.text;
    for finding in &linted.diagnostics {
        assert_ne!(finding.code, "CU000", "a rule panicked: {}", finding.message);
        if let Location::Source { span, .. } = &finding.location {
            assert!(
                span.start <= span.end && span.end <= text.len(),
                "{} span {span:?} outside 0..{}",
                finding.code,
                text.len()
            );
            assert!(
                text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
                "{} span {span:?} not on char boundaries",
                finding.code
            );
        }
        for edit in finding.fix.iter().flat_map(|fix| &fix.edits) {
            assert!(
                edit.span.end <= text.len()
                    && text.is_char_boundary(edit.span.start)
                    && text.is_char_boundary(edit.span.end),
                "{} fix edit {:?} does not fit the text",
                finding.code,
                edit.span
            );
        }
    }
});
