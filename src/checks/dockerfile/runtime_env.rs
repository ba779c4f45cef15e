//! The shipped image's run-time environment, as the rules about it (CU104,
//! CU110–CU125) need it: ENV and ARG settings with where they are written,
//! `PATH`-style lists evaluated setting by setting (`$VAR` keeps the earlier
//! entries), and the directories the dynamic loader searches, through
//! `LD_LIBRARY_PATH` or ld.so.conf writes and `ldconfig`.
//!
//! The model's `Stage::env` holds the final values; the rules here also need
//! the span of each setting, to point at the entry that is wrong, and the ENV
//! a known parent image sets in its own Dockerfile (rules/images.toml
//! `parent_env`), which the file does not show.

use crate::checks::dockerfile::support::shipped_stages;
use crate::checks::DockerfileContext;
use crate::dockerfile::ast::{Command, Instruction, Word};
use crate::dockerfile::model::{BaseImage, RunStep, Stage};
use crate::paths::basename;
use crate::source::Span;

/// The instructions of `chain` (stages, root first), in build order, with
/// their index.
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

impl Setting<'_> {
    /// The value as the container gets it: the literal, or the model's expansion in `target` where
    /// it holds variables (unknown: `None`).
    pub fn value_in(&self, target: &Stage) -> Option<String> {
        if !self.value.contains('$') {
            return Some(self.value.to_string());
        }
        // `${KEY:+$KEY,}graphics` keeps what the base image set, which the model does not know
        // (BuildKit expands it from the base's config): the result is unknown.
        let key = self.key;
        if self.value.contains(&format!("${key}")) || self.value.contains(&format!("${{{key}")) {
            return None;
        }
        target
            .env_value(self.key)
            .filter(|v| !v.contains('$'))
            .map(str::to_string)
    }
}

/// ENV and ARG settings of the chain, in build order. The ENV that the
/// root image's own Dockerfile sets, where the images knowledge knows its
/// family (`[[images.parent_env]]`), comes first, at the root's `FROM`.
pub fn settings<'a>(ctx: &'a DockerfileContext<'_>, chain: &'a [&'a Stage]) -> Vec<Setting<'a>> {
    let mut out = Vec::new();
    if let Some(root) = chain.first() {
        if let BaseImage::Image(image) = &root.base {
            for known in ctx.knowledge.images.parent_env(image) {
                out.extend(known.env.iter().map(|(key, value)| Setting {
                    key: key.as_str(),
                    value: value.as_str(),
                    span: root.base_span,
                    instruction: root.from_instruction,
                    build_only: false,
                }));
            }
        }
    }
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

/// How a directory reached the run-time loader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoaderRoute {
    /// An entry of a loader variable (`LD_LIBRARY_PATH`) set by ENV.
    Env,
    /// Written to an ld.so.conf file: every later cache rebuild, the
    /// NVIDIA Container Toolkit's at container start included, reads it.
    LdConfig,
    /// Given only on `ldconfig`'s command line: in the build's ld cache,
    /// which the NVIDIA Container Toolkit rebuilds from the ld.so.conf files
    /// at container start.
    LdConfigArgument,
}

impl LoaderRoute {
    /// How findings say it: "the directory … {phrase}".
    pub fn phrase(self) -> &'static str {
        match self {
            LoaderRoute::Env => "is on LD_LIBRARY_PATH",
            LoaderRoute::LdConfig | LoaderRoute::LdConfigArgument => {
                "is registered with the dynamic loader (ld.so.conf/ldconfig)"
            }
        }
    }
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
/// /etc/ld.so.conf.d/x.conf`, `… | tee …`) and `ldconfig DIR`, as far as
/// they survive the build (see [`LdCache`]).
pub fn loader_dirs(ctx: &DockerfileContext<'_>, wanted: impl Fn(&str) -> bool) -> Vec<LoaderDir> {
    let runtime = &ctx.knowledge.cupti.runtime;
    let chain = shipped_stages(ctx.model);
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
    let mut cache = LdCache::default();
    for step in chain.iter().flat_map(|stage| &stage.runs) {
        for (position, command) in step.commands.iter().enumerate() {
            let at = command.program;
            let program = command.words.get(at).map_or("", |w| basename(&w.text));
            let args = command.words.get(at + 1..).unwrap_or(&[]);
            match program {
                "ldconfig" => cache.ldconfig(args),
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
                            .is_some_and(|w| basename(&w.text) == "tee")
                            && next.words.iter().any(|w| w.text.contains(marker))
                    });
                    let writes_conf = !marker.is_empty()
                        && (args.iter().any(|w| w.text.contains(marker))
                            || line_rest.contains(marker)
                            || piped_to_tee);
                    if writes_conf {
                        cache.configured.extend(dir_words(args));
                    }
                }
                _ => {}
            }
        }
    }
    for (dir, span, route) in cache.left_behind() {
        if wanted(dir) {
            out.push(LoaderDir {
                dir: dir.to_string(),
                span,
                route,
            });
        }
    }
    out
}

