//! Which shared libraries the loader would fail to find in the image: every ELF object of the merged
//! filesystem is loaded as the root of its own load tree (`ldso.rs`), and the DT_NEEDED entries of that
//! object that resolve nowhere (neither in the image nor among the libraries the NVIDIA Container
//! Toolkit injects from the host) are listed. An object is judged with its own search paths only: a
//! library that a program reaches through the program's DT_RPATH is judged on its own as well, which is
//! what `import` of a Python extension and `dlopen` by name do.

use serde::Serialize;

use super::facts::{Captured, ElfKind, FsView, NodeKind};
use super::ldso::{Loader, LoaderEnv};
use crate::knowledge::host_libraries::HostLibraries;

/// One DT_NEEDED that resolves nowhere.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnresolvedNeed {
    /// The object that needs it.
    pub object: String,
    /// The SONAME it asks for.
    pub needed: String,
    /// The layer that wrote the object (0-based, manifest order).
    pub layer: usize,
}

/// Every unresolved DT_NEEDED of every shared object and executable in `fs`, sorted by object path.
pub fn unresolved_needs<F: FsView + ?Sized>(
    fs: &F,
    env: &[String],
    working_dir: Option<&str>,
) -> Vec<UnresolvedNeed> {
    let host = HostLibraries::embedded();
    let loader = Loader::new(fs, LoaderEnv::from_config(env, working_dir, host), host);
    let mut found = Vec::new();
    for (path, node) in fs.walk() {
        if node.kind != NodeKind::File {
            continue;
        }
        let Some(Captured::Elf(elf)) = node.captured.as_deref() else {
            continue;
        };
        if elf.kind == ElfKind::Other || elf.needed.is_empty() {
            continue;
        }
        let Some(needs) = loader.direct_needs(path) else {
            continue;
        };
        for needed in needs
            .iter()
            .filter(|needed| needed.resolution == super::ldso::Resolution::Unresolved)
        {
            found.push(UnresolvedNeed {
                object: path.to_string(),
                needed: needed.name.clone(),
                layer: node.layer,
            });
        }
    }
    found
}
