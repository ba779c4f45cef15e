//! The fleet's GPUs as data (`rules/gpus.toml`): product names and compute capabilities, the rules
//! by which SASS and PTX reach a GPU, the lowest CUDA that JIT-compiles each PTX ISA version, and the
//! driver each fatbin compression needs. `--gpu`/`[target] gpus` are parsed here (`sm_90`, `9.0`,
//! `H100`), so the image rules (CU230–CU233) and the Dockerfile rules (CU133/CU134) judge the same
//! fleet by the same rules.
//!
//! The file is its own knowledge table (`[gpus]`), parsed on first use, like `host_libraries`.

use std::fmt;

use crate::from_toml::FromToml;

use super::Version;

/// The embedded data file.
pub fn embedded_toml() -> &'static str {
    super::embedded::file("rules/gpus.toml")
}

/// A compute capability (`9.0`); `arch()` is the number in `sm_90`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Capability {
    pub major: u32,
    pub minor: u32,
}

impl Capability {
    /// `90` → 9.0, `103` → 10.3, `121` → 12.1.
    pub fn from_arch(arch: u32) -> Capability {
        Capability {
            major: arch / 10,
            minor: arch % 10,
        }
    }

    pub fn arch(self) -> u32 {
        self.major * 10 + self.minor
    }

    /// `9.0` or `sm_90` (also `compute_90`, `90`, with an `a`/`f` suffix ignored).
    pub fn parse(text: &str) -> Option<Capability> {
        let text = text.trim().to_ascii_lowercase();
        if let Some((major, minor)) = text.split_once('.') {
            let (major, minor) = (major.parse().ok()?, minor.parse::<u32>().ok()?);
            return (minor < 10).then_some(Capability { major, minor });
        }
        let digits = text
            .strip_prefix("sm_")
            .or_else(|| text.strip_prefix("compute_"))
            .or_else(|| text.strip_prefix("sm"))?;
        let digits = digits.trim_end_matches(['a', 'f']);
        let arch: u32 = digits.parse().ok()?;
        (arch >= 10).then(|| Capability::from_arch(arch))
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A GPU the fleet has: what the user wrote and its compute capability.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetGpu {
    /// `V100 (sm_70)`, or `sm_89` when given as an architecture.
    pub label: String,
    pub capability: Capability,
}

/// A suffix of a target: `a` code runs on its own capability only, `f` code on its family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    Plain,
    ArchSpecific,
    Family,
}

#[derive(FromToml)]
#[toml(deny_unknown_fields)]
struct File {
    #[allow(dead_code)]
    checked: Option<toml::value::Datetime>,
    gpus: Gpus,
}

/// Everything `rules/gpus.toml` says.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct Gpus {
    pub products_source: String,
    pub compatibility: Compatibility,
    pub ptx_isa: PtxIsaTable,
    #[toml(default)]
    pub compression: Vec<CompressionNeed>,
    pub torch_arch_names: TorchArchNames,
    #[toml(rename = "product")]
    pub products: Vec<Product>,
}

/// The compatibility rules as NVIDIA states them, with their sources (quoted in findings).
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct Compatibility {
    pub sass: String,
    pub sass_source: String,
    pub ptx: String,
    pub ptx_source: String,
    pub variants: String,
    pub variants_source: String,
}

/// PTX ISA version → the lowest CUDA whose driver JIT-compiles it.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct PtxIsaTable {
    pub source: String,
    pub table: Vec<[String; 2]>,
}

/// PyTorch's `TORCH_CUDA_ARCH_LIST` names and the lists they stand for.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct TorchArchNames {
    pub source: String,
    /// `[name, list]`, in the order torch replaces them.
    pub names: Vec<[String; 2]>,
}

impl TorchArchNames {
    /// The list a name stands for (`Volta` → `7.0+PTX`), compared as torch does: exactly.
    pub fn expand(&self, name: &str) -> Option<&str> {
        self.names
            .iter()
            .find(|[known, _]| known == name)
            .map(|[_, list]| list.as_str())
    }
}

/// A fatbin compression and the lowest driver that loads it.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct CompressionNeed {
    /// `zstd` or `lz4`, as [`crate::image::fatbin::CodeCompression::name`].
    pub name: String,
    pub min_driver: String,
    pub source: String,
}

/// Products of one compute capability.
#[derive(Clone, Debug, FromToml)]
#[toml(deny_unknown_fields)]
pub struct Product {
    pub cc: String,
    pub names: Vec<String>,
}

