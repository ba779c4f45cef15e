//! CU111 cupti-library-path-wrong: `LD_LIBRARY_PATH` names
//! `…/extras/CUPTI/lib64`, where only runfile installs put libcupti; with
//! NVIDIA's apt packages (CUDA 12 and later) that directory holds no library.

use crate::checks::dockerfile::runtime_env;
use crate::checks::dockerfile::support::{self, shipped_stages};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Edit, Fix, FixSafety, Severity};
use crate::dockerfile::model::Stage;
use crate::dockerfile::packages::PackageManager;
use crate::knowledge::cupti::Manager;
use crate::knowledge::Version;

pub static META: RuleMeta = RuleMeta {
    code: "CU111",
    name: "cupti-library-path-wrong",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::Sometimes,
    summary: "LD_LIBRARY_PATH points at extras/CUPTI/lib64, which apt-installed CUDA leaves empty",
    doc: Doc::Page,
};

pub struct CuptiLibraryPathWrong;

impl DockerfileRule for CuptiLibraryPathWrong {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let cupti = &ctx.knowledge.cupti;
        let facts = &cupti.library_path;
        let chain = shipped_stages(ctx.model);
        let Some(target) = chain.last() else { return };
        if !apt_cuda_at_least_empty_since(ctx, &chain) || runfile_install(ctx, &chain) {
            return;
        }
        let settings = runtime_env::settings(ctx, &chain);
        let (arch, arch_known) = match target.platform.as_deref() {
            Some(platform) => match cupti.target_arch_dir(platform) {
                Some(dir) => (dir, true),
                None => return,
            },
            None => (
                cupti
                    .target_arch_dir("linux/amd64")
                    .unwrap_or("x86_64-linux"),
                false,
            ),
        };
        for var in &cupti.runtime.loader_vars {
            let entries = runtime_env::effective_path(&settings, var);
            // The toolkit's lib64 (a link to `targets/<arch>/lib`) on the
            // same path finds apt's libcupti: the wrong entry is dead, not harmful.
            if entries.iter().any(|e| facts.finds_apt_cupti(e.text)) {
                continue;
            }
            for entry in entries.iter().filter(|e| facts.is_wrong_dir(e.text)) {
                let replacement = facts.replacement(entry.text, arch);
                let span = runtime_env::span_of(ctx, entry.setting_span, entry.text);
                let mut finding = Diagnostic::at(
                    &META,
                    span,
                    format!(
                        "`{}` holds no libcupti with NVIDIA's apt packages, so profilers that look for CUPTI here do not find it; the library is in `{replacement}`",
                        entry.text
                    ),
                )
                .with_help(format!(
                    "use `{replacement}` instead (devel images already have it in the ld cache)"
                ))
                .with_note(format!("source: {}", facts.source));
                let already = entries.iter().any(|e| e.text == replacement);
                let written_here = ctx.source.text.get(span.start..span.end) == Some(entry.text);
                if !already && written_here {
                    finding = finding.with_fix(Fix {
                        description: format!("replace with `{replacement}`"),
                        // Without an explicit platform the build may target
                        // another architecture (`sbsa-linux` on arm64).
                        safety: if arch_known {
                            FixSafety::Safe
                        } else {
                            FixSafety::Unsafe
                        },
                        edits: vec![Edit { span, replacement }],
                    });
                }
                out.push(finding);
            }
        }
    }
}

/// CUDA comes from NVIDIA's apt packages at a version that leaves the
/// extras directory empty: the base image, or an apt install in the chain.
fn apt_cuda_at_least_empty_since(ctx: &DockerfileContext<'_>, chain: &[&Stage]) -> bool {
    let cupti = &ctx.knowledge.cupti;
    let Some(since) = cupti.library_path.apt_empty_since() else {
        return false;
    };
    let from_base = chain
        .last()
        .and_then(|stage| support::base_facts(ctx, stage))
        .and_then(|facts| facts.cuda)
        .is_some_and(|cuda| cuda >= since);
    from_base
        || chain.iter().flat_map(|stage| &stage.runs).any(|step| {
            step.installs
                .iter()
                .filter(|install| install.manager == PackageManager::Apt)
                .flat_map(|install| &install.packages)
                .any(|package| {
                    cupti.provider(Manager::Apt, &package.name, &[]).is_some()
                        && package_cuda_version(&package.name).is_some_and(|v| v >= since)
                })
        })
}

/// `cuda-cupti-12-4` → 12.4.
fn package_cuda_version(name: &str) -> Option<Version> {
    let mut parts = name.rsplit('-');
    let minor = parts.next()?;
    let major = parts.next()?;
    Version::parse(&format!("{major}.{minor}"))
}

fn runfile_install(ctx: &DockerfileContext<'_>, chain: &[&Stage]) -> bool {
    let facts = &ctx.knowledge.cupti.library_path;
    chain
        .iter()
        .flat_map(|stage| &stage.runs)
        .flat_map(|step| &step.commands)
        .flat_map(|command| &command.words)
        .any(|word| facts.is_runfile(&word.text))
}
