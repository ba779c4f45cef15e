//! Package installs found in RUN commands: `apt-get install`, `pip install`,
//! `conda install`, `dnf install`, `apk add` … with their packages, options,
//! indexes and requirement files, so rules query data instead of words.
//!
//! The option tables below are command-line syntax (which options take a
//! value), taken from each tool's manual: apt-get(8), `pip install --help`,
//! `uv pip install --help`, `conda install --help`, dnf(8), yum(8),
//! microdnf(8), apk(8), `pipx install --help`.

use crate::dockerfile::ast::Word;
use crate::dockerfile::model::ShellCommand;
use crate::dockerfile::shell::command_start;
use crate::paths::basename;
use crate::source::Span;

/// Which package manager a command drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PackageManager {
    Apt,
    Pip,
    /// `uv pip install`.
    Uv,
    Pipx,
    Conda,
    Mamba,
    Micromamba,
    Dnf,
    Yum,
    Microdnf,
    Apk,
}

impl PackageManager {
    /// The manager's name as data files spell it (`apt`, `pip`, `uv`, `dnf` …).
    pub fn name(self) -> &'static str {
        match self {
            Self::Apt => "apt",
            Self::Pip => "pip",
            Self::Uv => "uv",
            Self::Pipx => "pipx",
            Self::Conda => "conda",
            Self::Mamba => "mamba",
            Self::Micromamba => "micromamba",
            Self::Dnf => "dnf",
            Self::Yum => "yum",
            Self::Microdnf => "microdnf",
            Self::Apk => "apk",
        }
    }

    /// Debian/RPM/Alpine system packages, as opposed to Python packages.
    pub fn is_system(self) -> bool {
        matches!(
            self,
            Self::Apt | Self::Dnf | Self::Yum | Self::Microdnf | Self::Apk
        )
    }

    pub fn is_python(self) -> bool {
        matches!(self, Self::Pip | Self::Uv | Self::Pipx)
    }

    pub fn is_conda(self) -> bool {
        matches!(self, Self::Conda | Self::Mamba | Self::Micromamba)
    }
}

/// One package argument: `torch==2.5.1`, `cuda-toolkit-12-4=12.4.1-1`,
/// `pytorch-cuda=12.1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestedPackage {
    pub word: Word,
    /// The name: lower-cased for pip (whose names are case-insensitive),
    /// extras (`[cuda]`) and version removed.
    pub name: String,
    /// The version constraint as written (`==2.5.1`, `=12.4.1-1`, `>=2`),
    /// if any.
    pub constraint: Option<String>,
    /// A URL, path or VCS reference rather than a name (`./x.whl`, `git+…`).
    pub is_location: bool,
}

impl RequestedPackage {
    /// The distribution it installs, as pip names it: the name, or for a
    /// wheel file (`…/flashinfer_python-0.2.2+cu124-cp38-abi3-linux_x86_64.whl`)
    /// the name the file carries (PEP 427: `{name}-{version}-…`); `None`
    /// for other locations (a path, a VCS URL, an sdist).
    pub fn distribution(&self) -> Option<&str> {
        if !self.is_location {
            return Some(&self.name);
        }
        let file = self.word.text.rsplit('/').next()?.strip_suffix(".whl")?;
        file.split('-').next().filter(|name| !name.is_empty())
    }

    /// The extras requested with it, as written: `cuda12`, `tpu` for
    /// `jax[cuda12,tpu]>=0.4`.
    pub fn extras(&self) -> impl Iterator<Item = &str> {
        self.word
            .text
            .split_once('[')
            .and_then(|(_, rest)| rest.split_once(']'))
            .map_or("", |(inside, _)| inside)
            .split(',')
            .map(str::trim)
            .filter(|extra| !extra.is_empty())
    }
}

