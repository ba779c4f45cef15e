//! Findings: what a rule reports, where, how bad, and how to fix it.
//!
//! A [`Diagnostic`] is the only thing that flows from checks to the engine and
//! from the engine to renderers. Its [`Location`] is either a span in a text
//! source (a Dockerfile) or a place inside a built image (a layer and a path),
//! so image findings need no fake line numbers.

use serde::Serialize;

use crate::rule_meta::RuleMeta;
use crate::source::{LineCol, Span};

pub use crate::rule_meta::Severity;

/// Where a finding points.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Location {
    /// A byte range in a text file; `start`/`end` are filled in by the engine.
    Source {
        span: Span,
        start: Option<LineCol>,
        end: Option<LineCol>,
    },
    /// A place inside a built image: a layer (digest or index) and a path.
    Image {
        layer: Option<String>,
        path: Option<String>,
    },
    /// The file as a whole (no position known).
    File,
}

/// How safe an automatic fix is to apply without review.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FixSafety {
    /// Keeps the meaning of the file; `cudalint fix --write` applies it.
    Safe,
    /// Likely right but may change behaviour; shown, applied only with `--unsafe-fixes`.
    Unsafe,
}

/// One replacement of a byte range by new text.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Edit {
    pub span: Span,
    pub replacement: String,
}

/// A set of edits that together fix one finding.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Fix {
    pub description: String,
    pub safety: FixSafety,
    pub edits: Vec<Edit>,
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Diagnostic {
    /// The file or image the finding is in, as the user named it.
    pub origin: String,
    pub location: Location,
    /// The rule's code, e.g. `CU101`.
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    /// What to do about it.
    pub help: Option<String>,
    /// Supporting facts a person needs to decide; text output shows the
    /// first, JSON and SARIF all.
    pub notes: Vec<String>,
    /// Where the facts behind the finding come from (URLs, `owner/repo@rev:path`,
    /// or what was checked on a real system). Text shows them only with
    /// `--show-sources`; JSON and SARIF always carry them.
    pub sources: Vec<String>,
    pub fix: Option<Fix>,
    /// Other places that explain the finding: for an image finding read with `--dockerfile`, the
    /// instruction that made its layer.
    pub related: Vec<Related>,
    /// What a Dockerfile finding predicts the built image holds, for the image side to confirm or
    /// clear (`image::confirm`); not part of the output, which carries the verdict as a note.
    #[serde(skip)]
    pub prediction: Option<crate::prediction::Prediction>,
}

/// A place in a text source that explains a finding made elsewhere.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Related {
    /// The file, as the user named it.
    pub origin: String,
    pub span: Span,
    pub start: LineCol,
    pub end: LineCol,
    /// What the place is (`layer 3 was made by this instruction`).
    pub message: String,
}

impl Diagnostic {
    /// A finding at `span` of the file being linted, with the rule's default
    /// severity; the engine sets `origin`, the line/column and overrides.
    pub fn at(meta: &RuleMeta, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            origin: String::new(),
            location: Location::Source {
                span,
                start: None,
                end: None,
            },
            code: meta.code,
            severity: meta.default_severity,
            message: message.into(),
            help: None,
            notes: Vec::new(),
            sources: Vec::new(),
            fix: None,
            related: Vec::new(),
            prediction: None,
        }
    }

    /// A finding about a place in an image (no source text).
    pub fn in_image(
        meta: &RuleMeta,
        layer: Option<String>,
        path: Option<String>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            location: Location::Image { layer, path },
            ..Diagnostic::at(meta, Span::default(), message)
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        let note = note.into();
        // Rules written before `sources` existed put their sources in notes
        // as `source: …` or `<what> facts: …`; those are sources.
        match source_of_note(&note) {
            Some(source) => self.push_source(source.to_string()),
            None => self.notes.push(note),
        }
        self
    }

    /// Add where a fact behind the finding comes from.
    pub fn with_source(mut self, source: impl Into<String>) -> Self {
        self.push_source(source.into());
        self
    }

    fn push_source(&mut self, source: String) {
        if !source.is_empty() && !self.sources.contains(&source) {
            self.sources.push(source);
        }
    }

    /// What the built image should hold if the finding is right (see [`crate::prediction`]).
    pub fn with_prediction(mut self, prediction: crate::prediction::Prediction) -> Self {
        self.prediction = Some(prediction);
        self
    }

    pub fn with_fix(mut self, fix: Fix) -> Self {
        self.fix = Some(fix);
        self
    }

    /// Start line/column, where the location has one.
    pub fn start(&self) -> Option<LineCol> {
        match &self.location {
            Location::Source { start, .. } => *start,
            _ => None,
        }
    }

    pub fn end(&self) -> Option<LineCol> {
        match &self.location {
            Location::Source { end, .. } => *end,
            _ => None,
        }
    }
}

/// The source a note names when the whole note is a source (`source: X`,
/// `devel facts: X`, `package facts: X`).
fn source_of_note(note: &str) -> Option<&str> {
    if let Some(rest) = note.strip_prefix("source: ") {
        return Some(rest);
    }
    let (head, rest) = note.split_once(" facts: ")?;
    head.chars()
        .all(|c| c.is_ascii_alphabetic() || c == ' ')
        .then_some(rest)
}
