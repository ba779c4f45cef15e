//! Base images: the `nvidia/cuda` tag grammar and catalogue, other CUDA base
//! families (`pytorch/pytorch`, NGC, user-declared ones), internal mirrors,
//! what each variant contains and weighs, and which packages make an image
//! devel-sized (`rules/images.toml`).
//!
//! The TOML shape is [`ImagesToml`]; [`ImageKnowledge::from_toml`] checks it
//! and builds the typed view the rules query: [`ImageKnowledge::classify`],
//! [`ImageKnowledge::validate_tag`], [`ImageKnowledge::eol`] and
//! [`ImageKnowledge::runtime_twin`].

//!
//! One file per concern: [`schema`] (the TOML shape), [`view`] (the typed
//! view, loading and merging), [`tag`] (the nvidia/cuda tag grammar and tag
//! validation), [`family`] (other families' tag templates), [`eol`] (support
//! status), [`classify`] (looking a reference up), [`glob`] (patterns).

mod classify;
mod eol;
mod family;
mod glob;
mod schema;
mod tag;
mod view;

pub use eol::{EolBasis, EolInfo};
pub use family::{Family, TemplateMatch};
pub use glob::glob_matches;
pub use schema::*;
pub use tag::{parse_cuda_tag, CudaTag, TagProblem};
pub use view::*;
