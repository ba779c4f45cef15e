//! CUPTI and runtime-environment knowledge (`rules/cupti.toml`): where each
//! packaging puts libcupti and its SONAME per CUDA major, which package
//! installs bring CUPTI and which need it, the runtime paths that must stay
//! off the loader path (stubs, compat), the `NVIDIA_REQUIRE_*` switches, and
//! the package-manager caches a shipped layer should not keep.
//!
//! The rules ask questions through the methods here; the facts stay in the
//! TOML file, each with its source.

use crate::from_toml::{FromToml, Node, TomlError};

use super::version::Version;

/// The embedded data file.
pub fn embedded_toml() -> &'static str {
    super::embedded::file("rules/cupti.toml")
}

/// Everything `rules/cupti.toml` says, validated.
#[derive(Clone, Debug, Default, FromToml)]
#[toml(deny_unknown_fields)]
pub struct CuptiKnowledge {
    #[toml(default)]
    pub majors: Vec<CuptiMajor>,
    #[toml(default)]
    pub locations: Vec<CuptiLocation>,
    #[toml(default)]
    pub providers: Vec<PackageMatch>,
    #[toml(default)]
    pub consumers: Vec<Consumer>,
    #[toml(default)]
    pub torch: TorchFacts,
    #[toml(default)]
    pub source_builds: SourceBuilds,
    #[toml(default)]
    pub build_parts: BuildParts,
    #[toml(default)]
    pub copies: PatternSet,
    #[toml(default)]
    pub removals: PatternSet,
    #[toml(default)]
    pub library_path: LibraryPathFacts,
    #[toml(default)]
    pub target_arch: Vec<TargetArch>,
    #[toml(default)]
    pub bases: BaseFacts,
    #[toml(default)]
    pub runtime: RuntimeEnv,
    #[toml(default)]
    pub hygiene: Hygiene,
}

/// CUPTI facts for one CUDA major version.
#[derive(Clone, Debug, Default, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct CuptiMajor {
    pub cuda_major: u32,
    /// May hold `{minor}` (CUDA 11 names the minor in the SONAME).
    pub soname: String,
    pub pip_package: String,
    /// Relative to `site-packages`.
    pub pip_lib_dir: String,
    /// May hold `{major}` and `{minor}`.
    pub apt_package: String,
    pub source: String,
}

impl CuptiMajor {
    /// The SONAME for CUDA `major.minor`, e.g. `libcupti.so.11.8`.
    pub fn soname_for(&self, minor: u32) -> String {
        fill(&self.soname, self.cuda_major, minor)
    }

    /// NVIDIA's apt package for CUDA `major.minor`, e.g. `cuda-cupti-12-4`.
    pub fn apt_package_for(&self, minor: u32) -> String {
        fill(&self.apt_package, self.cuda_major, minor)
    }
}

fn fill(template: &str, major: u32, minor: u32) -> String {
    template
        .replace("{major}", &major.to_string())
        .replace("{minor}", &minor.to_string())
}

/// Where one packaging puts libcupti.
#[derive(Clone, Debug, Default, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct CuptiLocation {
    pub packaging: String,
    /// Directory globs.
    pub dirs: Vec<String>,
    pub source: String,
}

/// The package manager a [`PackageMatch`] or [`Consumer`] is about.
#[derive(Clone, Copy, Debug, FromToml, PartialEq, Eq, Hash)]
#[toml(rename_all = "lowercase")]
pub enum Manager {
    Apt,
    Pip,
    Conda,
}

/// Package names (globs), optionally only with one of some extras.
#[derive(Clone, Debug, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct PackageMatch {
    pub manager: Manager,
    pub names: Vec<String>,
    /// When non-empty, one of these extras must be requested.
    #[toml(default)]
    pub extras: Vec<String>,
    pub source: String,
}

