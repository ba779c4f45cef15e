//! Builds the [`BuildModel`] from a parsed Dockerfile (placeholder until the
//! stage model lands).

use crate::dockerfile::ast::Dockerfile;
use crate::dockerfile::model::{BuildModel, BuildOptions};

/// Model the stages of `dockerfile` for a build with `options`.
pub fn build_model(_dockerfile: &Dockerfile, _options: &BuildOptions) -> BuildModel {
    BuildModel::default()
}
