//! When the objects of a built image are loaded: which files are Python extension modules (loaded by
//! `import`), which libraries a framework loads by path before its own modules (PyTorch's preload of
//! the nvidia-* wheels, CuPy's cuda-pathfinder), which objects are plugins opened on demand and what
//! feature each serves, and which library copies a package loads from its own path. Read from
//! `rules/image-loading.toml`; the start-time model (`image::startup`) and the image rules ask
//! through the methods here.

use globset::{GlobSet, GlobSetBuilder};

use super::image_content::{need_source, path_glob};
use crate::from_toml::FromToml;

/// The embedded data file.
pub fn embedded_toml() -> &'static str {
    super::embedded::file("rules/image-loading.toml")
}

#[derive(FromToml)]
#[toml(deny_unknown_fields)]
struct File {
    /// When these facts were last checked against their sources.
    #[allow(dead_code)]
    checked: Option<toml::value::Datetime>,
    image_loading: Tables,
}

#[derive(FromToml)]
#[toml(deny_unknown_fields)]
struct Tables {
    extension_modules: ExtensionModulesData,
    preloads: Vec<PreloadData>,
    plugins: Vec<PluginData>,
    #[toml(default)]
    optional_modules: Vec<OptionalModuleData>,
    self_loaded: Vec<SelfLoadedData>,
}

#[derive(FromToml)]
#[toml(deny_unknown_fields)]
struct ExtensionModulesData {
    directories: Vec<String>,
    suffixes: Vec<String>,
    tagged_suffix_glob: String,
    library_prefix: String,
    source: String,
}

#[derive(FromToml)]
#[toml(deny_unknown_fields)]
struct PreloadData {
    name: String,
    mechanism: String,
    package: String,
    #[toml(default)]
    also_packages: Vec<String>,
    #[toml(default)]
    requires: Vec<String>,
    dependents_import_it: bool,
    package_libraries: Vec<String>,
    globs: Vec<String>,
    source: String,
}

#[derive(FromToml)]
#[toml(deny_unknown_fields)]
struct PluginData {
    feature: String,
    role: PluginRole,
    globs: Vec<String>,
    consequence: String,
    source: String,
}

/// An extension module that its package's import does not load: imported only when the feature
/// it wraps is asked for, so it is judged as an optional plugin.
#[derive(FromToml)]
#[toml(deny_unknown_fields)]
struct OptionalModuleData {
    package: String,
    module: String,
    library: String,
    globs: Vec<String>,
    consequence: String,
    source: String,
}

#[derive(FromToml)]
#[toml(deny_unknown_fields)]
struct SelfLoadedData {
    #[allow(dead_code)]
    name: String,
    globs: Vec<String>,
    source: String,
}

/// What a plugin is to its package.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromToml, serde::Serialize)]
#[toml(rename_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum PluginRole {
    /// The package's GPU support: without it the program silently runs on the CPU.
    Backend,
    /// An optional transport or tool.
    Optional,
}

/// A framework's preload of libraries by path, compiled.
#[derive(Debug)]
pub struct Preload {
    pub name: String,
    pub mechanism: String,
    /// Package directories (relative to a packages directory) whose import runs the preload.
    pub packages: Vec<String>,
    /// Paths (relative to the packages directory) that must exist for the preload to run.
    pub requires: Vec<String>,
    /// Extension modules that NEED one of `package_libraries` import the package first.
    pub dependents_import_it: bool,
    /// The package's own libraries, relative to the packages directory.
    pub package_libraries: GlobSet,
    /// The files it loads, relative to the packages directory.
    pub globs: GlobSet,
    pub source: String,
}

/// A kind of plugin, compiled.
#[derive(Debug)]
pub struct Plugin {
    pub feature: String,
    pub role: PluginRole,
    pub consequence: String,
    pub source: String,
    globs: GlobSet,
}

/// The loading facts, compiled.
#[derive(Debug)]
pub struct ImageLoading {
    extension_directories: GlobSet,
    extension_suffixes: Vec<String>,
    tagged_suffix: GlobSet,
    library_prefix: String,
    pub extension_source: String,
    pub preloads: Vec<Preload>,
    plugins: Vec<Plugin>,
    self_loaded: GlobSet,
    self_loaded_sources: Vec<String>,
}

