//! CU004 undefined-arg-in-from: `FROM` uses a `${VAR}` that no ARG before
//! the first FROM declares. BuildKit expands it to the empty string (even if
//! `--build-arg` sets it), so the base image silently changes.

use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU004",
    name: "undefined-arg-in-from",
    category: Category::Structure,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "FROM uses a variable that no ARG before the first FROM declares",
    doc: Doc::Page,
};

pub struct UndefinedArgInFrom;

impl DockerfileRule for UndefinedArgInFrom {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        for stage in &ctx.model.stages {
            let from_span = ctx
                .dockerfile
                .instructions
                .get(stage.from_instruction)
                .map_or(stage.base_span, |instruction| instruction.span);
            for name in &stage.undefined_args {
                out.push(
                    Diagnostic::at(
                        &META,
                        variable_span(&ctx.source.text, from_span, name).unwrap_or(from_span),
                        format!("`{name}` is used in FROM but not declared by an ARG before the first FROM"),
                    )
                    .with_help(format!(
                        "add `ARG {name}=<default>` at the top of the file, before the first FROM"
                    )),
                );
            }
        }
    }
}

/// The first `$NAME` or `${NAME…}` inside `within`, so the finding points at
/// the variable rather than the whole line.
fn variable_span(text: &str, within: Span, name: &str) -> Option<Span> {
    let written = text.get(within.start..within.end)?;
    for (at, _) in written.match_indices('$') {
        let after = &written[at + 1..];
        let (braced, rest) = match after.strip_prefix('{') {
            Some(rest) => (true, rest),
            None => (false, after),
        };
        let Some(tail) = rest.strip_prefix(name) else {
            continue;
        };
        let ends_name = tail
            .chars()
            .next()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
        if !ends_name {
            continue;
        }
        let mut len = 1 + usize::from(braced) + name.len();
        if braced {
            // Cover up to the closing brace when it is there.
            if let Some(close) = tail.find('}') {
                len += close + 1;
            }
        }
        let start = within.start + at;
        return Some(Span::new(start, start + len));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_braced_and_bare_variables() {
        let text = "FROM nvidia/cuda:${CUDA_VERSION:-12.4.1}-runtime AS $BASE";
        let span = variable_span(text, Span::new(0, text.len()), "CUDA_VERSION").unwrap();
        assert_eq!(&text[span.start..span.end], "${CUDA_VERSION:-12.4.1}");
        let span = variable_span(text, Span::new(0, text.len()), "BASE").unwrap();
        assert_eq!(&text[span.start..span.end], "$BASE");
        assert_eq!(variable_span(text, Span::new(0, text.len()), "CUDA"), None);
    }
}
