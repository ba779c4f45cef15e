//! CU109 cuda-compile-without-toolkit: a stage compiles CUDA code (runs
//! `nvcc`, builds a `CUDAExtension`, switches on a CUDA build with
//! `FORCE_CUDA=1` or `-DGGML_CUDA=on`) on a base image without the CUDA
//! compiler (`-runtime`/`-base` tags, PyTorch's runtime images, or a
//! general-purpose image with no CUDA at all: `python`, `ubuntu`, `debian`)
//! and nothing in its chain installs one. The build fails, or the extension
//! is quietly built without CUDA. On `-runtime`/`-base` tags it also knows
//! the source builds that need nvcc before anything else (flash-attn's
//! setup.py runs `/usr/local/cuda/bin/nvcc -V` while pip reads its
//! metadata), and switches a build ignores (`LLAMA_CUBLAS=1` as a variable of
//! `pip install llama-cpp-python`). The mirror image of CU101.

use crate::checks::dockerfile::cuda_stages::{stage_builds_native_code, Evidence};
use crate::checks::dockerfile::stack::chain;
use crate::checks::dockerfile::support::{base_facts, stage_instructions};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::ast::Command;
use crate::dockerfile::model::{Reach, Stage};
use crate::dockerfile::packages::PackageInstall;
use crate::knowledge::images::{glob_matches, BaseImageFacts};
use crate::knowledge::packages::PackageKnowledge;
use crate::knowledge::source_builds::{CudaSwitchOutcome, SourceBuild};
use crate::knowledge::Version;
use crate::paths::basename;
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU109",
    name: "cuda-compile-without-toolkit",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "A stage compiles CUDA code on an image that has no CUDA compiler",
    doc: Doc::Page,
};

pub struct CudaCompileWithoutToolkit;

/// The variable scikit-build-core (llama-cpp-python) reads CMake options from.
const CMAKE_ARGS: &str = "CMAKE_ARGS";

impl DockerfileRule for CudaCompileWithoutToolkit {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        // A stage the default build does not need is built only with
        // `--target` (and often a `--build-arg` base): not judged.
        let built = ctx.model.target.map(|t| ctx.model.reachable_stages(t));
        for stage in &ctx.model.stages {
            if built.as_ref().is_some_and(|b| !b.contains(&stage.index)) {
                continue;
            }
            let Some(base) = judged_base(ctx, stage) else {
                continue;
            };
            let found = cuda_compile(ctx, stage).map(Found::Compile).or_else(|| {
                base.cuda_home_without_nvcc(ctx)
                    .then(|| source_build(ctx, stage))
                    .flatten()
                    .map(|(span, word, build)| Found::SourceBuild(span, word, build))
            });
            let Some(found) = found else {
                continue;
            };
            if chain_installs_toolkit(ctx, stage) {
                continue;
            }
            out.push(diagnostic(ctx, stage, &base, found));
        }
    }
}

/// The base of a stage CU109 judges: one known to lack nvcc.
enum Base {
    /// A known CUDA image without the compiler (`-runtime`, `-base`,
    /// PyTorch's runtime images).
    NoCompiler(BaseImageFacts),
    /// A general-purpose image with no CUDA at all (`python:3.11-slim`).
    NoCuda(String),
}

impl Base {
    /// `/usr/local/cuda` is there without `bin/nvcc` (`nvidia/cuda`'s
    /// `-runtime`/`-base`): torch's CUDA_HOME then names a directory
    /// without a compiler.
    fn cuda_home_without_nvcc(&self, ctx: &DockerfileContext<'_>) -> bool {
        let Base::NoCompiler(facts) = self else {
            return false;
        };
        let Some(known) = &ctx.knowledge.resolution.cuda_home_without_nvcc else {
            return false;
        };
        facts.family == "nvidia/cuda"
            && facts
                .variant
                .is_some_and(|v| known.variants.iter().any(|k| k == v.as_str()))
    }
}

fn judged_base(ctx: &DockerfileContext<'_>, stage: &Stage) -> Option<Base> {
    if let Some(facts) = base_facts(ctx, stage) {
        if facts.has_compiler || facts.is_unknown("has_compiler") {
            return None;
        }
        return Some(Base::NoCompiler(facts));
    }
    let image = crate::checks::dockerfile::support::root_image(ctx, stage)?;
    let canonical = ctx.knowledge.images.canonicalize(image);
    ctx.knowledge
        .cupti
        .base_without_cuda(&canonical.repository)
        .then(|| Base::NoCuda(image.text.clone()))
}

