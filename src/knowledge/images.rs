//! Base images: the `nvidia/cuda` tag grammar and catalogue, other CUDA base
//! families (`pytorch/pytorch`, NGC), variant contents and sizes
//! (`rules/images.toml`). Placeholder until the images helper lands.

use super::version::Version;
use crate::dockerfile::model::ImageRef;

#[derive(Clone, Debug, Default)]
pub struct ImageKnowledge {}

/// Which layer of NVIDIA's image stack a tag is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    Base,
    Runtime,
    Devel,
}

/// What the knowledge says about a base image reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseImageFacts {
    /// The family that matched, e.g. `nvidia/cuda`, `pytorch/pytorch`,
    /// `nvcr.io/nvidia/pytorch`, or a user-declared family.
    pub family: String,
    /// The CUDA toolkit version the image ships, where known.
    pub cuda: Option<Version>,
    pub variant: Option<Variant>,
    /// cuDNN major version when the tag has one.
    pub cudnn: Option<u32>,
    pub os: Option<String>,
    /// CUPTI is in the image (devel variants).
    pub has_cupti: bool,
    /// nvcc and headers are in the image.
    pub has_compiler: bool,
    /// The image is devel-sized (devel variants, NGC framework images).
    pub devel_sized: bool,
    /// Where these facts come from.
    pub source: String,
}

impl ImageKnowledge {
    /// Facts about `image`, or `None` when it is not a known CUDA base.
    pub fn classify(&self, image: &ImageRef) -> Option<BaseImageFacts> {
        let _ = image;
        None
    }
}