impl PackageMatch {
    /// Whether installing `name[extras]` with `manager` matches. Pip names are
    /// compared after PEP 503 normalisation, extras case-insensitively.
    pub fn matches(&self, manager: Manager, name: &str, extras: &[String]) -> bool {
        if manager != self.manager {
            return false;
        }
        let name = normalize_name(manager, name);
        let name_matches = self
            .names
            .iter()
            .any(|pattern| glob_match(&normalize_name(manager, pattern), &name));
        let extras_match = self.extras.is_empty()
            || extras.iter().any(|requested| {
                self.extras.iter().any(|wanted| {
                    normalize_name(Manager::Pip, wanted) == normalize_name(Manager::Pip, requested)
                })
            });
        name_matches && extras_match
    }
}

/// How badly a consumer breaks without CUPTI.
#[derive(Clone, Copy, Debug, FromToml, PartialEq, Eq, Hash)]
#[toml(rename_all = "lowercase")]
pub enum Need {
    /// The library does not load at all (DT_NEEDED).
    Import,
    /// Only GPU profiling breaks, and only where CUDA is in use.
    Profiler,
}

/// A package install that needs CUPTI at run time.
#[derive(Clone, Debug, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct Consumer {
    pub manager: Manager,
    pub names: Vec<String>,
    #[toml(default)]
    pub extras: Vec<String>,
    /// What breaks, for messages.
    pub what: String,
    pub need: Need,
    /// The message users see when it breaks.
    pub symptom: String,
    pub source: String,
}

impl Consumer {
    fn as_match(&self) -> PackageMatch {
        PackageMatch {
            manager: self.manager,
            names: self.names.clone(),
            extras: self.extras.clone(),
            source: String::new(),
        }
    }
}

/// torch from pip: it brings CUPTI as a wheel dependency and cannot import
/// without it.
#[derive(Clone, Debug, Default, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct TorchFacts {
    pub names: Vec<String>,
    /// pip flags that leave dependencies (and so CUPTI) out.
    pub no_deps_flags: Vec<String>,
    /// Index URLs or version labels that mean a CPU-only build.
    pub cpu_markers: Vec<String>,
    /// May hold `{soname}`.
    pub symptom: String,
    pub source: String,
}

impl TorchFacts {
    pub fn is_torch(&self, pip_name: &str) -> bool {
        let name = normalize_name(Manager::Pip, pip_name);
        self.names
            .iter()
            .any(|n| normalize_name(Manager::Pip, n) == name)
    }

    /// Whether `text` (an index URL or a requirement) names a CPU-only build.
    pub fn is_cpu_build(&self, text: &str) -> bool {
        self.cpu_markers
            .iter()
            .any(|marker| text.contains(marker.as_str()))
    }
}

/// Which parts of CUPTI a source build looks for, and which packages hold
/// them (CU112).
#[derive(Clone, Debug, Default, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct BuildParts {
    /// Build switches that make the build link `libcupti.so` instead of
    /// `libcupti_static.a` when set to a true value.
    pub shared_switches: Vec<String>,
    /// Checkout names of other projects (torchvision's `vision`): a build
    /// there is not a PyTorch build, whatever switches it is given.
    pub not_torch: Vec<String>,
    pub packages: Vec<PartsPackage>,
    pub source: String,
}

/// The CUPTI parts one package (or family of packages) installs.
#[derive(Clone, Debug, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct PartsPackage {
    pub manager: Manager,
    pub names: Vec<String>,
    /// `cupti.h` and the other headers.
    pub headers: bool,
    /// The link name `libcupti.so` (not only `libcupti.so.<N>`).
    pub shared: bool,
    /// `libcupti_static.a`.
    pub static_lib: bool,
    pub source: String,
}

/// CUPTI's parts a build can find: headers, the shared link name, the
/// static archive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CuptiParts {
    pub headers: bool,
    pub shared: bool,
    pub static_lib: bool,
}

impl CuptiParts {
    pub const ALL: CuptiParts = CuptiParts {
        headers: true,
        shared: true,
        static_lib: true,
    };

    pub fn add(&mut self, other: CuptiParts) {
        self.headers |= other.headers;
        self.shared |= other.shared;
        self.static_lib |= other.static_lib;
    }
}

