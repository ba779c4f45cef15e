//! Inline suppressions: `# cudalint ignore=CU101,CU104` on the comment lines
//! directly above an instruction silences those rules for findings that
//! start in that instruction; `# cudalint global ignore=…` anywhere silences
//! them for the whole file. The syntax follows hadolint's, so it reads
//! familiar to anyone who has silenced `DL3008`.
//!
//! A suppression naming a rule that does not exist would silently do
//! nothing, so it is reported itself (CU005), as selene does.

use crate::config::find_rule;
use crate::diagnostic::{Diagnostic, Location};
use crate::dockerfile::ast::{Comment, Dockerfile};
use crate::rule_meta::RuleMeta;
use crate::source::Span;

/// The suppressions of one file.
#[derive(Clone, Debug, Default)]
pub struct Suppressions {
    /// Codes silenced everywhere in the file.
    global: Vec<&'static str>,
    /// Codes silenced within a byte range (an instruction).
    scoped: Vec<(Span, Vec<&'static str>)>,
    /// Rule names in suppressions that match no rule, with the comment span.
    pub unknown: Vec<UnknownRule>,
}

/// A suppression that names no known rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownRule {
    pub name: String,
    pub span: Span,
}

/// One parsed `cudalint` comment.
struct Directive<'c> {
    global: bool,
    names: Vec<&'c str>,
}

/// Parse `cudalint [global] ignore=A,B` from a comment's text (after `#`).
fn parse_directive(text: &str) -> Option<Directive<'_>> {
    let rest = text.trim().strip_prefix("cudalint")?;
    // `cudalintX` is some other word, not ours.
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let mut rest = rest.trim_start();
    let global = match rest.strip_prefix("global") {
        Some(after) if after.starts_with(char::is_whitespace) => {
            rest = after.trim_start();
            true
        }
        _ => false,
    };
    let list = rest
        .strip_prefix("ignore")?
        .trim_start()
        .strip_prefix('=')?;
    let names = list
        .split(',')
        .map(str::trim)
        // Allow a trailing explanation: `ignore=CU104 pinned on purpose`.
        .flat_map(|item| item.split_whitespace().next())
        .filter(|name| !name.is_empty())
        .collect();
    Some(Directive { global, names })
}

