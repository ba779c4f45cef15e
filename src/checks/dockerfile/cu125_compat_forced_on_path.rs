//! CU125 compat-forced-on-path: the forward-compatibility driver
//! (`/usr/local/cuda/compat`) is put on the shipped image's loader path by
//! hand, instead of letting the NVIDIA Container Toolkit enable it when the
//! host driver is older.
//!
//! Only what survives container start counts: the toolkit rebuilds the
//! container's ld.so.cache from the ld.so.conf files and the driver's
//! directories (`rules/build.toml` `container_start`), so `LD_LIBRARY_PATH`
//! and an ld.so.conf file force compat, while a directory given only on
//! `ldconfig`'s command line is gone in a GPU container and stays quiet.
//! Jetson (L4T) bases, where forward compatibility is supported and enabled
//! this way, stay quiet too.

use crate::checks::dockerfile::runtime_env::{self, LoaderRoute};
use crate::checks::dockerfile::support::{root_image, shipped_stages};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::model::Stage;
use crate::knowledge::build::BuildFacts;

pub static META: RuleMeta = RuleMeta {
    code: "CU125",
    name: "compat-forced-on-path",
    category: Category::Compatibility,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The CUDA forward-compatibility libraries are forced onto the loader path",
    doc: Doc::Page,
};

pub struct CompatForcedOnPath;

impl DockerfileRule for CompatForcedOnPath {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let runtime = &ctx.knowledge.cupti.runtime;
        let error = runtime.error("compat");
        let start = &BuildFacts::embedded().container_start;
        let chain = shipped_stages(ctx.model);
        let target = chain.last().copied();
        let on_jetson = target
            .and_then(|stage| root_image(ctx, stage))
            .is_some_and(|image| start.is_jetson(&image.repository));
        if on_jetson {
            return;
        }
        let is_compat = |dir: &str| runtime.is_compat_dir(&resolved(dir, target));
        for found in runtime_env::loader_dirs(ctx, is_compat) {
            // Only in the build's ld cache: gone once the toolkit rebuilds it.
            if found.route == LoaderRoute::LdConfigArgument {
                continue;
            }
            let how = found.route.phrase();
            let consequence = error.map_or_else(String::new, |e| {
                format!(
                    ": its libcuda.so.1 then replaces the host driver's on every GPU, and GPUs without forward-compatibility support (GeForce, most workstation cards) fail with error {} {} (\"{}\")",
                    e.code, e.name, e.text
                )
            });
            let mut finding = Diagnostic::at(
                &META,
                found.span,
                format!("the forward-compatibility directory `{}` {how}{consequence}", found.dir),
            )
            .with_help(
                "remove it: the NVIDIA Container Toolkit registers the compat libraries at container start, and only when the host driver is older than them",
            )
            .with_note(format!("source: {}", runtime.source));
            if found.route == LoaderRoute::LdConfig {
                finding = finding
                    .with_note(format!(
                        "{}: a directory written to an ld.so.conf file stays in it",
                        start.ldcache_rebuilt
                    ))
                    .with_source(start.ldcache_source.clone());
            }
            if let Some(e) = error {
                finding = finding.with_note(format!("source: {}", e.source));
            }
            out.push(finding);
        }
    }
}

/// `dir` as the loader sees it, as far as the file tells: `${VAR}` and
/// `$VAR` replaced by the shipped stage's ENV value, a variable naming the
/// toolkit root (`CUDA_HOME`, `CUDA_PATH`) that the file does not set read
/// as `/usr/local/cuda`, and a command substitution (`cuda-$(echo … | cut
/// -d. -f1,2)`) kept as one unknown component.
fn resolved(dir: &str, target: Option<&Stage>) -> String {
    let mut out = String::new();
    let mut rest = dir;
    while let Some(at) = rest.find('$') {
        out.push_str(rest.get(..at).unwrap_or(""));
        let after = rest.get(at + 1..).unwrap_or("");
        if let Some(inner) = after.strip_prefix('(') {
            // Up to the matching `)`.
            let mut depth = 1usize;
            let mut end = inner.len();
            for (i, c) in inner.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            out.push_str("X.Y");
            rest = inner.get(end..).unwrap_or("");
            continue;
        }
        let (name, tail) = match after.strip_prefix('{') {
            Some(braced) => {
                let end = braced.find('}').unwrap_or(braced.len());
                let inside = braced.get(..end).unwrap_or("");
                let name = inside.split([':', '-', '+', '=']).next().unwrap_or(inside);
                (name, braced.get(end + 1..).unwrap_or(""))
            }
            None => {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (
                    after.get(..end).unwrap_or(""),
                    after.get(end..).unwrap_or(""),
                )
            }
        };
        let value = target
            .and_then(|stage| stage.env_value(name))
            .filter(|v| !v.contains('$'));
        match value {
            Some(value) => out.push_str(value),
            None if name.to_ascii_lowercase().contains("cuda") => out.push_str("/usr/local/cuda"),
            None => out.push('$'),
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}
