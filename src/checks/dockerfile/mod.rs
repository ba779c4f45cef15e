//! Dockerfile rules, one file each, and their registry.

pub mod support;

use super::DockerfileRule;

/// Every Dockerfile rule, in code order.
pub static RULES: &[&dyn DockerfileRule] = &[];
