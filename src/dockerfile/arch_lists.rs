//! The GPU architecture lists a build compiles for, read once from the
//! model: `TORCH_CUDA_ARCH_LIST` (PyTorch's extension builder), `CUDAARCHS`
//! and `CMAKE_CUDA_ARCHITECTURES` (CMake), and nvcc's `-gencode`, `-arch`
//! and `-code`, wherever the build sets them: ENV, ARG (after `--build-arg`),
//! and RUN (`VAR=… cmd`, `export VAR=…`, `-DCMAKE_CUDA_ARCHITECTURES=…`,
//! nvcc's options). Each entry says whether it ships SASS (runs as is) or
//! PTX (JIT-compiled by the driver), for which architecture and variant.
//! CU132 (the toolkit cannot build it), CU133 (`native`: the build asks for
//! a GPU) and CU134 (the fleet is not reached) read these lists.
//!
//! The three syntaxes, as their tools read them:
//! - PyTorch: `8.0` is SASS only, `8.6+PTX` adds PTX, names (`Ampere`)
//!   stand for lists; `;` or spaces separate (torch/utils/cpp_extension.py,
//!   `_get_cuda_arch_flags`).
//! - CMake: `80` is SASS and PTX, `80-real` SASS only, `80-virtual` PTX
//!   only; `all`, `all-major`, `native` are special (CMake's
//!   `CUDA_ARCHITECTURES` property).
//! - nvcc: `-gencode arch=compute_80,code=[sm_80,compute_80]` ships what
//!   `code=` names; `-arch=sm_80` alone is `-arch=compute_80
//!   -code=sm_80,compute_80`; with `-code`, `-arch` only names the virtual
//!   architecture compiled through (nvcc's "GPU Compilation" chapter).

use crate::dockerfile::ast::{Command, Instruction};
use crate::dockerfile::model::{Reach, ShellCommand, Stage};
use crate::paths::basename;
use crate::source::Span;

/// Variables whose value is an architecture list, with their syntax.
pub const ARCH_VARIABLES: &[(&str, Syntax)] = &[
    ("TORCH_CUDA_ARCH_LIST", Syntax::Torch),
    ("CUDAARCHS", Syntax::Cmake),
    ("CMAKE_CUDA_ARCHITECTURES", Syntax::Cmake),
];
/// The CMake cache variable a `-D` sets.
const CMAKE_DEFINE: &str = "CMAKE_CUDA_ARCHITECTURES";
/// nvcc options whose value names architectures.
const NVCC_ARCH_OPTIONS: &[&str] = &[
    "-gencode",
    "--generate-code",
    "-arch",
    "--gpu-architecture",
    "-code",
    "--gpu-code",
];
const NVCC_CODE_OPTIONS: &[&str] = &["-code", "--gpu-code"];

/// How a list is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    Torch,
    Cmake,
    Nvcc,
}

/// Where a list is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Env,
    Arg,
    Run,
}

/// `a` code runs on its own architecture only; `f` on its family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Plain,
    ArchSpecific,
    Family,
}

/// The values that mean "ask the toolkit" or "ask the GPU".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    /// Every architecture the toolkit builds (`all`).
    All,
    /// Every major architecture the toolkit builds (`all-major`).
    AllMajor,
    /// The architectures of the GPUs the build machine has (`native`).
    Native,
}

/// What one entry names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `sm_80`, `8.6`, `90a`: architecture 80, 86, 90 with a variant.
    Arch {
        arch: u32,
        variant: Variant,
    },
    /// A PyTorch name (`Ampere`, `Volta+Tegra`) that stands for a list.
    Named(String),
    Special(Special),
}

/// One entry of a list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchEntry {
    /// As written (`8.6+PTX`, `80-real`, `sm_90a`).
    pub text: String,
    pub target: Target,
    /// Ships SASS for the architecture.
    pub sass: bool,
    /// Ships PTX for the architecture.
    pub ptx: bool,
}

impl ArchEntry {
    /// An nvcc virtual architecture compiled through but not shipped
    /// (`arch=compute_80` of a `-gencode`, `-arch` beside `-code`).
    pub fn is_intermediate(&self) -> bool {
        matches!(self.target, Target::Arch { .. }) && !self.sass && !self.ptx
    }
}