/// What CU109 found in a stage.
enum Found<'k> {
    /// A CUDA compile: where, how to say it, and a switch whose outcome
    /// the data knows.
    Compile(Compile<'k>),
    /// A source build that runs nvcc at install: where, the word, and the
    /// package's data.
    SourceBuild(Span, String, &'k SourceBuild),
}

struct Compile<'k> {
    span: Span,
    what: String,
    /// The switch or command as written (`LLAMA_CUBLAS=1`).
    asked: String,
    /// The switch's outcome where the data knows it: ignored by the build
    /// it is given to, or refused by current releases.
    outcome: Option<&'k CudaSwitchOutcome>,
    /// The outcome is that the switch is ignored (the build is CPU-only).
    ignored: bool,
}

fn diagnostic(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    base: &Base,
    found: Found<'_>,
) -> Diagnostic {
    let (root, lacks, base_source) = match base {
        Base::NoCompiler(facts) => {
            let variant = facts
                .variant
                .map_or(String::new(), |v| format!(" ({v} variant)"));
            let root = crate::checks::dockerfile::support::root_image(ctx, stage)
                .map_or_else(|| facts.family.clone(), |i| i.text.clone());
            (
                format!("`{root}`{variant}"),
                "has no nvcc and no CUDA headers",
                facts.source.clone(),
            )
        }
        Base::NoCuda(image) => (
            format!("`{image}`"),
            "has no CUDA toolkit at all (no nvcc, no CUDA headers)",
            ctx.knowledge.cupti.bases.source.clone(),
        ),
    };
    let compile_source = &ctx.knowledge.resolution.cuda_compile.source;
    match found {
        Found::Compile(Compile {
            span,
            asked,
            outcome: Some(outcome),
            ignored: true,
            ..
        }) => Diagnostic::at(
            &META,
            span,
            format!(
                "`{asked}` asks for a CUDA build, but {}; the base image {root} {lacks} either",
                outcome.outcome
            ),
        )
        .with_help("pass the switch in `CMAKE_ARGS` (`CMAKE_ARGS=\"-DGGML_CUDA=on\"`) and build in a stage on the matching `-devel` image, then COPY the wheel into this one")
        .with_note(format!("source: {}; {base_source}", outcome.source)),
        Found::Compile(Compile {
            span,
            what,
            outcome,
            ..
        }) => {
            let mut diagnostic = Diagnostic::at(
                &META,
                span,
                format!("{what}, but the base image {root} {lacks}, and the stage installs none"),
            )
            .with_help("compile in a stage built on the matching `-devel` image and COPY the result into this one, or install the toolkit's compiler (`cuda-nvcc-X-Y` and the `-dev` packages of the image's CUDA)")
            .with_note("without nvcc the build stops (`nvcc: not found`, torch's `CUDA_HOME environment variable is not set`, CMake's `Could not find nvcc`), or a package that falls back to a CPU build installs without its CUDA kernels");
            if let Some(outcome) = outcome {
                diagnostic = diagnostic.with_note(format!(
                    "on any image, {} (source: {})",
                    outcome.outcome, outcome.source
                ));
            }
            diagnostic.with_note(format!("source: {base_source}; {compile_source}"))
        }
        Found::SourceBuild(span, word, build) => {
            let cuda_home = ctx
                .knowledge
                .resolution
                .cuda_home_without_nvcc
                .as_ref()
                .map_or("", |c| c.source.as_str());
            Diagnostic::at(
                &META,
                span,
                format!(
                    "pip builds `{word}` from source, and its setup.py runs `/usr/local/cuda/bin/nvcc -V` while pip prepares the package's metadata; the base image {root} has /usr/local/cuda but no bin/nvcc, and the stage installs none: the install stops with `FileNotFoundError: … '/usr/local/cuda/bin/nvcc'`"
                ),
            )
            .with_help(format!(
                "build it in a stage on the matching `-devel` image and COPY the wheel into this one, or install a prebuilt wheel file of the project's release that matches the image's torch, CUDA and Python; `{}=TRUE` installs it without its CUDA kernels",
                build.skip_env
            ))
            .with_note(format!(
                "the setup.py fails before it tries its prebuilt-wheel download, which only a base without /usr/local/cuda reaches (torch finds no CUDA_HOME there); `{}` on PyPI is a source distribution only",
                build.package
            ))
            .with_note(format!("source: {}; {cuda_home}", build.source))
        }
    }
}

