//! The build model: stages, their base images after ARG expansion, the
//! dependency graph between stages, the effective environment, and RUN
//! scripts split into shell commands. Rules read this, never raw text.

use std::collections::HashMap;

use crate::dockerfile::ast::Word;
use crate::dockerfile::platform::Platform;
use crate::source::Span;

/// What the user passes to the build, as `docker build` would get it.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// `--build-arg K=V` overrides, in order.
    pub build_args: Vec<(String, String)>,
    /// `--target NAME`; the last stage when `None`.
    pub target: Option<String>,
    /// `--platform`: the target platform; the host's when `None`.
    pub platform: Option<Platform>,
}

/// The whole build.
#[derive(Clone, Debug, Default)]
pub struct BuildModel {
    /// ARGs declared before the first FROM, with their values after
    /// `--build-arg` overrides (None: declared without a value).
    pub global_args: Vec<ResolvedArg>,
    pub stages: Vec<Stage>,
    /// Index of the stage the build produces (`--target`, else the last).
    /// `None` when there is no stage or `--target` names no stage.
    pub target: Option<usize>,
    /// Whether the target was asked for by `--target` (not just the last stage).
    pub target_requested: bool,
    /// The platform the build targets (`--platform`, else the host's): what
    /// `TARGETARCH` and friends expand to.
    pub platform: Platform,
    /// Where the model stopped following the file because a hostile or
    /// pathological shape exceeded its work budget (see `stages.rs`); what
    /// rules see there is incomplete. Empty for any ordinary file.
    pub limits_hit: Vec<ModelLimit>,
}

/// One place where the model gave up part of its work to stay linear.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelLimit {
    /// The instruction (or its FROM) where the budget ran out.
    pub span: Span,
    /// What was left out, for the user.
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedArg {
    pub name: String,
    pub value: Option<String>,
    /// The ARG instruction's declaration span.
    pub span: Span,
}

/// One build stage: a FROM and the instructions up to the next FROM.
#[derive(Clone, Debug)]
pub struct Stage {
    pub index: usize,
    /// `AS name`, lower-cased.
    pub name: Option<String>,
    /// Index of the FROM in `Dockerfile::instructions`.
    pub from_instruction: usize,
    /// Indexes of this stage's instructions (FROM included).
    pub instructions: std::ops::Range<usize>,
    /// The FROM image text after ARG expansion.
    pub base_text: String,
    /// Where the image word is in the file.
    pub base_span: Span,
    pub base: BaseImage,
    /// The first stage of this stage's `FROM <stage>` chain (its own index
    /// when it is built on an image, `scratch` or something unresolved), so
    /// that finding a stage's root image is not a walk per stage.
    pub root: usize,
    /// `${VAR}` names in FROM (image or `--platform`) that no global ARG declares.
    pub undefined_args: Vec<String>,
    pub platform: Option<String>,
    /// Direct dependencies on other stages, images or contexts.
    pub dependencies: Vec<StageDependency>,
    /// ENV in force at the end of the stage, inherited from a parent stage
    /// (`FROM <stage>`) included; values expanded where known. Order of
    /// first definition.
    pub env: Vec<(String, String)>,
    /// Where each name of `env` is in it, for [`Stage::env_value`]: rules
    /// ask per RUN, and a stage may set thousands of variables.
    pub(crate) env_positions: HashMap<String, usize>,
    /// The stage's own ARGs at its end, with their values after
    /// `--build-arg` overrides, defaults and global ARGs (None: no value).
    /// Order of first declaration; ARGs are not inherited from parents.
    pub args: Vec<(String, Option<String>)>,
    /// ENV the root image sets in its own Dockerfile, as the caller of
    /// [`crate::dockerfile::build_model_with`] knows it. RUN scripts see it
    /// below the stage's ENV; it is not part of [`Stage::env`].
    pub image_env: Vec<(String, String)>,
    /// RUN instructions of the stage, in order.
    pub runs: Vec<RunStep>,
}

/// What a FROM builds on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BaseImage {
    /// `FROM scratch`.
    Scratch,
    /// An earlier stage, by index.
    Stage(usize),
    /// An image reference.
    Image(ImageRef),
    /// The reference still holds variables that could not be resolved.
    Unresolved,
}

/// A parsed image reference `[registry/]repository[:tag][@digest]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ImageRef {
    /// As written (after expansion).
    pub text: String,
    /// Registry host when the reference names one (`nvcr.io`), else None
    /// (Docker Hub).
    pub registry: Option<String>,
    /// Repository path, without registry and without Docker Hub's implicit
    /// `library/` (`nvidia/cuda`, `ubuntu`, `nvidia/pytorch`).
    pub repository: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
}

