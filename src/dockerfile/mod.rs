//! Everything about Dockerfiles as text: the BuildKit-grammar parser, the
//! typed syntax tree, the stage model, ARG/ENV expansion and RUN shell words.

pub mod arch_lists;
pub mod ast;
mod directives;
pub mod dump;
pub mod expand;
mod heredoc;
pub mod imageref;
mod instructions;
mod json;
mod lines;
pub mod model;
mod node;
pub mod packages;
pub mod parser;
pub mod platform;
pub mod requirements_file;
mod script_vars;
pub mod shell;
mod shlex;
pub mod stages;
mod words;

pub use dump::dump;
pub use parser::{parse, parse_bytes, parse_syntax, parse_syntax_bytes};
pub use stages::{build_model, build_model_with, ImageEnv};
