//! CU110 cupti-missing: the shipped image has no CUPTI while something in it
//! needs it: torch installed with `--no-deps` or with its CUPTI wheel deleted
//! (`import torch` fails), a Kineto-enabled wheel built in a devel stage,
//! a GPU profiler plugin on a CUDA runtime base, or an `LD_LIBRARY_PATH`
//! entry meant for CUPTI.

use std::collections::HashMap;

use crate::checks::dockerfile::runtime_env;
use crate::checks::dockerfile::support::{self, shipped_stages};
use crate::checks::{Category, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::ast::Command;
use crate::dockerfile::model::{BaseImage, Stage};
use crate::dockerfile::packages::{package_installs, PackageManager};
use crate::knowledge::cupti::{Manager, Need};
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU110",
    name: "cupti-missing",
    category: Category::Correctness,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "Something in the shipped image needs CUPTI, and the image has none",
    doc: include_str!("../../../docs/rules/CU110.md"),
};

pub struct CuptiMissing;

/// What the shipped image's base says about CUPTI.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Base {
    /// A known CUDA image without CUPTI (base, runtime, cudnn-runtime).
    CudaWithout,
    /// A known image without CUDA at all (or scratch).
    NoCuda,
}

struct NeedAt {
    span: Span,
    need: Need,
    what: String,
    symptom: String,
    source: String,
}

impl DockerfileRule for CuptiMissing {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let cupti = &ctx.knowledge.cupti;
        let chain = shipped_stages(ctx.model);
        let (Some(root), Some(target)) = (chain.first(), chain.last()) else {
            return;
        };
        let facts = support::base_facts(ctx, target);
        let base = match (&facts, &root.base) {
            (Some(f), _) if f.has_cupti => return,
            (Some(f), _) if f.cuda.is_some() => Base::CudaWithout,
            (_, BaseImage::Scratch) => Base::NoCuda,
            (_, BaseImage::Image(image)) if cupti.base_without_cuda(&image.repository) => {
                Base::NoCuda
            }
            _ => return,
        };
        let soname = facts
            .as_ref()
            .and_then(|f| f.cuda)
            .and_then(|v| cupti.soname(&v))
            .unwrap_or_else(|| "libcupti.so".to_string());

