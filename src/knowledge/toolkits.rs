//! Toolkits and drivers: minimum driver per CUDA release, minor-version
//! compatibility floors, GPU architectures per toolkit
//! (`rules/toolkits.toml`). Placeholder until the toolkits helper lands.

#[derive(Clone, Debug, Default)]
pub struct ToolkitKnowledge {}

/// The driver version of the machine this runs on, from
/// `/proc/driver/nvidia/version` or `nvidia-smi` (for `--driver host`).
pub fn host_driver_version() -> Result<String, String> {
    Err("reading the host driver is not implemented yet".into())
}

// The area convention (see knowledge/mod.rs); placeholder until this area lands.
impl ToolkitKnowledge {
    pub fn from_toml(value: toml::Value) -> Result<Self, String> {
        let _ = value;
        Ok(ToolkitKnowledge::default())
    }

    pub fn extend(&mut self, other: Self) {
        let _ = other;
    }
}
