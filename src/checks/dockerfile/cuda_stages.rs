//! What the base-image rules (CU101–CU103, CU130–CU131) ask of a build
//! beyond the stage model: whether a stage builds native code (so it needs
//! a devel image), and every image reference the build pulls.

use crate::checks::dockerfile::support::stage_instructions;
use crate::checks::DockerfileContext;
use crate::dockerfile::arch_lists;
use crate::dockerfile::ast::{Command, ShellOrExec};
use crate::dockerfile::model::{
    BaseImage, DependencyKind, DependencyTarget, ImageRef, ShellCommand, Stage,
};
use crate::dockerfile::packages::{PackageInstall, RequestedPackage};
use crate::knowledge::images::{glob_matches, BuildSignals};
use crate::knowledge::packages::{PtxasUser, RuntimeCompiler};
use crate::paths::basename;
use crate::source::Span;

/// Whether the shipped image needs the toolkit's compiler or headers: one
/// of its stages builds native code, or a stage whose files it copies
/// installs a package that compiles at run time (a DeepSpeed env built
/// elsewhere still JIT-compiles its ops where it runs).
pub fn shipped_image_compiles(
    ctx: &DockerfileContext<'_>,
    shipped: &[&Stage],
    build_signals: &BuildSignals,
) -> bool {
    let signals = &Signals {
        build: build_signals,
        runtime_compilers: &ctx.knowledge.packages.runtime_compilers,
        evidence: Evidence::MayCompile,
    };
    if shipped
        .iter()
        .any(|stage| builds_native_code(ctx, stage, signals))
        || start_command_compiles(ctx, shipped, signals)
        || toolchain_serves_unseen_installs(shipped, signals)
    {
        return true;
    }
    let model = ctx.model;
    // Each stage is looked at once, however many copies lead to its chain:
    // walking the ancestry per copy would be quadratic.
    let mut seen = vec![false; model.stages.len()];
    let copied = shipped
        .iter()
        .flat_map(|stage| &stage.dependencies)
        .filter(|d| d.kind == DependencyKind::Copy)
        .filter_map(|d| match d.target {
            DependencyTarget::Stage(index) => Some(index),
            _ => None,
        });
    for index in copied {
        let mut current = model.stages.get(index);
        while let Some(stage) = current {
            match seen.get_mut(stage.index) {
                Some(visited) if !*visited => *visited = true,
                _ => break,
            }
            if installs_runtime_compiler(stage, signals) {
                return true;
            }
            current = match stage.base {
                BaseImage::Stage(parent) if parent < stage.index => model.stages.get(parent),
                _ => None,
            };
        }
    }
    false
}

/// Whether the shipped image installs a build toolchain (`build-essential`,
/// `g++`, `cmake`) and also installs packages out of sight: a requirements
/// file, or a lock file synced by uv, Poetry, Pipenv or PDM. The toolchain
/// is then there for one of those packages, an sdist or a checkout that
/// compiles as it installs. A toolchain with only visible installs compiles
/// nothing, and counts for nothing.
fn toolchain_serves_unseen_installs(shipped: &[&Stage], signals: &Signals<'_>) -> bool {
    let runs = || shipped.iter().flat_map(|stage| &stage.runs);
    let toolchain = runs()
        .flat_map(|run| &run.installs)
        .filter(|install| install.manager.is_system())
        .flat_map(|install| &install.packages)
        .any(|package| signals.system_packages.contains(&package.name));
    toolchain
        && runs().any(|run| {
            run.installs.iter().any(|install| {
                !install.manager.is_system() && !install.requirement_files.is_empty()
            }) || run.commands.iter().any(installs_from_lock_file)
        })
}

/// Project managers' subcommands that install the set of packages a project
/// file declares or locks (`uv run` syncs the project before it runs).
const LOCK_FILE_INSTALLS: &[(&str, &[&str])] = &[
    ("uv", &["sync", "run"]),
    ("poetry", &["install", "sync"]),
    ("pipenv", &["install", "sync"]),
    ("pdm", &["install", "sync"]),
];

