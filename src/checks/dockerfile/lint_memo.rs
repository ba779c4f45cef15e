//! What the rules of one lint work out once and share: facts of a stage
//! that several rules ask for and that read every RUN of the stage's chain
//! (asked per stage by each rule, they would make a large file's lint do
//! the same walk many times), the requirement files each install reads, and
//! the terms of each requirement text (name, exact release, whether the
//! newest release satisfies it), which several rules read for every
//! package of every install.
//!
//! One [`LintMemo`] lives for one lint of one file (the engine makes it
//! next to the build model); nothing in it outlives the text it describes.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::checks::dockerfile::requirement_files;
use crate::knowledge::packages::PackageKnowledge;
use crate::knowledge::version::Version;

/// [`PackageKnowledge::requirement_terms`]: a requirement's normalised
/// name, its exact release and whether it has only lower bounds.
pub type RequirementTerms = (String, Option<Version>, bool);

/// The shared facts of one lint.
#[derive(Debug, Default)]
pub struct LintMemo {
    /// The requirement files read per install ([`requirement_files::expand`]).
    pub requirements: requirement_files::Memo,
    /// [`crate::checks::dockerfile::stack::distro_python_os`], by stage index.
    distro_python_os: Mutex<HashMap<usize, Option<String>>>,
    /// [`PackageKnowledge::requirement_terms`], by requirement text.
    requirement_terms: Mutex<HashMap<String, Option<RequirementTerms>>>,
}

impl LintMemo {
    /// The distribution Python's OS of stage `stage`, from `find` the first
    /// time it is asked.
    pub fn distro_python_os(
        &self,
        stage: usize,
        find: impl FnOnce() -> Option<String>,
    ) -> Option<String> {
        if let Some(known) = self
            .distro_python_os
            .lock()
            .ok()
            .and_then(|memo| memo.get(&stage).cloned())
        {
            return known;
        }
        let found = find();
        if let Ok(mut memo) = self.distro_python_os.lock() {
            memo.insert(stage, found.clone());
        }
        found
    }

    /// [`PackageKnowledge::requirement_terms`] of `spec`, read once per
    /// text and lint.
    pub fn requirement_terms(&self, spec: &str) -> Option<RequirementTerms> {
        if let Some(known) = self
            .requirement_terms
            .lock()
            .ok()
            .and_then(|memo| memo.get(spec).cloned())
        {
            return known;
        }
        let terms = PackageKnowledge::requirement_terms(spec);
        if let Ok(mut memo) = self.requirement_terms.lock() {
            memo.insert(spec.to_owned(), terms.clone());
        }
        terms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Option<Version> {
        Version::parse(text)
    }

    #[test]
    fn requirement_terms_are_the_knowledge_terms_asked_once_or_twice() {
        let memo = LintMemo::default();
        let cases = [
            (
                "torch==2.5.1+cu121",
                Some(("torch".to_string(), v("2.5.1"), false)),
            ),
            (
                "Torch_Vision==0.21.0.post1",
                Some(("torch-vision".to_string(), v("0.21.0"), false)),
            ),
            ("jax==0.4.30rc1", Some(("jax".to_string(), v("0.4"), false))),
            (
                "numpy==1.26.4.1",
                Some(("numpy".to_string(), v("1.26.4"), false)),
            ),
            ("'tensorrt>=10'", Some(("tensorrt".to_string(), None, true))),
            ("pkg==abc", Some(("pkg".to_string(), None, false))),
            ("https://example.invalid/x.whl", None),
        ];
        for (spec, want) in cases {
            assert_eq!(PackageKnowledge::requirement_terms(spec), want, "{spec}");
            assert_eq!(memo.requirement_terms(spec), want, "{spec} (first ask)");
            assert_eq!(memo.requirement_terms(spec), want, "{spec} (remembered)");
        }
    }
}
