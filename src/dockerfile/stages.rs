//! Builds the [`BuildModel`] from a parsed Dockerfile the way BuildKit's
//! `dockerfile2llb` sees the build: global ARGs with `--build-arg`
//! overrides, stages and their bases after expansion, the dependency graph,
//! per-stage ENV, and RUN scripts split into commands.
//!
//! The work is linear in the file on any shape: stage names are looked up
//! in a map, and two model-wide budgets bound what a hostile file could
//! multiply — the bytes of ENV copied into stages (a chain of N stages that
//! each inherit and add an ENV would otherwise store O(N²) entries), and the
//! bytes of ARG/ENV values substituted (`ENV B=$A$A` repeated would
//! otherwise store 64 KiB per line). Where a budget runs out, the model
//! says so in [`BuildModel::limits_hit`] and carries on with less.

use std::cell::Cell;
use std::collections::HashMap;

use crate::dockerfile::ast::{ArgDecl, Command, CopyCommand, Dockerfile, FromCommand, Instruction};
use crate::dockerfile::expand::{expand_vars, expand_word, Layered, VarScope, VarValue, Vars};
use crate::dockerfile::model::{
    BaseImage, BuildModel, BuildOptions, DependencyKind, DependencyTarget, ImageRef, ModelLimit,
    ResolvedArg, RunStep, Stage, StageDependency,
};
use crate::dockerfile::packages::package_installs;
use crate::dockerfile::platform::{automatic_args, Platform};
use crate::dockerfile::shell::split_run;
use crate::source::Span;

/// Bytes of ENV the model may store across all stages, inherited copies
/// included. Real files stay far below it (a hundred stages with a hundred
/// variables each is under 2 MiB); a 50 MB file of chained stages would need
/// terabytes without it.
pub const ENV_BUDGET_BYTES: usize = 64 << 20;
/// What one stored ENV entry costs besides its text (two `String`s and the
/// scope's index), so that empty values still count.
const ENV_ENTRY_COST: usize = 64;
/// Bytes of ARG/ENV values the model may substitute in all. Each expansion
/// is capped by the `expand` module; this caps their sum.
pub const SUBSTITUTION_BUDGET_BYTES: usize = 64 << 20;

/// The model-wide work budgets, and where they ran out.
struct Budget {
    env_left: usize,
    substitution_left: Cell<usize>,
    substitution_exhausted: Cell<bool>,
    substitution_reported: bool,
    inheritance_reported: bool,
    limits: Vec<ModelLimit>,
}

impl Budget {
    fn new() -> Self {
        Budget {
            env_left: ENV_BUDGET_BYTES,
            substitution_left: Cell::new(SUBSTITUTION_BUDGET_BYTES),
            substitution_exhausted: Cell::new(false),
            substitution_reported: false,
            inheritance_reported: false,
            limits: Vec::new(),
        }
    }

    /// `vars`, with every known value it hands out charged to the budget.
    fn charge<'a>(&'a self, vars: &'a dyn Vars) -> Budgeted<'a> {
        Budgeted { vars, budget: self }
    }

    /// Record, once, that substitution stopped at `span`.
    fn note_substitution(&mut self, span: Span) {
        if self.substitution_exhausted.get() && !self.substitution_reported {
            self.substitution_reported = true;
            self.limits.push(ModelLimit {
                span,
                message: format!(
                    "variable substitution stops here: the file substitutes more than {} MiB of \
                     ARG/ENV values in all, so later references are kept as written",
                    SUBSTITUTION_BUDGET_BYTES >> 20
                ),
            });
        }
    }

    /// Take `cost` bytes of ENV storage; false when the budget cannot.
    fn take_env(&mut self, cost: usize) -> bool {
        match self.env_left.checked_sub(cost) {
            Some(left) => {
                self.env_left = left;
                true
            }
            None => false,
        }
    }
}

/// A [`Vars`] that charges each known value it returns to the model's
/// substitution budget and, once that is spent, reports values as unknown:
/// the expansion is then unresolved and keeps the reference as written.
struct Budgeted<'a> {
    vars: &'a dyn Vars,
    budget: &'a Budget,
}

impl Vars for Budgeted<'_> {
    fn get(&self, name: &str) -> Option<VarValue<'_>> {
        let value = self.vars.get(name)?;
        if let VarValue::Known(text) = value {
            let left = &self.budget.substitution_left;
            match left.get().checked_sub(text.len()) {
                Some(rest) => left.set(rest),
                None => {
                    self.budget.substitution_exhausted.set(true);
                    return Some(VarValue::Unknown);
                }
            }
        }
        Some(value)
    }
}

