//! Rules: the trait every check implements and the registry (their metadata is `crate::rule_meta`).
//!
//! One file per rule under `checks/dockerfile/` (and later `checks/image/`).
//! A rule only reports findings at its default severity; overrides,
//! suppressions and sorting happen once, in the engine.

pub mod dockerfile;
pub mod image;

// Rule metadata lives below the rules (`crate::rule_meta`), so that findings and the configuration
// name a rule without importing the rules; the rules take it from here.
pub use crate::rule_meta::{Category, Doc, FixAvailability, RuleMeta};

use crate::config::Settings;
use crate::diagnostic::Diagnostic;
use crate::dockerfile::ast::Dockerfile;
use crate::dockerfile::model::BuildModel;
use crate::knowledge::Knowledge;
use crate::source::SourceFile;

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
    /// What the rules of this lint work out once and share (requirement
    /// files read per install, facts of a stage's chain).
    pub memo: &'a crate::checks::dockerfile::lint_memo::LintMemo,
}

/// A check over one parsed Dockerfile.
pub trait DockerfileRule: Sync {
    fn meta(&self) -> &'static RuleMeta;
    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>);
}
