//! What the shipped image is made of, for the rules about it (CU104,
//! CU110–CU125): the target stage and the stages it builds on, walked in
//! instruction order, and readers for what those instructions set up:
//! environment settings, `PATH`-style lists, and package-manager commands.
//!
//! Stages the target does not build on (`FROM <stage>`) are builders: what
//! happens there does not ship, so these rules never look at them directly.

use crate::checks::DockerfileContext;
use crate::dockerfile::ast::{Command, Instruction, Word};
use crate::dockerfile::model::{BaseImage, BuildModel, RunStep, ShellCommand, Stage};
use crate::knowledge::cupti::{CacheManager, Hygiene};
use crate::source::Span;

/// The target stage and its `FROM <stage>` ancestors, root first.
pub fn target_chain(model: &BuildModel) -> Vec<&Stage> {
    let mut chain = Vec::new();
    let mut current = model.target.and_then(|index| model.stages.get(index));
    // Each step goes to a strictly earlier stage; the bound guards against a
    // malformed model all the same.
    for _ in 0..=model.stages.len() {
        let Some(stage) = current else { break };
        chain.push(stage);
        current = match stage.base {
            BaseImage::Stage(parent) if parent < stage.index => model.stages.get(parent),
            _ => None,
        };
    }
    chain.reverse();
    chain
}

/// The instructions of `chain`, in build order, with their index.
pub fn chain_instructions<'a>(
    ctx: &'a DockerfileContext<'_>,
    chain: &'a [&'a Stage],
) -> impl Iterator<Item = (&'a Stage, usize, &'a Instruction)> + 'a {
    chain.iter().flat_map(move |stage| {
        stage.instructions.clone().filter_map(move |index| {
            ctx.dockerfile
                .instructions
                .get(index)
                .map(|instruction| (*stage, index, instruction))
        })
    })
}

/// The RUN step of `stage` for instruction `index`.
pub fn run_step(stage: &Stage, index: usize) -> Option<&RunStep> {
    stage.runs.iter().find(|run| run.instruction == index)
}

/// One `KEY=value` of an ENV (or an `ARG KEY=default`) in the chain.
#[derive(Clone, Debug)]
pub struct Setting<'a> {
    pub key: &'a str,
    /// As written, quotes processed, variables not expanded.
    pub value: &'a str,
    pub span: Span,
    pub instruction: usize,
    /// `ARG` rather than `ENV`: visible to RUN, not to the running container.
    pub build_only: bool,
}

/// ENV and ARG settings of the chain, in build order.
pub fn settings<'a>(ctx: &'a DockerfileContext<'_>, chain: &'a [&'a Stage]) -> Vec<Setting<'a>> {
    let mut out = Vec::new();
    for (_, index, instruction) in chain_instructions(ctx, chain) {
        match &instruction.command {
            Command::Env(pairs) => out.extend(pairs.iter().map(|kv| Setting {
                key: kv.key.as_str(),
                value: kv.value.as_str(),
                span: kv.span,
                instruction: index,
                build_only: false,
            })),
            Command::Arg(decls) => out.extend(decls.iter().map(|decl| Setting {
                key: decl.name.as_str(),
                value: decl.default.as_deref().unwrap_or("$"),
                span: decl.span,
                instruction: index,
                build_only: true,
            })),
            _ => {}
        }
    }
    out
}

/// The last ENV setting of `key` in the chain (what the container gets).
pub fn last_env<'s, 'a>(settings: &'s [Setting<'a>], key: &str) -> Option<&'s Setting<'a>> {
    settings
        .iter()
        .rev()
        .find(|s| !s.build_only && s.key == key)
}

/// One entry of a `:`-separated list, with the setting it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathEntry<'a> {
    pub text: &'a str,
    /// The ENV `KEY=value` that put it there.
    pub setting_span: Span,
}

/// The entries of `var` in force at the end of the chain: each ENV setting
/// replaces the list, except where it refers to the variable itself
/// (`$VAR`, `${VAR}`, `${VAR:+:${VAR}}`), which keeps the earlier entries
/// at that place.
pub fn effective_path<'a>(settings: &[Setting<'a>], var: &str) -> Vec<PathEntry<'a>> {
    let mut entries: Vec<PathEntry<'a>> = Vec::new();
    for setting in settings.iter().filter(|s| !s.build_only && s.key == var) {
        let mut next = Vec::new();
        for piece in split_path_list(setting.value) {
            if refers_to(piece, var) {
                next.extend(entries.iter().cloned());
            } else if !piece.is_empty() {
                next.push(PathEntry {
                    text: piece,
                    setting_span: setting.span,
                });
            }
        }
        entries = next;
    }
    entries
}

fn refers_to(piece: &str, var: &str) -> bool {
    piece.match_indices('$').any(|(at, _)| {
        let after = piece.get(at + 1..).unwrap_or("");
        let name = after.strip_prefix('{').unwrap_or(after);
        name.strip_prefix(var)
            .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
    })
}