fn env_cost(env: &[(String, String)]) -> usize {
    env.iter()
        .map(|(k, v)| k.len() + v.len() + ENV_ENTRY_COST)
        .fold(0, usize::saturating_add)
}

/// The ENV a base image sets in its own Dockerfile, where something knows
/// it (the images knowledge does; the model alone does not).
pub type ImageEnv<'a> = &'a dyn Fn(&ImageRef) -> Vec<(String, String)>;

/// Model the stages of `dockerfile` for a build with `options`.
pub fn build_model(dockerfile: &Dockerfile, options: &BuildOptions) -> BuildModel {
    build_model_with(dockerfile, options, &|_| Vec::new())
}

/// [`build_model`], with the ENV of known base images visible to RUN
/// scripts (`RUN if [ "${CUDA_VERSION:0:2}" = 12 ]` on `nvidia/cuda`).
pub fn build_model_with(
    dockerfile: &Dockerfile,
    options: &BuildOptions,
    image_env: ImageEnv<'_>,
) -> BuildModel {
    let escape = dockerfile.escape;
    let mut budget = Budget::new();
    let build_arg = |name: &str| -> Option<&str> {
        options
            .build_args
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };

    // The scope FROM lines see: automatic platform ARGs (a `--build-arg`
    // overrides them, as in BuildKit's `defaultArgs`), then global ARGs.
    let build_platform = Platform::host();
    let platform = options
        .platform
        .clone()
        .unwrap_or_else(|| build_platform.clone());
    let mut global_scope = VarScope::new();
    for (name, value) in automatic_args(&build_platform, &platform, options.target.as_deref()) {
        let value = build_arg(name).map_or(value, str::to_string);
        global_scope.set(name, Some(value));
    }
    let mut global_args = Vec::new();
    let first_from = dockerfile
        .instructions
        .iter()
        .position(|i| matches!(i.command, Command::From(_)))
        .unwrap_or(dockerfile.instructions.len());
    for instruction in dockerfile.instructions.iter().take(first_from) {
        if let Command::Arg(decls) = &instruction.command {
            for decl in decls {
                let value = match (build_arg(&decl.name), &decl.default) {
                    (Some(v), _) => Some(v.to_string()),
                    (None, Some(default)) => {
                        let e = expand_vars(default, &budget.charge(&global_scope), escape);
                        (!e.unresolved).then_some(e.text)
                    }
                    // `ARG TARGETARCH` without a value keeps what the name
                    // already holds (BuildKit's `buildMetaArgs`).
                    (None, None) => match global_scope.get(&decl.name) {
                        Some(VarValue::Known(v)) => Some(v.to_string()),
                        _ => None,
                    },
                };
                budget.note_substitution(decl.span);
                global_scope.set(&decl.name, value.clone());
                global_args.push(ResolvedArg {
                    name: decl.name.clone(),
                    value,
                    span: decl.span,
                });
            }
        }
    }

    let from_indexes: Vec<usize> = dockerfile
        .instructions
        .iter()
        .enumerate()
        .filter(|(_, i)| matches!(i.command, Command::From(_)))
        .map(|(n, _)| n)
        .collect();
    let names: Vec<Option<String>> = from_indexes
        .iter()
        .map(
            |&n| match dockerfile.instructions.get(n).map(|i| &i.command) {
                Some(Command::From(from)) => {
                    from.stage_name.as_ref().map(|w| w.text.to_lowercase())
                }
                _ => None,
            },
        )
        .collect();
    // The first stage of each name wins, as `position` over `names` would.
    let mut name_index: HashMap<&str, usize> = HashMap::new();
    for (index, name) in names.iter().enumerate() {
        if let Some(name) = name {
            name_index.entry(name.as_str()).or_insert(index);
        }
    }

    let mut stages: Vec<Stage> = Vec::with_capacity(from_indexes.len());
    for (index, &from_at) in from_indexes.iter().enumerate() {
        let end = from_indexes
            .get(index + 1)
            .copied()
            .unwrap_or(dockerfile.instructions.len());
        let Some(Command::From(from)) = dockerfile.instructions.get(from_at).map(|i| &i.command)
        else {
            continue;
        };
        let context = StageContext {
            dockerfile,
            options,
            global_scope: &global_scope,
            names: &names,
            name_index: &name_index,
            stage_count: from_indexes.len(),
            image_env,
        };
        let stage = context.stage(index, from_at..end, from, &stages, &mut budget);
        stages.push(stage);
    }

    let target = match &options.target {
        Some(wanted) => {
            let wanted = wanted.to_lowercase();
            names
                .iter()
                .position(|n| n.as_deref() == Some(wanted.as_str()))
        }
        None => stages.len().checked_sub(1),
    };
    BuildModel {
        global_args,
        stages,
        target,
        target_requested: options.target.is_some(),
        platform,
        limits_hit: budget.limits,
    }
}