fn installs_from_lock_file(command: &ShellCommand) -> bool {
    let words = command.program_words();
    let Some((program, rest)) = words.split_first() else {
        return false;
    };
    let program = basename(&program.text);
    let subcommand = rest.iter().find(|w| !w.text.starts_with('-'));
    LOCK_FILE_INSTALLS.iter().any(|(manager, subcommands)| {
        *manager == program && subcommand.is_some_and(|s| subcommands.contains(&s.text.as_str()))
    })
}

/// How much a rule must see before it takes a stage as compiling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evidence {
    /// Anything that may compile counts, a plain pip install of a local
    /// path, a VCS URL or an sdist included (its build may be pure Python,
    /// or may compile CUDA code). For rules where a wrong "builds nothing"
    /// is the costly mistake (CU101, CU103).
    MayCompile,
    /// Only a build that shows itself: a compiler or build command, a
    /// forced source build (`--no-build-isolation`, `--no-binary`), a
    /// package known to ship no wheels, a run-time compiler. For rules whose
    /// finding says a build reads a setting and fails (CU132): a plain
    /// install of a project is most often pure Python.
    Shown,
}

/// What counts as compiling: the images knowledge's build signals and the
/// packages knowledge's run-time compilers, at a rule's level of evidence.
struct Signals<'k> {
    build: &'k BuildSignals,
    runtime_compilers: &'k [RuntimeCompiler],
    evidence: Evidence,
}

impl std::ops::Deref for Signals<'_> {
    type Target = BuildSignals;
    fn deref(&self) -> &BuildSignals {
        self.build
    }
}

/// Whether the shipped image's CMD or ENTRYPOINT runs a compiler or a
/// build (`nvcc`, `make`, `python setup.py`, `pip install -e .`): then it
/// compiles where it runs and needs the devel parts.
fn start_command_compiles(
    ctx: &DockerfileContext<'_>,
    shipped: &[&Stage],
    signals: &Signals<'_>,
) -> bool {
    shipped
        .iter()
        .flat_map(|stage| stage_instructions(ctx, stage))
        .filter_map(|instruction| match &instruction.command {
            Command::Cmd(line) | Command::Entrypoint(line) => Some(line),
            _ => None,
        })
        .any(|line| {
            let words: Vec<&str> = match line {
                ShellOrExec::Exec(words) => words
                    .iter()
                    .flat_map(|w| w.text.split_whitespace())
                    .collect(),
                ShellOrExec::Shell(text) => text.text.split_whitespace().collect(),
            };
            let words: Vec<&str> = words
                .iter()
                .map(|w| {
                    w.trim_matches(|c: char| matches!(c, '"' | '\'' | ';' | '&' | '|' | '(' | ')'))
                })
                .collect();
            words.iter().enumerate().any(|(at, word)| {
                let program = basename(word);
                signals.commands.iter().any(|c| c == program)
                    || signals.python_scripts.iter().any(|s| s == program)
                    || signals.text.iter().any(|t| word.contains(t.as_str()))
                    || is_build_script(program)
                    || (is_versioned(program, "pip")
                        && words.get(at + 1) == Some(&"install")
                        && words.get(at + 2).is_some_and(|w| *w == "-e" || *w == "."))
            })
        })
}

/// A script or shell function whose name says it builds (`build_wheels.sh`,
/// `docker_build_script_ubuntu.sh`, `build_pip_package` from a sourced
/// script): `build` is one of the parts of its name between `_`, `-` and
/// `.` (an option such as `--build-dir`, or `build` alone as in `npm run
/// build`, is not one). What it compiles is out of sight, so running it
/// counts as building.
fn is_build_script(program: &str) -> bool {
    !program.starts_with('-')
        && program != "build"
        && program.split(['_', '-', '.']).any(|part| part == "build")
}

