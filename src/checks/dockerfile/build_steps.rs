//! What the build-time rules (CU105, CU106, CU108) need to know about a RUN:
//! whether it is a heavy CUDA/ML install, a dependency install that reads
//! only a lock or requirements file, or a long CUDA compile, and whether a
//! cache keeps that compile. The package lists and the signs of a compile
//! are data (`rules/build.toml`); this module only reads the RUN's commands.

use crate::checks::DockerfileContext;
use crate::dockerfile::ast::{Command, Word};
use crate::dockerfile::model::{Reach, RunStep, ShellCommand, Stage};
use crate::dockerfile::packages::{PackageInstall, PackageManager};
use crate::knowledge::build::{BuildFacts, HeavyPackages};
use crate::paths::basename;
use crate::source::Span;

/// The stages the build runs: the target and everything it needs.
pub fn built_stages<'m>(ctx: &DockerfileContext<'m>) -> Vec<&'m Stage> {
    let Some(target) = ctx.model.target else {
        return Vec::new();
    };
    ctx.model
        .reachable_stages(target)
        .into_iter()
        .filter_map(|index| ctx.model.stages.get(index))
        .collect()
}

fn family(manager: PackageManager) -> &'static str {
    if manager.is_python() {
        "python"
    } else if manager.is_conda() {
        "conda"
    } else {
        "system"
    }
}

/// A heavy package a RUN installs.
pub struct HeavyInstall<'a> {
    /// The package as written (`torch==2.5.1`).
    pub package: String,
    pub span: Span,
    pub facts: &'a HeavyPackages,
}

/// The first heavy package a RUN installs by name (not from a path), in a
/// command the build runs.
pub fn heavy_install<'f>(step: &RunStep, facts: &'f BuildFacts) -> Option<HeavyInstall<'f>> {
    step.installs
        .iter()
        .filter(|install| runs(step, install))
        .flat_map(|install| {
            install
                .packages
                .iter()
                .map(move |package| (family(install.manager), package))
        })
        .find_map(|(family, package)| {
            let name = package.distribution()?;
            let facts = facts.heavy(family, name)?;
            Some(HeavyInstall {
                package: package.word.text.clone(),
                span: package.word.span,
                facts,
            })
        })
}

fn runs(step: &RunStep, install: &PackageInstall) -> bool {
    step.commands
        .get(install.command)
        .is_none_or(|command| command.reach != Reach::Skipped)
}

