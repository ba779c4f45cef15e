//! What the rules of one lint work out once and share: facts of a stage
//! that several rules ask for and that read every RUN of the stage's chain
//! (asked per stage by each rule, they would make a large file's lint do
//! the same walk many times), and the requirement files each install reads.
//!
//! One [`LintMemo`] lives for one lint of one file (the engine makes it
//! next to the build model); nothing in it outlives the text it describes.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::checks::dockerfile::requirement_files;

/// The shared facts of one lint.
#[derive(Debug, Default)]
pub struct LintMemo {
    /// The requirement files read per install ([`requirement_files::expand`]).
    pub requirements: requirement_files::Memo,
    /// [`crate::checks::dockerfile::stack::distro_python_os`], by stage index.
    distro_python_os: Mutex<HashMap<usize, Option<String>>>,
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
}