/// Splits on `:` outside `${…}`, so `${A:-x}` stays one entry.
pub fn split_path_list(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let bytes = value.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'{' if i > 0 && bytes.get(i - 1) == Some(&b'$') => depth += 1,
            b'}' if depth > 0 => depth -= 1,
            b':' if depth == 0 => {
                out.push(value.get(start..i).unwrap_or(""));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(value.get(start..).unwrap_or(""));
    out
}

/// The span of `needle` inside the file text at `within`, else `within`.
pub fn span_of(ctx: &DockerfileContext<'_>, within: Span, needle: &str) -> Span {
    ctx.source
        .text
        .get(within.start..within.end)
        .and_then(|text| text.find(needle))
        .filter(|_| !needle.is_empty())
        .map_or(within, |at| {
            Span::new(within.start + at, within.start + at + needle.len())
        })
}

/// The last path component (`/opt/venv/bin/pip` → `pip`).
pub fn base_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Index of the word that names the program, past wrappers such as `sudo`
/// and `env VAR=x`.
pub fn program_index(command: &ShellCommand, hygiene: &Hygiene) -> Option<usize> {
    let mut index = 0;
    while let Some(word) = command.words.get(index) {
        if hygiene.is_wrapper(base_name(&word.text)) {
            index += 1;
            // A wrapper's own options and `env`'s assignments.
            while command
                .words
                .get(index)
                .is_some_and(|w| w.text.starts_with('-') || w.text.contains('='))
            {
                index += 1;
            }
            continue;
        }
        return Some(index);
    }
    None
}

/// A package-manager command: which manager, and where its subcommand is.
#[derive(Clone, Copy, Debug)]
pub struct Invocation<'a> {
    pub manager: &'a CacheManager,
    pub command: &'a ShellCommand,
    /// Index of the first subcommand word.
    pub subcommand: usize,
}

impl<'a> Invocation<'a> {
    /// The subcommand words (options before them skipped) match one of `subs`
    /// (`"env create"` is two words). Returns the index of the last word.
    pub fn subcommand_is(&self, subs: &[String]) -> Option<usize> {
        subs.iter().find_map(|sub| {
            let mut last = None;
            for (at, expected) in (self.subcommand..).zip(sub.split_whitespace()) {
                let word = self.command.words.get(at)?;
                if word.text != expected {
                    return None;
                }
                last = Some(at);
            }
            last
        })
    }

    /// Words after index `after`.
    pub fn words_after(&self, after: usize) -> &'a [Word] {
        self.command.words.get(after + 1..).unwrap_or(&[])
    }
}

/// Which manager runs `command`, if any (`pip`, `python -m pip`, `apt-get`…).
pub fn invocation<'a>(command: &'a ShellCommand, hygiene: &'a Hygiene) -> Option<Invocation<'a>> {
    let program_at = program_index(command, hygiene)?;
    let program = base_name(&command.words.get(program_at)?.text);
    for manager in &hygiene.managers {
        let after_program = if manager.is_program(program) {
            Some(program_at + 1)
        } else if manager.is_module_runner(program) {
            module_position(command, program_at, manager)
        } else {
            None
        };
        if let Some(mut at) = after_program {
            // Global options before the subcommand.
            while let Some(word) = command.words.get(at) {
                if !word.text.starts_with('-') {
                    break;
                }
                let takes_value =
                    !word.text.contains('=') && manager.value_options.contains(&word.text);
                at += if takes_value { 2 } else { 1 };
            }
            return Some(Invocation {
                manager,
                command,
                subcommand: at,
            });
        }
    }
    None
}

/// `python -m pip …`: the index after the module word.
fn module_position(
    command: &ShellCommand,
    program_at: usize,
    manager: &CacheManager,
) -> Option<usize> {
    let module = manager.module.as_deref()?;
    let words = command.words.get(program_at + 1..)?;
    let dash_m = words.iter().position(|w| w.text == "-m")?;
    // Only interpreter options may come before `-m`.
    if words.iter().take(dash_m).any(|w| !w.text.starts_with('-')) {
        return None;
    }
    (words.get(dash_m + 1)?.text == module).then_some(program_at + 1 + dash_m + 2)
}

/// What an install command asks for.
#[derive(Clone, Debug, Default)]
pub struct InstallArgs<'a> {
    pub packages: Vec<Package<'a>>,
    /// Flags as written (`--no-deps`, `--no-cache-dir`, `-y`).
    pub flags: Vec<&'a Word>,
    /// Index and wheel-location values (`--index-url URL`).
    pub indexes: Vec<&'a str>,
    /// Local paths and URLs that are not plain requirements.
    pub paths: Vec<&'a Word>,
    /// Something installs packages we cannot see (requirements file,
    /// editable checkout, unexpanded variable, local directory).
    pub opaque: bool,
}

