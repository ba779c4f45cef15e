//! Helpers the base-image rules (CU101–CU103) share: the chain of stages
//! whose filesystem ends up in the target image, whether a stage builds
//! native code, and which packages an apt/dnf/yum command installs.

use crate::checks::DockerfileContext;
use crate::dockerfile::ast::Word;
use crate::dockerfile::model::{BaseImage, ShellCommand, Stage};
use crate::knowledge::images::BuildSignals;

/// The target stage, then the stages it is built `FROM`, nearest first.
/// Empty when the target is unknown.
pub fn target_chain<'m>(ctx: &DockerfileContext<'m>) -> Vec<&'m Stage> {
    let model = ctx.model;
    let mut chain = Vec::new();
    let Some(mut current) = model.target.and_then(|t| model.stages.get(t)) else {
        return chain;
    };
    // Parents are strictly earlier stages; the bound guards a malformed model.
    for _ in 0..=model.stages.len() {
        chain.push(current);
        match current.base {
            BaseImage::Stage(parent) if parent < current.index => match model.stages.get(parent) {
                Some(stage) => current = stage,
                None => break,
            },
            _ => break,
        }
    }
    chain
}

/// The command's program name: the first word's file name, past `sudo`.
pub fn program(command: &ShellCommand) -> Option<&str> {
    let mut words = command.words.iter().map(|w| w.text.as_str());
    let mut first = words.next()?;
    if first == "sudo" {
        first = words.find(|w| !w.starts_with('-'))?;
    }
    Some(first.rsplit('/').next().unwrap_or(first))
}

/// Whether `stage`'s own RUNs (or its environment) show it builds native
/// code, which needs the compiler and headers of a devel image.
pub fn builds_native_code(stage: &Stage, signals: &BuildSignals) -> bool {
    if stage
        .env
        .iter()
        .any(|(key, _)| signals.env.iter().any(|e| e == key))
    {
        return true;
    }
    stage
        .runs
        .iter()
        .flat_map(|run| &run.commands)
        .any(|command| command_builds(command, signals))
}

fn command_builds(command: &ShellCommand, signals: &BuildSignals) -> bool {
    if command
        .assignments
        .iter()
        .any(|(key, _)| signals.env.iter().any(|e| e == key))
    {
        return true;
    }
    let texts: Vec<&str> = command.words.iter().map(|w| w.text.as_str()).collect();
    if texts.iter().any(|t| {
        signals
            .text
            .iter()
            .any(|needle| t.contains(needle.as_str()))
    }) {
        return true;
    }
    let Some(name) = program(command) else {
        return false;
    };
    if signals.commands.iter().any(|c| c == name) {
        return true;
    }
    let is_python = name.starts_with("python");
    if is_python
        && texts.iter().any(|t| {
            signals
                .python_scripts
                .iter()
                .any(|s| t.rsplit('/').next() == Some(s.as_str()))
        })
    {
        return true;
    }
    pip_install_args(command, name).is_some_and(|args| {
        args.iter()
            .any(|arg| pip_arg_builds_from_source(arg, signals))
    })
}

/// The words after `install` of a `pip`/`pip3`/`python -m pip`/`uv pip` command.
fn pip_install_args<'c>(command: &'c ShellCommand, name: &str) -> Option<Vec<&'c str>> {
    let texts: Vec<&str> = command.words.iter().map(|w| w.text.as_str()).collect();
    let pip_at = if name.starts_with("pip") {
        texts
            .iter()
            .position(|t| t.rsplit('/').next() == Some(name))?
    } else if name.starts_with("python") || name == "uv" {
        texts.iter().position(|t| *t == "pip")?
    } else {
        return None;
    };
    let rest = texts.get(pip_at + 1..)?;
    let install_at = rest.iter().position(|t| *t == "install")?;
    Some(rest.get(install_at + 1..)?.to_vec())
}

fn pip_arg_builds_from_source(arg: &str, signals: &BuildSignals) -> bool {
    if signals
        .pip_source_flags
        .iter()
        .any(|flag| arg == flag || arg.starts_with(&format!("{flag}=")))
    {
        return true;
    }
    if arg.starts_with('-') {
        return false;
    }
    let is_path =
        arg == "." || arg.starts_with("./") || arg.starts_with('/') || arg.starts_with("../");
    if arg.starts_with("git+") || arg.ends_with(".tar.gz") || arg.ends_with(".zip") {
        return true;
    }
    if is_path && !arg.ends_with(".whl") && !arg.ends_with(".txt") {
        return true;
    }
    let name: String = arg
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_' || *c == '.')
        .collect();
    signals
        .pip_source_packages
        .iter()
        .any(|p| p.eq_ignore_ascii_case(&name))
}

const INSTALLERS: &[&str] = &[
    "apt-get", "apt", "aptitude", "dnf", "yum", "microdnf", "tdnf", "zypper",
];
/// Options of these installers that take the next word as their value.
const OPTIONS_WITH_VALUE: &[&str] = &["-o", "-t", "--option", "--target-release", "-c", "--setopt"];

/// The package words an apt/dnf/yum/zypper `install` command names.
pub fn installed_packages(command: &ShellCommand) -> Vec<&Word> {
    let Some(name) = program(command) else {
        return Vec::new();
    };
    if !INSTALLERS.contains(&name) {
        return Vec::new();
    }
    let mut words = command.words.iter().skip_while(|w| {
        let t = w.text.rsplit('/').next().unwrap_or(&w.text);
        t != name
    });
    words.next();
    let mut packages = Vec::new();
    let mut installing = false;
    let mut skip_value = false;
    for word in words {
        let text = word.text.as_str();
        if skip_value {
            skip_value = false;
            continue;
        }
        if text.starts_with('-') {
            skip_value = OPTIONS_WITH_VALUE.contains(&text);
            continue;
        }
        if !installing {
            if matches!(text, "install" | "in") {
                installing = true;
                continue;
            }
            // Another subcommand (`update`, `remove`…): nothing installed.
            return Vec::new();
        }
        packages.push(word);
    }
    packages
}

/// The raw text of `span` in the file.
pub fn source_text<'a>(ctx: &DockerfileContext<'a>, span: crate::source::Span) -> &'a str {
    ctx.source.text.get(span.start..span.end).unwrap_or("")
}
