//! The CUDA packaging facts the rules rest on, as a typed view of the TOML
//! files under `rules/` (embedded at build time, overridable by the user).

/// All packaging knowledge, loaded and validated.
#[derive(Clone, Debug, Default)]
pub struct Knowledge {}
