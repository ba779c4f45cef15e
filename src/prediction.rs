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

#[cfg(test)]
mod tests {
    use super::*;

    /// The predictions the Dockerfile rules attach, on their own fixtures.
    fn predictions(fixture: &str, code: &str) -> Vec<Prediction> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture);
        let text = std::fs::read_to_string(&path).unwrap();
        let engine = crate::engine::Engine::new(crate::engine::EngineOptions::default());
        engine
            .lint_source(&crate::source::SourceFile::new(fixture.to_string(), text))
            .into_iter()
            .filter(|finding| finding.code == code)
            .filter_map(|finding| finding.prediction)
            .collect()
    }

    #[test]
    fn the_dockerfile_rules_attach_what_they_predict() {
        assert_eq!(
            predictions(
                "fixtures/dockerfile/CU120/fail_nightly_index_without_pre_gets_pypi_newest.Dockerfile",
                "CU120"
            ),
            vec![Prediction::WheelCuda {
                package: "torch".into(),
                cuda: Version::parse("13.0").unwrap()
            }]
        );
        assert_eq!(
            predictions(
                "fixtures/dockerfile/CU127/fail_tf_215_on_cudnn9_base.Dockerfile",
                "CU127"
            ),
            vec![Prediction::SonameMissing {
                package: "tensorflow".into(),
                soname: "libcudnn.so.8".into()
            }]
        );
        assert_eq!(
            predictions(
                "fixtures/dockerfile/CU113/fail_libcupti_dev_on_cuda_devel.Dockerfile",
                "CU113"
            ),
            vec![Prediction::DistroCudaLibraries {
                packages: vec!["libcupti-dev".into()]
            }]
        );
        let nccl = |package: &str| Prediction::AptCudaBuild {
            package: package.into(),
            cuda_major: 13,
        };
        assert_eq!(
            predictions(
                "fixtures/dockerfile/CU128/fail_nccl_allow_held_on_cuda12.Dockerfile",
                "CU128"
            ),
            vec![nccl("libnccl2"), nccl("libnccl-dev")]
        );
        // Held without the option: the build fails, there is no image to check.
        assert_eq!(
            predictions(
                "fixtures/dockerfile/CU128/fail_nccl_dev_held_on_runtime.Dockerfile",
                "CU128"
            ),
            vec![]
        );
    }
}