/// One named package of an install.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Package<'a> {
    pub name: String,
    pub extras: Vec<String>,
    pub word: &'a Word,
}

impl InstallArgs<'_> {
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|w| {
            w.text == flag
                || w.text
                    .strip_prefix(flag)
                    .is_some_and(|r| r.starts_with('='))
        })
    }
}

/// Reads the words after an install subcommand.
pub fn install_args<'a>(manager: &CacheManager, words: &'a [Word]) -> InstallArgs<'a> {
    let mut args = InstallArgs::default();
    let mut iter = words.iter();
    while let Some(word) = iter.next() {
        let text = word.text.as_str();
        if text.starts_with('-') {
            let (flag, inline_value) = match text.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => (flag, Some(value)),
                _ => (text, None),
            };
            let takes_value = manager.install_value_options.iter().any(|o| o == flag);
            let value = match inline_value {
                Some(value) => Some(value),
                None if takes_value => iter.next().map(|w| w.text.as_str()),
                None => None,
            };
            if manager.opaque_options.iter().any(|o| o == flag) {
                args.opaque = true;
            }
            if let Some(value) = value.filter(|_| manager.index_options.iter().any(|o| o == flag)) {
                args.indexes.push(value);
            }
            args.flags.push(word);
            continue;
        }
        if text.contains('$') {
            args.opaque = true;
        } else if text.contains('/') || text.starts_with('.') || text.contains("://") {
            if !text.ends_with(".whl") {
                args.opaque = true;
            }
            args.paths.push(word);
        } else if let Some(package) = parse_requirement(text, word) {
            args.packages.push(package);
        }
    }
    args
}

/// `name[extra,…]<spec>`, `name=version` (apt, conda), `channel::name`.
fn parse_requirement<'a>(text: &str, word: &'a Word) -> Option<Package<'a>> {
    let text = text.rsplit("::").next().unwrap_or(text);
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '*')))
        .unwrap_or(text.len());
    let name = text.get(..end)?;
    if name.is_empty() {
        return None;
    }
    let rest = text.get(end..).unwrap_or("");
    let extras = rest
        .strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .map(|(inside, _)| {
            inside
                .split(',')
                .map(|e| e.trim().to_string())
                .filter(|e| !e.is_empty())
                .collect()
        })
        .unwrap_or_default();
    Some(Package {
        name: name.to_string(),
        extras,
        word,
    })
}

/// The package name of a wheel file (`torch-2.5.0-cp311-….whl` → `torch`).
pub fn wheel_name(path: &str) -> Option<&str> {
    let file = base_name(path).strip_suffix(".whl")?;
    file.split('-').next().filter(|n| !n.is_empty())
}

/// Whether `command` is `rm` with an argument `matches` accepts.
pub fn rm_target<'a>(
    command: &'a ShellCommand,
    hygiene: &Hygiene,
    matches: impl Fn(&str) -> bool,
) -> Option<&'a Word> {
    let at = program_index(command, hygiene)?;
    if base_name(&command.words.get(at)?.text) != "rm" {
        return None;
    }
    command
        .words
        .get(at + 1..)?
        .iter()
        .filter(|w| !w.text.starts_with('-'))
        .find(|w| matches(&w.text))
}

/// How a directory reached the run-time loader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoaderRoute {
    /// An entry of a loader variable (`LD_LIBRARY_PATH`) set by ENV.
    Env,
    /// Written to an ld.so.conf file, or given to `ldconfig`.
    LdConfig,
}

/// A directory the shipped image's loader searches, and where that is set.
#[derive(Clone, Debug)]
pub struct LoaderDir {
    pub dir: String,
    pub span: Span,
    pub route: LoaderRoute,
}

