//! Build-time and start-time facts (`rules/build.toml`): which build arguments change per build,
//! which installs and compiles are heavy, how NVIDIA's CUDA runfile installs, which CUDA debugging
//! switches cost speed when shipped, and what the NVIDIA Container Toolkit mounts for an image's
//! `NVIDIA_*` environment. Read by CU105–CU108, CU126, CU129 and the image rule CU229.
//!
//! Like `host_libraries`, the file is its own table (`[build]`), parsed on first use; it does not
//! take part in the user's `--knowledge` files yet.

use crate::from_toml::FromToml;

use crate::wildcard::{self, Wild};

/// The embedded data file.
pub fn embedded_toml() -> &'static str {
    super::embedded::file("rules/build.toml")
}

#[derive(FromToml)]
#[toml(deny_unknown_fields)]
struct File {
    /// When these facts were last checked (read by the freshness check).
    #[allow(dead_code)]
    checked: Option<toml::value::Datetime>,
    build: BuildFacts,
}

/// Everything `rules/build.toml` says.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct BuildFacts {
    pub volatile_args: VolatileArgs,
    pub heavy_packages: Vec<HeavyPackages>,
    pub dependency_installs: DependencyInstalls,
    pub compiles: Compiles,
    pub runfile: Runfile,
    pub debug_env: Vec<DebugSetting>,
    pub container_start: ContainerStart,
    pub cuda_repo_key: CudaRepoKey,
    pub hand_built_cuda: HandBuiltCuda,
    pub visible_devices: VisibleDevices,
    pub driver_capabilities: DriverCapabilities,
    pub capability_uses: Vec<CapabilityUse>,
    pub torch_extensions: TorchExtensions,
    pub native_arch: NativeArch,
}

/// Torch CUDA extension builds and the architecture list they read (CU133).
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct TorchExtensions {
    /// `NAME=VALUE` settings that make a source build compile CUDA with no GPU in sight.
    pub force_env: Vec<String>,
    /// Projects that always build a CUDA extension with torch's default arch flags.
    pub always_cuda: Vec<String>,
    /// Projects that pass their own arch flags (or set the list themselves).
    pub own_arch_flags: Vec<String>,
    /// `[torch line, what happens with no list and no GPU]`.
    pub no_gpu: Vec<[String; 2]>,
    pub source: String,
}

/// What `native` architecture lists do without a GPU (CU133).
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct NativeArch {
    pub cmake: String,
    pub cmake_source: String,
    pub nvcc: String,
    pub nvcc_source: String,
}

/// ARGs whose value CI changes on every build.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct VolatileArgs {
    pub names: Vec<String>,
    pub label_keys: Vec<String>,
    pub placeholder_defaults: Vec<String>,
    pub source: String,
}

/// Packages of one manager family whose install is heavy.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct HeavyPackages {
    /// `python`, `conda` or `system`.
    pub manager: String,
    pub names: Vec<String>,
    pub what: String,
    /// Measured installed size, where known.
    pub size: Option<String>,
    pub source: String,
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct DependencyInstalls {
    pub commands: Vec<String>,
    pub source: String,
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct Compiles {
    pub projects: Vec<String>,
    /// Of `projects`, those that compile CUDA only with a `torch_extensions.force_env` setting.
    pub cuda_when_forced: Vec<String>,
    pub cuda_when_forced_source: String,
    pub compile_env: Vec<String>,
    pub stage_compile_env: Vec<String>,
    pub force_env: Vec<String>,
    pub no_compile_env: Vec<String>,
    pub force_build_options: Vec<String>,
    pub compiler_caches: Vec<String>,
    pub advice: String,
    pub source: String,
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct Runfile {
    pub pattern: String,
    pub toolkit_only: Vec<String>,
    pub driver_options: Vec<String>,
    pub source: String,
}

/// A CUDA debugging switch and what it costs when shipped.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct DebugSetting {
    pub name: String,
    pub on: Vec<String>,
    /// Another variable the switch costs something only with.
    #[toml(default)]
    pub needs: Option<Companion>,
    pub cost: String,
    pub source: String,
}

/// A companion setting: a comma-separated list variable (`NCCL_DEBUG_SUBSYS=INIT,CALL`, or
/// `^INIT` for all but the listed) that must turn on one of `any_of`.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct Companion {
    pub name: String,
    pub any_of: Vec<String>,
}

