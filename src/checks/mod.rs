//! Rules: the trait every check implements, rule metadata, and the registry.
//!
//! One file per rule under `checks/dockerfile/` (and later `checks/image/`).
//! A rule only reports findings at its default severity; overrides,
//! suppressions and sorting happen once, in the engine.

pub mod dockerfile;
pub mod image;

use crate::config::Settings;
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::ast::Dockerfile;
use crate::dockerfile::model::BuildModel;
use crate::knowledge::Knowledge;
use crate::source::SourceFile;

/// What kind of problem a rule is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
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
    /// Example / Use instead / References), from `docs/rules/<CODE>.md`.
    pub doc: &'static str,
}

/// What a Dockerfile rule gets to look at.
pub struct DockerfileContext<'a> {
    pub source: &'a SourceFile,
    pub dockerfile: &'a Dockerfile,
    pub model: &'a BuildModel,
    pub knowledge: &'a Knowledge,
    pub settings: &'a Settings,
    /// The build context, where requirement files a RUN installs from are
    /// read (`None`: no context, e.g. a Dockerfile on standard input).
    pub build_context: Option<&'a crate::context_files::ContextFiles>,
    /// The requirement files read per install in this lint (each once).
    pub requirement_memo: &'a crate::checks::dockerfile::requirement_files::Memo,
}

/// A check over one parsed Dockerfile.
pub trait DockerfileRule: Sync {
    fn meta(&self) -> &'static RuleMeta;
    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>);
}