impl BuildParts {
    /// The parts installing `name` with `manager` brings, if the data
    /// knows the package.
    pub fn parts_of(&self, manager: Manager, name: &str) -> Option<(CuptiParts, &PartsPackage)> {
        let name = normalize_name(manager, name);
        self.packages
            .iter()
            .find(|p| {
                p.manager == manager
                    && p.names
                        .iter()
                        .any(|pattern| glob_match(&normalize_name(manager, pattern), &name))
            })
            .map(|p| {
                (
                    CuptiParts {
                        headers: p.headers,
                        shared: p.shared,
                        static_lib: p.static_lib,
                    },
                    p,
                )
            })
    }

    pub fn is_shared_switch(&self, name: &str) -> bool {
        self.shared_switches.iter().any(|s| s == name)
    }
}

/// Source builds that link CUPTI (PyTorch with Kineto).
#[derive(Clone, Debug, Default, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct SourceBuilds {
    /// Text in a stage's commands or environment that shows such a build.
    pub markers: Vec<String>,
    /// Build switches that turn CUPTI use off when set to a false value.
    pub switches: Vec<String>,
    pub false_values: Vec<String>,
    /// COPY sources that are built wheels.
    pub wheel_sources: Vec<String>,
    pub source: String,
}

impl SourceBuilds {
    pub fn is_marker(&self, text: &str) -> bool {
        self.markers.iter().any(|m| text.contains(m.as_str()))
    }

    /// `name=value` turns Kineto/CUPTI off.
    pub fn disables(&self, name: &str, value: &str) -> bool {
        self.switches.iter().any(|s| s == name) && self.false_values.iter().any(|f| f == value)
    }

    pub fn is_wheel_source(&self, path: &str) -> bool {
        self.wheel_sources.iter().any(|p| glob_match(p, path))
    }
}

/// A list of path globs with its source.
#[derive(Clone, Debug, Default, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct PatternSet {
    pub patterns: Vec<String>,
    pub source: String,
}

impl PatternSet {
    /// Whether `path` (normalised: no trailing `/` or `/*`) matches.
    pub fn matches(&self, path: &str) -> bool {
        let path = normalize_path(path);
        self.patterns.iter().any(|p| glob_match(p, path))
    }
}

/// CUPTI directories on `LD_LIBRARY_PATH`.
#[derive(Clone, Debug, Default, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct LibraryPathFacts {
    /// Case-insensitive text that marks a path entry as meant for CUPTI.
    pub mentions: Vec<String>,
    /// Directories that NVIDIA's apt packages leave without libcupti.
    pub wrong_dirs: Vec<String>,
    pub wrong_suffix: String,
    /// May hold `{arch}`.
    pub right_suffix: String,
    pub default_prefix: String,
    /// The first CUDA version whose apt packages leave `wrong_dirs` empty.
    pub apt_empty_since: String,
    /// Installer names that do fill `wrong_dirs` (runfile installs).
    pub runfile_markers: Vec<String>,
    /// Directories where the apt packages' libcupti is found too (links to
    /// `right_suffix`), so a path that also names one of them finds CUPTI.
    #[toml(default)]
    pub also_found_in: Vec<String>,
    pub source: String,
}

impl LibraryPathFacts {
    pub fn mentions_cupti(&self, entry: &str) -> bool {
        let lower = entry.to_ascii_lowercase();
        self.mentions
            .iter()
            .any(|m| lower.contains(&m.to_ascii_lowercase()))
    }

    /// Whether the apt packages' libcupti is found in `entry`: the
    /// `targets/<arch>/lib` directory itself or a link to it (`lib64`).
    pub fn finds_apt_cupti(&self, entry: &str) -> bool {
        let normalized = normalize_path(entry);
        self.is_right_dir(entry) || self.also_found_in.iter().any(|p| glob_match(p, normalized))
    }

    pub fn is_wrong_dir(&self, entry: &str) -> bool {
        let entry = normalize_path(entry);
        self.wrong_dirs.iter().any(|p| glob_match(p, entry))
    }

