//! What the shipped image does with CUPTI, read from its Dockerfile: the
//! things in it that need CUPTI at run time (torch without its CUPTI wheel,
//! a Kineto wheel built against a devel stage's CUPTI, profiler plugins,
//! loader-path entries meant for CUPTI), and whether the image brings CUPTI
//! itself rather than through its base.
//!
//! CU110 reports the needs when the base has no CUPTI; CU101 uses them to
//! judge whether switching a devel base to runtime (which drops CUPTI) is
//! safe.

use std::collections::HashMap;

use crate::checks::dockerfile::runtime_env;
use crate::checks::dockerfile::support;
use crate::checks::DockerfileContext;
use crate::dockerfile::ast::{Command, CopyCommand};
use crate::dockerfile::model::{DependencyKind, DependencyTarget, RunStep, Stage};
use crate::dockerfile::packages::{PackageInstall, PackageManager};
use crate::knowledge::cupti::{Manager, Need};
use crate::source::Span;

/// Why something in the image needs CUPTI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CuptiNeedKind {
    /// torch installed with `--no-deps`, so without its CUPTI wheel.
    TorchWithoutDeps,
    /// The CUPTI wheel directory torch's wheel brought is deleted.
    WheelDeleted,
    /// A wheel built with Kineto in a devel stage, linked to its CUPTI.
    KinetoWheel,
    /// A package that loads CUPTI (a profiler plugin, TensorFlow's tracer).
    Consumer,
    /// A loader-path entry that names a CUPTI directory.
    LoaderPath,
}

/// One thing in the shipped image that needs CUPTI.
#[derive(Clone, Debug)]
pub struct CuptiNeed {
    pub kind: CuptiNeedKind,
    /// How badly it breaks: no import at all, or only profiling.
    pub need: Need,
    /// The word that brings the need.
    pub span: Span,
    /// What needs CUPTI, as a clause (“`--no-deps` leaves out …”).
    pub description: String,
    /// The error users see without CUPTI.
    pub symptom: String,
    pub source: String,
}

/// How the shipped image brings CUPTI itself (its base aside).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CuptiProvided {
    /// An apt/conda package or copied CUPTI files: there whatever the base.
    Installed,
    /// A pip wheel, or packages the Dockerfile does not name (requirement
    /// files, virtualenvs copied from a builder): CUPTI may well be there.
    Possibly,
}

/// What the shipped image needs and brings, from one pass over its chain.
#[derive(Debug)]
pub struct CuptiUse {
    pub needs: Vec<CuptiNeed>,
    pub provided: Option<CuptiProvided>,
}

/// What the shipped image (stages `chain`, root first) needs of CUPTI and
/// brings of it, from one pass in build order.
pub fn cupti_use(ctx: &DockerfileContext<'_>, chain: &[&Stage]) -> CuptiUse {
    let mut scan = Scan {
        ctx,
        soname: soname(ctx, chain),
        copy_from: copy_sources(chain),
        kineto: vec![None; ctx.model.stages.len()],
        installed: false,
        possibly: false,
        wheel_dirs: Vec::new(),
        needs: Vec::new(),
    };
    for (stage, index, instruction) in runtime_env::chain_instructions(ctx, chain) {
        match &instruction.command {
            Command::Copy(copy) | Command::Add(copy) => scan.copy(index, copy),
            Command::Env(pairs) => {
                for kv in pairs {
                    scan.loader_entry(&kv.key, &kv.value, kv.span);
                }
            }
            _ => {}
        }
        if let Some(step) = runtime_env::run_step(stage, index) {
            scan.run(step);
        }
    }
    let provided = if scan.installed {
        Some(CuptiProvided::Installed)
    } else if scan.possibly {
        Some(CuptiProvided::Possibly)
    } else {
        None
    };
    CuptiUse {
        needs: scan.needs,
        provided,
    }
}

/// The CUPTI soname the target's CUDA version loads, for symptoms.
fn soname(ctx: &DockerfileContext<'_>, chain: &[&Stage]) -> String {
    chain
        .last()
        .and_then(|target| support::base_facts(ctx, target))
        .and_then(|f| f.cuda)
        .and_then(|v| ctx.knowledge.cupti.soname(&v))
        .unwrap_or_else(|| "libcupti.so".to_string())
}

/// The state of one pass over the shipped chain, in build order.
struct Scan<'c, 'm> {
    ctx: &'c DockerfileContext<'m>,
    soname: String,
    /// The stage each `COPY --from` / `ADD --from` instruction copies from,
    /// as the model resolved it. A file may copy from its stages thousands
    /// of times: builders are looked up in a map and each is judged once.
    copy_from: HashMap<usize, usize>,
    /// Whether each stage builds a Kineto wheel, once judged.
    kineto: Vec<Option<bool>>,
    /// CUPTI packages or files that are there whatever the base.
    installed: bool,
    /// CUPTI from pip wheels or packages we cannot see; a later removal of
    /// the wheel directory takes it away again.
    possibly: bool,
    /// Where Kineto wheels from devel stages were copied to.
    wheel_dirs: Vec<String>,
    needs: Vec<CuptiNeed>,
}

impl Scan<'_, '_> {
    fn copy(&mut self, instruction: usize, copy: &CopyCommand) {
        let cupti = &self.ctx.knowledge.cupti;
        let model = self.ctx.model;
        let from_stage = self
            .copy_from
            .get(&instruction)
            .and_then(|&stage| model.stages.get(stage));
        for source in &copy.sources {
            if cupti.copies.matches(&source.text) {
                self.installed = true;
            } else if let Some(builder) = from_stage {
                if cupti.source_builds.is_wheel_source(&source.text) && self.is_kineto(builder) {
                    self.wheel_dirs.push(copy.dest.text.clone());
                } else {
                    // A virtualenv or site-packages may carry a CUPTI wheel.
                    self.possibly = true;
                }
            }
        }
    }