/// `RTX 4090`, `rtx-4090`, `NVIDIA GeForce RTX 4090` all become `rtx4090`.
fn normalize(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    let mut rest = lower.trim();
    for prefix in ["nvidia", "tesla", "geforce"] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest).trim_start();
    }
    rest.chars().filter(char::is_ascii_alphanumeric).collect()
}

/// Levenshtein distance, for "did you mean" (names are short).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

impl Gpus {
    /// The embedded table, parsed once; the tests check that it parses.
    pub fn embedded() -> &'static Gpus {
        static GPUS: std::sync::OnceLock<Gpus> = std::sync::OnceLock::new();
        GPUS.get_or_init(|| {
            Gpus::from_toml(embedded_toml()).expect("rules/gpus.toml is checked by the tests")
        })
    }

    pub fn from_toml(text: &str) -> Result<Gpus, String> {
        let file: File = crate::from_toml::from_str(text).map_err(|error| error.located(text))?;
        for product in &file.gpus.products {
            Capability::parse(&product.cc)
                .ok_or_else(|| format!("product {:?}: bad compute capability", product.names))?;
        }
        for [isa, cuda] in &file.gpus.ptx_isa.table {
            if Version::parse(isa).is_none() || Version::parse(cuda).is_none() {
                return Err(format!("ptx_isa: bad row [{isa}, {cuda}]"));
            }
        }
        Ok(file.gpus)
    }

    fn products(&self) -> impl Iterator<Item = (Capability, &str)> {
        self.products.iter().flat_map(|product| {
            let cc = Capability::parse(&product.cc).unwrap_or(Capability { major: 0, minor: 0 });
            product.names.iter().map(move |name| (cc, name.as_str()))
        })
    }

    /// The fleet named by `--gpu` / `[target] gpus` values, by compute capability, each capability
    /// once; a value that does not parse is left out (the CLI has already rejected it).
    pub fn targets(&self, names: &[String]) -> Vec<TargetGpu> {
        let mut targets: Vec<TargetGpu> = names
            .iter()
            .filter_map(|gpu| self.parse_target(gpu).ok())
            .collect();
        targets.sort_by_key(|gpu| gpu.capability);
        targets.dedup_by_key(|gpu| gpu.capability);
        targets
    }

    /// A `--gpu` value: `sm_90`, `9.0` or a product name. The error lists close names.
    pub fn parse_target(&self, text: &str) -> Result<TargetGpu, String> {
        if let Some(capability) = Capability::parse(text) {
            return Ok(TargetGpu {
                label: format!("sm_{}", capability.arch()),
                capability,
            });
        }
        let wanted = normalize(text);
        if let Some((capability, name)) =
            self.products().find(|(_, name)| normalize(name) == wanted)
        {
            return Ok(TargetGpu {
                label: format!("{name} (sm_{})", capability.arch()),
                capability,
            });
        }
        let mut close: Vec<(usize, &str)> = self
            .products()
            .map(|(_, name)| {
                let known = normalize(name);
                let score =
                    if !wanted.is_empty() && (known.contains(&wanted) || wanted.contains(&known)) {
                        0
                    } else {
                        distance(&wanted, &known)
                    };
                (score, name)
            })
            .filter(|(score, _)| *score <= 2)
            .collect();
        close.sort();
        let names: Vec<&str> = close.iter().map(|(_, name)| *name).take(6).collect();
        Err(if names.is_empty() {
            format!("unknown GPU `{text}`: give a product name from rules/gpus.toml, an architecture (`sm_90`) or a compute capability (`9.0`)")
        } else {
            format!("unknown GPU `{text}`; did you mean: {}?", names.join(", "))
        })
    }

    /// Whether SASS for `arch` (with its suffix) runs on a GPU of `target`.
    pub fn runs_sass(target: Capability, arch: u32, reach: Reach) -> bool {
        let code = Capability::from_arch(arch);
        match reach {
            Reach::ArchSpecific => target == code,
            Reach::Plain | Reach::Family => {
                target.major == code.major && target.minor >= code.minor
            }
        }
    }

    /// Whether PTX for the virtual `arch` (with its suffix) can be JIT-compiled for `target`.
    pub fn jits_ptx(target: Capability, arch: u32, reach: Reach) -> bool {
        let code = Capability::from_arch(arch);
        match reach {
            Reach::ArchSpecific => target == code,
            Reach::Family => target.major == code.major && target.minor >= code.minor,
            Reach::Plain => target >= code,
        }
    }

    /// The lowest CUDA whose driver JIT-compiles PTX of ISA `major.minor`; `None` when unknown.
    pub fn cuda_for_ptx_isa(&self, (major, minor): (u16, u16)) -> Option<Version> {
        let isa = format!("{major}.{minor}");
        self.ptx_isa
            .table
            .iter()
            .find(|[known, _]| *known == isa)
            .and_then(|[_, cuda]| Version::parse(cuda))
    }

    /// What PTX of ISA `isa` needs when a driver of CUDA `driver_cuda` cannot JIT-compile it: `CUDA
    /// 13.0`, or, for an ISA newer than the table's newest, `a CUDA newer than 13.1` (PTX ISA versions
    /// only grow with CUDA releases). `None` when the driver compiles it (or the ISA is older than the
    /// table).
    pub fn ptx_too_new(&self, isa: (u16, u16), driver_cuda: Version) -> Option<String> {
        if let Some(cuda) = self.cuda_for_ptx_isa(isa) {
            return (cuda > driver_cuda).then(|| format!("CUDA {cuda}"));
        }
        let newest = self
            .ptx_isa
            .table
            .iter()
            .filter_map(|[known, cuda]| Some((Version::parse(known)?, Version::parse(cuda)?)))
            .max()?;
        let isa = Version::parse(&format!("{}.{}", isa.0, isa.1))?;
        (isa > newest.0 && driver_cuda <= newest.1).then(|| {
            format!(
                "a CUDA newer than {} (the newest the PTX ISA table knows)",
                newest.1
            )
        })
    }

    /// The lowest driver that loads entries compressed as `name`, with its source.
    pub fn compression_need(&self, name: &str) -> Option<(Version, &str)> {
        self.compression
            .iter()
            .find(|need| need.name == name)
            .and_then(|need| Some((Version::parse(&need.min_driver)?, need.source.as_str())))
    }

    /// Every compute capability the data knows, lowest first, with its first product name.
    pub fn known_capabilities(&self) -> Vec<(Capability, &str)> {
        let mut all: Vec<(Capability, &str)> = self.products().collect();
        all.sort_by_key(|(cc, _)| *cc);
        all.dedup_by_key(|(cc, _)| *cc);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_architectures_and_capabilities_parse_alike() {
        let gpus = Gpus::embedded();
        let cc = |text: &str| {
            gpus.parse_target(text)
                .map(|gpu| gpu.capability.to_string())
        };
        assert_eq!(cc("sm_90").unwrap(), "9.0");
        assert_eq!(cc("9.0").unwrap(), "9.0");
        assert_eq!(cc("sm_120a").unwrap(), "12.0");
        assert_eq!(cc("V100").unwrap(), "7.0");
        assert_eq!(cc("NVIDIA GeForce RTX 5090").unwrap(), "12.0");
        assert_eq!(cc("rtx-4090").unwrap(), "8.9");
        assert_eq!(cc("Jetson Orin").unwrap(), "8.7");
        let error = gpus.parse_target("H10").unwrap_err();
        assert!(error.contains("H100"), "{error}");
    }

    #[test]
    fn compatibility_follows_the_programming_guide() {
        let cc = |text| Capability::parse(text).unwrap();
        assert!(Gpus::runs_sass(cc("8.6"), 80, Reach::Plain));
        assert!(!Gpus::runs_sass(cc("9.0"), 80, Reach::Plain));
        assert!(!Gpus::runs_sass(cc("12.0"), 100, Reach::Plain));
        assert!(!Gpus::runs_sass(cc("10.3"), 100, Reach::ArchSpecific));
        assert!(Gpus::runs_sass(cc("10.3"), 100, Reach::Family));
        assert!(Gpus::jits_ptx(cc("12.0"), 90, Reach::Plain));
        assert!(!Gpus::jits_ptx(cc("8.9"), 90, Reach::Plain));
        assert!(!Gpus::jits_ptx(cc("10.0"), 90, Reach::ArchSpecific));
        let fleet = Gpus::embedded();
        assert_eq!(fleet.cuda_for_ptx_isa((9, 0)), Version::parse("13.0"));
        let r580 = Version::parse("13.0").unwrap();
        assert_eq!(fleet.ptx_too_new((9, 0), r580), None);
        assert_eq!(
            fleet.ptx_too_new((9, 1), r580).as_deref(),
            Some("CUDA 13.1")
        );
        assert!(fleet
            .ptx_too_new((9, 4), r580)
            .unwrap()
            .contains("newer than 13.1"));
        assert_eq!(fleet.ptx_too_new((8, 8), r580), None);
    }
}
