//! Automatic fixes: apply the edits findings offer, re-lint, repeat.
//!
//! Each pass applies every eligible fix whose edits overlap no fix already
//! taken in that pass (a fix is all-or-nothing); the skipped ones are not
//! lost, because the file is linted again and still-present findings offer
//! their fixes again against the new text. The loop stops when a pass
//! changes nothing, or after [`MAX_PASSES`] (two fixes that undo each other
//! must not loop forever).

use crate::diagnostic::{Diagnostic, Edit, Fix, FixSafety};
use crate::engine::Engine;
use crate::source::SourceFile;

/// Upper bound on lint-and-fix passes over one file.
pub const MAX_PASSES: usize = 10;

/// Which fixes may be applied.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FixOptions {
    /// Apply [`FixSafety::Unsafe`] fixes too.
    pub unsafe_fixes: bool,
}

impl FixOptions {
    fn allows(self, fix: &Fix) -> bool {
        fix.safety == FixSafety::Safe || self.unsafe_fixes
    }
}

/// The result of fixing one file.
#[derive(Clone, Debug)]
pub struct FixOutcome {
    /// The fixed text (equal to the input when nothing applied).
    pub text: String,
    /// How many fixes were applied, over all passes.
    pub applied: usize,
    /// Findings on the fixed text (after the last pass).
    pub remaining: Vec<Diagnostic>,
    /// Passes run.
    pub passes: usize,
}

/// Apply the fixes of `fixes` that fit together: in order of position, a
/// fix is taken only if none of its edits overlaps an edit already taken
/// and all its edits lie inside `text` on character boundaries. Returns the
/// new text and how many fixes were applied.
pub fn apply_fixes<'f>(text: &str, fixes: impl IntoIterator<Item = &'f Fix>) -> (String, usize) {
    let mut fixes: Vec<&Fix> = fixes.into_iter().collect();
    fixes.sort_by_key(|fix| fix.edits.iter().map(|e| e.span.start).min());
    let mut taken: Vec<&Edit> = Vec::new();
    let mut applied = 0;
    for fix in fixes {
        let fits = !fix.edits.is_empty()
            && fix.edits.iter().all(|edit| is_valid(text, edit))
            && fix.edits.iter().enumerate().all(|(i, edit)| {
                let others = fix.edits.iter().skip(i + 1);
                !taken
                    .iter()
                    .copied()
                    .chain(others)
                    .any(|other| overlaps(edit, other))
            });
        if fits {
            taken.extend(fix.edits.iter());
            applied += 1;
        }
    }
    taken.sort_by_key(|edit| (edit.span.start, edit.span.end));
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for edit in taken {
        // Validated above: in bounds, on boundaries, ordered, disjoint.
        out.push_str(text.get(cursor..edit.span.start).unwrap_or_default());
        out.push_str(&edit.replacement);
        cursor = edit.span.end;
    }
    out.push_str(text.get(cursor..).unwrap_or_default());
    (out, applied)
}

fn is_valid(text: &str, edit: &Edit) -> bool {
    edit.span.start <= edit.span.end
        && edit.span.end <= text.len()
        && text.is_char_boundary(edit.span.start)
        && text.is_char_boundary(edit.span.end)
}

/// Two edits conflict when their ranges share a byte, or when both insert
/// at the same point (their order would be arbitrary), or one inserts
/// strictly inside the other's range.
fn overlaps(a: &Edit, b: &Edit) -> bool {
    let (a, b) = (a.span, b.span);
    if a.is_empty() && b.is_empty() {
        return a.start == b.start;
    }
    if a.is_empty() {
        return b.start < a.start && a.start < b.end;
    }
    if b.is_empty() {
        return a.start < b.start && b.start < a.end;
    }
    a.start < b.end && b.start < a.end
}

/// Lint `source` with `engine`, apply the allowed fixes, and repeat until
/// nothing changes or [`MAX_PASSES`] is reached.
pub fn fix_source(engine: &Engine, source: &SourceFile, options: FixOptions) -> FixOutcome {
    let mut current = source.clone();
    let mut remaining = engine.lint_source(&current);
    let mut applied = 0;
    let mut passes = 0;
    while passes < MAX_PASSES {
        let fixes = remaining
            .iter()
            .filter_map(|d| d.fix.as_ref())
            .filter(|fix| options.allows(fix));
        let (text, count) = apply_fixes(&current.text, fixes);
        passes += 1;
        if count == 0 || text == current.text {
            break;
        }
        applied += count;
        current = SourceFile::new(source.name.clone(), text);
        remaining = engine.lint_source(&current);
    }
    FixOutcome {
        text: current.text,
        applied,
        remaining,
        passes,
    }
}

/// A unified diff from `old` to `new`, with `name` in the headers; empty
/// when they are equal.
pub fn unified_diff(name: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Span;

    fn fix(edits: &[(usize, usize, &str)]) -> Fix {
        Fix {
            description: String::new(),
            safety: FixSafety::Safe,
            edits: edits
                .iter()
                .map(|&(start, end, replacement)| Edit {
                    span: Span::new(start, end),
                    replacement: replacement.to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn applies_disjoint_fixes_and_skips_overlapping_ones() {
        let text = "FROM a AS b\nRUN x\n";
        let fixes = [
            fix(&[(5, 6, "alpha")]),
            fix(&[(5, 11, "z")]),
            fix(&[(16, 17, "y")]),
        ];
        let (out, applied) = apply_fixes(text, &fixes);
        assert_eq!(out, "FROM alpha AS b\nRUN y\n");
        assert_eq!(applied, 2);
    }

    #[test]
    fn a_fix_is_all_or_nothing_and_out_of_range_edits_are_skipped() {
        let text = "abc";
        let fixes = [
            fix(&[(0, 1, "X")]),
            fix(&[(2, 3, "Y"), (0, 1, "Z")]),
            fix(&[(2, 99, "W")]),
        ];
        let (out, applied) = apply_fixes(text, &fixes);
        assert_eq!(out, "Xbc");
        assert_eq!(applied, 1);
    }

    #[test]
    fn insertions_at_one_point_conflict() {
        let (out, applied) = apply_fixes("ab", &[fix(&[(1, 1, "X")]), fix(&[(1, 1, "Y")])]);
        assert_eq!((out.as_str(), applied), ("aXb", 1));
    }

    #[test]
    fn diff_has_headers_and_hunks() {
        let diff = unified_diff("Dockerfile", "FROM a\nRUN x\n", "FROM a\nRUN y\n");
        assert!(diff.starts_with("--- a/Dockerfile\n+++ b/Dockerfile\n@@ -1,2 +1,2 @@\n"));
        assert!(diff.contains("-RUN x\n+RUN y\n"));
        assert_eq!(unified_diff("f", "same", "same"), "");
    }
}