/// One list as the build sets it.
#[derive(Clone, Debug)]
pub struct ArchList {
    /// What set it, for messages: `` `ENV TORCH_CUDA_ARCH_LIST` ``, `` nvcc `-gencode` ``.
    pub setting: String,
    /// The variable, for lists set through one.
    pub variable: Option<&'static str>,
    pub syntax: Syntax,
    pub origin: Origin,
    /// The value as the build resolves it.
    pub value: String,
    pub span: Span,
    /// For lists set in a RUN: the stage's RUN and command index, so that
    /// the options of one nvcc command can be taken together.
    pub command: Option<(usize, usize)>,
    /// Empty when the value is not known here (it still holds `$VAR`).
    pub entries: Vec<ArchEntry>,
    /// A CMake cache definition (`-DCMAKE_CUDA_ARCHITECTURES=…`), which CMake
    /// reads; an environment variable of that name it does not (it reads
    /// `CUDAARCHS`).
    pub cmake_define: bool,
}

impl ArchList {
    /// Whether the value is known (no `$VAR` left in it).
    pub fn is_known(&self) -> bool {
        !self.value.contains('$')
    }

    /// The special value (`native`, `all`, `all-major`) the list holds, if any.
    pub fn special(&self) -> Option<Special> {
        self.entries.iter().find_map(|entry| match entry.target {
            Target::Special(special) => Some(special),
            _ => None,
        })
    }
}

/// `90` → 90, `9.0` → 90, `10.0a` → (100, a), `sm_120f` → (120, f).
fn parse_arch_number(text: &str) -> Option<(u32, Variant)> {
    let lower = text.trim().to_ascii_lowercase();
    let number = ["sm_", "compute_", "lto_"]
        .iter()
        .find_map(|prefix| lower.strip_prefix(prefix))
        .unwrap_or(&lower);
    let (number, variant) = match number.strip_suffix('a') {
        Some(rest) => (rest, Variant::ArchSpecific),
        None => match number.strip_suffix('f') {
            Some(rest) => (rest, Variant::Family),
            None => (number, Variant::Plain),
        },
    };
    let arch = if let Some((major, minor)) = number.split_once('.') {
        let (major, minor): (u32, u32) = (major.parse().ok()?, minor.parse().ok()?);
        if minor > 9 || major == 0 {
            return None;
        }
        major * 10 + minor
    } else {
        if !(2..=3).contains(&number.len()) || !number.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        number.parse().ok()?
    };
    (arch >= 10).then_some((arch, variant))
}

fn special(text: &str) -> Option<Special> {
    match text.to_ascii_lowercase().as_str() {
        "all" => Some(Special::All),
        "all-major" => Some(Special::AllMajor),
        "native" => Some(Special::Native),
        _ => None,
    }
}

fn entry(text: &str, target: Target, sass: bool, ptx: bool) -> ArchEntry {
    ArchEntry {
        text: text.to_string(),
        target,
        sass,
        ptx,
    }
}

/// The tokens of a list: `;`, `,` and white space separate; quotes go.
fn tokens(value: &str) -> impl Iterator<Item = &str> {
    value
        .split([';', ',', ' ', '\t', '"', '\''])
        .filter(|token| !token.is_empty())
}

/// A `TORCH_CUDA_ARCH_LIST` value.
pub fn parse_torch(value: &str) -> Vec<ArchEntry> {
    tokens(value)
        .map(|token| {
            let (base, ptx) = match token.len().checked_sub(4) {
                Some(at)
                    if token.is_char_boundary(at) && token[at..].eq_ignore_ascii_case("+ptx") =>
                {
                    (&token[..at], true)
                }
                _ => (token, false),
            };
            match parse_arch_number(base) {
                Some((arch, variant)) => entry(token, Target::Arch { arch, variant }, true, ptx),
                None => match special(base) {
                    Some(s) => entry(token, Target::Special(s), false, false),
                    None => entry(token, Target::Named(base.to_string()), true, ptx),
                },
            }
        })
        .collect()
}

/// A `CMAKE_CUDA_ARCHITECTURES` / `CUDAARCHS` value.
pub fn parse_cmake(value: &str) -> Vec<ArchEntry> {
    tokens(value)
        .filter_map(|token| {
            if let Some(s) = special(token) {
                return Some(entry(token, Target::Special(s), false, false));
            }
            let (base, sass, ptx) = if let Some(base) = token.strip_suffix("-real") {
                (base, true, false)
            } else if let Some(base) = token.strip_suffix("-virtual") {
                (base, false, true)
            } else {
                (token, true, true)
            };
            let (arch, variant) = parse_arch_number(base)?;
            Some(entry(token, Target::Arch { arch, variant }, sass, ptx))
        })
        .collect()
}