/// Directories matching `wanted` that the shipped image puts on the loader
/// path: effective loader-variable entries, ld.so.conf writes (`echo DIR >
/// /etc/ld.so.conf.d/x.conf`, `… | tee …`) and `ldconfig DIR`.
pub fn loader_dirs(ctx: &DockerfileContext<'_>, wanted: impl Fn(&str) -> bool) -> Vec<LoaderDir> {
    let runtime = &ctx.knowledge.cupti.runtime;
    let hygiene = &ctx.knowledge.cupti.hygiene;
    let chain = target_chain(ctx.model);
    let settings = settings(ctx, &chain);
    let mut out = Vec::new();
    for var in &runtime.loader_vars {
        for entry in effective_path(&settings, var) {
            if wanted(entry.text) {
                out.push(LoaderDir {
                    dir: entry.text.to_string(),
                    span: span_of(ctx, entry.setting_span, entry.text),
                    route: LoaderRoute::Env,
                });
            }
        }
    }
    for (stage, index, _) in chain_instructions(ctx, &chain) {
        let Some(step) = run_step(stage, index) else {
            continue;
        };
        for (position, command) in step.commands.iter().enumerate() {
            let Some(at) = program_index(command, hygiene) else {
                continue;
            };
            let program = command.words.get(at).map_or("", |w| base_name(&w.text));
            let args = command.words.get(at + 1..).unwrap_or(&[]);
            let writes_conf = match program {
                "ldconfig" => true,
                "echo" | "printf" => {
                    let marker = runtime.ld_conf_marker.as_str();
                    // The redirection target is not a word; read the line.
                    let line_rest = ctx
                        .source
                        .text
                        .get(command.span.end..)
                        .and_then(|rest| rest.split(['\n', ';', '&']).next())
                        .unwrap_or("");
                    let piped_to_tee = step.commands.get(position + 1).is_some_and(|next| {
                        next.words
                            .first()
                            .is_some_and(|w| base_name(&w.text) == "tee")
                            && next.words.iter().any(|w| w.text.contains(marker))
                    });
                    !marker.is_empty()
                        && (args.iter().any(|w| w.text.contains(marker))
                            || line_rest.contains(marker)
                            || piped_to_tee)
                }
                _ => false,
            };
            if !writes_conf {
                continue;
            }
            for word in args.iter().filter(|w| !w.text.starts_with('-')) {
                for piece in word.text.split_whitespace() {
                    if wanted(piece) {
                        out.push(LoaderDir {
                            dir: piece.to_string(),
                            span: word.span,
                            route: LoaderRoute::LdConfig,
                        });
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::cupti::CuptiKnowledge;

    fn words(text: &str) -> ShellCommand {
        let mut offset = 0;
        let words = text
            .split(' ')
            .map(|w| {
                let word = Word {
                    text: w.to_string(),
                    span: Span::new(offset, offset + w.len()),
                };
                offset += w.len() + 1;
                word
            })
            .collect();
        ShellCommand {
            words,
            assignments: Vec::new(),
            span: Span::new(0, text.len()),
        }
    }

    #[test]
    fn path_lists_keep_braced_defaults_whole() {
        assert_eq!(
            split_path_list("/a:${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}:/b"),
            vec!["/a", "${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}", "/b"]
        );
        assert!(refers_to(
            "${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}",
            "LD_LIBRARY_PATH"
        ));
        assert!(refers_to("$LD_LIBRARY_PATH", "LD_LIBRARY_PATH"));
        assert!(!refers_to("$LD_LIBRARY_PATH_EXTRA", "LD_LIBRARY_PATH"));
    }

    #[test]
    fn managers_are_found_through_wrappers_and_python_m() {
        let k = CuptiKnowledge::embedded().unwrap();
        let h = &k.hygiene;
        let cmd = words(
            "sudo -E /opt/venv/bin/python3 -m pip install --no-deps torch==2.5.1 jax[cuda12]>=0.4",
        );
        let inv = invocation(&cmd, h).unwrap();
        assert_eq!(inv.manager.name, "pip");
        let last = inv.subcommand_is(&inv.manager.install).unwrap();
        let args = install_args(inv.manager, inv.words_after(last));
        assert!(args.has_flag("--no-deps"));
        assert_eq!(args.packages[0].name, "torch");
        assert_eq!(args.packages[1].extras, vec!["cuda12".to_string()]);

        let cmd = words(
            "apt-get -o Dpkg::Options::=--force-confold -y install cuda-cupti-12-4=12.4.127-1",
        );
        let inv = invocation(&cmd, h).unwrap();
        let last = inv.subcommand_is(&inv.manager.install).unwrap();
        let args = install_args(inv.manager, inv.words_after(last));
        assert_eq!(args.packages[0].name, "cuda-cupti-12-4");

        let cmd = words("micromamba env create -n ml -f env.yml");
        let inv = invocation(&cmd, h).unwrap();
        assert!(inv.subcommand_is(&inv.manager.install).is_some());
        let cmd = words("pip install -r requirements.txt --extra-index-url https://download.pytorch.org/whl/cu124");
        let inv = invocation(&cmd, h).unwrap();
        let last = inv.subcommand_is(&inv.manager.install).unwrap();
        let args = install_args(inv.manager, inv.words_after(last));
        assert!(args.opaque);
        assert_eq!(args.indexes, vec!["https://download.pytorch.org/whl/cu124"]);
        assert!(invocation(&words("pipx install black"), h).is_none());
    }

    #[test]
    fn wheel_names() {
        assert_eq!(
            wheel_name("/wheels/torch-2.5.0a0-cp311-cp311-linux_x86_64.whl"),
            Some("torch")
        );
        assert_eq!(wheel_name("/wheels/*.whl"), Some("*"));
        assert_eq!(wheel_name("/wheels/dist"), None);
    }
}
