//! What the base-image rules (CU101–CU103, CU130–CU131) ask of a build
//! beyond the stage model: whether a stage builds native code (so it needs
//! a devel image), and every image reference the build pulls.

use crate::checks::DockerfileContext;
use crate::dockerfile::model::{BaseImage, DependencyTarget, ImageRef, ShellCommand, Stage};
use crate::dockerfile::packages::{package_installs, PackageInstall, RequestedPackage};
use crate::dockerfile::shell::command_start;
use crate::knowledge::images::BuildSignals;
use crate::source::Span;

/// Whether `stage`'s own RUNs (or its environment) show it builds native
/// code, which needs the compiler and headers of a devel image.
pub fn builds_native_code(stage: &Stage, signals: &BuildSignals) -> bool {
    let is_signal = |key: &String| signals.env.iter().any(|e| e == key);
    if stage.env.iter().any(|(key, _)| is_signal(key)) {
        return true;
    }
    stage.runs.iter().any(|run| {
        run.commands
            .iter()
            .any(|command| command_builds(command, signals))
            || package_installs(&run.commands)
                .iter()
                .any(|install| pip_builds_from_source(install, signals))
    })
}

fn command_builds(command: &ShellCommand, signals: &BuildSignals) -> bool {
    if command
        .assignments
        .iter()
        .any(|(key, _)| signals.env.iter().any(|e| e == key))
    {
        return true;
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
    let Some(program) = command
        .words
        .get(command_start(&command.words))
        .map(|w| basename(&w.text))
    else {
        return false;
    };
    if signals.commands.iter().any(|c| c == program) {
        return true;
    }
    // `python setup.py build_ext`.
    program.starts_with("python")
        && command.words.iter().any(|w| {
            signals
                .python_scripts
                .iter()
                .any(|s| basename(&w.text) == s)
        })
}

/// A pip/uv install that compiles: forced source builds, or a path, VCS
/// URL, sdist, or a package known to ship no CUDA wheels.
fn pip_builds_from_source(install: &PackageInstall, signals: &BuildSignals) -> bool {
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

fn package_builds(package: &RequestedPackage, signals: &BuildSignals) -> bool {
    let text = package.word.text.as_str();
    if package.is_location {
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

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
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