impl Companion {
    /// Whether the list `value` turns on one of `any_of`.
    pub fn holds(&self, value: &str) -> bool {
        let value = value.trim();
        let (inverted, list) = match value.strip_prefix('^') {
            Some(rest) => (true, rest),
            None => (false, value),
        };
        let named = list.split(',').map(str::trim).any(|item| {
            self.any_of
                .iter()
                .any(|wanted| wanted.eq_ignore_ascii_case(item))
        });
        named != inverted
    }
}

/// Plain OS bases on which a CUDA installed by hand states no requirement (CU123).
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct HandBuiltCuda {
    /// Docker Hub repositories of plain OS and language images.
    pub os_repositories: Vec<String>,
    pub source: String,
}

/// NVIDIA's CUDA repository signing keys, the retired one and its replacement (CU137).
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct CudaRepoKey {
    pub retired_key_file: String,
    pub retired_key_ids: Vec<String>,
    pub new_key_file: String,
    pub new_key_id: String,
    pub keyring_package: String,
    pub keyring_deb: String,
    /// The CUDA repository's URL path (`/compute/cuda/repos/`).
    pub repo_path: String,
    pub repo_url: String,
    pub rotated: String,
    /// `registry/repository` globs of base images that carry the repository themselves.
    pub repository_bases: Vec<String>,
    pub source: String,
}

/// What the NVIDIA Container Toolkit does to the loader at container start (CU125).
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct ContainerStart {
    pub ldcache_rebuilt: String,
    pub ldcache_source: String,
    /// Repository globs of Jetson (L4T) base images.
    pub jetson_repositories: Vec<String>,
    pub jetson_source: String,
}

impl ContainerStart {
    /// Whether `repository` is a Jetson (L4T) base image.
    pub fn is_jetson(&self, repository: &str) -> bool {
        self.jetson_repositories
            .iter()
            .any(|pattern| glob(pattern, repository))
    }
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct VisibleDevices {
    pub var: String,
    pub hidden: Vec<String>,
    pub source: String,
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct DriverCapabilities {
    pub var: String,
    pub source: String,
}

/// What shows that an image uses a driver capability.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct CapabilityUse {
    pub capability: String,
    pub words: Vec<String>,
    pub env: Vec<String>,
    pub packages: Vec<String>,
    pub source: String,
}

/// `pattern` (with `*`) matches `text`.
pub fn glob(pattern: &str, text: &str) -> bool {
    if !wildcard::literal_ends_fit(pattern, |c| c == '*', text) {
        return false;
    }
    let tokens = pattern.chars().map(|c| match c {
        '*' => Wild::AnyRun,
        c => Wild::Char(c),
    });
    wildcard::matches(tokens, text)
}

impl BuildFacts {
    /// The embedded facts (parsed once per process).
    pub fn embedded() -> &'static BuildFacts {
        static EMBEDDED: std::sync::OnceLock<BuildFacts> = std::sync::OnceLock::new();
        EMBEDDED.get_or_init(|| {
            Self::from_toml_text(embedded_toml()).expect("rules/build.toml is valid (tested)")
        })
    }

    /// Parses a file holding a `[build]` table; every entry needs a source.
    pub fn from_toml_text(text: &str) -> Result<BuildFacts, String> {
        let file: File = crate::from_toml::from_str(text).map_err(|error| error.located(text))?;
        let facts = file.build;
        let mut sources = vec![
            ("volatile_args", &facts.volatile_args.source),
            ("dependency_installs", &facts.dependency_installs.source),
            ("compiles", &facts.compiles.source),
            ("runfile", &facts.runfile.source),
            ("visible_devices", &facts.visible_devices.source),
            ("driver_capabilities", &facts.driver_capabilities.source),
            ("torch_extensions", &facts.torch_extensions.source),
            ("native_arch.cmake", &facts.native_arch.cmake_source),
            ("native_arch.nvcc", &facts.native_arch.nvcc_source),
        ];
        sources.extend(
            facts
                .heavy_packages
                .iter()
                .map(|h| ("heavy_packages", &h.source)),
        );
        sources.extend(facts.debug_env.iter().map(|d| ("debug_env", &d.source)));
        sources.extend(
            facts
                .capability_uses
                .iter()
                .map(|c| ("capability_uses", &c.source)),
        );
        if let Some((table, _)) = sources.iter().find(|(_, s)| s.trim().is_empty()) {
            return Err(format!("an entry of build.{table} has no source"));
        }
        if let Some(h) = facts
            .heavy_packages
            .iter()
            .find(|h| !matches!(h.manager.as_str(), "python" | "conda" | "system"))
        {
            return Err(format!(
                "build.heavy_packages: unknown manager {:?} (python, conda or system)",
                h.manager
            ));
        }
        Ok(facts)
    }