    /// The directory that holds libcupti instead of `entry`, for `arch`
    /// (e.g. `x86_64-linux`): the same CUDA prefix, `targets/<arch>/lib`.
    pub fn replacement(&self, entry: &str, arch: &str) -> String {
        let entry = normalize_path(entry);
        let prefix = entry
            .strip_suffix(self.wrong_suffix.as_str())
            .filter(|p| p.ends_with('/'))
            .unwrap_or(self.default_prefix.as_str());
        format!("{prefix}{}", self.right_suffix.replace("{arch}", arch))
    }

    /// Whether `entry` is a directory that holds libcupti with the apt
    /// packages (`…/targets/<arch>/lib`, what [`Self::replacement`] gives).
    pub fn is_right_dir(&self, entry: &str) -> bool {
        let pattern = format!("*/{}", self.right_suffix.replace("{arch}", "*"));
        glob_match(&pattern, normalize_path(entry))
    }

    /// The CUDA version from which apt installs leave `wrong_dirs` empty.
    pub fn apt_empty_since(&self) -> Option<Version> {
        Version::parse(&self.apt_empty_since)
    }

    pub fn is_runfile(&self, word: &str) -> bool {
        self.runfile_markers.iter().any(|p| glob_match(p, word))
    }
}

/// The `targets/<dir>` name for a platform.
#[derive(Clone, Debug, Default, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct TargetArch {
    pub platforms: Vec<String>,
    pub dir: String,
    pub source: String,
}

/// Base images known to ship no CUDA.
#[derive(Clone, Debug, Default, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct BaseFacts {
    /// Repository globs (registry included for non-Docker-Hub images).
    pub without_cuda: Vec<String>,
    pub source: String,
}

/// Loader-path, compat and `NVIDIA_REQUIRE_*` facts.
#[derive(Clone, Debug, Default, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct RuntimeEnv {
    /// Variables the dynamic loader reads at run time.
    pub loader_vars: Vec<String>,
    /// Variables only the linker reads.
    pub link_vars: Vec<String>,
    /// Text that marks a file as loader configuration.
    pub ld_conf_marker: String,
    pub stub_dirs: Vec<String>,
    pub compat_dirs: Vec<String>,
    pub disable_require_var: String,
    pub require_cuda_var: String,
    /// With this set and the CUDA requirement empty, the toolkit checks
    /// `cuda>=<its major.minor>` instead (a "legacy" image).
    pub legacy_version_var: String,
    /// Go `strconv.ParseBool` true values.
    pub parse_bool_true: Vec<String>,
    pub source: String,
    #[toml(default)]
    pub errors: Vec<RuntimeError>,
}

impl RuntimeEnv {
    pub fn is_loader_var(&self, name: &str) -> bool {
        self.loader_vars.iter().any(|v| v == name)
    }

    pub fn is_stub_dir(&self, entry: &str) -> bool {
        let entry = normalize_path(entry);
        self.stub_dirs.iter().any(|p| glob_match(p, entry))
    }

    pub fn is_compat_dir(&self, entry: &str) -> bool {
        let entry = normalize_path(entry);
        self.compat_dirs.iter().any(|p| glob_match(p, entry))
    }

    /// Go `strconv.ParseBool(value)` returns true (exact, case-sensitive).
    pub fn parses_true(&self, value: &str) -> bool {
        self.parse_bool_true.iter().any(|t| t == value)
    }

    pub fn error(&self, key: &str) -> Option<&RuntimeError> {
        self.errors.iter().find(|e| e.key == key)
    }
}

/// A CUDA error users meet, with its exact wording.
#[derive(Clone, Debug, Default, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct RuntimeError {
    pub key: String,
    pub code: u32,
    pub name: String,
    pub text: String,
    pub source: String,
}

/// Package-manager caches.
#[derive(Clone, Debug, Default, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct Hygiene {
    pub source: String,
    #[toml(default)]
    pub managers: Vec<CacheManager>,
}

impl Hygiene {
    /// The cache entry for installs by the package manager called `name`
    /// (`PackageManager::name`: `apt`, `pip`, `uv`, `mamba` …).
    pub fn for_installs_by(&self, name: &str) -> Option<&CacheManager> {
        self.managers
            .iter()
            .find(|m| m.installs_with.iter().any(|n| n == name))
    }
}