        let mut provided = false;
        // CUPTI from pip wheels or packages we cannot see; a later removal of
        // the wheel directory takes it away again.
        let mut maybe_from_pip = false;
        let mut wheel_dirs: Vec<String> = Vec::new();
        let mut needs: Vec<NeedAt> = Vec::new();
        // A file may copy from its stages thousands of times: names are
        // looked up in a map and each builder is judged once.
        let stages_by_name = stages_by_name(ctx);
        let mut kineto: Vec<Option<bool>> = vec![None; ctx.model.stages.len()];
        for (stage, index, instruction) in runtime_env::chain_instructions(ctx, &chain) {
            match &instruction.command {
                Command::Copy(copy) | Command::Add(copy) => {
                    let from_stage = copy
                        .from
                        .as_ref()
                        .and_then(|w| stage_named(ctx, &stages_by_name, &w.text));
                    for source in &copy.sources {
                        if cupti.copies.matches(&source.text) {
                            provided = true;
                        } else if let Some(builder) = from_stage {
                            if cupti.source_builds.is_wheel_source(&source.text)
                                && *kineto
                                    .get_mut(builder.index)
                                    .map(|known| {
                                        known.get_or_insert_with(|| kineto_build(ctx, builder))
                                    })
                                    .unwrap_or(&mut false)
                            {
                                wheel_dirs.push(copy.dest.text.clone());
                            } else {
                                // A virtualenv or site-packages may carry a CUPTI wheel.
                                maybe_from_pip = true;
                            }
                        }
                    }
                }
                Command::Env(pairs) => {
                    for kv in pairs
                        .iter()
                        .filter(|kv| cupti.runtime.is_loader_var(&kv.key))
                    {
                        for entry in runtime_env::split_path_list(&kv.value) {
                            if cupti.library_path.mentions_cupti(entry) {
                                needs.push(NeedAt {
                                    span: runtime_env::span_of(ctx, kv.span, entry),
                                    need: Need::Import,
                                    what: format!("`{}` on {} is meant for CUPTI", entry, kv.key),
                                    symptom: format!(
                                        "libraries that load {soname} do not find it there"
                                    ),
                                    source: cupti.library_path.source.clone(),
                                });
                            }
                        }
                    }
                }
                _ => {}
            }
            let Some(step) = runtime_env::run_step(stage, index) else {
                continue;
            };
            let installs = package_installs(&step.commands);
            for (position, command) in step.commands.iter().enumerate() {
                if let Some(word) = support::rm_target(command, |t| cupti.removals.matches(t)) {
                    maybe_from_pip = false;
                    needs.push(NeedAt {
                        span: word.span,
                        need: Need::Import,
                        what: format!(
                            "`rm {}` deletes the CUPTI that torch's wheel brought",
                            word.text
                        ),
                        symptom: cupti.torch.symptom.replace("{soname}", &soname),
                        source: cupti.removals.source.clone(),
                    });
                    continue;
                }
                for install in installs.iter().filter(|i| i.command == position) {
                    let manager = match install.manager {
                        PackageManager::Apt => Manager::Apt,
                        PackageManager::Pip | PackageManager::Uv => Manager::Pip,
                        m if m.is_conda() => Manager::Conda,
                        _ => continue,
                    };
                    // Requirement files, checkouts and variables install packages
                    // we cannot see.
                    if !install.requirement_files.is_empty()
                        || install.packages.iter().any(|p| {
                            p.word.text.contains('$')
                                || (p.is_location || p.name.contains('/'))
                                    && !p.word.text.ends_with(".whl")
                        })
                    {
                        maybe_from_pip = true;
                    }
                    let cpu_index = install
                        .index_urls
                        .iter()
                        .any(|i| cupti.torch.is_cpu_build(i));
                    let no_deps = cupti
                        .torch
                        .no_deps_flags
                        .iter()
                        .any(|f| install.has_option(f));
                    for package in install.packages.iter().filter(|p| !p.is_location) {
                        let extras = extras_of(&package.word.text);
                        if cupti.provider(manager, &package.name, &extras).is_some() {
                            if manager == Manager::Pip {
                                maybe_from_pip = true;
                            } else {
                                provided = true;
                            }
                        } else if manager == Manager::Pip && cupti.torch.is_torch(&package.name) {
                            if cpu_index || cupti.torch.is_cpu_build(&package.word.text) {
                                continue;
                            }
                            if no_deps {
                                needs.push(NeedAt {
                                span: package.word.span,
                                need: Need::Import,
                                what:
                                    "`--no-deps` leaves out the CUPTI wheel that torch depends on"
                                        .to_string(),
                                symptom: cupti.torch.symptom.replace("{soname}", &soname),
                                source: cupti.torch.source.clone(),
                            });
                            } else {
                                maybe_from_pip = true;
                            }
                        } else if let Some(consumer) =
                            cupti.consumer(manager, &package.name, &extras)
                        {
                            needs.push(NeedAt {
                                span: package.word.span,
                                need: consumer.need,
                                what: format!("`{}` installs {}", package.word.text, consumer.what),
                                symptom: consumer.symptom.clone(),
                                source: consumer.source.clone(),
                            });
                        }
                    }
                    for path in install.packages.iter().filter(|p| p.is_location) {
                        let path = &path.word;
                        let name = wheel_name(&path.text).unwrap_or("");
                        if cupti.provider(manager, name, &[]).is_some() {
                            maybe_from_pip = true;
                        } else if wheel_dirs.iter().any(|dir| {
                            path.text.starts_with(dir.trim_end_matches('*'))
                                || path.text.ends_with(".whl")
                        }) {
                            needs.push(NeedAt {
                            span: path.span,
                            need: Need::Import,
                            what: format!("`{}` was built with Kineto in a devel stage, against that stage's CUPTI", path.text),
                            symptom: cupti.torch.symptom.replace("{soname}", &soname),
                            source: cupti.source_builds.source.clone(),
                        });
                        }
                    }
                }
            }
        }
        if provided || maybe_from_pip {
            return;
        }
        let base_text = facts
            .as_ref()
            .map_or_else(|| target.base_text.clone(), |f| f.family.clone());
        for need in needs {
            if need.need == Need::Profiler && base != Base::CudaWithout {
                continue;
            }
            out.push(
                Diagnostic::at(
                    &META,
                    need.span,
                    format!(
                        "{}, but the shipped image has no CUPTI (its base `{base_text}` ships none): `{}`",
                        need.what, need.symptom
                    ),
                )
                .with_help(help(ctx, facts.as_ref().and_then(|f| f.cuda)))
                .with_note(format!("source: {}", need.source)),
            );
        }
    }
}