/// The first thing in `stage` that compiles CUDA code, and how to say it.
fn cuda_compile<'k>(ctx: &'k DockerfileContext<'_>, stage: &Stage) -> Option<Compile<'k>> {
    let signals = &ctx.knowledge.resolution.cuda_compile;
    let outcomes = &ctx.knowledge.resolution.cuda_switch_outcomes;
    // The switch's outcome: an assignment that is the switch itself, made
    // for an install the data says ignores it; else a switch refused by
    // current releases wherever it is.
    // A CMake definition that switches CUDA on (`CMAKE_ARGS=-DGGML_CUDA=on`)
    // anywhere in the stage makes the build a CUDA one, whatever variable
    // beside it is ignored.
    let cmake_switch = |text: &str| {
        signals.text.iter().any(|t| {
            t.starts_with("-D") && text.to_ascii_lowercase().contains(&t.to_ascii_lowercase())
        })
    };
    let cmake_asks_cuda = stage
        .env
        .iter()
        .chain(
            stage
                .runs
                .iter()
                .flat_map(|r| &r.commands)
                .flat_map(|c| &c.assignments),
        )
        .any(|(key, value)| key == CMAKE_ARGS && cmake_switch(value));
    let outcome_of = |assignment: &str, found: &str, installs: &[(String, Option<Version>)]| {
        outcomes
            .iter()
            .find(|o| {
                !o.packages.is_empty()
                    && !cmake_asks_cuda
                    && o.matches(assignment)
                    && installs
                        .iter()
                        .any(|(name, release)| o.applies_to(name, *release))
            })
            .map(|o| (o, true))
            .or_else(|| {
                outcomes
                    .iter()
                    .find(|o| o.packages.is_empty() && o.matches(found))
                    .map(|o| (o, false))
            })
    };
    let compile = |span: Span,
                   asked: &str,
                   what: String,
                   outcome: Option<(&'k CudaSwitchOutcome, bool)>| Compile {
        span,
        what,
        asked: asked.to_string(),
        outcome: outcome.map(|(o, _)| o),
        ignored: outcome.is_some_and(|(_, ignored)| ignored),
    };
    let stage_installs: Vec<_> = stage
        .runs
        .iter()
        .flat_map(|r| &r.installs)
        .flat_map(requirements)
        .collect();
    let switch = |text: &str| {
        signals
            .text
            .iter()
            .find(|t| text.to_ascii_lowercase().contains(&t.to_ascii_lowercase()))
    };
    // The stage's own ENV: a CUDA switch, or a CUDA setting with a build.
    let mut setting: Option<(Span, String)> = None;
    for instruction in stage_instructions(ctx, stage) {
        let Command::Env(pairs) = &instruction.command else {
            continue;
        };
        for pair in pairs {
            let assignment = format!("{}={}", pair.key, pair.value);
            if let Some(found) = switch(&assignment) {
                return Some(compile(
                    pair.span,
                    &assignment,
                    format!("`ENV {assignment}` switches on a CUDA build (`{found}`)"),
                    outcome_of(&assignment, found, &stage_installs),
                ));
            }
            if signals.env.contains(&pair.key) && setting.is_none() {
                setting = Some((
                    pair.span,
                    format!("`ENV {}` sets up a CUDA build", pair.key),
                ));
            }
        }
    }
    for run in &stage.runs {
        for (index, command) in run.commands.iter().enumerate() {
            // A shell branch the build does not take runs nothing.
            if command.reach == Reach::Skipped {
                continue;
            }
            let installs_here = run.installs.iter().any(|i| i.command == index);
            let names: Vec<_> = run
                .installs
                .iter()
                .filter(|i| i.command == index)
                .flat_map(requirements)
                .collect();
            for (key, value) in &command.assignments {
                let assignment = format!("{key}={value}");
                if let Some(found) = switch(&assignment) {
                    return Some(compile(
                        command.span,
                        &assignment,
                        format!("`{assignment}` switches on a CUDA build (`{found}`)"),
                        outcome_of(&assignment, found, &names),
                    ));
                }
                if signals.env.contains(key) && setting.is_none() {
                    setting = Some((command.span, format!("`{key}=…` sets up a CUDA build")));
                }
            }
            let words = command.program_words();
            if let Some(program) = words.first() {
                let name = basename(&program.text);
                if signals.commands.iter().any(|c| c == name) {
                    return Some(compile(
                        command.span,
                        name,
                        format!("`{name}` compiles CUDA code"),
                        None,
                    ));
                }
            }
            // A package install's words name packages, not switches.
            if installs_here {
                continue;
            }
            if let Some((word, found)) = command
                .words
                .iter()
                .find_map(|w| switch(&w.text).map(|f| (w, f)))
            {
                return Some(compile(
                    word.span,
                    &word.text,
                    format!("`{found}` builds CUDA code"),
                    outcome_of(&word.text, found, &[]),
                ));
            }
        }
    }
    let (span, what) = setting?;
    // The stage's build settings are what is being judged: only its
    // actions count as building (a compiler run, a source install).
    let mut actions = ctx.knowledge.images.build_signals.clone();
    actions.env.clear();
    let builds = stage_builds_native_code(
        ctx,
        stage,
        &actions,
        // With a CUDA setting in force, a source install (a checkout, a
        // VCS URL) is the CUDA build it sets up.
        Evidence::MayCompile,
    );
    builds.then(|| {
        compile(
            span,
            "",
            format!("{what} and the stage builds native code"),
            None,
        )
    })
}