/// Whether the file builds a base image or a build environment rather than
/// an application, so that the toolkit or toolchain it installs is its
/// product, not dead weight:
/// - no start command of its own (no CMD, any ENTRYPOINT is NVIDIA's
///   `nvidia_entrypoint.sh`, as NVIDIA's CUDA image Dockerfiles set), and
///   either NVIDIA's entrypoint or its own install of CUDA development
///   packages or a toolchain (`build-essential`, `cmake`) with nothing
///   copied from the build context: a CI image, or a base for other builds;
/// - or an interactive shell as its start command (`CMD ["/bin/bash"]`) and
///   such an install: a development environment, where builds are run by
///   hand or by a compose `command:` (source copied in is what it builds).
///
/// A plain `FROM devel` with no CMD that installs neither is an application
/// run with a command line, and is judged. Only the last CMD and ENTRYPOINT
/// count, as in the image.
pub fn is_base_or_build_environment(ctx: &DockerfileContext<'_>, shipped: &[&Stage]) -> bool {
    let images = &ctx.knowledge.images;
    let installs_build_tools = shipped
        .iter()
        .flat_map(|stage| &stage.runs)
        .flat_map(|run| &run.installs)
        .filter(|install| install.manager.is_system())
        .flat_map(|install| &install.packages)
        .any(|package| {
            images.devel_package(&package.name).is_some()
                || images.build_signals.system_packages.contains(&package.name)
        });
    let mut cmd = None;
    let mut entrypoint = None;
    let mut copies_context = false;
    for instruction in shipped
        .iter()
        .flat_map(|stage| stage_instructions(ctx, stage))
    {
        match &instruction.command {
            Command::Cmd(line) => cmd = Some(line),
            Command::Entrypoint(_) => entrypoint = Some(instruction),
            Command::Copy(copy) | Command::Add(copy) if copy.from.is_none() => {
                // Helper scripts and package lists are part of the build
                // environment; anything else is an application it ships.
                let helper = |text: &str| {
                    let name = text.trim_end_matches('/');
                    let name = basename(name);
                    images.build_signals.helper_files.iter().any(|p| {
                        crate::knowledge::build::glob(p, name)
                            || crate::knowledge::build::glob(p, text)
                    })
                };
                if !copy.sources.iter().all(|s| helper(&s.text)) {
                    copies_context = true;
                }
            }
            _ => {}
        }
    }
    let nvidia_entrypoint = match entrypoint {
        Some(instruction) if instruction.original.contains(NVIDIA_ENTRYPOINT) => true,
        Some(_) => return false,
        None => false,
    };
    match cmd {
        None => nvidia_entrypoint || (installs_build_tools && !copies_context),
        Some(line) if is_interactive_shell(line) => nvidia_entrypoint || installs_build_tools,
        Some(_) => false,
    }
}

/// A start command that only opens a shell (`bash`, `/bin/bash -l`, `sh`):
/// the image is a place to work in, not a program.
fn is_interactive_shell(line: &ShellOrExec) -> bool {
    let words: Vec<&str> = match line {
        ShellOrExec::Exec(words) => words.iter().map(|w| w.text.as_str()).collect(),
        ShellOrExec::Shell(text) => text.text.split_whitespace().collect(),
    };
    let Some((program, options)) = words.split_first() else {
        return false;
    };
    SHELLS.contains(&basename(program))
        && options.iter().all(|option| {
            option.starts_with("--") || (option.starts_with('-') && !option.contains('c'))
        })
}

/// Interactive shells a start command opens.
const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash"];

/// The entrypoint script NVIDIA's CUDA and NGC images set.
const NVIDIA_ENTRYPOINT: &str = "nvidia_entrypoint.sh";

fn installs_runtime_compiler(stage: &Stage, signals: &Signals<'_>) -> bool {
    stage.runs.iter().any(|run| {
        run.installs
            .iter()
            .any(|install| brings_runtime_compiler(install, signals))
    })
}