/// A dependency install that needs only a lock or requirements file:
/// `pip install -r requirements.txt`, `conda env create -f env.yml`,
/// `uv sync`, `poetry install`. Returns the command's span and text.
pub fn dependency_install(
    ctx: &DockerfileContext<'_>,
    step: &RunStep,
    facts: &BuildFacts,
) -> Option<(Span, String)> {
    let text = |span: Span| {
        ctx.source
            .text
            .get(span.start..span.end)
            .unwrap_or("")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    for install in step.installs.iter().filter(|i| runs(step, i)) {
        if (install.manager.is_python() || install.manager.is_conda())
            && !install.requirement_files.is_empty()
        {
            return Some((install.span, text(install.span)));
        }
    }
    for command in step.commands.iter().filter(|c| c.reach != Reach::Skipped) {
        let words = command.program_words();
        let head: Vec<&str> = words.iter().take(3).map(|w| w.text.as_str()).collect();
        let hit = facts.dependency_installs.commands.iter().any(|known| {
            let known: Vec<&str> = known.split_whitespace().collect();
            head.len() >= known.len()
                && head
                    .iter()
                    .zip(&known)
                    .all(|(word, want)| basename(word) == *want)
        });
        if hit {
            return Some((command.span, text(command.span)));
        }
    }
    None
}

/// A long CUDA compile a RUN runs.
pub struct Compile {
    /// The command that builds.
    pub span: Span,
    /// What it builds, for the message (`flash-attention`, `a source build with MAX_JOBS`).
    pub what: String,
}

/// The first long CUDA compile of `step` (instruction `index` of `stage`):
/// a build from source (`pip install` of a path or VCS URL, `pip wheel`,
/// `setup.py install|develop|bdist_wheel|build_ext`, `cmake --build`, or a
/// heavy package with `--no-binary` or a force-build variable) of one of
/// the known heavy projects, or with a variable only CUDA extension builds
/// read (`MAX_JOBS`).
pub fn long_compile(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    step: &RunStep,
    facts: &BuildFacts,
) -> Option<Compile> {
    let compiles = &facts.compiles;
    // Most RUNs compile nothing: only a build from source, or an install of
    // a known heavy project, can be a long compile (the loop below skips
    // every other command). Only such a RUN needs the stage's ENV, a walk of
    // every instruction before it, which per RUN made the rule quadratic.
    let may_compile = step.commands.iter().any(|command| {
        command.reach != Reach::Skipped
            && source_build_target(command.program_words()).is_some_and(|build| {
                build.from_source
                    || compiles
                        .projects
                        .iter()
                        .any(|project| names_project(&build.target, project))
            })
    });
    if !may_compile {
        return None;
    }
    let stage_env = env_before(ctx, stage, step.instruction);
    let set_in = |vars: &[String], pairs: &[(String, String)]| -> Option<String> {
        vars.iter()
            .find(|var| pairs.iter().any(|(k, _)| k == *var))
            .cloned()
    };
    // `VLLM_TARGET_DEVICE=empty`, `VLLM_USE_PRECOMPILED=1`: nothing is compiled.
    let turned_off = |pairs: &[(String, String)]| {
        compiles.no_compile_env.iter().any(|setting| {
            setting.split_once('=').is_some_and(|(key, value)| {
                pairs
                    .iter()
                    .any(|(k, v)| k == key && v.eq_ignore_ascii_case(value))
            })
        })
    };
    if turned_off(&stage_env) {
        return None;
    }
    for (position, command) in step.commands.iter().enumerate() {
        let words = command.program_words();
        if command.reach == Reach::Skipped || turned_off(&command.assignments) {
            continue;
        }
        let Some(build) = source_build_target(words) else {
            continue;
        };
        let forced = words.iter().any(|w| {
            compiles
                .force_build_options
                .iter()
                .any(|o| w.text.starts_with(o.as_str()))
        }) || set_in(&compiles.force_env, &command.assignments).is_some()
            || set_in(&compiles.force_env, &stage_env).is_some();
        // A variable only CUDA extension builds read, on the command itself;
        // in the stage's ENV, one naming the GPU code to build counts for a
        // build that shows it builds a torch extension (`setup.py`, or a
        // path with `--no-build-isolation`). A parallelism setting there
        // (`MAX_JOBS`) says nothing about this build.
        let on_command = set_in(&compiles.compile_env, &command.assignments);
        let in_stage =
            set_in(&compiles.stage_compile_env, &stage_env).filter(|_| build.extension_build);
        let compile_var = on_command.clone().or(in_stage);
        // The directory matters only for a build of a path (`pip install .`).
        let cwd = cwd_before(ctx, stage, step, position).filter(|_| build.from_source);
        let built = [Some(build.target.as_str()), cwd.as_deref()];
        let project = compiles.projects.iter().find(|project| {
            built
                .iter()
                .flatten()
                .any(|text| names_project(text, project))
        });
        // detectron2 and mmcv compile their CUDA ops only when asked
        // (`FORCE_CUDA=1`) or when they see a GPU, which `docker build`
        // never shows: otherwise their build is C++ only.
        let asked = || {
            let settings = settings_for(ctx, stage, step, position);
            facts
                .torch_extensions
                .force_env
                .iter()
                .any(|setting| holds(&settings, setting))
        };
        if project.is_some_and(|p| compiles.cuda_when_forced.contains(p)) && !asked() {
            continue;
        }
        let what = if build.from_source {
            match (project, &compile_var) {
                (Some(project), _) => format!("`{project}` from source"),
                (None, Some(var)) => format!("a CUDA extension from source (`{var}` set)"),
                (None, None) if forced => format!("`{}` from source", build.target),
                (None, None) => continue,
            }
        } else {
            // A package named on an index may come as a prebuilt wheel
            // (PyPI has xformers wheels; flash-attn's setup fetches one
            // when it matches): it compiles when forced, or when the
            // command sets a build variable for it.
            match project {
                Some(project) if forced || on_command.is_some() => {
                    format!("`{project}` from source")
                }
                _ => continue,
            }
        };
        return Some(Compile {
            span: command.span,
            what,
        });
    }
    None
}

/// A build from source that one command of a RUN runs.
pub struct SourceBuild<'s> {
    /// Position of the command in the step's commands.
    pub position: usize,
    pub command: &'s ShellCommand,
    /// What it builds: a path, URL or `.`.
    pub target: String,
    /// The directory it runs in (`cd`, `WORKDIR`), where known.
    pub cwd: Option<String>,
}

