//! What is known about a rule apart from its check: its code, name, category, default severity,
//! whether it can fix, and its doc page. It sits below the rules, the findings (`diagnostic`) and the
//! configuration (`config`), which all name rules by it, and imports none of them.

use serde::{Deserialize, Serialize};

/// How serious a finding is. Ordered: `Style < Info < Warning < Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Style,
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Style => "style",
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    pub fn parse(text: &str) -> Option<Severity> {
        match text.to_ascii_lowercase().as_str() {
            "style" => Some(Severity::Style),
            "info" => Some(Severity::Info),
            "warning" | "warn" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of problem a rule is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// The Dockerfile itself (syntax, stages, ARGs): `CU0xx`.
    Structure,
    /// Image size: devel bases, copied toolkits, caches.
    Size,
    /// Will it run on the target driver and GPU.
    Compatibility,
    /// Something is missing or mis-wired and breaks at run time.
    Correctness,
}

/// Whether a rule can offer an automatic fix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FixAvailability {
    None,
    Sometimes,
    Always,
}

/// Everything known about a rule apart from its check.
#[derive(Debug)]
pub struct RuleMeta {
    /// `CUxxx`: `CU0xx` structural, `CU1xx` Dockerfile CUDA, `CU2xx` image.
    pub code: &'static str,
    /// kebab-case name of the pattern flagged, e.g. `devel-image-in-final-stage`.
    pub name: &'static str,
    pub category: Category,
    pub default_severity: Severity,
    pub fix: FixAvailability,
    /// One line for `cudalint rules` and SARIF `shortDescription`.
    pub summary: &'static str,
    /// The doc page (Markdown, headings: What it does / Why is this bad? /
    /// Example / Use instead / References): [`RuleMeta::doc`] reads it.
    pub doc: Doc,
}

/// Where a rule's doc page is.
#[derive(Debug)]
pub enum Doc {
    /// `docs/rules/<CODE>.md` of the rule's own code, which the binary carries packed
    /// (`crate::rule_docs`).
    Page,
    /// This text (rules that tests make, and pages that are not files).
    Text(&'static str),
}

impl RuleMeta {
    /// The doc page's Markdown.
    pub fn doc(&self) -> &'static str {
        match self.doc {
            Doc::Page => crate::rule_docs::page(self.code),
            Doc::Text(text) => text,
        }
    }
}