/// A pip install of a run-time compiler, by name, as an extra
/// (`accelerate[deepspeed]` pulls DeepSpeed) or as a wheel file
/// (`flashinfer_python-0.2.2-….whl`).
fn brings_runtime_compiler(install: &PackageInstall, signals: &Signals<'_>) -> bool {
    let is_compiler = |name: &str| {
        signals
            .runtime_compilers
            .iter()
            .any(|known| known.names.iter().any(|n| same_distribution(n, name)))
            || signals
                .build
                .runtime_compilers
                .iter()
                .any(|pattern| glob_matches(pattern, name))
    };
    install.manager.is_python()
        && install
            .packages
            .iter()
            .any(|p| p.distribution().is_some_and(is_compiler) || p.extras().any(is_compiler))
}

/// Whether two pip distribution names are the same project: case, `-`, `_`
/// and `.` do not matter (PEP 503 normalisation).
fn same_distribution(a: &str, b: &str) -> bool {
    let normal = |name: &str| {
        name.chars()
            .map(|c| match c {
                '_' | '.' => '-',
                c => c.to_ascii_lowercase(),
            })
            .collect::<String>()
    };
    normal(a) == normal(b)
}

/// Whether `stage` builds native code by `build_signals` (the images
/// knowledge's, or a rule's narrowed copy) and the packages knowledge's
/// run-time compilers, at the rule's level of `evidence`:
/// [`builds_native_code`] for rules outside this module.
pub fn stage_builds_native_code(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    build_signals: &BuildSignals,
    evidence: Evidence,
) -> bool {
    let signals = Signals {
        build: build_signals,
        runtime_compilers: &ctx.knowledge.packages.runtime_compilers,
        evidence,
    };
    builds_native_code(ctx, stage, &signals)
}

/// Whether `stage`'s own actions show it builds native code, or installs a
/// package that compiles at run time: either needs the compiler and headers
/// of a devel image. Its own actions are its RUNs and the ENV it sets
/// itself (`ENV TORCH_CUDA_ARCH_LIST=…`); ENV inherited from a parent stage
/// says what the parent meant (a clone of NVIDIA's devel recipe sets
/// `LIBRARY_PATH` for every stage built on it), not what this one does.
fn builds_native_code(ctx: &DockerfileContext<'_>, stage: &Stage, signals: &Signals<'_>) -> bool {
    let sets_signal =
        stage_instructions(ctx, stage)
            .iter()
            .any(|instruction| match &instruction.command {
                Command::Env(pairs) => pairs.iter().any(|pair| signals.env.contains(&pair.key)),
                _ => false,
            });
    if sets_signal {
        return true;
    }
    stage.runs.iter().any(|run| {
        let installs = &run.installs;
        let is_install = |index: usize| installs.iter().any(|i| i.command == index);
        run.commands
            .iter()
            .enumerate()
            .any(|(index, command)| command_builds(command, signals, is_install(index)))
            || installs
                .iter()
                .any(|install| install_builds(install, signals))
    })
}

