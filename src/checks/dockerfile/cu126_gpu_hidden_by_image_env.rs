//! CU126 gpu-hidden-by-image-env: the shipped image's ENV tells the NVIDIA
//! Container Toolkit to mount no GPU (`NVIDIA_VISIBLE_DEVICES` `void`,
//! `none` or empty), or sets `NVIDIA_DRIVER_CAPABILITIES` without a
//! capability the image uses (`compute` for CUDA, `utility` for
//! `nvidia-smi`/NVML, `video` for NVENC/NVDEC, `graphics` for EGL/Vulkan), so
//! the driver libraries it loads are not mounted. The signs of each use are
//! data (`rules/build.toml` `capability_uses`); the libraries each capability
//! mounts come from `rules/host-libraries.toml`.

use crate::checks::dockerfile::runtime_env;
use crate::checks::dockerfile::support::{base_facts, shipped_stages};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Edit, Fix, FixSafety, Severity};
use crate::dockerfile::ast::{Command, HealthcheckCommand, ShellOrExec};
use crate::dockerfile::model::Stage;
use crate::knowledge::build::{glob, BuildFacts, CapabilityUse};
use crate::knowledge::host_libraries::HostLibraries;
use crate::knowledge::images::Variant;

pub static META: RuleMeta = RuleMeta {
    code: "CU126",
    name: "gpu-hidden-by-image-env",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::Sometimes,
    summary: "The image's NVIDIA_* environment hides the GPU or driver libraries it uses",
    doc: Doc::Page,
};

pub struct GpuHiddenByImageEnv;

