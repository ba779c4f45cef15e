//! Everything about Dockerfiles as text: the BuildKit-grammar parser, the
//! typed syntax tree, the stage model, ARG/ENV expansion and RUN shell words.

pub mod ast;
pub mod model;
pub mod parser;
pub mod stages;

pub use parser::parse;
pub use stages::build_model;