/// `absolute`: every pattern must start with `/` (globs over image paths), or none may (globs
/// relative to a packages directory).
fn glob_set(patterns: &[String], absolute: bool) -> Result<GlobSet, String> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        if pattern.starts_with('/') != absolute {
            return Err(format!(
                "glob {pattern:?} must be {}",
                if absolute {
                    "an absolute path"
                } else {
                    "relative to a packages directory"
                }
            ));
        }
        builder.add(path_glob(pattern)?);
    }
    builder.build().map_err(|error| error.to_string())
}

/// Whether `stem` is a Python module name: an identifier of ASCII letters, digits and `_`.
fn is_module_name(stem: &str) -> bool {
    let mut chars = stem.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl ImageLoading {
    /// The embedded facts (compiled once per process).
    pub fn embedded() -> &'static ImageLoading {
        static EMBEDDED: std::sync::OnceLock<ImageLoading> = std::sync::OnceLock::new();
        EMBEDDED.get_or_init(|| {
            Self::from_toml_text(embedded_toml())
                .expect("rules/image-loading.toml is valid (tested)")
        })
    }

    /// Parses and compiles a file holding an `[image_loading]` table.
    pub fn from_toml_text(text: &str) -> Result<ImageLoading, String> {
        let file: File = crate::from_toml::from_str(text).map_err(|error| error.located(text))?;
        let tables = file.image_loading;
        let modules = tables.extension_modules;
        need_source("extension_modules", &modules.source)?;
        let mut preloads = Vec::new();
        for preload in tables.preloads {
            need_source(&format!("preload {:?}", preload.name), &preload.source)?;
            let mut packages = vec![preload.package];
            packages.extend(preload.also_packages);
            preloads.push(Preload {
                name: preload.name,
                mechanism: preload.mechanism,
                packages,
                requires: preload.requires,
                dependents_import_it: preload.dependents_import_it,
                package_libraries: glob_set(&preload.package_libraries, false)?,
                globs: glob_set(&preload.globs, false)?,
                source: preload.source,
            });
        }
        let mut plugins = Vec::new();
        for plugin in tables.plugins {
            need_source(&format!("plugin {:?}", plugin.feature), &plugin.source)?;
            plugins.push(Plugin {
                globs: glob_set(&plugin.globs, true)?,
                feature: plugin.feature,
                role: plugin.role,
                consequence: plugin.consequence,
                source: plugin.source,
            });
        }
        for module in tables.optional_modules {
            need_source(
                &format!("optional module {:?}", module.module),
                &module.source,
            )?;
            plugins.push(Plugin {
                globs: glob_set(&module.globs, true)?,
                feature: format!(
                    "{}'s optional {} support, loaded only by `import {}`",
                    module.package, module.library, module.module
                ),
                role: PluginRole::Optional,
                consequence: module.consequence,
                source: module.source,
            });
        }
        let mut self_loaded = Vec::new();
        let mut self_loaded_sources = Vec::new();
        for copy in &tables.self_loaded {
            need_source(&format!("self_loaded {:?}", copy.name), &copy.source)?;
            self_loaded.extend(copy.globs.iter().cloned());
            self_loaded_sources.push(copy.source.clone());
        }
        Ok(ImageLoading {
            extension_directories: glob_set(&modules.directories, true)?,
            extension_suffixes: modules.suffixes,
            tagged_suffix: glob_set(&[modules.tagged_suffix_glob], false)?,
            library_prefix: modules.library_prefix,
            extension_source: modules.source,
            preloads,
            plugins,
            self_loaded: glob_set(&self_loaded, true)?,
            self_loaded_sources,
        })
    }

    /// Whether the file at `path` is a Python extension module: in a packages directory (or
    /// lib-dynload), named as a module name plus an extension suffix.
    pub fn is_extension_module(&self, path: &str) -> bool {
        if !self.extension_directories.is_match(path) {
            return false;
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        if self.tagged_suffix.is_match(name) {
            return name.split('.').next().is_some_and(is_module_name);
        }
        // An ABI-tagged suffix (`.abi3.so`) is only ever given to what a package imports or loads
        // at import (torchaudio's `libtorchaudio.abi3.so`); a plain `.so` named `lib…` is a library.
        let (tagged, plain) = self.extension_suffixes.split_at(1);
        tagged.iter().any(|suffix| {
            name.strip_suffix(suffix.as_str())
                .is_some_and(is_module_name)
        }) || plain.iter().any(|suffix| {
            name.strip_suffix(suffix.as_str()).is_some_and(|stem| {
                is_module_name(stem) && !stem.starts_with(self.library_prefix.as_str())
            })
        })
    }

    /// The plugin kind `path` is, if the data knows it.
    pub fn plugin(&self, path: &str) -> Option<&Plugin> {
        self.plugins
            .iter()
            .find(|plugin| plugin.globs.is_match(path))
    }

    /// Whether `path` is a library copy its package loads from its own path.
    pub fn is_self_loaded(&self, path: &str) -> bool {
        self.self_loaded.is_match(path)
    }

    /// The sources of the self-loaded copies.
    pub fn self_loaded_sources(&self) -> &[String] {
        &self.self_loaded_sources
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_file_compiles() {
        let loading = ImageLoading::embedded();
        assert!(loading.preloads.iter().any(|p| p.packages[0] == "torch"));
    }

    #[test]
    fn extension_modules_are_told_from_libraries_and_plugins() {
        let loading = ImageLoading::embedded();
        let site = "/opt/venv/lib/python3.11/site-packages";
        for module in [
            "torch/_C.cpython-311-x86_64-linux-gnu.so",
            "cupy_backends/cuda/libs/cublas.cpython-311-x86_64-linux-gnu.so",
            "onnxruntime/capi/onnxruntime_pybind11_state.so",
            "jax_plugins/xla_cuda12/xla_cuda_plugin.so",
            "pkg/_native.abi3.so",
            "torchaudio/lib/libtorchaudio.abi3.so",
        ] {
            assert!(
                loading.is_extension_module(&format!("{site}/{module}")),
                "{module}"
            );
        }
        for library in [
            "torch/lib/libtorch_cpu.so",
            "nvidia/cu13/lib/libcufile_rdma.so.1",
            "nvidia/nvshmem/lib/nvshmem_bootstrap_mpi.so.3",
            "onnxruntime/capi/libonnxruntime_providers_cuda.so",
        ] {
            assert!(
                !loading.is_extension_module(&format!("{site}/{library}")),
                "{library}"
            );
        }
        assert!(!loading.is_extension_module("/usr/lib/x86_64-linux-gnu/foo.so"));
        assert!(loading.is_extension_module(
            "/usr/lib/python3.11/lib-dynload/_ssl.cpython-311-x86_64-linux-gnu.so"
        ));
    }

    #[test]
    fn plugins_have_a_role() {
        let loading = ImageLoading::embedded();
        let site = "/opt/venv/lib/python3.11/site-packages";
        let rdma = loading
            .plugin(&format!("{site}/nvidia/cu13/lib/libcufile_rdma.so.1"))
            .unwrap();
        assert_eq!(rdma.role, PluginRole::Optional);
        let ort = loading
            .plugin(&format!(
                "{site}/onnxruntime/capi/libonnxruntime_providers_cuda.so"
            ))
            .unwrap();
        assert_eq!(ort.role, PluginRole::Backend);
        assert!(loading
            .plugin(&format!("{site}/torch/lib/libtorch_cuda.so"))
            .is_none());
    }

    #[test]
    fn relative_and_absolute_globs_are_not_mixed() {
        let text = embedded_toml().replace(
            "globs = [\"/**/libcufile_rdma.so*\"]",
            "globs = [\"libcufile_rdma.so*\"]",
        );
        let error = ImageLoading::from_toml_text(&text).unwrap_err();
        assert!(error.contains("absolute"), "{error}");
    }
}