impl Suppressions {
    /// Collect the suppressions of `dockerfile`, resolving rule names
    /// against `rules`.
    pub fn collect(dockerfile: &Dockerfile, rules: &[&'static RuleMeta]) -> Self {
        let mut suppressions = Suppressions::default();
        // Comments and instructions are both in file order: walk them once.
        let comments = &dockerfile.comments;
        let mut next_comment = 0;
        for instruction in &dockerfile.instructions {
            let before_start = next_comment;
            while comments
                .get(next_comment)
                .is_some_and(|c| c.line < instruction.start_line)
            {
                next_comment += 1;
            }
            let before = comments.get(before_start..next_comment).unwrap_or_default();
            // Only the unbroken run of comment lines ending right above the
            // instruction applies to it; earlier ones may still be global.
            let mut expected_line = instruction.start_line;
            let attached = before
                .iter()
                .rev()
                .take_while(|comment| {
                    let adjacent = comment.line + 1 == expected_line;
                    expected_line = comment.line;
                    adjacent
                })
                .count();
            let first_attached = before.len() - attached;
            let mut codes = Vec::new();
            for (index, comment) in before.iter().enumerate() {
                let scoped = (index >= first_attached).then_some(&mut codes);
                suppressions.record(comment, rules, scoped);
            }
            if !codes.is_empty() {
                suppressions.scoped.push((instruction.span, codes));
            }
            // Comments between an instruction's continuation lines attach to
            // nothing, but a global suppression there still counts.
            while let Some(comment) = comments
                .get(next_comment)
                .filter(|c| c.line <= instruction.end_line)
            {
                suppressions.record(comment, rules, None);
                next_comment += 1;
            }
        }
        for comment in comments.get(next_comment..).unwrap_or_default() {
            suppressions.record(comment, rules, None);
        }
        suppressions
    }

    /// Record `comment` if it is a suppression: global ones here, scoped
    /// ones into `scoped` when the comment sits above an instruction.
    fn record(
        &mut self,
        comment: &Comment,
        rules: &[&'static RuleMeta],
        scoped: Option<&mut Vec<&'static str>>,
    ) {
        let Some(directive) = parse_directive(&comment.text) else {
            return;
        };
        let mut unattached = Vec::new();
        let sink = match (directive.global, scoped) {
            (true, _) => &mut self.global,
            (false, Some(scoped)) => scoped,
            // A scoped suppression attached to no instruction silences
            // nothing; its names are still checked below.
            (false, None) => &mut unattached,
        };
        for name in directive.names {
            match find_rule(rules, name) {
                Some(meta) => sink.push(meta.code),
                None => self.unknown.push(UnknownRule {
                    name: name.to_string(),
                    span: comment.span,
                }),
            }
        }
    }

    /// Whether `diagnostic` is silenced by these suppressions.
    pub fn suppresses(&self, diagnostic: &Diagnostic) -> bool {
        if self.global.contains(&diagnostic.code) {
            return true;
        }
        let Location::Source { span, .. } = &diagnostic.location else {
            return false;
        };
        self.scoped.iter().any(|(scope, codes)| {
            scope.start <= span.start && span.start <= scope.end && codes.contains(&diagnostic.code)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Severity;
    use crate::dockerfile::ast::{Command, Instruction, MappedText};
    use crate::rule_meta::{Category, Doc, FixAvailability};
    use crate::source::SourceFile;

    static RULE: RuleMeta = RuleMeta {
        code: "CU003",
        name: "unused-stage",
        category: Category::Structure,
        default_severity: Severity::Info,
        fix: FixAvailability::None,
        summary: "",
        doc: Doc::Text(""),
    };

    /// A Dockerfile tree where lines starting with `#` are comments and
    /// every other non-blank line is a one-line instruction.
    fn tree(text: &str) -> Dockerfile {
        let source = SourceFile::new("t", text);
        let mut dockerfile = Dockerfile::default();
        for line in 1..=source.line_count() {
            let content = source.line_text(line);
            let start = source.line_start(line);
            let span = Span::new(start, start + content.len());
            if let Some(comment) = content.strip_prefix('#') {
                dockerfile.comments.push(Comment {
                    text: comment.trim().to_string(),
                    span,
                    line,
                });
            } else if !content.trim().is_empty() {
                dockerfile.instructions.push(Instruction {
                    keyword: "run".into(),
                    keyword_span: span,
                    span,
                    start_line: line,
                    end_line: line,
                    flags: Vec::new(),
                    args: Vec::new(),
                    json: false,
                    rest: MappedText::default(),
                    heredocs: Vec::new(),
                    original: content.to_string(),
                    command: Command::Unknown,
                });
            }
        }
        dockerfile
    }

    fn finding_on_line(text: &str, line: usize) -> Diagnostic {
        let start = SourceFile::new("t", text).line_start(line);
        Diagnostic::at(&RULE, Span::new(start, start + 1), "m")
    }

    #[test]
    fn scoped_ignores_attach_to_the_next_instruction_only() {
        let text = "# note\n# cudalint ignore=unused-stage\nA\nB\n# cudalint ignore=CU003\n\nC\n";
        let suppressions = Suppressions::collect(&tree(text), &[&RULE]);
        assert!(suppressions.suppresses(&finding_on_line(text, 3)));
        assert!(!suppressions.suppresses(&finding_on_line(text, 4)));
        // Detached by the blank line.
        assert!(!suppressions.suppresses(&finding_on_line(text, 7)));
        assert!(suppressions.unknown.is_empty());
    }

    #[test]
    fn global_ignores_and_unknown_names() {
        let text =
            "A\n# cudalint global ignore=CU003, CU9X9 because\n# cudalintx ignore=CU777\nB\n";
        let suppressions = Suppressions::collect(&tree(text), &[&RULE]);
        assert!(suppressions.suppresses(&finding_on_line(text, 1)));
        assert_eq!(
            suppressions.unknown,
            vec![UnknownRule {
                name: "CU9X9".into(),
                span: Span::new(2, 47),
            }]
        );
    }
}