/// One nvcc architecture word: `sm_80` (SASS), `compute_80` (PTX), `lto_80`
/// (link-time code that becomes SASS), or a special value.
fn nvcc_code(token: &str) -> Option<ArchEntry> {
    if let Some(s) = special(token) {
        return Some(entry(token, Target::Special(s), false, false));
    }
    let (arch, variant) = parse_arch_number(token)?;
    let is_ptx = token.to_ascii_lowercase().starts_with("compute_");
    Some(entry(
        token,
        Target::Arch { arch, variant },
        !is_ptx,
        is_ptx,
    ))
}

/// The value of one nvcc option. `has_code` says whether the command also
/// gives `-code`, which makes `-arch` name only the virtual architecture.
pub fn parse_nvcc(option: &str, value: &str, has_code: bool) -> Vec<ArchEntry> {
    match option {
        "-gencode" | "--generate-code" => {
            // `arch=compute_80,code=[sm_80,compute_80]`: arch= is compiled
            // through, code= is shipped.
            let (arch_part, code_part) = match value.find("code=") {
                Some(at) => (&value[..at], &value[at + "code=".len()..]),
                None => (value, ""),
            };
            let arch_part = arch_part.trim_start_matches("arch=");
            let mut entries: Vec<ArchEntry> = tokens(arch_part)
                .filter_map(|token| {
                    let (arch, variant) = parse_arch_number(token)?;
                    Some(entry(token, Target::Arch { arch, variant }, false, false))
                })
                .collect();
            entries.extend(
                tokens(code_part)
                    .map(|token| token.trim_matches(['[', ']']))
                    .filter_map(nvcc_code),
            );
            entries
        }
        "-arch" | "--gpu-architecture" => tokens(value)
            .filter_map(|token| {
                if let Some(s) = special(token) {
                    return Some(entry(token, Target::Special(s), false, false));
                }
                let (arch, variant) = parse_arch_number(token)?;
                let is_virtual = token.to_ascii_lowercase().starts_with("compute_");
                let (sass, ptx) = match (has_code, is_virtual) {
                    (true, _) => (false, false),
                    // `-arch=compute_80`: PTX only.
                    (false, true) => (false, true),
                    // `-arch=sm_80`: `-arch=compute_80 -code=sm_80,compute_80`.
                    (false, false) => (true, true),
                };
                Some(entry(token, Target::Arch { arch, variant }, sass, ptx))
            })
            .collect(),
        _ => tokens(value).filter_map(nvcc_code).collect(),
    }
}

fn parse(syntax: Syntax, value: &str) -> Vec<ArchEntry> {
    if value.contains('$') {
        return Vec::new();
    }
    match syntax {
        Syntax::Torch => parse_torch(value),
        Syntax::Cmake => parse_cmake(value),
        Syntax::Nvcc => Vec::new(),
    }
}

/// The variable `name` is one of [`ARCH_VARIABLES`].
pub fn arch_variable(name: &str) -> Option<(&'static str, Syntax)> {
    ARCH_VARIABLES
        .iter()
        .copied()
        .find(|(known, _)| *known == name)
}

/// `-gencode=arch=…`, `-arch=sm_80` or `-arch sm_80`: the option's value and
/// the index of the word holding it.
fn option_value<'w>(words: &[&'w str], index: usize, option: &str) -> Option<(&'w str, usize)> {
    let word = words.get(index)?;
    if *word == option {
        return words.get(index + 1).map(|value| (*value, index + 1));
    }
    word.strip_prefix(option)?
        .strip_prefix('=')
        .map(|value| (value, index))
}

/// Whether a command runs nvcc.
pub fn is_nvcc(command: &ShellCommand) -> bool {
    command
        .words
        .first()
        .is_some_and(|w| basename(&w.text) == "nvcc")
}