/// How to offer a fix for a cache left behind.
#[derive(Clone, Copy, Debug, Default, FromToml, PartialEq, Eq)]
#[toml(rename_all = "kebab-case")]
pub enum CacheFix {
    /// Append `&& <fix_text>` to the RUN script.
    AppendCommand,
    /// Insert ` <fix_text>` after the install subcommand.
    InsertFlag,
    #[default]
    None,
}

/// One package manager's cache and the ways to keep it out of a layer.
#[derive(Clone, Debug, Default, FromToml, PartialEq, Eq)]
#[toml(deny_unknown_fields)]
pub struct CacheManager {
    pub name: String,
    /// The package managers (as the model names them) whose installs fill
    /// this cache.
    pub installs_with: Vec<String>,
    /// Program globs, compared with the command's base name, for the
    /// commands that are not installs (`clean`, `config set`, `also_fills`).
    pub programs: Vec<String>,
    /// `python -m <module>` runs it too.
    #[toml(default)]
    pub module: Option<String>,
    #[toml(default)]
    pub module_runners: Vec<String>,
    /// Other subcommands that fill the cache (`conda update`, `uv sync`;
    /// several words for `env update`; `apt-get update` writes apt's lists).
    #[toml(default)]
    pub also_fills: Vec<String>,
    /// Package managers (as the model names them) whose installs read this
    /// cache in later RUNs without filling it (`apt-get install` after an
    /// earlier RUN's `apt-get update`): removing it there breaks them.
    #[toml(default)]
    pub reused_by: Vec<String>,
    /// An install keeps only repository metadata in the cache (packages are
    /// deleted after install by default) and does not refresh metadata an
    /// earlier layer already holds: a second install then adds almost
    /// nothing, as an `apt-get install` without `update` does.
    #[toml(default)]
    pub metadata_only: bool,
    /// Where the cache is, for messages.
    pub cache: String,
    /// A variable that moves the cache (`POETRY_CACHE_DIR`): removing the
    /// directory it names removes the cache.
    #[toml(default)]
    pub cache_dir_env: Option<String>,
    /// `rm` targets that remove the cache.
    pub removed_by: Vec<String>,
    /// Subcommands that empty the cache.
    #[toml(default)]
    pub clean: Vec<String>,
    #[toml(default)]
    pub no_cache_flags: Vec<String>,
    #[toml(default)]
    pub no_cache_env: Option<String>,
    /// Values of `no_cache_env` that turn the cache off (case-insensitive).
    #[toml(default)]
    pub no_cache_env_values: Vec<String>,
    /// `<program> config set <key> …` keys that turn the cache off.
    #[toml(default)]
    pub no_cache_config: Vec<String>,
    /// `--mount=type=cache` targets that keep the cache out of the layer.
    pub mount_targets: Vec<String>,
    #[toml(default)]
    pub fix: CacheFix,
    #[toml(default)]
    pub fix_text: String,
    /// How to keep the cache out, for messages.
    pub help: String,
    /// What the cache holds, for messages.
    #[toml(default)]
    pub size_hint: String,
    pub source: String,
}

impl CacheManager {
    pub fn is_program(&self, base_name: &str) -> bool {
        self.programs.iter().any(|p| glob_match(p, base_name))
    }

    pub fn is_module_runner(&self, base_name: &str) -> bool {
        self.module_runners.iter().any(|p| glob_match(p, base_name))
    }

    /// Whether removing `rm_target` removes the cache; the target may be a
    /// shell glob itself (`/var/lib/apt/lists*`).
    pub fn is_removed_by(&self, rm_target: &str) -> bool {
        let target = normalize_path(rm_target);
        self.removed_by
            .iter()
            .any(|p| glob_match(p, target) || (target.contains('*') && glob_match(target, p)))
    }

    pub fn is_covered_by_mount(&self, mount_target: &str) -> bool {
        let target = normalize_path(mount_target);
        self.mount_targets.iter().any(|p| glob_match(p, target))
    }

