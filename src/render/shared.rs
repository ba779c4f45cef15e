//! Helpers several formats share: position lookup, grouping findings by
//! input, severity tallies, XML escaping and a stable fingerprint hash.

use std::borrow::Cow;
use std::fmt::Write as _;

use super::Report;
use crate::diagnostic::{Diagnostic, Location, Severity};
use crate::rule_meta::RuleMeta;
use crate::source::{LineCol, SourceFile};

/// What formats that name a check per entry (GitLab's `check_name`,
/// SARIF's notification descriptor) call an input that could not be linted.
pub(super) const INPUT_ERROR_CHECK: &str = "cudalint-input-error";

/// The linted text `origin` names, if it was a text source.
pub(super) fn source_of<'r>(report: &Report<'r>, origin: &str) -> Option<&'r SourceFile> {
    report.sources.iter().find(|source| source.name == origin)
}

/// Start and end line/column of a source finding. The engine normally fills
/// them in; when it has not, they are computed from the source so that a
/// renderer called directly still prints real positions.
pub(super) fn positions(
    report: &Report<'_>,
    diag: &Diagnostic,
) -> Option<(LineCol, Option<LineCol>)> {
    let Location::Source { span, start, end } = &diag.location else {
        return None;
    };
    let source = source_of(report, &diag.origin);
    let start = start.or_else(|| source.map(|s| s.line_col(span.start)))?;
    let end = end.or_else(|| source.map(|s| s.line_col(span.end)));
    Some((start, end))
}

/// The rule `code` and its index in the registry, if registered.
pub(super) fn rule_of(report: &Report<'_>, code: &str) -> Option<(usize, &'static RuleMeta)> {
    report
        .rules
        .iter()
        .enumerate()
        .find(|(_, meta)| meta.code == code)
        .map(|(index, meta)| (index, *meta))
}

/// Findings grouped by input, in input order; clean inputs get an empty
/// group. Origins missing from `inputs` follow, in first-seen order, so no
/// finding is ever dropped.
pub(super) fn group_by_input<'r>(report: &Report<'r>) -> Vec<(&'r str, Vec<&'r Diagnostic>)> {
    let mut groups: Vec<(&'r str, Vec<&'r Diagnostic>)> = Vec::new();
    for input in report.inputs {
        if !groups.iter().any(|(name, _)| *name == input.as_str()) {
            groups.push((input.as_str(), Vec::new()));
        }
    }
    for diag in report.diagnostics {
        match groups.iter_mut().find(|(name, _)| *name == diag.origin) {
            Some((_, group)) => group.push(diag),
            None => groups.push((diag.origin.as_str(), vec![diag])),
        }
    }
    groups
}

/// How an image location reads in one line: `/path (layer L)`.
pub(super) fn image_place(layer: Option<&str>, path: Option<&str>) -> String {
    match (path, layer) {
        (Some(path), Some(layer)) => format!("{path} (layer {layer})"),
        (Some(path), None) => path.to_owned(),
        (None, Some(layer)) => format!("layer {layer}"),
        (None, None) => "image".to_owned(),
    }
}

/// Findings counted by severity, for summaries.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Tally {
    pub total: usize,
    pub error: usize,
    pub warning: usize,
    pub info: usize,
    pub style: usize,
    pub fixable: usize,
}

impl Tally {
    pub fn of(diagnostics: &[Diagnostic]) -> Tally {
        let mut tally = Tally::default();
        for diag in diagnostics {
            tally.count(diag);
        }
        tally
    }

    /// Counts one more finding.
    pub fn count(&mut self, diag: &Diagnostic) {
        self.total += 1;
        match diag.severity {
            Severity::Error => self.error += 1,
            Severity::Warning => self.warning += 1,
            Severity::Info => self.info += 1,
            Severity::Style => self.style += 1,
        }
        if diag.fix.is_some() {
            self.fixable += 1;
        }
    }

    /// `3 findings: 1 error, 2 warnings (1 fixable)` or `no findings`.
    pub fn sentence(&self) -> String {
        if self.total == 0 {
            return "no findings".to_owned();
        }
        let mut parts = Vec::new();
        for (count, one, many) in [
            (self.error, "error", "errors"),
            (self.warning, "warning", "warnings"),
            (self.info, "info", "info"),
            (self.style, "style", "style"),
        ] {
            if count > 0 {
                parts.push(format!("{count} {}", if count == 1 { one } else { many }));
            }
        }
        let noun = if self.total == 1 {
            "finding"
        } else {
            "findings"
        };
        let mut line = format!("{} {noun}: {}", self.total, parts.join(", "));
        if self.fixable > 0 {
            let _ = write!(line, " ({} fixable)", self.fixable);
        }
        line
    }
}

