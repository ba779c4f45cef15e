//! Dockerfile rules, one file each, and their registry.

pub mod cu104_package_cache_left_behind;
pub mod cu110_cupti_missing;
pub mod cu111_cupti_library_path_wrong;
pub mod cu123_require_check_disabled;
pub mod cu124_stubs_on_runtime_path;
pub mod cu125_compat_forced_on_path;
pub mod shipped;
pub mod support;

use super::DockerfileRule;

/// Every Dockerfile rule, in code order.
pub static RULES: &[&dyn DockerfileRule] =
    &[&cu104_package_cache_left_behind::PackageCacheLeftBehind];