fn help(ctx: &DockerfileContext<'_>, cuda: Option<crate::knowledge::Version>) -> String {
    let cupti = &ctx.knowledge.cupti;
    match cuda.and_then(|v| cupti.major(v.major()).map(|m| (m, v))) {
        Some((major, version)) => format!(
            "install CUPTI in the final stage (`apt-get install {}` or `pip install {}`), or build on the matching devel image",
            major.apt_package_for(version.minor()),
            major.pip_package
        ),
        None => "install CUPTI in the final stage (the `nvidia-cuda-cupti-cu12` / `nvidia-cuda-cupti` wheel, or NVIDIA's `cuda-cupti-X-Y` apt package)".to_string(),
    }
}

/// Each stage name to the first stage of that name.
fn stages_by_name<'m>(ctx: &DockerfileContext<'m>) -> HashMap<&'m str, &'m Stage> {
    let mut map = HashMap::new();
    for stage in &ctx.model.stages {
        if let Some(name) = stage.name.as_deref() {
            map.entry(name).or_insert(stage);
        }
    }
    map
}

/// The stage a `--from` names: an index, or a name (names cannot start
/// with a digit, so the two never collide).
fn stage_named<'m>(
    ctx: &DockerfileContext<'m>,
    by_name: &HashMap<&'m str, &'m Stage>,
    reference: &str,
) -> Option<&'m Stage> {
    match reference.parse::<usize>() {
        Ok(index) => ctx.model.stages.get(index),
        Err(_) => by_name
            .get(reference.to_ascii_lowercase().as_str())
            .copied(),
    }
}

/// The stage builds with Kineto (a PyTorch source build) on a devel base,
/// and does not turn Kineto off.
fn kineto_build(ctx: &DockerfileContext<'_>, stage: &Stage) -> bool {
    let builds = &ctx.knowledge.cupti.source_builds;
    let devel = support::base_facts(ctx, stage).is_some_and(|f| f.has_cupti || f.has_compiler);
    let mut marked = stage
        .env
        .iter()
        .any(|(k, v)| builds.is_marker(k) || builds.is_marker(v));
    let mut disabled = stage.env.iter().any(|(k, v)| builds.disables(k, v));
    for command in stage.runs.iter().flat_map(|r| r.commands.iter()) {
        marked |= command.words.iter().any(|w| builds.is_marker(&w.text))
            || command.assignments.iter().any(|(k, _)| builds.is_marker(k));
        disabled |= command
            .assignments
            .iter()
            .any(|(k, v)| builds.disables(k, v));
    }
    devel && marked && !disabled
}

/// The extras of a pip requirement (`jax[cuda12,tpu]>=0.4` → `cuda12`, `tpu`).
fn extras_of(requirement: &str) -> Vec<String> {
    requirement
        .split_once('[')
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(inside, _)| {
            inside
                .split(',')
                .map(|e| e.trim().to_string())
                .filter(|e| !e.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The package name of a wheel file (`torch-2.5.0-cp311-….whl` → `torch`).
fn wheel_name(path: &str) -> Option<&str> {
    let file = path.rsplit('/').next()?.strip_suffix(".whl")?;
    file.split('-').next().filter(|n| !n.is_empty())
}