    /// Whether `value` of [`CacheManager::no_cache_env`] turns the cache off.
    pub fn env_disables(&self, value: &str) -> bool {
        self.no_cache_env_values
            .iter()
            .any(|v| v.eq_ignore_ascii_case(value))
    }
}

impl CuptiKnowledge {
    /// The embedded `rules/cupti.toml`.
    pub fn embedded() -> Result<Self, TomlError> {
        Self::from_toml_text(embedded_toml())
    }

    /// Reads a knowledge document holding a `[cupti]` table, or that table's text.
    pub fn from_toml_text(text: &str) -> Result<Self, TomlError> {
        Self::from_area(&crate::from_toml::parse(text)?)
    }

    /// Reads either a whole document holding a `[cupti]` table or that table
    /// itself, and checks that every entry names its source.
    pub fn from_area(node: &Node<'_>) -> Result<Self, TomlError> {
        let knowledge = <CuptiKnowledge as FromToml>::from_toml(super::area_table(node, "cupti"))?;
        knowledge.validate()?;
        Ok(knowledge)
    }

    fn validate(&self) -> Result<(), TomlError> {
        let mut missing: Vec<String> = Vec::new();
        let mut check = |what: String, source: &str| {
            if source.trim().is_empty() {
                missing.push(what);
            }
        };
        for m in &self.majors {
            check(format!("majors (cuda_major = {})", m.cuda_major), &m.source);
        }
        for l in &self.locations {
            check(format!("locations ({})", l.packaging), &l.source);
        }
        for p in &self.providers {
            check(format!("providers ({:?})", p.names), &p.source);
        }
        for c in &self.consumers {
            check(format!("consumers ({:?})", c.names), &c.source);
        }
        for a in &self.target_arch {
            check(format!("target_arch ({})", a.dir), &a.source);
        }
        for e in &self.runtime.errors {
            check(format!("runtime.errors ({})", e.key), &e.source);
        }
        for m in &self.hygiene.managers {
            check(format!("hygiene.managers ({})", m.name), &m.source);
        }
        for p in &self.build_parts.packages {
            check(format!("build_parts.packages ({:?})", p.names), &p.source);
        }
        let tables: [(&str, bool, &str); 9] = [
            (
                "build_parts",
                self.build_parts == BuildParts::default(),
                &self.build_parts.source,
            ),
            (
                "torch",
                self.torch == TorchFacts::default(),
                &self.torch.source,
            ),
            (
                "source_builds",
                self.source_builds == SourceBuilds::default(),
                &self.source_builds.source,
            ),
            (
                "copies",
                self.copies == PatternSet::default(),
                &self.copies.source,
            ),
            (
                "removals",
                self.removals == PatternSet::default(),
                &self.removals.source,
            ),
            (
                "library_path",
                self.library_path == LibraryPathFacts::default(),
                &self.library_path.source,
            ),
            (
                "bases",
                self.bases == BaseFacts::default(),
                &self.bases.source,
            ),
            (
                "runtime",
                self.runtime == RuntimeEnv::default(),
                &self.runtime.source,
            ),
            (
                "hygiene",
                self.hygiene == Hygiene::default(),
                &self.hygiene.source,
            ),
        ];
        for (name, absent, source) in tables {
            if !absent {
                check(name.to_string(), source);
            }
        }
        if !self.library_path.apt_empty_since.is_empty()
            && self.library_path.apt_empty_since().is_none()
        {
            return Err(TomlError::unlocated(format!(
                "cupti.library_path.apt_empty_since: `{}` is not a version",
                self.library_path.apt_empty_since
            )));
        }
        if missing.is_empty() {
            Ok(())
        } else {
            Err(TomlError::unlocated(format!(
                "cupti: entries without a `source`: {}",
                missing.join(", ")
            )))
        }
    }

