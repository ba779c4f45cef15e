//! The CUDA packaging facts the rules rest on, as a typed view of the TOML
//! files under `rules/` (embedded at build time, overridable by the user).
//!
//! Each area has its own file and TOML table: `images`, `toolkits`,
//! `packages`, `cupti`. A user file (`--knowledge FILE` or config) may hold
//! any of those tables; its entries are added to (or replace) the embedded
//! ones.

pub mod cupti;
pub mod images;
pub mod packages;
pub mod toolkits;
pub mod version;

pub use version::Version;

/// All packaging knowledge, loaded and validated.
#[derive(Clone, Debug, Default)]
pub struct Knowledge {
    pub images: images::ImageKnowledge,
    pub toolkits: toolkits::ToolkitKnowledge,
    pub packages: packages::PackageKnowledge,
    pub cupti: cupti::CuptiKnowledge,
}