/// The builds from source (`pip install` of a path or URL, `pip wheel`,
/// `setup.py install|develop|bdist_wheel|build_ext|build`, `python -m
/// build`) that `step` (instruction `step.instruction` of `stage`) runs, in
/// order; commands the build skips are left out.
pub fn source_builds<'s>(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    step: &'s RunStep,
) -> Vec<SourceBuild<'s>> {
    let mut out = Vec::new();
    for (position, command) in step.commands.iter().enumerate() {
        if command.reach == Reach::Skipped {
            continue;
        }
        if let Some((target, true, _)) = build_target(command.program_words()) {
            out.push(SourceBuild {
                position,
                command,
                target,
                cwd: cwd_before(ctx, stage, step, position),
            });
        }
    }
    out
}

/// What a build command builds.
pub struct Build {
    /// A path, URL or the current directory `.`, or a package name.
    pub target: String,
    /// From a path or URL (true), or a name on an index (false: built only
    /// when no wheel is used).
    pub from_source: bool,
    /// `setup.py …`, or a pip build of a path with `--no-build-isolation`:
    /// the shape of a torch C++/CUDA extension build.
    pub extension_build: bool,
}

/// What a build command builds, or `None` when it builds nothing.
pub fn source_build_target(words: &[Word]) -> Option<Build> {
    let no_isolation = words.iter().any(|w| w.text == "--no-build-isolation");
    let (target, from_source, setup) = build_target(words)?;
    Some(Build {
        extension_build: setup || (from_source && no_isolation),
        target,
        from_source,
    })
}

/// `(target, from_source, setup_py)` of a build command.
fn build_target(words: &[Word]) -> Option<(String, bool, bool)> {
    // Asked of every command by several rules: the words are read in
    // place, not copied into lists first.
    let text = |at: usize| words.get(at).map(|w| w.text.as_str());
    let program = basename(text(0)?);
    let is_python = program.starts_with("python");
    let tool = match (is_python, text(1), text(2)) {
        (true, Some("-m"), Some(module)) => module,
        _ => program,
    };
    // pip and `uv pip` in every form the package reader knows.
    if let Some((sub, words)) = crate::dockerfile::packages::pip_subcommand(words) {
        if !matches!(sub, "install" | "wheel") {
            return None;
        }
        // Operands only: the value of `-r FILE`, `-c FILE`, `-i URL` … is not built.
        let mut skip = false;
        let operands = words.iter().map(|w| w.text.as_str()).filter(move |word| {
            if std::mem::take(&mut skip) {
                return false;
            }
            if crate::dockerfile::packages::PIP_VALUE_OPTIONS.contains(word) {
                skip = true;
                false
            } else {
                *word != "-e"
                    && *word != "--editable"
                    && (!word.starts_with('-') || word.starts_with("-e"))
            }
        });
        return operands
            .clone()
            .map(|w| w.trim_start_matches("-e"))
            .find(|w| is_source_location(w))
            .map(|w| (w.to_string(), true, false))
            .or_else(|| {
                // `--no-binary :all: flash-attn`, `FLASH_ATTENTION_FORCE_BUILD=TRUE pip install flash-attn`
                operands
                    .into_iter()
                    .find(|w| !w.starts_with('-') && !w.starts_with(':') && !w.ends_with(".whl"))
                    .map(|w| (w.to_string(), false, false))
            });
    }
    match tool {
        "build" if is_python => Some((".".into(), true, false)),
        _ if is_python && text(1).is_some_and(|a| a.ends_with("setup.py")) => {
            let verb = text(2)?;
            matches!(
                verb,
                "install" | "develop" | "bdist_wheel" | "build_ext" | "build"
            )
            .then(|| {
                let dir = text(1)?.trim_end_matches("setup.py");
                Some((
                    if dir.is_empty() {
                        ".".into()
                    } else {
                        dir.to_string()
                    },
                    true,
                    true,
                ))
            })
            .flatten()
        }
        "cmake" if text(1) == Some("--build") => text(2).map(|d| (d.to_string(), true, false)),
        _ => None,
    }
}