/// The pip requirements of an install: names and exact releases.
fn requirements(install: &PackageInstall) -> Vec<(String, Option<Version>)> {
    if !install.manager.is_python() {
        return Vec::new();
    }
    install
        .packages
        .iter()
        .filter(|p| !p.is_location)
        .filter_map(|p| PackageKnowledge::requirement_terms(&p.word.text))
        .map(|(name, exact, _)| (name, exact))
        .collect()
}

/// The first pip install in `stage` of a package that runs nvcc while pip
/// prepares its metadata (`rules/source-builds.toml`), unless the stage
/// skips its CUDA build: the span, the word as written and the data.
fn source_build<'k>(
    ctx: &'k DockerfileContext<'_>,
    stage: &Stage,
) -> Option<(Span, String, &'k SourceBuild)> {
    let builds = &ctx.knowledge.resolution.source_builds;
    let skipped = |build: &SourceBuild, assignments: &[(String, String)]| {
        let is_true = |v: &str| v.trim_matches(['"', '\'']).eq_ignore_ascii_case("TRUE");
        stage.env_value(&build.skip_env).is_some_and(is_true)
            || assignments
                .iter()
                .any(|(k, v)| *k == build.skip_env && is_true(v))
    };
    for run in &stage.runs {
        for install in run.installs.iter().filter(|i| i.manager.is_python()) {
            let Some(command) = run.commands.get(install.command) else {
                continue;
            };
            if command.reach == Reach::Skipped {
                continue;
            }
            let assignments = command.assignments.as_slice();
            if let Some(found) = source_build_in(builds, install) {
                if !skipped(found.2, assignments) {
                    return Some(found);
                }
            }
        }
    }
    None
}

fn source_build_in<'k>(
    builds: &'k [SourceBuild],
    install: &PackageInstall,
) -> Option<(Span, String, &'k SourceBuild)> {
    install.packages.iter().find_map(|package| {
        builds
            .iter()
            .find(|b| b.installed_by(&package.name, &package.word.text, package.is_location))
            .map(|b| (package.word.span, package.word.text.clone(), b))
    })
}

/// Whether the stage or a stage it is built on puts nvcc into the image: a
/// toolkit package (apt/dnf, conda, pip), NVIDIA's runfile, or a COPY of a
/// toolkit directory from another stage or image.
fn chain_installs_toolkit(ctx: &DockerfileContext<'_>, stage: &Stage) -> bool {
    let toolkit = &ctx.knowledge.resolution.toolkit_installs;
    let images = &ctx.knowledge.images;
    let any = |patterns: &[String], name: &str| patterns.iter().any(|p| glob_matches(p, name));
    for s in chain(ctx, stage) {
        for run in &s.runs {
            for install in &run.installs {
                for package in &install.packages {
                    let name = package
                        .distribution()
                        .unwrap_or(&package.name)
                        .to_ascii_lowercase();
                    let found = if install.manager.is_system() {
                        images.devel_package(&name).is_some() || any(&toolkit.system, &name)
                    } else if install.manager.is_conda() {
                        any(&toolkit.conda, &name)
                    } else {
                        any(&toolkit.pip, &name)
                    };
                    if found {
                        return true;
                    }
                }
            }
            let runfile = run.commands.iter().flat_map(|c| &c.words).any(|w| {
                let file = basename(&w.text);
                glob_matches(&toolkit.runfile, file)
            });
            if runfile {
                return true;
            }
        }
        if let Some(dir) = images.toolkit_dir.as_ref() {
            let copies_toolkit =
                stage_instructions(ctx, s)
                    .iter()
                    .any(|instruction| match &instruction.command {
                        // From a toolkit directory, or into one
                        // (`COPY --from=installer /opt/cuda /usr/local/cuda`).
                        Command::Copy(copy) | Command::Add(copy) => {
                            copy.from.is_some()
                                && (dir.matching(&copy.dest.text).is_some()
                                    || copy
                                        .sources
                                        .iter()
                                        .any(|src| dir.matching(&src.text).is_some()))
                        }
                        _ => false,
                    });
            if copies_toolkit {
                return true;
            }
        }
    }
    false
}