/// A package-manager command that installs packages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackageInstall {
    pub manager: PackageManager,
    /// Index of the command in the slice given to [`package_installs`].
    pub command: usize,
    /// `install`, `add`, `create`, `env create`.
    pub subcommand: String,
    pub packages: Vec<RequestedPackage>,
    /// Every option word (with its value word, if separate), in order.
    pub options: Vec<Word>,
    /// `--index-url`/`-i`/`--extra-index-url`/`--index`/`--find-links`
    /// values (pip, uv), `--repository` (apk).
    pub index_urls: Vec<String>,
    /// `-r`/`--requirement` (pip, uv), `--file` (conda), `-f` (micromamba).
    pub requirement_files: Vec<String>,
    /// `-c`/`--constraint` files (pip, uv).
    pub constraint_files: Vec<String>,
    /// `-c`/`--channel` (conda family).
    pub channels: Vec<String>,
    pub no_deps: bool,
    /// `--no-cache-dir` (pip), `--no-cache` (uv, apk).
    pub no_cache: bool,
    /// The whole command.
    pub span: Span,
}

impl PackageInstall {
    /// Whether an option was given, in `--name`, `--name=value` or short form.
    pub fn has_option(&self, name: &str) -> bool {
        self.options.iter().any(|w| {
            w.text == name
                || w.text
                    .strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with('='))
        })
    }

    /// The package named `name` (pip names compared case-insensitively).
    pub fn package(&self, name: &str) -> Option<&RequestedPackage> {
        self.packages
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
    }
}

/// Options that take a separate value, per manager family.
const APT_VALUE_OPTIONS: &[&str] = &[
    "-o",
    "--option",
    "-t",
    "--target-release",
    "-c",
    "--config-file",
];
/// pip's and uv's options whose value is the next word (also read by the build-step checks).
pub const PIP_VALUE_OPTIONS: &[&str] = &[
    "--build-option",
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--trusted-host",
    "--cache-dir",
    "--src",
    "--upgrade-strategy",
    "--progress-bar",
    "--log",
    "--proxy",
    "--retries",
    "--timeout",
    "--exists-action",
    "--cert",
    "--client-cert",
    "--global-option",
    "--config-settings",
    "-C",
    "--no-binary",
    "--only-binary",
    "--report",
    "--python",
    "-p",
    "--index",
    "--default-index",
    "--index-strategy",
    "--torch-backend",
    "--override",
    "--python-platform",
    "--exclude-newer",
    "--resolution",
    "--prerelease",
    "--keyring-provider",
    "--pip-args",
    "--suffix",
];
const CONDA_VALUE_OPTIONS: &[&str] = &[
    "-c",
    "--channel",
    "-n",
    "--name",
    "-p",
    "--prefix",
    "--file",
    "-f",
    "--solver",
    "--repodata-fn",
    "-r",
    "--root-prefix",
    "--platform",
    "--subdir",
    "--category",
];
const RPM_VALUE_OPTIONS: &[&str] = &[
    "--setopt",
    "--enablerepo",
    "--disablerepo",
    "--releasever",
    "--installroot",
    "-x",
    "--exclude",
    "-c",
    "--config",
    "--repo",
    "--repofrompath",
    "-d",
    "--debuglevel",
    "-e",
    "--errorlevel",
];
const APK_VALUE_OPTIONS: &[&str] = &[
    "-t",
    "--virtual",
    "-X",
    "--repository",
    "-p",
    "--root",
    "--arch",
    "--cache-dir",
];

/// Find every package install among `commands`.
pub fn package_installs(commands: &[ShellCommand]) -> Vec<PackageInstall> {
    commands
        .iter()
        .enumerate()
        .filter_map(|(index, command)| recognise(index, command))
        .collect()
}