/// Characters XML 1.0 cannot carry at all, not even as references.
fn xml_forbidden(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}')
}

/// Escape for XML character data. Forbidden control characters become
/// U+FFFD, because no escape can represent them in XML 1.0.
pub(super) fn xml_text(text: &str) -> Cow<'_, str> {
    xml_escape(text, false)
}

/// Escape for a double-quoted XML attribute. Tabs and line breaks become
/// character references, since parsers normalise literal ones to spaces.
pub(super) fn xml_attr(text: &str) -> Cow<'_, str> {
    xml_escape(text, true)
}

fn xml_escape(text: &str, attribute: bool) -> Cow<'_, str> {
    let needs = |c: char| {
        matches!(c, '&' | '<' | '>' | '\r')
            || xml_forbidden(c)
            || (attribute && matches!(c, '"' | '\'' | '\n' | '\t'))
    };
    if !text.chars().any(needs) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '\r' => escaped.push_str("&#13;"),
            '"' if attribute => escaped.push_str("&quot;"),
            '\'' if attribute => escaped.push_str("&apos;"),
            '\n' if attribute => escaped.push_str("&#10;"),
            '\t' if attribute => escaped.push_str("&#9;"),
            c if xml_forbidden(c) => escaped.push('\u{FFFD}'),
            c => escaped.push(c),
        }
    }
    Cow::Owned(escaped)
}

/// 64-bit FNV-1a: tiny, and stable across runs, platforms and Rust
/// versions, unlike `std`'s hashers. Not for security, only identity.
struct Fnv1a(u64);

impl Fnv1a {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn new() -> Self {
        Fnv1a(Self::OFFSET_BASIS)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }
}

/// A hex fingerprint of `parts`, each followed by a 0xFF byte (which no
/// UTF-8 text contains) so `("ab","c")` and `("a","bc")` differ.
pub(super) fn fingerprint(parts: &[&str]) -> String {
    let mut hash = Fnv1a::new();
    for part in parts {
        hash.write(part.as_bytes());
        hash.write(&[0xFF]);
    }
    format!("{:016x}", hash.0)
}

/// Percent-encode a file path or image path into a URI reference: keeps
/// unreserved characters and `/`, turns `\` into `/`, and makes absolute
/// paths `file://` URIs.
pub(super) fn path_to_uri(path: &str) -> String {
    let normalised = path.replace('\\', "/");
    let mut uri = String::with_capacity(normalised.len() + 8);
    if normalised.starts_with('/') {
        uri.push_str("file://");
    }
    for byte in normalised.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            uri.push(char::from(byte));
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_reference_vectors() {
        // Test vectors from the FNV reference (draft-eastlake-fnv).
        for (input, expected) in [
            ("", 0xcbf2_9ce4_8422_2325_u64),
            ("a", 0xaf63_dc4c_8601_ec8c),
            ("foobar", 0x8594_4171_f739_67e8),
        ] {
            let mut hash = Fnv1a::new();
            hash.write(input.as_bytes());
            assert_eq!(hash.0, expected, "{input:?}");
        }
        assert_ne!(fingerprint(&["ab", "c"]), fingerprint(&["a", "bc"]));
    }

    #[test]
    fn xml_escapes_markup_quotes_and_controls() {
        assert_eq!(
            xml_attr("a<\"b\"&'c'>\n\t"),
            "a&lt;&quot;b&quot;&amp;&apos;c&apos;&gt;&#10;&#9;"
        );
        assert_eq!(xml_text("x\u{1}y\r"), "x\u{FFFD}y&#13;");
        assert_eq!(xml_text("plain é"), "plain é");
    }

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(
            path_to_uri("docker/Dockerfile.gpu"),
            "docker/Dockerfile.gpu"
        );
        assert_eq!(
            path_to_uri("/srv/a b/Dockerfile"),
            "file:///srv/a%20b/Dockerfile"
        );
        assert_eq!(path_to_uri("<stdin>"), "%3Cstdin%3E");
        assert_eq!(path_to_uri("dir\\é"), "dir/%C3%A9");
    }
}