/// The lists one shell command sets or uses: its `VAR=…` prefixes, `VAR=…`
/// words (`export`, `env`), `-DCMAKE_CUDA_ARCHITECTURES=…`, nvcc options.
/// `at` is the command's (RUN, command) index in its stage.
pub fn command_lists(command: &ShellCommand, at: (usize, usize)) -> Vec<ArchList> {
    let mut lists = Vec::new();
    let run_list = |setting: String,
                    variable: Option<&'static str>,
                    syntax: Syntax,
                    value: &str,
                    span: Span,
                    entries: Vec<ArchEntry>| ArchList {
        setting,
        variable,
        syntax,
        origin: Origin::Run,
        value: value.to_string(),
        span,
        command: Some(at),
        entries,
        cmake_define: false,
    };
    for (name, value) in &command.assignments {
        if let Some((variable, syntax)) = arch_variable(name) {
            lists.push(run_list(
                format!("`{name}=`"),
                Some(variable),
                syntax,
                value,
                command.span,
                parse(syntax, value),
            ));
        }
    }
    let words: Vec<&str> = command.words.iter().map(|w| w.text.as_str()).collect();
    let nvcc = is_nvcc(command);
    let has_code = nvcc
        && (0..words.len()).any(|index| {
            NVCC_CODE_OPTIONS
                .iter()
                .any(|option| option_value(&words, index, option).is_some())
        });
    for (index, word) in command.words.iter().enumerate() {
        let text = word.text.as_str();
        // `export VAR=…`, `env VAR=… cmd`, `-DCMAKE_CUDA_ARCHITECTURES=…`.
        let assignment = text.strip_prefix("-D").unwrap_or(text);
        if let Some((name, value)) = assignment.split_once('=') {
            let name = name.split(':').next().unwrap_or(name);
            let is_define =
                text.starts_with("-D") || words.get(index.wrapping_sub(1)) == Some(&"-D");
            let variable = if is_define && name == CMAKE_DEFINE {
                Some((CMAKE_DEFINE, Syntax::Cmake))
            } else if !text.starts_with('-') {
                arch_variable(name)
            } else {
                None
            };
            if let Some((variable, syntax)) = variable {
                let mut list = run_list(
                    format!("`{name}`"),
                    Some(variable),
                    syntax,
                    value,
                    word.span,
                    parse(syntax, value),
                );
                list.cmake_define = is_define;
                lists.push(list);
                continue;
            }
        }
        if !nvcc {
            continue;
        }
        for option in NVCC_ARCH_OPTIONS {
            if let Some((value, at_word)) = option_value(&words, index, option) {
                let span = command.words.get(at_word).map_or(word.span, |w| w.span);
                let entries = if value.contains('$') {
                    Vec::new()
                } else {
                    parse_nvcc(option, value, has_code)
                };
                lists.push(run_list(
                    format!("nvcc `{option}`"),
                    None,
                    Syntax::Nvcc,
                    value,
                    span,
                    entries,
                ));
            }
        }
    }
    lists
}

/// Whether the ENV (or, `env` false, ARG) instruction at `at` is the
/// stage's last of its kind to set `name`: the resolved value is the
/// stage's final one, so only the last setting reports it.
fn last_setting(instructions: &[Instruction], at: usize, name: &str, env: bool) -> bool {
    !instructions.iter().skip(at + 1).any(|i| match &i.command {
        Command::Env(pairs) if env => pairs.iter().any(|kv| kv.key == name),
        Command::Arg(args) if !env => args.iter().any(|a| a.name == name),
        _ => false,
    })
}