/// `python`, `python3`, `python3.11`.
fn is_python(program: &str) -> bool {
    program
        .strip_prefix("python")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// `pip`, `pip3`, `pip3.11`.
fn is_pip(program: &str) -> bool {
    program
        .strip_prefix("pip")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Programs that install with pip underneath, so pip's options and cache
/// apply: OpenMMLab's `mim install` (it hands its arguments to `pip
/// install`), and a `$PIP` / `${PIP3}` / `${PIP_CMD}` variable the model
/// could not resolve (set by the base image), which by its name is pip.
fn runs_pip(program: &str) -> bool {
    if program == "mim" {
        return true;
    }
    let name = program
        .strip_prefix("${")
        .and_then(|rest| rest.strip_suffix('}'))
        .or_else(|| program.strip_prefix('$'));
    name.and_then(|n| n.strip_prefix("PIP"))
        .is_some_and(|rest| {
            rest.chars().all(|c| c.is_ascii_digit() || c == '.')
                || matches!(rest, "_CMD" | "_BIN" | "_EXE" | "_COMMAND")
        })
}

/// A package manager's command line: which manager, its options that take
/// a value, and where its own words start (after `python -m`, `uv pip`,
/// `conda run -n env`, `sudo`/`env` wrappers).
struct Invocation {
    manager: PackageManager,
    value_options: &'static [&'static str],
    rest: usize,
}

/// Read which package manager `words` run, in any of the forms that run it.
fn invocation(words: &[Word]) -> Option<Invocation> {
    let mut start = command_start(words);
    // `conda run -n env pip install …` and `micromamba run -n env …`.
    loop {
        let program = basename(&words.get(start)?.text);
        let is_runner = matches!(program, "conda" | "mamba" | "micromamba")
            && words.get(start + 1).is_some_and(|w| w.text == "run");
        if !is_runner {
            break;
        }
        start = skip_options(words, start + 2, CONDA_VALUE_OPTIONS, &mut Vec::new());
        // `conda run … sudo pip …` is not a form anyone writes; wrappers
        // such as `env X=1` after `run` are.
        start += command_start(words.get(start..)?);
    }
    let program = basename(&words.get(start)?.text);
    let (manager, value_options, rest) = if is_pip(program) || runs_pip(program) {
        (PackageManager::Pip, PIP_VALUE_OPTIONS, start + 1)
    } else if is_python(program) {
        // `python -m pip`, after interpreter options such as `-u` or `-I`.
        let m = (start + 1..words.len()).find(|&i| {
            words
                .get(i)
                .is_some_and(|w| !w.text.starts_with('-') || w.text == "-m")
        })?;
        if words.get(m)?.text != "-m" {
            return None;
        }
        // `python -m pip install`, and `python -m uv pip install` (uv
        // installed into the interpreter with pip).
        match words.get(m + 1)?.text.as_str() {
            "pip" => (PackageManager::Pip, PIP_VALUE_OPTIONS, m + 2),
            "uv" if words.get(m + 2).is_some_and(|w| w.text == "pip") => {
                (PackageManager::Uv, PIP_VALUE_OPTIONS, m + 3)
            }
            _ => return None,
        }
    } else {
        match program {
            "apt-get" | "apt" | "aptitude" => (PackageManager::Apt, APT_VALUE_OPTIONS, start + 1),
            "uv" if words.get(start + 1).is_some_and(|w| w.text == "pip") => {
                (PackageManager::Uv, PIP_VALUE_OPTIONS, start + 2)
            }
            "pipx" => (PackageManager::Pipx, PIP_VALUE_OPTIONS, start + 1),
            "conda" => (PackageManager::Conda, CONDA_VALUE_OPTIONS, start + 1),
            "mamba" => (PackageManager::Mamba, CONDA_VALUE_OPTIONS, start + 1),
            "micromamba" => (PackageManager::Micromamba, CONDA_VALUE_OPTIONS, start + 1),
            "dnf" | "dnf5" => (PackageManager::Dnf, RPM_VALUE_OPTIONS, start + 1),
            "yum" => (PackageManager::Yum, RPM_VALUE_OPTIONS, start + 1),
            "microdnf" => (PackageManager::Microdnf, RPM_VALUE_OPTIONS, start + 1),
            "apk" => (PackageManager::Apk, APK_VALUE_OPTIONS, start + 1),
            _ => return None,
        }
    };
    Some(Invocation {
        manager,
        value_options,
        rest,
    })
}

/// The subcommand of a pip or `uv pip` command in any form (`pip3`, `python3
/// -m pip`, `/venv/bin/pip`, `conda run -n env pip`, `uv pip` …) and the
/// words after it: `("wheel", [".", "-w", "dist"])` for `python -m pip
/// --no-cache-dir wheel . -w dist`.
pub fn pip_subcommand(words: &[Word]) -> Option<(&str, &[Word])> {
    let found = invocation(words)?;
    if !matches!(found.manager, PackageManager::Pip | PackageManager::Uv) {
        return None;
    }
    let sub_at = skip_options(words, found.rest, found.value_options, &mut Vec::new());
    Some((words.get(sub_at)?.text.as_str(), words.get(sub_at + 1..)?))
}

fn recognise(index: usize, command: &ShellCommand) -> Option<PackageInstall> {
    let words = &command.words;
    let Invocation {
        manager,
        value_options,
        rest,
    } = invocation(words)?;

    let mut options = Vec::new();
    let sub_at = skip_options(words, rest, value_options, &mut options);
    let sub = words.get(sub_at)?.text.as_str();
    let (subcommand, args_at) = match (manager, sub) {
        (PackageManager::Apk, "add") => ("add".to_string(), sub_at + 1),
        (PackageManager::Apk, _) => return None,
        (m, "create") if m.is_conda() => ("create".to_string(), sub_at + 1),
        (m, "env") if m.is_conda() && words.get(sub_at + 1).is_some_and(|w| w.text == "create") => {
            ("env create".to_string(), sub_at + 2)
        }
        (_, "install") => ("install".to_string(), sub_at + 1),
        _ => return None,
    };

    let mut install = PackageInstall {
        manager,
        command: index,
        subcommand,
        packages: Vec::new(),
        options: Vec::new(),
        index_urls: Vec::new(),
        requirement_files: Vec::new(),
        constraint_files: Vec::new(),
        channels: Vec::new(),
        no_deps: false,
        no_cache: false,
        span: command.span,
    };
    let mut i = args_at;
    let mut after_double_dash = false;
    while let Some(word) = words.get(i) {
        let text = word.text.as_str();
        i += 1;
        if !after_double_dash && text == "--" {
            after_double_dash = true;
            continue;
        }
        if after_double_dash || !text.starts_with('-') || text == "-" {
            install.packages.push(requested(manager, word));
            continue;
        }
        // `-e PATH` / `--editable PATH` installs a package from a path.
        if matches!(text, "-e" | "--editable") {
            if let Some(path) = words.get(i) {
                install.packages.push(requested(manager, path));
                i += 1;
            }
            continue;
        }
        let (name, inline) = match text.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_string())),
            _ => (text, None),
        };
        install.options.push(word.clone());
        let value = match inline {
            Some(value) => Some(value),
            None if value_options.contains(&name) => {
                let value = words.get(i).map(|w| w.text.clone());
                if let Some(w) = words.get(i) {
                    install.options.push(w.clone());
                }
                i += 1;
                value
            }
            None => None,
        };
        record_option(&mut install, name, value);
    }
    // Options before the subcommand (`apt-get -y install`, `dnf -y install`).
    for (name, value) in option_values(&options, value_options) {
        record_option(&mut install, &name, value);
    }
    options.append(&mut install.options);
    install.options = options;
    Some(install)
}

