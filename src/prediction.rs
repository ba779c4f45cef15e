//! What a Dockerfile finding predicts the built image will hold, in a form the image side can check
//! (`cudalint build`, `cudalint image --dockerfile`): the rules that reason about what pip or apt
//! will install (CU113, CU120, CU127, CU128) attach one to their finding; `image::confirm` reads the built
//! image and says whether it holds what was predicted. Rules decide, the image side checks, and
//! neither words the other's part.

use crate::knowledge::Version;

/// One checkable claim about the built image.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Prediction {
    /// The pip distribution `package` (normalized: `torch`, `onnxruntime-gpu`) is installed as a build
    /// for CUDA `cuda` (major.minor, or a major alone), which is not the base image's (CU120).
    WheelCuda { package: String, cuda: Version },
    /// `package` opens `soname` (`libcudnn.so.8`, `libcudart.so.12`) from the image by SONAME, and
    /// the image holds no library of that SONAME (CU127).
    SonameMissing { package: String, soname: String },
    /// The distribution's own CUDA libraries (`libcupti-dev`, `nvidia-cuda-toolkit`…) land in the
    /// loader's default directories next to NVIDIA's (CU113).
    DistroCudaLibraries { packages: Vec<String> },
    /// apt installs `package`, an NVIDIA package built once per CUDA release, as a build for CUDA
    /// major `cuda_major`, which is not the image's (CU128).
    AptCudaBuild { package: String, cuda_major: u32 },
}
