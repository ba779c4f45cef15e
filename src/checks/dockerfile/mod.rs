//! Dockerfile rules, one file each, and their registry.

pub mod cu104_package_cache_left_behind;
pub mod shipped;
pub mod support;

use super::DockerfileRule;

/// Every Dockerfile rule, in code order.
pub static RULES: &[&dyn DockerfileRule] =
    &[&cu104_package_cache_left_behind::PackageCacheLeftBehind];