/// Skip option words from `at`, collecting them; returns the first
/// non-option index.
fn skip_options(
    words: &[Word],
    mut at: usize,
    value_options: &[&str],
    out: &mut Vec<Word>,
) -> usize {
    while let Some(word) = words.get(at) {
        if !word.text.starts_with('-') || word.text == "-" || word.text == "--" {
            break;
        }
        out.push(word.clone());
        at += 1;
        if value_options.contains(&word.text.as_str()) {
            if let Some(value) = words.get(at) {
                out.push(value.clone());
            }
            at += 1;
        }
    }
    at
}

/// `(name, value)` pairs of an option word list.
fn option_values(options: &[Word], value_options: &[&str]) -> Vec<(String, Option<String>)> {
    let mut pairs = Vec::new();
    let mut i = 0;
    while let Some(word) = options.get(i) {
        i += 1;
        let text = word.text.as_str();
        if let Some((name, value)) = text.split_once('=').filter(|(n, _)| n.starts_with("--")) {
            pairs.push((name.to_string(), Some(value.to_string())));
        } else if value_options.contains(&text) {
            pairs.push((text.to_string(), options.get(i).map(|w| w.text.clone())));
            i += 1;
        } else {
            pairs.push((text.to_string(), None));
        }
    }
    pairs
}

