//! What the files of a built image are, by path: CUDA development content by category, CUDA library
//! stems, the driver's own programs, the frameworks that load
//! CUPTI on demand, and the directories of the base OS and of Python packages. Read from
//! `rules/image-content.toml` and compiled once into glob sets; the image rules and the size
//! breakdown ask through the methods here.

use crate::from_toml::FromToml;
use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// The embedded data file.
pub fn embedded_toml() -> &'static str {
    super::embedded::file("rules/image-content.toml")
}

#[derive(FromToml)]
#[toml(deny_unknown_fields)]
struct File {
    /// When these facts were last checked against their sources (read by the freshness check).
    #[allow(dead_code)]
    checked: Option<toml::value::Datetime>,
    image_content: Tables,
}

#[derive(FromToml)]
#[toml(deny_unknown_fields)]
struct Tables {
    devel: Vec<DevelGroup>,
    cuda_libraries: LibraryStems,
    vendored_names: VendoredNames,
    driver: DriverFiles,
    cupti_on_demand: Vec<CuptiOnDemand>,
    cuda_runtime: PathGroup,
    launcher_loaded: PathGroup,
    base_os: PathGroup,
    python: PathGroup,
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
struct DevelGroup {
    category: String,
    description: String,
    globs: Vec<String>,
    source: String,
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
struct LibraryStems {
    stems: Vec<String>,
    source: String,
}

/// How a wheel repair tool renames the libraries it vendors.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
struct VendoredNames {
    /// The hex digits of the hash inserted before the first `.` (`libcudart-e409450e.so.11.0`).
    hash_hex_digits: usize,
    source: String,
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
struct DriverFiles {
    programs: Vec<String>,
    source: String,
}

/// A framework that opens CUPTI with `dlopen` when it profiles.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct CuptiOnDemand {
    pub name: String,
    /// Python distribution names (dist-info `Name:`, compared case-insensitively, `-` = `_`).
    #[toml(default)]
    pub distributions: Vec<String>,
    /// Paths whose presence shows the tool is installed.
    #[toml(default)]
    pub paths: Vec<String>,
    pub source: String,
}

#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
struct PathGroup {
    globs: Vec<String>,
    #[toml(default)]
    exclude_globs: Vec<String>,
    source: String,
}

/// One category of CUDA development content.
#[derive(Clone, Debug)]
pub struct DevelCategory {
    /// kebab-case: `compiler`, `headers`, `static-libraries`, `nsight`, `docs-and-samples`.
    pub name: String,
    pub description: String,
    pub source: String,
}

/// The content facts, compiled.
#[derive(Debug)]
pub struct ImageContent {
    devel: Vec<DevelCategory>,
    devel_globs: Vec<GlobSet>,
    library_stems: Vec<String>,
    /// Hex digits of the hash a wheel repair tool inserts into a vendored library's name.
    vendored_hash_digits: usize,
    pub library_source: String,
    driver_programs: Vec<String>,
    pub driver_source: String,
    cupti_on_demand: Vec<CuptiOnDemand>,
    cupti_on_demand_paths: Vec<GlobSet>,
    cuda_runtime: GlobSet,
    pub cuda_runtime_source: String,
    launcher_loaded: GlobSet,
    pub launcher_loaded_source: String,
    base_os: GlobSet,
    base_os_excluded: GlobSet,
    pub base_os_source: String,
    python: GlobSet,
    pub python_source: String,
}

/// A glob over absolute paths: `*` stays inside one component, `**` spans components.
pub(crate) fn path_glob(pattern: &str) -> Result<Glob, String> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|error| format!("bad glob {pattern:?}: {error}"))
}

fn glob_set(patterns: &[String]) -> Result<GlobSet, String> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        if !pattern.starts_with('/') {
            return Err(format!("glob {pattern:?} must be an absolute path"));
        }
        builder.add(path_glob(pattern)?);
    }
    builder.build().map_err(|error| error.to_string())
}

pub(crate) fn need_source(what: &str, source: &str) -> Result<(), String> {
    if source.trim().is_empty() {
        Err(format!("{what} needs a source"))
    } else {
        Ok(())
    }
}