/// Every list `stage` sets: its own ENV and ARG (resolved as the build
/// resolves them, at the end of the stage: `--build-arg` overrides,
/// expanded references), then those of the RUN commands the build runs (a
/// command in a shell branch the build does not take, or may not take, is
/// not part of this build). `instructions` are the stage's instructions.
pub fn stage_lists(instructions: &[Instruction], stage: &Stage) -> Vec<ArchList> {
    let mut lists = Vec::new();
    for (at, instruction) in instructions.iter().enumerate() {
        match &instruction.command {
            Command::Env(pairs) => {
                for pair in pairs {
                    let Some((variable, syntax)) = arch_variable(&pair.key) else {
                        continue;
                    };
                    if !last_setting(instructions, at, &pair.key, true) {
                        continue;
                    }
                    if let Some(value) = stage.env_value(&pair.key) {
                        lists.push(ArchList {
                            setting: format!("`ENV {}`", pair.key),
                            variable: Some(variable),
                            syntax,
                            origin: Origin::Env,
                            value: value.to_string(),
                            span: pair.span,
                            command: None,
                            entries: parse(syntax, value),
                            cmake_define: false,
                        });
                    }
                }
            }
            Command::Arg(args) => {
                for arg in args {
                    let Some((variable, syntax)) = arch_variable(&arg.name) else {
                        continue;
                    };
                    // ENV of the same name shadows the ARG.
                    if !last_setting(instructions, at, &arg.name, false)
                        || stage.env_value(&arg.name).is_some()
                    {
                        continue;
                    }
                    if let Some(value) = stage.arg_value(&arg.name) {
                        lists.push(ArchList {
                            setting: format!("`ARG {}`", arg.name),
                            variable: Some(variable),
                            syntax,
                            origin: Origin::Arg,
                            value: value.to_string(),
                            span: arg.span,
                            command: None,
                            entries: parse(syntax, value),
                            cmake_define: false,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    for (run_index, run) in stage.runs.iter().enumerate() {
        for (command_index, command) in run.commands.iter().enumerate() {
            if command.reach == Reach::Runs {
                lists.extend(command_lists(command, (run_index, command_index)));
            }
        }
    }
    lists
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped(entries: &[ArchEntry]) -> Vec<String> {
        entries
            .iter()
            .map(|e| match e.target {
                Target::Arch { arch, variant } => {
                    let suffix = match variant {
                        Variant::Plain => "",
                        Variant::ArchSpecific => "a",
                        Variant::Family => "f",
                    };
                    let mut kinds = Vec::new();
                    if e.sass {
                        kinds.push(format!("sm_{arch}{suffix}"));
                    }
                    if e.ptx {
                        kinds.push(format!("compute_{arch}{suffix}"));
                    }
                    if kinds.is_empty() {
                        kinds.push(format!("via compute_{arch}{suffix}"));
                    }
                    kinds.join("+")
                }
                Target::Named(ref name) => format!("name {name}"),
                Target::Special(s) => format!("{s:?}"),
            })
            .collect()
    }

    #[test]
    fn torch_lists_ship_sass_and_ptx_only_where_asked() {
        assert_eq!(
            shipped(&parse_torch("7.0 7.5;8.0;8.6+PTX 9.0a 12.0+ptx Ampere")),
            [
                "sm_70",
                "sm_75",
                "sm_80",
                "sm_86+compute_86",
                "sm_90a",
                "sm_120+compute_120",
                "name Ampere"
            ]
        );
    }

    #[test]
    fn cmake_lists_ship_both_unless_suffixed() {
        assert_eq!(
            shipped(&parse_cmake("80;86-real;90a-virtual;100f;native")),
            [
                "sm_80+compute_80",
                "sm_86",
                "compute_90a",
                "sm_100f+compute_100f",
                "Native"
            ]
        );
        assert_eq!(shipped(&parse_cmake("all-major")), ["AllMajor"]);
    }

    #[test]
    fn nvcc_ships_what_code_names() {
        assert_eq!(
            shipped(&parse_nvcc(
                "-gencode",
                "arch=compute_90a,code=[sm_90a,compute_90a]",
                false
            )),
            ["via compute_90a", "sm_90a", "compute_90a"]
        );
        assert_eq!(
            shipped(&parse_nvcc("-gencode", "arch=compute_80,code=sm_80", false)),
            ["via compute_80", "sm_80"]
        );
        assert_eq!(
            shipped(&parse_nvcc("-arch", "sm_75", false)),
            ["sm_75+compute_75"]
        );
        assert_eq!(
            shipped(&parse_nvcc("-arch", "compute_75", true)),
            ["via compute_75"]
        );
        assert_eq!(shipped(&parse_nvcc("-arch", "native", false)), ["Native"]);
        assert_eq!(
            shipped(&parse_nvcc("-code", "sm_80,compute_80", false)),
            ["sm_80", "compute_80"]
        );
    }

    #[test]
    fn arch_numbers_in_every_spelling() {
        assert_eq!(parse_arch_number("10.0"), Some((100, Variant::Plain)));
        assert_eq!(parse_arch_number("sm_120f"), Some((120, Variant::Family)));
        assert_eq!(
            parse_arch_number("compute_90a"),
            Some((90, Variant::ArchSpecific))
        );
        assert_eq!(parse_arch_number("8.10"), None);
        assert_eq!(parse_arch_number("Ampere"), None);
        assert_eq!(parse_arch_number("7"), None);
    }
}