fn record_option(install: &mut PackageInstall, name: &str, value: Option<String>) {
    let manager = install.manager;
    let push_unique = |list: &mut Vec<String>, value: Option<String>| {
        if let Some(value) = value {
            if !list.contains(&value) {
                list.push(value);
            }
        }
    };
    match name {
        "--no-deps" | "--nodeps" => install.no_deps = true,
        "--no-cache-dir" | "--no-cache" => install.no_cache = true,
        "-i" | "--index-url" | "--extra-index-url" | "--index" | "--default-index"
        | "--find-links" | "--repository" | "-X"
            if manager.is_python() || manager == PackageManager::Apk =>
        {
            push_unique(&mut install.index_urls, value)
        }
        "-f" if manager.is_python() => push_unique(&mut install.index_urls, value),
        "-r" | "--requirement" if manager.is_python() => {
            push_unique(&mut install.requirement_files, value)
        }
        "--file" | "-f" if manager.is_conda() => push_unique(&mut install.requirement_files, value),
        "-c" | "--constraint" if manager.is_python() => {
            push_unique(&mut install.constraint_files, value)
        }
        "-c" | "--channel" if manager.is_conda() => push_unique(&mut install.channels, value),
        _ => {}
    }
}

/// Split a package word into name and constraint, by the manager's syntax
/// (also for requirements read from a requirements file).
pub fn requested(manager: PackageManager, word: &Word) -> RequestedPackage {
    let text = word.text.as_str();
    let is_location = text.contains("://")
        || text.starts_with(['.', '/', '~'])
        || text.starts_with("git+")
        || text.ends_with(".whl")
        || text.ends_with(".deb")
        || text.ends_with(".rpm")
        || text.ends_with(".tar.gz");
    if is_location {
        return RequestedPackage {
            word: word.clone(),
            name: text.to_string(),
            constraint: None,
            is_location: true,
        };
    }
    let split_at = match manager {
        // `pkg=1.2-1`, `pkg/jammy-updates`.
        PackageManager::Apt => text.find(['=', '/']),
        // `pkg=1.2`, `pkg>=1.2`, `pkg~=1.2`, `pkg<2`.
        PackageManager::Apk => text.find(['=', '<', '>', '~']),
        // `pkg-1.2` is ambiguous with names; only explicit operators.
        PackageManager::Dnf | PackageManager::Yum | PackageManager::Microdnf => {
            text.find(['=', '<', '>'])
        }
        // `pkg==1`, `pkg>=1,<2`, `pkg~=1`, `pkg!=1`, `pkg[extra]==1`,
        // `pkg @ url`, `pkg; marker`; conda: `pkg=1.2`, `pkg>=1`, `chan::pkg`.
        _ => text.find(['=', '<', '>', '~', '!', ';', '@', ' ']),
    };
    let (name, constraint) = match split_at {
        Some(at) => (
            text.get(..at).unwrap_or(text),
            text.get(at..)
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty()),
        ),
        None => (text, None),
    };
    let name = match manager {
        m if m.is_python() => {
            let bare = name.split('[').next().unwrap_or(name).trim();
            bare.to_ascii_lowercase().replace('_', "-")
        }
        m if m.is_conda() => name.rsplit("::").next().unwrap_or(name).to_string(),
        _ => name.to_string(),
    };
    RequestedPackage {
        word: word.clone(),
        name,
        constraint,
        is_location: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dockerfile::ast::MappedText;
    use crate::dockerfile::expand::VarScope;
    use crate::dockerfile::shell::split_script;

    fn installs(script: &str) -> Vec<PackageInstall> {
        let commands = split_script(&MappedText::contiguous(script, 0), &VarScope::new());
        package_installs(&commands)
    }

    fn names(install: &PackageInstall) -> Vec<(&str, Option<&str>)> {
        install
            .packages
            .iter()
            .map(|p| (p.name.as_str(), p.constraint.as_deref()))
            .collect()
    }

    #[test]
    fn apt_get() {
        let found = installs(
            "apt-get update && apt-get -o Dpkg::Options::=--force-confnew install -y --no-install-recommends cuda-toolkit-12-4=12.4.1-1 libcudnn9/jammy && rm -rf /var/lib/apt/lists/*",
        );
        assert_eq!(found.len(), 1);
        let apt = &found[0];
        assert_eq!(apt.manager, PackageManager::Apt);
        assert_eq!(apt.command, 1);
        assert_eq!(
            names(apt),
            vec![
                ("cuda-toolkit-12-4", Some("=12.4.1-1")),
                ("libcudnn9", Some("/jammy"))
            ]
        );
        assert!(apt.has_option("--no-install-recommends"));
        assert!(apt.has_option("-y"));
        assert!(apt.has_option("-o"));
    }

    #[test]
    fn extras_as_written() {
        let found = installs("pip install 'jax[cuda12, tpu]>=0.4' torch 'x[]'");
        let extras: Vec<Vec<&str>> = found[0]
            .packages
            .iter()
            .map(|p| p.extras().collect())
            .collect();
        assert_eq!(extras, vec![vec!["cuda12", "tpu"], vec![], vec![]]);
    }

    #[test]
    fn pip_variants() {
        let found = installs(
            "pip install --no-cache-dir -r requirements.txt torch==2.5.1 'Flash_Attn[x]>=2' --index-url https://download.pytorch.org/whl/cu124 \
             && python3 -m pip install -c constraints.txt --extra-index-url=https://pypi.ngc.nvidia.com nvidia-cudnn-cu12 \
             && uv pip install --system --no-deps jax[cuda12] \
             && python3.10 -m uv pip install torch --extra-index-url https://download.pytorch.org/whl/cu117 \
             && python -u script.py",
        );
        assert_eq!(found.len(), 4);
        assert_eq!(found[3].manager, PackageManager::Uv);
        assert_eq!(names(&found[3]), vec![("torch", None)]);
        assert_eq!(found[0].manager, PackageManager::Pip);
        assert_eq!(
            names(&found[0]),
            vec![("torch", Some("==2.5.1")), ("flash-attn", Some(">=2"))]
        );
        assert_eq!(found[0].requirement_files, vec!["requirements.txt"]);
        assert_eq!(
            found[0].index_urls,
            vec!["https://download.pytorch.org/whl/cu124"]
        );
        assert!(found[0].no_cache);
        assert_eq!(found[1].constraint_files, vec!["constraints.txt"]);
        assert_eq!(found[1].index_urls, vec!["https://pypi.ngc.nvidia.com"]);
        assert_eq!(found[1].command, 1);
        assert_eq!(found[2].manager, PackageManager::Uv);
        assert!(found[2].no_deps);
        assert_eq!(names(&found[2]), vec![("jax", None)]);
    }

    #[test]
    fn conda_family() {
        let found = installs(
            "conda install -y -c nvidia -c conda-forge cuda-toolkit=12.4 nvidia::cudnn && micromamba create -n env -f env.yaml python=3.11 && conda run -n env pip install x && conda clean -a",
        );
        assert_eq!(found.len(), 3);
        assert_eq!(found[0].channels, vec!["nvidia", "conda-forge"]);
        assert_eq!(
            names(&found[0]),
            vec![("cuda-toolkit", Some("=12.4")), ("cudnn", None)]
        );
        assert_eq!(found[1].manager, PackageManager::Micromamba);
        assert_eq!(found[1].subcommand, "create");
        assert_eq!(found[1].requirement_files, vec!["env.yaml"]);
        assert_eq!(names(&found[1]), vec![("python", Some("=3.11"))]);
        assert_eq!(found[2].manager, PackageManager::Pip);
    }

    #[test]
    fn rpm_and_apk() {
        let found = installs(
            "dnf -y install --setopt=install_weak_deps=False cuda-toolkit-12-4 && yum install -y --enablerepo epel x && microdnf install y && apk add --no-cache --virtual .build gcc musl-dev",
        );
        let managers: Vec<_> = found.iter().map(|f| f.manager).collect();
        assert_eq!(
            managers,
            vec![
                PackageManager::Dnf,
                PackageManager::Yum,
                PackageManager::Microdnf,
                PackageManager::Apk
            ]
        );
        assert_eq!(names(&found[0]), vec![("cuda-toolkit-12-4", None)]);
        assert_eq!(names(&found[1]), vec![("x", None)]);
        assert_eq!(names(&found[3]), vec![("gcc", None), ("musl-dev", None)]);
        assert!(found[3].no_cache);
    }

    #[test]
    fn locations_are_marked() {
        let found = installs("pip install ./dist/pkg.whl git+https://github.com/x/y -e .");
        assert!(found[0].packages.iter().all(|p| p.is_location));
        assert_eq!(found[0].packages.len(), 3);
    }

    #[test]
    fn a_wheel_file_names_its_distribution() {
        let found = installs(
            "pip install https://x.io/v0.2/flashinfer_python-0.2.2.post1+cu124torch2.6-cp38-abi3-linux_x86_64.whl ./src git+https://github.com/x/y torch==2.5.1",
        );
        let names: Vec<_> = found[0].packages.iter().map(|p| p.distribution()).collect();
        assert_eq!(
            names,
            vec![Some("flashinfer_python"), None, None, Some("torch")]
        );
    }

    #[test]
    fn pip_subcommands_in_every_form() {
        let split = |script: &str| {
            split_script(&MappedText::contiguous(script, 0), &VarScope::new())
                .into_iter()
                .next()
                .unwrap()
                .words
        };
        for script in [
            "pip3.10 wheel . -w dist",
            "python3 -u -m pip --no-cache-dir wheel . -w dist",
            "conda run -n app pip wheel . -w dist",
            "/venv/bin/pip wheel . -w dist",
            ".venv/bin/python -m pip wheel . -w dist",
            "sudo -H pip3 wheel . -w dist",
        ] {
            let words = split(script);
            let (sub, rest) = pip_subcommand(&words).unwrap();
            let rest: Vec<&str> = rest.iter().map(|w| w.text.as_str()).collect();
            assert_eq!((sub, rest), ("wheel", vec![".", "-w", "dist"]), "{script}");
        }
        assert!(pip_subcommand(&split("apt-get install -y x")).is_none());
        assert!(pip_subcommand(&split("python3 setup.py install")).is_none());
    }

    #[test]
    fn non_installs_are_ignored() {
        assert!(installs("apt-get update && pip list && pip download x && apk update").is_empty());
    }
}
