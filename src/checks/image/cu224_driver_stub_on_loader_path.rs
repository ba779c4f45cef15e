//! CU224 driver-stub-on-loader-path: the image's `LD_LIBRARY_PATH` names a link-stub directory that
//! holds a file under a driver library's SONAME (`stubs/libcuda.so.1`). `LD_LIBRARY_PATH` comes before
//! the ld cache, where the NVIDIA Container Toolkit puts the host's driver libraries, so every process
//! loads the stub, and CUDA fails at initialisation with the stub-library error. The image-side twin
//! of CU124.

use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::image::facts::{FsView, NodeKind};
use crate::knowledge::host_libraries::HostLibraries;

pub struct DriverStubOnLoaderPath;

static META: RuleMeta = RuleMeta {
    code: "CU224",
    name: "driver-stub-on-loader-path",
    category: Category::Correctness,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "LD_LIBRARY_PATH puts a link stub of the driver before the host's driver library",
    doc: Doc::Page,
};

/// The value of `key` in the image config's `Env` (the last one wins, as in a shell).
fn env_value<'a>(env: &'a [String], key: &str) -> Option<&'a str> {
    env.iter().rev().find_map(|entry| {
        entry
            .strip_prefix(key)
            .and_then(|rest| rest.strip_prefix('='))
    })
}

impl ImageRule for DriverStubOnLoaderPath {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        let runtime = &ctx.knowledge.cupti.runtime;
        let host = HostLibraries::embedded();
        let fs = &ctx.image.report.fs;
        let Some(path) = env_value(&ctx.image.report.config.env, "LD_LIBRARY_PATH") else {
            return;
        };
        for dir in path
            .split([':', ';'])
            .filter(|dir| runtime.is_stub_dir(dir))
        {
            let dir = dir.trim_end_matches('/');
            for (file, node) in fs.walk() {
                let Some((parent, name)) = file.rsplit_once('/') else {
                    continue;
                };
                // A NEEDED names a SONAME (`libcuda.so.1`), never the bare link name (`libcuda.so`).
                if parent != dir || !name.contains(".so.") || host.group_of(name).is_none() {
                    continue;
                }
                if !matches!(node.kind, NodeKind::File | NodeKind::Symlink(_)) {
                    continue;
                }
                let mut finding = ctx
                    .finding_at(
                        &META,
                        node.layer,
                        file,
                        format!(
                            "LD_LIBRARY_PATH names the link-stub directory {dir}, which holds `{name}`: every \
                             process loads this stub instead of the host's driver library"
                        ),
                    )
                    .with_help(
                        "drop the stub directory from LD_LIBRARY_PATH (stubs are for the linker: LIBRARY_PATH or \
                         -L at build time), or remove the SONAME-named link in it",
                    )
                    .with_source(runtime.source.clone());
                if let Some(error) = runtime.error("stub") {
                    finding = finding
                        .with_note(format!(
                            "CUDA then fails at initialisation with error {} ({}): \"{}\"",
                            error.code, error.name, error.text
                        ))
                        .with_source(error.source.clone());
                }
                out.push(finding);
            }
        }
    }
}