impl ImageContent {
    /// The embedded facts (compiled once per process).
    pub fn embedded() -> &'static ImageContent {
        static EMBEDDED: std::sync::OnceLock<ImageContent> = std::sync::OnceLock::new();
        EMBEDDED.get_or_init(|| {
            Self::from_toml_text(embedded_toml())
                .expect("rules/image-content.toml is valid (tested)")
        })
    }

    /// Parses and compiles a file holding an `[image_content]` table.
    pub fn from_toml_text(text: &str) -> Result<ImageContent, String> {
        let file: File = crate::from_toml::from_str(text).map_err(|error| error.located(text))?;
        let tables = file.image_content;
        let mut devel_globs = Vec::new();
        for group in &tables.devel {
            need_source(
                &format!("devel category {:?}", group.category),
                &group.source,
            )?;
            devel_globs.push(glob_set(&group.globs)?);
        }
        need_source("cuda_libraries", &tables.cuda_libraries.source)?;
        if let Some(stem) = tables
            .cuda_libraries
            .stems
            .iter()
            .find(|stem| !stem.ends_with(".so"))
        {
            return Err(format!("library stem {stem:?} must end in .so"));
        }
        need_source("vendored_names", &tables.vendored_names.source)?;
        need_source("driver", &tables.driver.source)?;
        need_source("cuda_runtime", &tables.cuda_runtime.source)?;
        need_source("launcher_loaded", &tables.launcher_loaded.source)?;
        need_source("base_os", &tables.base_os.source)?;
        need_source("python", &tables.python.source)?;
        let mut cupti_on_demand_paths = Vec::new();
        for framework in &tables.cupti_on_demand {
            need_source(
                &format!("cupti_on_demand {:?}", framework.name),
                &framework.source,
            )?;
            cupti_on_demand_paths.push(glob_set(&framework.paths)?);
        }
        Ok(ImageContent {
            devel: tables
                .devel
                .iter()
                .map(|group| DevelCategory {
                    name: group.category.clone(),
                    description: group.description.clone(),
                    source: group.source.clone(),
                })
                .collect(),
            devel_globs,
            library_stems: tables.cuda_libraries.stems,
            vendored_hash_digits: tables.vendored_names.hash_hex_digits,
            library_source: tables.cuda_libraries.source,
            driver_programs: tables.driver.programs,
            driver_source: tables.driver.source,
            cupti_on_demand: tables.cupti_on_demand,
            cupti_on_demand_paths,
            cuda_runtime: glob_set(&tables.cuda_runtime.globs)?,
            cuda_runtime_source: tables.cuda_runtime.source,
            launcher_loaded: glob_set(&tables.launcher_loaded.globs)?,
            launcher_loaded_source: tables.launcher_loaded.source,
            base_os: glob_set(&tables.base_os.globs)?,
            base_os_excluded: glob_set(&tables.base_os.exclude_globs)?,
            base_os_source: tables.base_os.source,
            python: glob_set(&tables.python.globs)?,
            python_source: tables.python.source,
        })
    }

    /// Every devel category, in the data file's order.
    pub fn devel_categories(&self) -> &[DevelCategory] {
        &self.devel
    }

    /// The devel category of `path`, if it is CUDA development content.
    pub fn devel_category(&self, path: &str) -> Option<&DevelCategory> {
        self.devel_globs
            .iter()
            .position(|set| set.is_match(path))
            .map(|index| &self.devel[index])
    }

    /// The CUDA library stem (`libcudart.so`) a file name or SONAME belongs to.
    pub fn cuda_library_stem(&self, name: &str) -> Option<&str> {
        let name = self.unvendored(name);
        self.library_stems
            .iter()
            .find(|stem| {
                name.strip_prefix(stem.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
            })
            .map(String::as_str)
    }

    /// `name` without the hash a wheel repair tool inserted before its first `.`
    /// (`libcudart-e409450e.so.11.0` → `libcudart.so.11.0`); other names as they are.
    pub fn unvendored<'n>(&self, name: &'n str) -> std::borrow::Cow<'n, str> {
        let digits = self.vendored_hash_digits;
        let Some(dot) = name.find('.') else {
            return name.into();
        };
        let base = &name[..dot];
        match base
            .len()
            .checked_sub(digits + 1)
            .map(|at| base.split_at(at))
        {
            Some((stem, tail))
                if !stem.is_empty()
                    && tail.starts_with('-')
                    && tail[1..].bytes().all(|byte| byte.is_ascii_hexdigit()) =>
            {
                format!("{stem}{}", &name[dot..]).into()
            }
            _ => name.into(),
        }
    }

    /// Whether `name` (a file name) is one of the driver's own programs.
    pub fn is_driver_program(&self, name: &str) -> bool {
        self.driver_programs.iter().any(|program| program == name)
    }

    /// The frameworks that load CUPTI on demand.
    pub fn cupti_on_demand(&self) -> &[CuptiOnDemand] {
        &self.cupti_on_demand
    }

    /// Whether `path` shows that framework `index` of [`Self::cupti_on_demand`] is installed.
    pub fn cupti_on_demand_path(&self, index: usize, path: &str) -> bool {
        self.cupti_on_demand_paths
            .get(index)
            .is_some_and(|set| set.is_match(path))
    }

    /// Whether `path` is CUDA runtime content by where it lies (the toolkit tree, the pip wheels).
    pub fn is_cuda_runtime_path(&self, path: &str) -> bool {
        self.cuda_runtime.is_match(path)
    }

    /// Whether the object at `path` is loaded by a launcher with its own search path, or picked among
    /// alternatives by what is installed.
    pub fn is_launcher_loaded(&self, path: &str) -> bool {
        self.launcher_loaded.is_match(path)
    }

    pub fn is_base_os(&self, path: &str) -> bool {
        self.base_os.is_match(path) && !self.base_os_excluded.is_match(path)
    }

    pub fn is_python_package(&self, path: &str) -> bool {
        self.python.is_match(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_file_compiles_and_classifies() {
        let content = ImageContent::embedded();
        let category = |path: &str| content.devel_category(path).map(|c| c.name.as_str());
        assert_eq!(category("/usr/local/cuda-12.9/bin/nvcc"), Some("compiler"));
        assert_eq!(
            category("/usr/local/cuda-12.9/targets/x86_64-linux/include/cuda_runtime.h"),
            Some("headers")
        );
        assert_eq!(
            category("/usr/local/cuda-12.9/targets/x86_64-linux/lib/libcudart_static.a"),
            Some("static-libraries")
        );
        assert_eq!(category("/usr/local/cuda-12.9/bin/nvcc-wrapper"), None);
        // The pip wheels' own headers are not toolkit content.
        assert_eq!(
            category("/usr/local/lib/python3.11/site-packages/nvidia/cuda_runtime/include/cuda.h"),
            None
        );
        assert_eq!(
            content.cuda_library_stem("libcudart.so.12"),
            Some("libcudart.so")
        );
        assert_eq!(
            content.cuda_library_stem("libcublasLt.so.12.9.1.4"),
            Some("libcublasLt.so")
        );
        assert_eq!(content.cuda_library_stem("libcudartx.so"), None);
        // Vendored by auditwheel, as in torch 1.x cu11 wheels.
        assert_eq!(
            content.cuda_library_stem("libcudart-e409450e.so.11.0"),
            Some("libcudart.so")
        );
        assert_eq!(
            content.unvendored("libcudart-e409450e.so.11.0"),
            "libcudart.so.11.0"
        );
        assert_eq!(
            content.unvendored("libnvrtc-builtins.so.12.9"),
            "libnvrtc-builtins.so.12.9"
        );
        assert_eq!(
            content.unvendored("libfoo-xyz12345.so"),
            "libfoo-xyz12345.so"
        );
        assert_eq!(content.unvendored("-e409450e.so"), "-e409450e.so");
        assert_eq!(content.unvendored("e409450e"), "e409450e");
        assert!(content.is_base_os("/usr/lib/x86_64-linux-gnu/libc.so.6"));
        assert!(!content.is_base_os("/usr/local/lib/libfoo.so"));
        assert!(
            content.is_python_package("/usr/local/lib/python3.11/site-packages/torch/__init__.py")
        );
        assert!(content.is_driver_program("nvidia-smi"));
    }

    #[test]
    fn a_group_without_source_or_with_a_relative_glob_is_refused() {
        let text = embedded_toml().replacen(
            "source = \"https://refspecs.linuxfoundation.org",
            "source = \"\" # ",
            1,
        );
        assert!(ImageContent::from_toml_text(&text)
            .unwrap_err()
            .contains("base_os needs a source"));
        let text = embedded_toml().replacen("\"/bin/**\"", "\"bin/**\"", 1);
        assert!(ImageContent::from_toml_text(&text)
            .unwrap_err()
            .contains("absolute"));
    }
}
