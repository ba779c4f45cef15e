//! Settings that change what rules look for (target driver, GPUs, trusted
//! registries). Loading `.cudalint.toml` lives here too.

/// Facts about where the image will run and what the user trusts.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// Target host driver version, e.g. `535.104.05`.
    pub target_driver: Option<String>,
    /// Target GPU architectures, e.g. `sm_90`.
    pub target_gpus: Vec<String>,
    /// Registries whose images count as known (internal mirrors).
    pub trusted_registries: Vec<String>,
}