/// `TORCH_CUDA_ARCH_LIST=… pip install` counts; a package install's words
/// do not (`cuda-nvcc-12-8` names the compiler without running it).
fn command_builds(command: &ShellCommand, signals: &Signals<'_>, is_install: bool) -> bool {
    if command
        .assignments
        .iter()
        .any(|(key, _)| signals.env.iter().any(|e| e == key))
    {
        return true;
    }
    if is_install {
        return false;
    }
    let mention = |text: &str| {
        signals
            .text
            .iter()
            .any(|needle| text.contains(needle.as_str()))
    };
    if command.words.iter().any(|w| mention(&w.text)) {
        return true;
    }
    let words = command.program_words();
    let Some(program) = words.first().map(|w| basename(&w.text)) else {
        return false;
    };
    if signals.commands.iter().any(|c| c == program) || is_build_script(program) {
        return true;
    }
    // `pyenv install 3.11`: the subcommand after the program.
    let subcommand = words.get(1).map(|w| w.text.as_str());
    if signals
        .source_installers
        .iter()
        .any(|known| match known.split_once(' ') {
            Some((p, sub)) => p == program && subcommand == Some(sub),
            None => known == program,
        })
    {
        return true;
    }
    // `mim install mmcv`: OpenMMLab's installer builds mmcv's CUDA ops from
    // source when no prebuilt wheel matches the torch and CUDA at hand.
    if signals.runtime_compilers.iter().any(|known| {
        known.installer.as_deref() == Some(program)
            && words.iter().skip(1).any(|w| {
                let name = w.text.split(['=', '<', '>', '[', '~']).next().unwrap_or("");
                known.names.iter().any(|n| n.eq_ignore_ascii_case(name))
            })
    }) {
        return true;
    }
    if is_versioned(program, "python") {
        // `python setup.py build_ext`, `python -m build`.
        let script = words.iter().skip(1).any(|w| {
            signals
                .python_scripts
                .iter()
                .any(|s| basename(&w.text) == s)
        });
        let mut args = words.iter().skip(1).map(|w| w.text.as_str());
        let module = args.any(|w| w == "-m")
            && args
                .next()
                .is_some_and(|m| signals.python_modules.iter().any(|b| b == m));
        if script || module {
            return true;
        }
    }
    // `pip wheel .`, `python -m pip wheel .`: the subcommand after `pip`.
    let mut after_pip = words
        .iter()
        .map(|w| w.text.as_str())
        .skip_while(|w| !is_versioned(basename(w), "pip"))
        .skip(1);
    after_pip
        .find(|w| !w.starts_with('-'))
        .is_some_and(|sub| signals.pip_subcommands.iter().any(|s| s == sub))
}

/// `name`, or `name` followed by a version (`python3`, `pip3.11`).
fn is_versioned(program: &str, name: &str) -> bool {
    program
        .strip_prefix(name)
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// A pip install that builds from source or brings a run-time compiler. A
/// system install of a toolchain (`build-essential`, `cmake`,
/// `ninja-build`) compiles nothing: it counts only through what uses it (a
/// compiling RUN, a source install, a build script, a run-time compiler, a
/// start command that builds), each a signal of its own.
fn install_builds(install: &PackageInstall, signals: &Signals<'_>) -> bool {
    pip_builds_from_source(install, signals) || brings_runtime_compiler(install, signals)
}

/// A pip/uv install that compiles: forced source builds, or a path, VCS
/// URL, sdist, or a package known to ship no CUDA wheels.
fn pip_builds_from_source(install: &PackageInstall, signals: &Signals<'_>) -> bool {
    if !install.manager.is_python() {
        return false;
    }
    // `-e PATH` needs no flag check: the model records PATH as a location
    // package, and a path or VCS location builds.
    signals
        .pip_source_flags
        .iter()
        .any(|flag| install.has_option(flag))
        || install.packages.iter().any(|p| package_builds(p, signals))
}

fn package_builds(package: &RequestedPackage, signals: &Signals<'_>) -> bool {
    let text = package.word.text.as_str();
    if package.is_location {
        // A project's own build shows nothing of what it compiles: only a
        // rule that takes "may compile" as compiling counts it.
        if signals.evidence == Evidence::Shown {
            return false;
        }
        // `.[dev]`, `/src/pkg[cuda]`: the extras are not part of the path.
        let text = text.split('[').next().unwrap_or(text);
        let is_path = text == "."
            || text.starts_with("./")
            || text.starts_with('/')
            || text.starts_with("../");
        return text.starts_with("git+")
            || text.ends_with(".tar.gz")
            || text.ends_with(".zip")
            || (is_path && !text.ends_with(".whl") && !text.ends_with(".txt"));
    }
    text.ends_with(".zip")
        || signals
            .pip_source_packages
            .iter()
            .any(|p| p.eq_ignore_ascii_case(&package.name))
}

/// Every image the build pulls, with the span that names it: FROM bases
/// and `COPY --from`/`RUN --mount=from=` image references. Stages whose
/// FROM uses an undeclared variable are templates and are left out.
pub fn pulled_images<'m>(ctx: &DockerfileContext<'m>) -> Vec<(&'m ImageRef, Span)> {
    let mut images = Vec::new();
    for stage in ctx
        .model
        .stages
        .iter()
        .filter(|s| s.undefined_args.is_empty())
    {
        if let BaseImage::Image(image) = &stage.base {
            images.push((image, stage.base_span));
        }
        for dependency in &stage.dependencies {
            if let DependencyTarget::Image(image) = &dependency.target {
                images.push((image, dependency.span));
            }
        }
    }
    images
}