    fn is_kineto(&mut self, builder: &Stage) -> bool {
        let ctx = self.ctx;
        self.kineto
            .get_mut(builder.index)
            .map(|known| *known.get_or_insert_with(|| kineto_build(ctx, builder)))
            .unwrap_or(false)
    }

    fn loader_entry(&mut self, key: &str, value: &str, span: Span) {
        let cupti = &self.ctx.knowledge.cupti;
        if !cupti.runtime.is_loader_var(key) {
            return;
        }
        for entry in runtime_env::split_path_list(value) {
            if cupti.library_path.mentions_cupti(entry) {
                self.needs.push(CuptiNeed {
                    kind: CuptiNeedKind::LoaderPath,
                    need: Need::Import,
                    span: runtime_env::span_of(self.ctx, span, entry),
                    description: format!("`{entry}` on {key} is meant for CUPTI"),
                    symptom: format!("libraries that load {} do not find it there", self.soname),
                    source: cupti.library_path.source.clone(),
                });
            }
        }
    }

    fn run(&mut self, step: &RunStep) {
        let cupti = &self.ctx.knowledge.cupti;
        let installs = &step.installs;
        for (position, command) in step.commands.iter().enumerate() {
            if let Some(word) = support::rm_target(command, |t| cupti.removals.matches(t)) {
                self.possibly = false;
                let description = format!(
                    "`rm {}` deletes the CUPTI that torch's wheel brought",
                    word.text
                );
                let source = cupti.removals.source.clone();
                self.torch_needs(CuptiNeedKind::WheelDeleted, word.span, description, source);
                continue;
            }
            for install in installs.iter().filter(|i| i.command == position) {
                self.install(install);
            }
        }
    }

    fn install(&mut self, install: &PackageInstall) {
        let cupti = &self.ctx.knowledge.cupti;
        let manager = match install.manager {
            PackageManager::Apt => Manager::Apt,
            PackageManager::Pip | PackageManager::Uv => Manager::Pip,
            m if m.is_conda() => Manager::Conda,
            _ => return,
        };
        // Requirement files, checkouts and variables install packages we
        // cannot see.
        if !install.requirement_files.is_empty()
            || install.packages.iter().any(|p| {
                p.word.text.contains('$')
                    || (p.is_location || p.name.contains('/')) && !p.word.text.ends_with(".whl")
            })
        {
            self.possibly = true;
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
            let extras: Vec<String> = package.extras().map(str::to_string).collect();
            if cupti.provider(manager, &package.name, &extras).is_some() {
                if manager == Manager::Pip {
                    self.possibly = true;
                } else {
                    self.installed = true;
                }
            } else if manager == Manager::Pip && cupti.torch.is_torch(&package.name) {
                if cpu_index || cupti.torch.is_cpu_build(&package.word.text) {
                    continue;
                }
                if no_deps {
                    let description =
                        "`--no-deps` leaves out the CUPTI wheel that torch depends on".to_string();
                    let (kind, source) = (CuptiNeedKind::TorchWithoutDeps, &cupti.torch.source);
                    self.torch_needs(kind, package.word.span, description, source.clone());
                } else {
                    self.possibly = true;
                }
            } else if let Some(consumer) = cupti.consumer(manager, &package.name, &extras) {
                self.needs.push(CuptiNeed {
                    kind: CuptiNeedKind::Consumer,
                    need: consumer.need,
                    span: package.word.span,
                    description: format!("`{}` installs {}", package.word.text, consumer.what),
                    symptom: consumer.symptom.clone(),
                    source: consumer.source.clone(),
                });
            }
        }
        for path in install.packages.iter().filter(|p| p.is_location) {
            let name = path.distribution().unwrap_or("");
            let path = &path.word;
            if cupti.provider(manager, name, &[]).is_some() {
                self.possibly = true;
            } else if self.wheel_dirs.iter().any(|dir| {
                path.text.starts_with(dir.trim_end_matches('*')) || path.text.ends_with(".whl")
            }) {
                let description = format!(
                    "`{}` was built with Kineto in a devel stage, against that stage's CUPTI",
                    path.text
                );
                let source = cupti.source_builds.source.clone();
                self.torch_needs(CuptiNeedKind::KinetoWheel, path.span, description, source);
            }
        }
    }

    /// A need that breaks `import torch` (or a wheel linked like it).
    fn torch_needs(
        &mut self,
        kind: CuptiNeedKind,
        span: Span,
        description: String,
        source: String,
    ) {
        let torch = &self.ctx.knowledge.cupti.torch;
        self.needs.push(CuptiNeed {
            kind,
            need: Need::Import,
            span,
            description,
            symptom: torch.symptom.replace("{soname}", &self.soname),
            source,
        });
    }
}

/// Each COPY/ADD instruction of `chain` that copies from a stage, to that
/// stage.
fn copy_sources(chain: &[&Stage]) -> HashMap<usize, usize> {
    chain
        .iter()
        .flat_map(|stage| &stage.dependencies)
        .filter(|d| d.kind == DependencyKind::Copy)
        .filter_map(|d| match d.target {
            DependencyTarget::Stage(stage) => Some((d.instruction, stage)),
            _ => None,
        })
        .collect()
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
