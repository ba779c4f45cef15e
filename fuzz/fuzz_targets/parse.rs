//! Fuzz target: `parse_bytes` never panics, and whatever it returns points
//! into the input (spans in bounds and on char boundaries, instructions in
//! file order).

#![no_main]

use cudalint::dockerfile::ast::{Instruction, MappedText};
use cudalint::dockerfile::parse_bytes;
use cudalint::source::Span;
use libfuzzer_sys::fuzz_target;

fn check_span(text: &str, span: Span, what: &str) {
    assert!(
        span.start <= span.end && span.end <= text.len(),
        "{what} span {span:?} outside 0..{}",
        text.len()
    );
    assert!(
        text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
        "{what} span {span:?} not on char boundaries"
    );
}

fn check_mapped(text: &str, mapped: &MappedText, what: &str) {
    for &(t, f) in &mapped.pieces {
        assert!(t <= mapped.text.len(), "{what}: piece text offset {t} past its text");
        assert!(f <= text.len(), "{what}: piece file offset {f} past the file");
    }
    check_span(text, mapped.file_span(0, mapped.text.len()), what);
}

fn check_instruction(text: &str, inst: &Instruction) {
    check_span(text, inst.span, "instruction");
    check_span(text, inst.keyword_span, "keyword");
    for flag in &inst.flags {
        check_span(text, flag.span, "flag");
    }
    for arg in &inst.args {
        check_span(text, arg.span, "arg");
    }
    for heredoc in &inst.heredocs {
        check_span(text, heredoc.body_span, "heredoc body");
    }
    check_mapped(text, &inst.rest, "rest");
    assert!(inst.start_line <= inst.end_line, "lines out of order");
    if let cudalint::dockerfile::ast::Command::Onbuild(inner) = &inst.command {
        check_instruction(text, inner);
    }
}

fuzz_target!(|data: &[u8]| {
    match parse_bytes(data) {
        Ok(dockerfile) => {
            let text = std::str::from_utf8(data).expect("parsed input is UTF-8");
            let mut previous_end = 0;
            for inst in &dockerfile.instructions {
                check_instruction(text, inst);
                assert!(inst.span.start >= previous_end, "instructions overlap or go backwards");
                previous_end = inst.span.end;
            }
            for comment in &dockerfile.comments {
                check_span(text, comment.span, "comment");
            }
            for directive in &dockerfile.directives {
                check_span(text, directive.span, "directive");
            }
            for warning in &dockerfile.warnings {
                check_span(text, warning.span, "warning");
            }
            let _ = cudalint::dockerfile::dump(&dockerfile);
        }
        Err(error) => {
            assert!(
                error.span.start <= error.span.end && error.span.end <= data.len(),
                "error span {:?} outside the input",
                error.span
            );
        }
    }
});