impl DockerfileRule for GpuHiddenByImageEnv {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let facts = BuildFacts::embedded();
        let chain = shipped_stages(ctx.model);
        let Some(target) = chain.last() else { return };
        let settings = runtime_env::settings(ctx, &chain);
        // Only what the file itself sets: a known parent's ENV is its design.
        let own = |key: &str| {
            runtime_env::last_env(&settings, key).filter(|s| {
                chain
                    .first()
                    .is_none_or(|root| s.instruction != root.from_instruction)
            })
        };
        let visible = &facts.visible_devices;
        if let Some(setting) = own(&visible.var) {
            if let Some(value) = setting.value_in(target) {
                let value = value.trim().to_string();
                // Driver and toolkit containers hide the GPU on purpose;
                // only an image that uses CUDA loses something.
                let compute = facts
                    .capability_use("compute")
                    .and_then(|usage| uses(ctx, &chain, usage));
                if visible
                    .hidden
                    .iter()
                    .any(|h| h.eq_ignore_ascii_case(&value))
                    && compute.is_some()
                {
                    let what = if value.is_empty() {
                        "empty".to_string()
                    } else {
                        format!("`{value}`")
                    };
                    out.push(
                        Diagnostic::at(
                            &META,
                            setting.span,
                            format!(
                                "`{}` is {what}: a container started with the NVIDIA runtime and no device request (`--gpus`, a Kubernetes GPU limit) gets no GPU from the NVIDIA Container Toolkit",
                                visible.var
                            ),
                        )
                        .with_help(format!("remove it, or set `{}=all` and choose GPUs at run time (`docker run --gpus`)", visible.var))
                        .with_source(visible.source.clone()),
                    );
                }
            }
        }
        let caps = &facts.driver_capabilities;
        let Some(setting) = own(&caps.var) else {
            return;
        };
        let Some(value) = setting.value_in(target) else {
            return;
        };
        let host = HostLibraries::embedded();
        let granted: Vec<String> = value
            .split(',')
            .map(|c| c.trim().to_ascii_lowercase())
            .filter(|c| !c.is_empty())
            .collect();
        if granted.is_empty() || granted.iter().any(|c| c == "all") {
            return;
        }
        let mut missing = Vec::new();
        for usage in &facts.capability_uses {
            if granted.contains(&usage.capability) {
                continue;
            }
            if let Some(evidence) = uses(ctx, &chain, usage) {
                missing.push((usage, evidence));
            }
        }
        let Some((first, evidence)) = missing.first() else {
            return;
        };
        let names: Vec<String> = missing
            .iter()
            .map(|(u, _)| format!("`{}`", u.capability))
            .collect();
        let libraries = host
            .libraries
            .iter()
            .find(|g| g.capability == first.capability)
            .map(|g| {
                g.stems
                    .iter()
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        let mut finding = Diagnostic::at(
            &META,
            setting.span,
            format!(
                "`{}={value}` leaves out {}, which the image uses ({evidence}): the NVIDIA Container Toolkit then does not mount {libraries}, and what loads them fails in the container",
                caps.var,
                names.join(" and ")
            ),
        )
        .with_help(format!(
            "add {} to `{}` (or remove the variable: unset, it means `utility,compute`)",
            names.join(", "),
            caps.var
        ))
        .with_source(caps.source.clone());
        for (usage, _) in &missing {
            finding = finding.with_source(usage.source.clone());
        }
        if !setting.value.contains('$') {
            let added: Vec<&str> = missing.iter().map(|(u, _)| u.capability.as_str()).collect();
            let span = runtime_env::span_of(ctx, setting.span, setting.value);
            if !setting.value.is_empty() && span != setting.span {
                finding = finding.with_fix(Fix {
                    description: format!("add {} to {}", added.join(","), caps.var),
                    // Adding a capability only mounts more of the host driver's libraries.
                    safety: FixSafety::Safe,
                    edits: vec![Edit {
                        span,
                        replacement: format!("{},{}", setting.value, added.join(",")),
                    }],
                });
            }
        }
        out.push(finding);
    }
}

/// What in the shipped image shows a use of `usage.capability`, if anything.
fn uses(ctx: &DockerfileContext<'_>, chain: &[&Stage], usage: &CapabilityUse) -> Option<String> {
    if usage.capability == "compute" {
        if let Some(root) = chain.first() {
            // The `base` variant holds only cudart and compat: NVML tools
            // (device plugins, DCGM exporters) stand on it and need no compute.
            if base_facts(ctx, root)
                .is_some_and(|f| f.cuda.is_some() && f.variant != Some(Variant::Base))
            {
                return Some("it is built on a CUDA runtime image".into());
            }
        }
    }
    for stage in chain {
        for (key, value) in &stage.env {
            let hit = usage.env.iter().any(|e| match e.split_once('=') {
                Some((k, v)) => k == key && v.eq_ignore_ascii_case(value),
                None => e == key,
            });
            if hit {
                return Some(format!("`{key}={value}`"));
            }
        }
        for install in stage.runs.iter().flat_map(|r| &r.installs) {
            for package in &install.packages {
                let Some(name) = package.distribution() else {
                    continue;
                };
                let name = name.to_ascii_lowercase();
                if usage
                    .packages
                    .iter()
                    .any(|p| glob(&p.to_ascii_lowercase(), &name))
                {
                    return Some(format!("it installs `{name}`"));
                }
            }
        }
        let run_words = stage
            .runs
            .iter()
            .flat_map(|r| &r.commands)
            .flat_map(|c| &c.words)
            .map(|w| w.text.as_str());
        let mut words: Vec<&str> = run_words.collect();
        for at in stage.instructions.clone() {
            let Some(instruction) = ctx.dockerfile.instructions.get(at) else {
                continue;
            };
            let command = match &instruction.command {
                Command::Cmd(c) | Command::Entrypoint(c) => Some(c),
                Command::Healthcheck(HealthcheckCommand::Check { test, .. }) => Some(test),
                _ => None,
            };
            match command {
                Some(ShellOrExec::Exec(args)) => words.extend(args.iter().map(|w| w.text.as_str())),
                Some(ShellOrExec::Shell(_)) => {
                    words.extend(instruction.args.iter().map(|w| w.text.as_str()))
                }
                None => {}
            }
        }
        if let Some(word) = words
            .iter()
            .find(|w| usage.words.iter().any(|u| w.contains(u.as_str())))
        {
            return Some(format!("`{word}`"));
        }
    }
    None
}