    /// Whether an ARG named `name` is set per build by its name.
    pub fn is_volatile_name(&self, name: &str) -> bool {
        let upper = name.to_ascii_uppercase();
        self.volatile_args.names.iter().any(|p| glob(p, &upper))
    }

    /// Whether a LABEL key holds a per-build value.
    pub fn is_volatile_label(&self, key: &str) -> bool {
        let key = key.to_ascii_lowercase();
        self.volatile_args.label_keys.contains(&key)
    }

    /// Whether an ARG default is a placeholder for a value passed per build.
    pub fn is_placeholder_default(&self, default: Option<&str>) -> bool {
        default.is_none_or(|d| {
            let d = d.trim_matches(['"', '\'']);
            self.volatile_args
                .placeholder_defaults
                .iter()
                .any(|p| p == d)
        })
    }

    /// The heavy-package entry of `manager` family (`python`, `conda`, `system`) naming `package`.
    pub fn heavy(&self, manager: &str, package: &str) -> Option<&HeavyPackages> {
        let package = package.to_ascii_lowercase();
        self.heavy_packages
            .iter()
            .filter(|h| h.manager == manager)
            .find(|h| h.names.iter().any(|p| glob(p, &package)))
    }

    /// The debugging switch `name` when `value` turns it on, and the
    /// companion variable it needs (read through `env`) holds.
    pub fn debug_setting(
        &self,
        name: &str,
        value: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Option<&DebugSetting> {
        let value = value.trim();
        self.debug_env.iter().find(|d| {
            d.name == name
                && d.on
                    .iter()
                    .any(|on| on == value || (on == "*" && !value.is_empty()))
                && d.needs.as_ref().is_none_or(|companion| {
                    env(&companion.name).is_some_and(|v| companion.holds(&v))
                })
        })
    }

    /// What shows a use of `capability`.
    pub fn capability_use(&self, capability: &str) -> Option<&CapabilityUse> {
        self.capability_uses
            .iter()
            .find(|c| c.capability == capability)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_facts_load_and_answer() {
        let facts = BuildFacts::from_toml_text(embedded_toml()).unwrap();
        assert!(facts.is_volatile_name("GIT_COMMIT"));
        assert!(facts.is_volatile_name("build_date"));
        assert!(!facts.is_volatile_name("CUDA_VERSION"));
        assert!(facts.heavy("python", "torch").is_some());
        assert!(facts.heavy("python", "nvidia-cudnn-cu12").is_some());
        assert!(facts.heavy("python", "requests").is_none());
        let subsys = |value: &'static str| {
            move |name: &str| (name == "NCCL_DEBUG_SUBSYS").then(|| value.to_string())
        };
        let unset = |_: &str| None;
        assert!(facts.debug_setting("NCCL_DEBUG", "TRACE", unset).is_none());
        assert!(facts
            .debug_setting("NCCL_DEBUG", "TRACE", subsys("INIT,ENV"))
            .is_none());
        assert!(facts
            .debug_setting("NCCL_DEBUG", "TRACE", subsys("INIT,CALL"))
            .is_some());
        assert!(facts
            .debug_setting("NCCL_DEBUG", "TRACE", subsys("ALL"))
            .is_some());
        assert!(facts
            .debug_setting("NCCL_DEBUG", "TRACE", subsys("^INIT"))
            .is_some());
        assert!(facts
            .debug_setting("NCCL_DEBUG", "TRACE", subsys("^CALL"))
            .is_none());
        assert!(facts
            .debug_setting("NCCL_DEBUG", "INFO", subsys("ALL"))
            .is_none());
        assert!(facts
            .debug_setting("CUDA_LAUNCH_BLOCKING", "1", unset)
            .is_some());
        assert!(facts.is_placeholder_default(None));
        assert!(facts.is_placeholder_default(Some("\"\"")));
        assert!(!facts.is_placeholder_default(Some("abc123")));
    }

    #[test]
    fn an_entry_without_source_is_refused() {
        let text = embedded_toml().replacen(
            "source = \"https://docs.nvidia.com/cuda/cuda-installation-guide-linux/#runfile-advanced-options",
            "source = \"\" # ",
            1,
        );
        let error = BuildFacts::from_toml_text(&text).unwrap_err();
        assert!(error.contains("runfile"), "{error}");
    }
}