/// What the build leaves in the image's ld cache, modelled once for every
/// rule: a directory written to an ld.so.conf file stays (every later
/// `ldconfig`, the NVIDIA Container Toolkit's included, reads it again),
/// while a directory only given on `ldconfig`'s command line is in the
/// cache until the next `ldconfig` rebuilds it from the configuration
/// files. So `ldconfig <stubs> && make && ldconfig` leaves no stubs
/// behind, and `ldconfig /usr/local/cuda-12.2/compat` as the last word
/// ships the compat `libcuda` in the cache.
#[derive(Default)]
struct LdCache<'a> {
    /// Directories written to ld.so.conf files.
    configured: Vec<(&'a str, Span)>,
    /// Directories the last cache-building `ldconfig` got as arguments.
    command_line: Vec<(&'a str, Span)>,
}

impl<'a> LdCache<'a> {
    /// One `ldconfig` run with `args`.
    fn ldconfig(&mut self, args: &'a [Word]) {
        let mut dirs = Vec::new();
        let mut words = args.iter();
        while let Some(word) = words.next() {
            match word.text.as_str() {
                // No cache written: links only (-n implies -N), or a print.
                "-n" | "-N" | "-p" | "--print-cache" => return,
                // Options that take a value: skip it.
                "-f" | "-C" | "-r" | "-c" | "--format" => {
                    words.next();
                }
                text if text.starts_with('-') => {}
                _ => dirs.extend(split_dirs(word)),
            }
        }
        self.command_line = dirs;
    }

    /// What is in the cache when the build ends.
    fn left_behind(self) -> impl Iterator<Item = (&'a str, Span, LoaderRoute)> {
        let configured = self.configured.into_iter();
        let argument = self.command_line.into_iter();
        configured
            .map(|(dir, span)| (dir, span, LoaderRoute::LdConfig))
            .chain(argument.map(|(dir, span)| (dir, span, LoaderRoute::LdConfigArgument)))
    }
}

/// The directory words of `args` (flags left out), split on whitespace.
fn dir_words(args: &[Word]) -> Vec<(&str, Span)> {
    args.iter()
        .filter(|w| !w.text.starts_with('-'))
        .flat_map(split_dirs)
        .collect()
}

/// The directories of a word: an expanded variable may hold several,
/// separated by blanks; a command substitution (`cuda-$(echo $V | cut
/// -d. -f1,2)/compat`) is part of one directory, blanks and all.
fn split_dirs(word: &Word) -> impl Iterator<Item = (&str, Span)> {
    let text = word.text.as_str();
    let mut pieces = Vec::new();
    let (mut depth, mut start) = (0usize, None::<usize>);
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' if i > 0 && bytes.get(i - 1) == Some(&b'$') => depth += 1,
            b')' if depth > 0 => depth -= 1,
            b if b.is_ascii_whitespace() && depth == 0 => {
                if let Some(s) = start.take() {
                    pieces.push(text.get(s..i).unwrap_or(""));
                }
                continue;
            }
            _ => {}
        }
        if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        pieces.push(text.get(s..).unwrap_or(""));
    }
    pieces.into_iter().map(move |dir| (dir, word.span))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_command_substitution_stays_in_its_directory() {
        let word = Word {
            text: "/a /usr/local/cuda-$(echo $V | cut -d. -f1,2)/compat/".into(),
            span: Span::new(0, 1),
        };
        let dirs: Vec<&str> = split_dirs(&word).map(|(d, _)| d).collect();
        assert_eq!(
            dirs,
            vec!["/a", "/usr/local/cuda-$(echo $V | cut -d. -f1,2)/compat/"]
        );
    }
}
