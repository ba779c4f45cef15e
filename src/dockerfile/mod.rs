//! Everything about Dockerfiles as text: the BuildKit-grammar parser, the
//! typed syntax tree, the stage model, ARG/ENV expansion and RUN shell words.

pub mod ast;
pub mod expand;
pub mod imageref;
pub mod model;
pub mod packages;
pub mod parser;
pub mod shell;
pub mod stages;

pub use parser::parse;
pub use stages::build_model;