/// For each stage, whether it or a stage built on it (which inherits its
/// ENV) shows a build: an arch list in a stage that compiles nothing is
/// read by nothing and breaks no build. The arch variables themselves do
/// not count as compiling here, and neither does a plain install of a
/// project (`pip install .`, most often pure Python): the finding says a
/// build fails, so the build must show itself ([`Evidence::Shown`]). One
/// pass over the stages, children before parents (a parent always comes
/// earlier).
pub fn arch_lists_read(ctx: &DockerfileContext<'_>) -> Vec<bool> {
    let mut signals = ctx.knowledge.images.build_signals.clone();
    signals
        .env
        .retain(|name| arch_lists::arch_variable(name).is_none());
    let stages = &ctx.model.stages;
    let mut read: Vec<bool> = stages
        .iter()
        .map(|stage| stage_builds_native_code(ctx, stage, &signals, Evidence::Shown))
        .collect();
    for stage in stages.iter().rev() {
        if let BaseImage::Stage(parent) = stage.base {
            if parent < stage.index && read.get(stage.index).copied().unwrap_or(false) {
                if let Some(flag) = read.get_mut(parent) {
                    *flag = true;
                }
            }
        }
    }
    read
}

/// Whether the shipped image runs `ptxas` at run time: it pip-installs, or copies or runs a
/// program of, software of `packages.runtime_ptxas` (XLA), or it puts the CUDA `bin` directory on
/// its `PATH` (the compiler is there to be run, not to build the image).
pub fn runs_ptxas(ctx: &DockerfileContext<'_>, chain: &[&Stage]) -> bool {
    let users = &ctx.knowledge.packages.runtime_ptxas;
    let installs_one = ptxas_user_installs(ctx, chain).next().is_some();
    let names_a_program = chain
        .iter()
        .flat_map(|stage| stage.instructions.clone())
        .filter_map(|index| ctx.dockerfile.instructions.get(index))
        .filter(|instruction| matches!(instruction.keyword.as_str(), "copy" | "add" | "run"))
        .any(|instruction| {
            users
                .iter()
                .flat_map(|user| &user.programs)
                .any(|program| instruction.original.contains(program.as_str()))
        });
    let cuda_bin_on_path = chain.iter().any(|stage| {
        stage
            .env
            .iter()
            .any(|(name, value)| name == "PATH" && value.contains("/usr/local/cuda/bin"))
    });
    installs_one || names_a_program || cuda_bin_on_path
}

/// The packages the stages of `chain` pip-install that run `ptxas` at run
/// time (`packages.runtime_ptxas`: XLA's), each with its entry.
pub fn ptxas_user_installs<'a>(
    ctx: &'a DockerfileContext<'_>,
    chain: &'a [&'a Stage],
) -> impl Iterator<Item = (&'a RequestedPackage, &'a PtxasUser)> + 'a {
    let users = &ctx.knowledge.packages.runtime_ptxas;
    chain
        .iter()
        .flat_map(|stage| &stage.runs)
        .flat_map(|run| &run.installs)
        .filter(|install| install.manager.is_python())
        .flat_map(|install| &install.packages)
        .filter_map(move |package| {
            let name = package.name.split('[').next().unwrap_or_default();
            let user = users
                .iter()
                .find(|user| user.names.iter().any(|n| n.eq_ignore_ascii_case(name)))?;
            Some((package, user))
        })
}