    /// Adds `other`'s entries; an entry with the same key (CUDA major,
    /// packaging, names, platform dir, error key, manager name) replaces ours,
    /// and a single table that `other` sets replaces ours whole.
    pub fn extend(&mut self, other: Self) {
        merge_keyed(&mut self.majors, other.majors, |m| m.cuda_major.to_string());
        merge_keyed(&mut self.locations, other.locations, |l| {
            l.packaging.clone()
        });
        merge_keyed(&mut self.providers, other.providers, |p| {
            format!("{:?}{:?}{:?}", p.manager, p.names, p.extras)
        });
        merge_keyed(&mut self.consumers, other.consumers, |c| {
            format!("{:?}{:?}{:?}", c.manager, c.names, c.extras)
        });
        merge_keyed(&mut self.target_arch, other.target_arch, |a| a.dir.clone());
        replace_if_set(&mut self.torch, other.torch);
        replace_if_set(&mut self.source_builds, other.source_builds);
        replace_if_set(&mut self.build_parts, other.build_parts);
        replace_if_set(&mut self.copies, other.copies);
        replace_if_set(&mut self.removals, other.removals);
        replace_if_set(&mut self.library_path, other.library_path);
        replace_if_set(&mut self.bases, other.bases);
        let RuntimeEnv { errors, .. } = &other.runtime;
        let errors = errors.clone();
        let mut runtime = other.runtime;
        runtime.errors = Vec::new();
        if runtime != RuntimeEnv::default() {
            runtime.errors = std::mem::take(&mut self.runtime.errors);
            self.runtime = runtime;
        }
        merge_keyed(&mut self.runtime.errors, errors, |e| e.key.clone());
        let managers = other.hygiene.managers.clone();
        let mut hygiene = other.hygiene;
        hygiene.managers = Vec::new();
        if hygiene != Hygiene::default() {
            hygiene.managers = std::mem::take(&mut self.hygiene.managers);
            self.hygiene = hygiene;
        }
        merge_keyed(&mut self.hygiene.managers, managers, |m| m.name.clone());
    }

    /// CUPTI facts for a CUDA major version.
    pub fn major(&self, cuda_major: u32) -> Option<&CuptiMajor> {
        self.majors.iter().find(|m| m.cuda_major == cuda_major)
    }

    /// The SONAME libraries built against CUDA `version` need.
    pub fn soname(&self, version: &Version) -> Option<String> {
        self.major(version.major())
            .map(|m| m.soname_for(version.minor()))
    }

    /// The entry saying that installing `name[extras]` brings CUPTI.
    pub fn provider(
        &self,
        manager: Manager,
        name: &str,
        extras: &[String],
    ) -> Option<&PackageMatch> {
        self.providers
            .iter()
            .find(|p| p.matches(manager, name, extras))
    }

    /// The entry saying that `name[extras]` needs CUPTI, unless the same
    /// install also brings it.
    pub fn consumer(&self, manager: Manager, name: &str, extras: &[String]) -> Option<&Consumer> {
        if self.provider(manager, name, extras).is_some() {
            return None;
        }
        self.consumers
            .iter()
            .find(|c| c.as_match().matches(manager, name, extras))
    }

    /// The `targets/<dir>` name for a `--platform` value.
    pub fn target_arch_dir(&self, platform: &str) -> Option<&str> {
        let platform = platform.to_ascii_lowercase();
        self.target_arch
            .iter()
            .find(|a| a.platforms.contains(&platform))
            .map(|a| a.dir.as_str())
    }

    /// Whether an image repository (`ubuntu`, `gcr.io/distroless/cc`) is a
    /// known base without CUDA.
    pub fn base_without_cuda(&self, repository: &str) -> bool {
        let repository = repository.strip_prefix("library/").unwrap_or(repository);
        self.bases
            .without_cuda
            .iter()
            .any(|p| glob_match(p, repository))
    }

    pub fn cache_manager(&self, name: &str) -> Option<&CacheManager> {
        self.hygiene.managers.iter().find(|m| m.name == name)
    }
}

fn merge_keyed<T>(ours: &mut Vec<T>, theirs: Vec<T>, key: impl Fn(&T) -> String) {
    for entry in theirs {
        let k = key(&entry);
        match ours.iter_mut().find(|existing| key(existing) == k) {
            Some(existing) => *existing = entry,
            None => ours.push(entry),
        }
    }
}