/// How a stage uses another stage, image or build context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageDependency {
    pub kind: DependencyKind,
    /// Index of the instruction that creates the dependency.
    pub instruction: usize,
    /// The reference as written (after expansion).
    pub reference: String,
    /// The span of the reference in the file (the flag or word).
    pub span: Span,
    pub target: DependencyTarget,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DependencyKind {
    /// `FROM <stage>`.
    From,
    /// `COPY --from=` / `ADD --from=`.
    Copy,
    /// `RUN --mount=from=`.
    Mount,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DependencyTarget {
    Stage(usize),
    /// A string that parses as an image reference (and is not a stage).
    Image(ImageRef),
    /// Contains unresolved variables.
    Unresolved,
    /// Neither a stage nor a plausible image reference (a typo, e.g.).
    Invalid,
}

/// One RUN instruction with its script split into simple commands.
#[derive(Clone, Debug)]
pub struct RunStep {
    /// Index in `Dockerfile::instructions`.
    pub instruction: usize,
    /// Simple commands of the shell script and of every heredoc body that
    /// is run as a script, in order.
    pub commands: Vec<ShellCommand>,
    /// `RUN --mount=type=cache,target=…` targets.
    pub cache_mount_targets: Vec<String>,
    /// The package installs among `commands`, recognised once here so
    /// that no rule has to parse them again.
    pub installs: Vec<crate::dockerfile::packages::PackageInstall>,
}

/// One simple command (`apt-get install -y x`), split into words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellCommand {
    /// Words with quotes removed; `VAR=value` prefixes dropped into `assignments`.
    pub words: Vec<Word>,
    pub assignments: Vec<(String, String)>,
    /// Index in `words` of the program the command runs, past wrappers
    /// such as `sudo -u x`, `env A=1` and `nice -n 5`
    /// ([`crate::dockerfile::shell::command_start`]): found once when the
    /// script is split, since every rule asks for it.
    pub program: usize,
    /// From the first to the last word.
    pub span: Span,
    /// Whether the build runs it, as far as the shell `if`s and `case`s
    /// around it can be decided from the values the Dockerfile gives.
    pub reach: Reach,
}

impl ShellCommand {
    /// The words from the program on: the command without its wrappers.
    pub fn program_words(&self) -> &[Word] {
        self.words.get(self.program..).unwrap_or_default()
    }
}

/// Whether a command of a RUN script runs in the build the Dockerfile
/// describes (its ARG defaults and `--build-arg` values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reach {
    /// Outside every `if` and `case`, or in branches whose conditions are
    /// known to hold.
    #[default]
    Runs,
    /// In a branch the build does not take: `if [ "$IMAGE" = "…" ]` with
    /// another IMAGE, the `else` of a condition that holds.
    Skipped,
    /// In a branch whose condition depends on what is not known here (a
    /// command's status, a variable without a value, a `case`).
    Unknown,
}

impl Reach {
    /// The reach of a command in a branch of `self` (the enclosing reach).
    pub fn within(self, branch: Reach) -> Reach {
        match (self, branch) {
            (Reach::Skipped, _) | (_, Reach::Skipped) => Reach::Skipped,
            (Reach::Unknown, _) | (_, Reach::Unknown) => Reach::Unknown,
            (Reach::Runs, Reach::Runs) => Reach::Runs,
        }
    }
}

impl BuildModel {
    /// The stage the build produces.
    pub fn target_stage(&self) -> Option<&Stage> {
        self.stages.get(self.target?)
    }

    /// The stage called `name` (`AS name`, compared case-insensitively).
    pub fn stage_by_name(&self, name: &str) -> Option<&Stage> {
        let lower = name.to_lowercase();
        self.stages
            .iter()
            .find(|s| s.name.as_deref() == Some(lower.as_str()))
    }

    /// `stage` and the stages it is built `FROM`, up to the root: the
    /// first element is `stage` itself.
    pub fn ancestry(&self, stage: usize) -> Vec<usize> {
        let mut chain = Vec::new();
        let mut current = self.stages.get(stage);
        while let Some(s) = current {
            chain.push(s.index);
            current = match s.base {
                // A parent always comes earlier, which also rules out cycles.
                BaseImage::Stage(parent) if parent < s.index => self.stages.get(parent),
                _ => None,
            };
        }
        chain
    }

    /// Every stage `from` needs, directly or not, through FROM, COPY
    /// `--from` and RUN `--mount=from=`; `from` included, sorted.
    pub fn reachable_stages(&self, from: usize) -> Vec<usize> {
        let mut seen = vec![false; self.stages.len()];
        let mut queue = Vec::new();
        if from < seen.len() {
            seen[from] = true;
            queue.push(from);
        }
        while let Some(current) = queue.pop() {
            let Some(stage) = self.stages.get(current) else {
                continue;
            };
            for dependency in &stage.dependencies {
                if let DependencyTarget::Stage(next) = dependency.target {
                    if next < seen.len() && !seen[next] {
                        seen[next] = true;
                        queue.push(next);
                    }
                }
            }
        }
        (0..seen.len()).filter(|&i| seen[i]).collect()
    }

    /// Stages the target does not need (none when there is no target).
    pub fn unused_stages(&self) -> Vec<usize> {
        let Some(target) = self.target else {
            return Vec::new();
        };
        let used = self.reachable_stages(target);
        (0..self.stages.len())
            .filter(|i| used.binary_search(i).is_err())
            .collect()
    }

    /// The value of ENV `name` at the end of stage `stage`.
    pub fn env_value(&self, stage: usize, name: &str) -> Option<&str> {
        self.stages.get(stage)?.env_value(name)
    }
}

impl Stage {
    /// The value of ENV `name` at the end of this stage.
    pub fn env_value(&self, name: &str) -> Option<&str> {
        let position = *self.env_positions.get(name)?;
        self.env.get(position).map(|(_, v)| v.as_str())
    }

    /// The resolved value of the stage's own ARG `name`, if it has one.
    pub fn arg_value(&self, name: &str) -> Option<&str> {
        self.args
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.as_deref())
    }

    /// Dependencies on other stages, as stage indexes.
    pub fn stage_dependencies(&self) -> impl Iterator<Item = usize> + '_ {
        self.dependencies.iter().filter_map(|d| match d.target {
            DependencyTarget::Stage(s) => Some(s),
            _ => None,
        })
    }
}
