//! Dockerfile rules, one file each, and their registry.

pub mod cu001;
pub mod cu002;
pub mod cu003;
pub mod cu004;
pub mod cu005;
pub mod support;

use super::DockerfileRule;

/// Every Dockerfile rule, in code order.
pub static RULES: &[&dyn DockerfileRule] = &[
    &cu001::SyntaxError,
    &cu002::UnknownStageReference,
    &cu003::UnusedStage,
    &cu004::UndefinedArgInFrom,
    &cu005::UnknownRuleInSuppression,
];
