//! Packages: which pip/conda packages bring which CUDA, NVIDIA driver
//! userspace package names, CUDA devel package patterns
//! (`rules/packages.toml`). Placeholder until the packages helper lands.

#[derive(Clone, Debug, Default)]
pub struct PackageKnowledge {}