/// What every stage's modelling needs to see.
struct StageContext<'a> {
    dockerfile: &'a Dockerfile,
    options: &'a BuildOptions,
    global_scope: &'a VarScope,
    /// Lower-cased stage names, by stage index.
    names: &'a [Option<String>],
    /// Lower-cased stage name to the first stage of that name.
    name_index: &'a HashMap<&'a str, usize>,
    stage_count: usize,
    image_env: ImageEnv<'a>,
}

impl StageContext<'_> {
    fn build_arg(&self, name: &str) -> Option<&str> {
        self.options
            .build_args
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn stage_named(&self, name: &str) -> Option<usize> {
        self.name_index.get(name.to_lowercase().as_str()).copied()
    }

    fn stage(
        &self,
        index: usize,
        instructions: std::ops::Range<usize>,
        from: &FromCommand,
        earlier: &[Stage],
        budget: &mut Budget,
    ) -> Stage {
        let escape = self.dockerfile.escape;
        let from_span = self
            .dockerfile
            .instructions
            .get(instructions.start)
            .map_or(from.image.span, |i| i.span);
        let global = budget.charge(self.global_scope);
        let image = expand_word(&from.image.text, &global, escape);
        let platform = from
            .platform
            .as_deref()
            .map(|p| expand_word(p, &global, escape));
        budget.note_substitution(from_span);
        let mut undefined_args: Vec<String> = Vec::new();
        for name in image
            .unset
            .iter()
            .chain(platform.iter().flat_map(|p| p.unset.iter()))
        {
            if !undefined_args.contains(name) {
                undefined_args.push(name.clone());
            }
        }

        let mut dependencies = Vec::new();
        let base = if image.unresolved || image.error.is_some() {
            BaseImage::Unresolved
        } else if image.text.eq_ignore_ascii_case("scratch") {
            BaseImage::Scratch
        } else if let Some(parent) = self.stage_named(&image.text).filter(|&s| s < index) {
            dependencies.push(StageDependency {
                kind: DependencyKind::From,
                instruction: instructions.start,
                reference: image.text.clone(),
                span: from.image.span,
                target: DependencyTarget::Stage(parent),
            });
            BaseImage::Stage(parent)
        } else {
            // An invalid reference cannot be pulled; there is no better
            // description of it than "not resolved to an image".
            ImageRef::parse(&image.text).map_or(BaseImage::Unresolved, BaseImage::Image)
        };

        // ENV is inherited from a parent stage; ARGs never are.
        let mut env = VarScope::new();
        if let BaseImage::Stage(parent) = base {
            if let Some(p) = earlier.get(parent) {
                if budget.take_env(env_cost(&p.env)) {
                    env = scope_of(&p.env);
                } else if !budget.inheritance_reported {
                    budget.inheritance_reported = true;
                    budget.limits.push(ModelLimit {
                        span: from_span,
                        message: format!(
                            "the ENV this stage inherits from stage `{}` is not modelled, nor in \
                             later stages past this point: the stages' environments exceed {} MiB \
                             in all",
                            image.text,
                            ENV_BUDGET_BYTES >> 20
                        ),
                    });
                }
            }
        }
        // The base image's own ENV, below the stage's: RUN sees it (ENV
        // shadows an ARG of the same name, the image's included).
        let image_env = match &base {
            BaseImage::Image(image) => (self.image_env)(image),
            BaseImage::Stage(parent) => earlier
                .get(*parent)
                .map(|p| p.image_env.clone())
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let image_scope = scope_of(&image_env);
        let mut args = VarScope::new();
        let mut runs = Vec::new();
        let instruction_list = self
            .dockerfile
            .instructions
            .get(instructions.clone())
            .unwrap_or_default();
        for (offset, instruction) in instruction_list.iter().enumerate() {
            let at = instructions.start + offset;
            // ENV shadows ARG of the same name (Dockerfile reference, "Using ARG variables").
            match &instruction.command {
                Command::Arg(decls) => {
                    for decl in decls {
                        let value = self.stage_arg(decl, &budget.charge(&Layered(&env, &args)));
                        args.set(&decl.name, value);
                    }
                }
                Command::Env(pairs) => {
                    for pair in pairs {
                        let vars = Layered(&env, &args);
                        let value = expand_vars(&pair.value, &budget.charge(&vars), escape).text;
                        // Own ENV is bounded by the file and the substitution
                        // budget; it is counted so that inheriting it is too.
                        budget.env_left = budget
                            .env_left
                            .saturating_sub(pair.key.len() + value.len() + ENV_ENTRY_COST);
                        env.set(&pair.key, Some(value));
                    }
                }
                Command::Copy(copy) | Command::Add(copy) => {
                    if let Some(dependency) = self.copy_dependency(copy, at) {
                        dependencies.push(dependency);
                    }
                }
                Command::Run(run) => {
                    for mount in &run.mounts {
                        if let Some(from) = &mount.from {
                            dependencies.push(self.mount_dependency(from, mount.span, at));
                        }
                    }
                    let below = Layered(&image_scope, &args);
                    let vars = Layered(&env, &below);
                    runs.push(self.run_step(instruction, at, &budget.charge(&vars)));
                }
                _ => {}
            }
            budget.note_substitution(instruction.span);
        }

        Stage {
            index,
            name: self.names.get(index).cloned().flatten(),
            from_instruction: instructions.start,
            instructions,
            base_text: image.text,
            base_span: from.image.span,
            root: match base {
                BaseImage::Stage(parent) => earlier.get(parent).map_or(index, |p| p.root),
                _ => index,
            },
            base,
            undefined_args,
            platform: platform.map(|p| p.text),
            dependencies,
            env_positions: env
                .entries()
                .iter()
                .enumerate()
                .map(|(position, (k, _))| (k.clone(), position))
                .collect(),
            env: env
                .entries()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone().unwrap_or_default()))
                .collect(),
            args: args.entries().to_vec(),
            image_env,
            runs,
        }
    }

    /// An `ARG` inside a stage: the `--build-arg`, else its default, else
    /// the global ARG of that name (BuildKit's `dispatchArg`).
    fn stage_arg(&self, decl: &ArgDecl, vars: &dyn Vars) -> Option<String> {
        if let Some(value) = self.build_arg(&decl.name) {
            return Some(value.to_string());
        }
        match &decl.default {
            Some(default) => {
                let e = expand_vars(default, vars, self.dockerfile.escape);
                (!e.unresolved).then_some(e.text)
            }
            None => self
                .global_scope
                .entries()
                .iter()
                .find(|(name, _)| *name == decl.name)
                .and_then(|(_, value)| value.clone()),
        }
    }

    fn run_step(&self, instruction: &Instruction, at: usize, vars: &dyn Vars) -> RunStep {
        let Command::Run(run) = &instruction.command else {
            return RunStep {
                instruction: at,
                commands: Vec::new(),
                cache_mount_targets: Vec::new(),
                installs: Vec::new(),
            };
        };
        let commands = split_run(instruction, run, vars);
        RunStep {
            instruction: at,
            installs: package_installs(&commands),
            commands,
            cache_mount_targets: run
                .mounts
                .iter()
                .filter(|m| m.kind.eq_ignore_ascii_case("cache"))
                .filter_map(|m| m.target.as_deref())
                .map(|t| expand_vars(t, vars, self.dockerfile.escape).text)
                .collect(),
        }
    }

    /// `COPY --from=`: a stage name or index, else an image or named
    /// context (BuildKit does not expand variables here).
    fn copy_dependency(&self, copy: &CopyCommand, at: usize) -> Option<StageDependency> {
        let from = copy.from.as_ref()?;
        let text = from.text.as_str();
        let target = if text.contains('$') {
            DependencyTarget::Unresolved
        } else if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
            match text.parse::<usize>() {
                Ok(n) if n < self.stage_count => DependencyTarget::Stage(n),
                _ => DependencyTarget::Invalid,
            }
        } else {
            self.named_target(text)
        };
        Some(StageDependency {
            kind: DependencyKind::Copy,
            instruction: at,
            reference: text.to_string(),
            span: from.span,
            target,
        })
    }

    /// `RUN --mount=from=`: BuildKit looks the value up by stage name only
    /// (`detectRunMount`); a number names an image, not a stage index.
    fn mount_dependency(&self, from: &str, span: Span, at: usize) -> StageDependency {
        let target = if from.contains('$') {
            DependencyTarget::Unresolved
        } else {
            self.named_target(from)
        };
        StageDependency {
            kind: DependencyKind::Mount,
            instruction: at,
            reference: from.to_string(),
            span,
            target,
        }
    }

    fn named_target(&self, text: &str) -> DependencyTarget {
        if let Some(stage) = self.stage_named(text) {
            DependencyTarget::Stage(stage)
        } else {
            ImageRef::parse(text).map_or(DependencyTarget::Invalid, DependencyTarget::Image)
        }
    }
}

fn scope_of(env: &[(String, String)]) -> VarScope {
    let mut scope = VarScope::new();
    for (k, v) in env {
        scope.set(k, Some(v.clone()));
    }
    scope
}