fn replace_if_set<T: Default + PartialEq>(ours: &mut T, theirs: T) {
    if theirs != T::default() {
        *ours = theirs;
    }
}

/// PEP 503 names for pip (lower case, runs of `-_.` as one `-`); other
/// managers' names are compared as written, in lower case.
pub fn normalize_name(manager: Manager, name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    if manager != Manager::Pip {
        return lower;
    }
    let mut out = String::with_capacity(lower.len());
    let mut in_separator = false;
    for c in lower.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !in_separator {
                out.push('-');
            }
            in_separator = true;
        } else {
            out.push(c);
            in_separator = false;
        }
    }
    out
}

/// A path without trailing `/*` or `/` (the root stays `/`), so that
/// `/var/lib/apt/lists/*` and `/var/lib/apt/lists/` compare as the directory.
pub fn normalize_path(path: &str) -> &str {
    let mut path = path.trim();
    loop {
        let shorter = match path.strip_suffix("/*") {
            Some("") => Some("/"),
            Some(p) => Some(p),
            None => path.strip_suffix('/').filter(|p| !p.is_empty()),
        };
        match shorter {
            Some(p) => path = p,
            None => return path,
        }
    }
}

/// Glob match where `*` matches any run of characters (`/` included) and
/// every other character matches itself. Linear in practice: each literal
/// piece is found once, leftmost, which is correct for `*`-only globs.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    // A literal first or last byte of the pattern must be the text's.
    let (pattern_bytes, text_bytes) = (pattern.as_bytes(), text.as_bytes());
    let literal_differs = |p: Option<&u8>, t: Option<&u8>| matches!((p, t), (Some(&p), Some(&t)) if p != b'*' && p != t);
    if literal_differs(pattern_bytes.first(), text_bytes.first())
        || literal_differs(pattern_bytes.last(), text_bytes.last())
    {
        return false;
    }
    let Some((first, after_first)) = pattern.split_once('*') else {
        // No `*` at all: the whole text must equal the pattern.
        return pattern == text;
    };
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let (middle, last) = after_first.rsplit_once('*').unwrap_or(("", after_first));
    // The literal end decides most texts: before searching the middle.
    if rest.len() < last.len() || !rest.ends_with(last) {
        return false;
    }
    if middle.is_empty() {
        return true;
    }
    for piece in middle.split('*') {
        match rest.find(piece) {
            Some(at) => rest = rest.get(at + piece.len()..).unwrap_or(""),
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_star_matches_any_run() {
        assert!(glob_match("*/lib64/stubs", "/usr/local/cuda/lib64/stubs"));
        assert!(glob_match(
            "*/targets/*/lib/stubs",
            "/usr/local/cuda-12.4/targets/sbsa-linux/lib/stubs"
        ));
        assert!(!glob_match(
            "*/targets/*/lib/stubs",
            "/usr/local/cuda/targets/x86_64-linux/lib"
        ));
        assert!(glob_match("pip3.*", "pip3.11"));
        assert!(!glob_match("pip3.*", "pip3"));
        assert!(glob_match("apt", "apt"));
        assert!(!glob_match("apt", "apt-get"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*a", "aa"));
        assert!(!glob_match("a*a", "a"));
        assert!(glob_match("*cuda*/compat", "/usr/local/cuda-12.4/compat"));
    }

    #[test]
    fn paths_lose_trailing_globs_and_slashes() {
        assert_eq!(normalize_path("/var/lib/apt/lists/*"), "/var/lib/apt/lists");
        assert_eq!(normalize_path("/var/lib/apt/lists/"), "/var/lib/apt/lists");
        assert_eq!(normalize_path("/"), "/");
        assert_eq!(normalize_path("/*"), "/");
    }

    #[test]
    fn pip_names_are_pep503_normalised() {
        assert_eq!(
            normalize_name(Manager::Pip, "Torch_TB.Profiler"),
            "torch-tb-profiler"
        );
        assert_eq!(normalize_name(Manager::Apt, "Cuda_Cupti"), "cuda_cupti");
    }
}
