//! CU111 cupti-library-path-wrong: `LD_LIBRARY_PATH` names
//! `…/extras/CUPTI/lib64`, where only runfile installs put libcupti; with
//! NVIDIA's apt packages (CUDA 12 and later) that directory holds no library.

use crate::checks::dockerfile::{shipped, support};
use crate::checks::{Category, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Edit, Fix, FixSafety, Severity};
use crate::knowledge::cupti::Manager;
use crate::knowledge::Version;

pub static META: RuleMeta = RuleMeta {
    code: "CU111",
    name: "cupti-library-path-wrong",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::Sometimes,
    summary: "LD_LIBRARY_PATH points at extras/CUPTI/lib64, which apt-installed CUDA leaves empty",
    doc: include_str!("../../../docs/rules/CU111.md"),
};

pub struct CuptiLibraryPathWrong;

impl DockerfileRule for CuptiLibraryPathWrong {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let cupti = &ctx.knowledge.cupti;
        let facts = &cupti.library_path;
        let chain = shipped::target_chain(ctx.model);
        let Some(target) = chain.last() else { return };
        if !apt_cuda_at_least_empty_since(ctx, &chain) || runfile_install(ctx, &chain) {
            return;
        }
        let settings = shipped::settings(ctx, &chain);
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
            let entries = shipped::effective_path(&settings, var);
            for entry in entries.iter().filter(|e| facts.is_wrong_dir(e.text)) {
                let replacement = facts.replacement(entry.text, arch);
                let span = shipped::span_of(ctx, entry.setting_span, entry.text);
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
fn apt_cuda_at_least_empty_since(
    ctx: &DockerfileContext<'_>,
    chain: &[&crate::dockerfile::model::Stage],
) -> bool {
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
        || shipped::chain_instructions(ctx, chain).any(|(stage, index, _)| {
            shipped::run_step(stage, index).is_some_and(|step| {
                step.commands.iter().any(|command| {
                    apt_packages(ctx, command).iter().any(|name| {
                        cupti.provider(Manager::Apt, name, &[]).is_some()
                            && package_cuda_version(name).is_some_and(|v| v >= since)
                    })
                })
            })
        })
}

fn apt_packages(
    ctx: &DockerfileContext<'_>,
    command: &crate::dockerfile::model::ShellCommand,
) -> Vec<String> {
    let hygiene = &ctx.knowledge.cupti.hygiene;
    let Some(inv) = shipped::invocation(command, hygiene) else {
        return Vec::new();
    };
    if inv.manager.name != "apt" {
        return Vec::new();
    }
    let Some(last) = inv.subcommand_is(&inv.manager.install) else {
        return Vec::new();
    };
    shipped::install_args(inv.manager, inv.words_after(last))
        .packages
        .into_iter()
        .map(|p| p.name)
        .collect()
}

/// `cuda-cupti-12-4` → 12.4.
fn package_cuda_version(name: &str) -> Option<Version> {
    let mut parts = name.rsplit('-');
    let minor = parts.next()?;
    let major = parts.next()?;
    Version::parse(&format!("{major}.{minor}"))
}

fn runfile_install(
    ctx: &DockerfileContext<'_>,
    chain: &[&crate::dockerfile::model::Stage],
) -> bool {
    let facts = &ctx.knowledge.cupti.library_path;
    shipped::chain_instructions(ctx, chain).any(|(stage, index, _)| {
        shipped::run_step(stage, index).is_some_and(|step| {
            step.commands
                .iter()
                .flat_map(|c| c.words.iter())
                .any(|w| facts.is_runfile(&w.text))
        })
    })
}