/// A path, directory or VCS URL (not a wheel file): pip builds it.
fn is_source_location(word: &str) -> bool {
    if word.ends_with(".whl") {
        return false;
    }
    word == "."
        || word.starts_with("./")
        || word.starts_with('/')
        || word.starts_with("../")
        || word.starts_with("git+")
        || (word.contains("://") && (word.ends_with(".zip") || word.ends_with(".tar.gz")))
}

/// `text` (a path or URL) names `project` as one of its components.
pub fn names_project(text: &str, project: &str) -> bool {
    // Case-blind comparisons rather than lower-cased copies: every word of
    // every RUN is asked about every known project.
    let (text_bytes, project_bytes) = (text.as_bytes(), project.as_bytes());
    // Most texts hold no such run of letters at all: told apart before
    // splitting them into components.
    if let Some(&first) = project_bytes.first() {
        // Only where the first letter stands (either case) can the rest follow.
        let (lower, upper) = (first.to_ascii_lowercase(), first.to_ascii_uppercase());
        let found = memchr::memchr2_iter(lower, upper, text_bytes).any(|at| {
            text_bytes
                .get(at..at + project_bytes.len())
                .is_some_and(|window| window.eq_ignore_ascii_case(project_bytes))
        });
        if !found {
            return false;
        }
    }
    text.split(['/', '@', '#', '='])
        .map(trim_git_suffixes)
        .any(|part| {
            part.split('[')
                .next()
                .is_some_and(|name| name.eq_ignore_ascii_case(project))
        })
}

/// `part` without its `.git` suffixes (any case): `repo.git` → `repo`.
fn trim_git_suffixes(mut part: &str) -> &str {
    const SUFFIX: &[u8] = b".git";
    while let Some(at) = part.len().checked_sub(SUFFIX.len()) {
        if !part.as_bytes()[at..].eq_ignore_ascii_case(SUFFIX) {
            break;
        }
        // The suffix matched ASCII, so `at` is a character boundary.
        part = &part[..at];
    }
    part
}

/// Whether the compile in `step` is cached: a cache mount on the RUN, or a
/// compiler cache named in it or in its stage's environment.
pub fn compile_cached(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    step: &RunStep,
    facts: &BuildFacts,
) -> bool {
    if !step.cache_mount_targets.is_empty() {
        return true;
    }
    let caches = &facts.compiles.compiler_caches;
    let in_run = step.commands.iter().any(|command| {
        command
            .words
            .iter()
            .any(|w| caches.iter().any(|c| w.text.contains(c.as_str())))
            || command
                .assignments
                .iter()
                .any(|(k, v)| caches.iter().any(|c| k == c || v.contains(c.as_str())))
    });
    in_run
        || env_before(ctx, stage, step.instruction)
            .iter()
            .any(|(k, v)| caches.iter().any(|c| k == c || v.contains(c.as_str())))
}

