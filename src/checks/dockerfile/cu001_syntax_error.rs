//! CU001 syntax-error: the file does not parse the way BuildKit parses it.
//!
//! The engine reports this from the parser's error (a file that does not
//! parse has no instructions to check); this file holds the metadata and
//! the docs so the code is listed, explained and configurable like any other.

use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};

pub static META: RuleMeta = RuleMeta {
    code: "CU001",
    name: "syntax-error",
    category: Category::Structure,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "The Dockerfile does not parse; BuildKit would reject it",
    doc: Doc::Page,
};

pub struct SyntaxError;

impl DockerfileRule for SyntaxError {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    /// A parsed file has no syntax error; the engine reports failed parses.
    fn check(&self, _ctx: &DockerfileContext<'_>, _out: &mut Vec<Diagnostic>) {}
}
