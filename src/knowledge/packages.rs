//! Packages: which pip/conda packages bring which CUDA, NVIDIA driver
//! userspace package names, CUDA devel package patterns
//! (`rules/packages.toml`). Placeholder until the packages helper lands.

#[derive(Clone, Debug, Default)]
pub struct PackageKnowledge {}

// The area convention (see knowledge/mod.rs); placeholder until this area lands.
impl PackageKnowledge {
    pub fn from_toml(value: toml::Value) -> Result<Self, String> {
        let _ = value;
        Ok(PackageKnowledge::default())
    }

    pub fn extend(&mut self, other: Self) {
        let _ = other;
    }
}
