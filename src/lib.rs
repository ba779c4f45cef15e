//! cudalint: catches CUDA packaging mistakes in Dockerfiles and container
//! images before they reach a GPU.
//!
//! Pipeline: `dockerfile` parses text into a syntax tree and a build model;
//! `checks` run rules over them (with `knowledge` from `rules/*.toml`); the
//! `engine` applies configuration and suppressions; `render` prints. `build`
//! lints, builds through the Docker engine and checks the built image.

pub mod build;
pub mod checks;
pub mod cli;
pub mod config;
pub mod context_files;
pub mod diagnostic;
pub mod discover;
pub mod dockerfile;
pub mod engine;
pub mod facts;
pub mod fix;
pub mod from_toml;
pub mod image;
pub mod image_lint;
pub mod knowledge;
pub mod packed_text;
pub mod paths;
pub mod plugin;
pub mod prediction;
pub mod render;
pub mod rule_docs;
pub mod rule_meta;
pub mod server;
pub mod source;
pub mod suppress;
pub mod units;
pub mod unix_fs;
pub mod wildcard;