/// ENV keys and values the stage sets before instruction `index` (its own
/// and its parents' as the model resolved them at the end are not enough:
/// an ENV after the RUN does not reach it).
pub fn env_before(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    index: usize,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut chain = vec![stage];
    let mut current = stage;
    while let crate::dockerfile::model::BaseImage::Stage(parent) = current.base {
        let Some(parent) = ctx.model.stages.get(parent) else {
            break;
        };
        if chain.iter().any(|s| std::ptr::eq(*s, parent)) {
            break;
        }
        chain.push(parent);
        current = parent;
    }
    chain.reverse();
    for s in chain {
        for at in s.instructions.clone() {
            if std::ptr::eq(s, stage) && at >= index {
                break;
            }
            if let Some(Command::Env(pairs)) =
                ctx.dockerfile.instructions.get(at).map(|i| &i.command)
            {
                out.extend(pairs.iter().map(|kv| (kv.key.clone(), kv.value.clone())));
            }
        }
    }
    out
}

/// The last WORKDIR of the stage before instruction `index`.
/// The directory command `position` of `step` runs in, as written: the
/// RUN's last `cd DIR` before it, else the stage's WORKDIR.
pub fn cwd_before(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    step: &RunStep,
    position: usize,
) -> Option<String> {
    step.commands
        .iter()
        .take(position)
        .rev()
        .find_map(|command| {
            let words = command.program_words();
            if basename(&words.first()?.text) != "cd" {
                return None;
            }
            Some(words.get(1)?.text.clone())
        })
        .or_else(|| workdir_before(ctx, stage, step.instruction))
}

pub fn workdir_before(ctx: &DockerfileContext<'_>, stage: &Stage, index: usize) -> Option<String> {
    stage
        .instructions
        .clone()
        .take_while(|&at| at < index)
        .filter_map(|at| match &ctx.dockerfile.instructions.get(at)?.command {
            Command::Workdir(word) => Some(word.text.clone()),
            _ => None,
        })
        .last()
}

/// `NAME=VALUE` `setting` holds in `pairs`.
pub fn holds(pairs: &[(String, String)], setting: &str) -> bool {
    setting.split_once('=').is_some_and(|(key, value)| {
        pairs
            .iter()
            .any(|(k, v)| k == key && v.trim().eq_ignore_ascii_case(value))
    })
}

/// The settings in force for command `at` of `step`: the stage's ENV before
/// the RUN, its ARGs, `export`/`VAR=` words of earlier commands of the RUN,
/// and the command's own `VAR=… cmd` prefixes.
pub fn settings_for(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    step: &RunStep,
    at: usize,
) -> Vec<(String, String)> {
    let mut pairs = env_before(ctx, stage, step.instruction);
    pairs.extend(
        stage
            .args
            .iter()
            // A declared ARG without a value: the build is meant to pass it.
            .map(|(k, v)| (k.clone(), v.clone().unwrap_or_else(|| "$".into()))),
    );
    for command in step.commands.iter().take(at) {
        if command.reach == Reach::Skipped {
            continue;
        }
        for word in &command.words {
            if let Some((key, value)) = word.text.split_once('=') {
                if !key.is_empty() && !key.starts_with('-') {
                    pairs.push((key.to_string(), value.to_string()));
                }
            }
        }
    }
    if let Some(command) = step.commands.get(at) {
        pairs.extend(command.assignments.iter().cloned());
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projects_are_named_by_path_or_url_components() {
        assert!(names_project(
            "git+https://github.com/Dao-AILab/flash-attention.git@v2.7.4",
            "flash-attention"
        ));
        assert!(names_project("/workspace/xformers", "xformers"));
        assert!(!names_project(
            "/workspace/my-xformers-fork-notes",
            "xformers"
        ));
        assert!(!names_project(".", "apex"));
    }

    #[test]
    fn wheels_are_not_source_builds() {
        assert!(!is_source_location(
            "./flash_attn-2.7.4-cp310-linux_x86_64.whl"
        ));
        assert!(is_source_location("git+https://github.com/NVIDIA/apex"));
        assert!(is_source_location("."));
    }
}
