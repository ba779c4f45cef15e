//! The Docker engine (placeholder until the bollard client lands in this file).

use super::{LoadOptions, LoadedImage};

pub fn load(name: &str, _options: &LoadOptions) -> anyhow::Result<LoadedImage> {
    anyhow::bail!("{name}: reading from the Docker engine is not built yet")
}
