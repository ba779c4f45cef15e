//! Dockerfile rules, one file each, and their registry.

pub mod build_steps;
pub mod cu001_syntax_error;
pub mod cu002_unknown_stage_reference;
pub mod cu003_unused_stage;
pub mod cu004_undefined_arg_in_from;
pub mod cu005_unknown_rule_in_suppression;
pub mod cu006_file_too_complex;
pub mod cu101_devel_image_in_final_stage;
pub mod cu102_cuda_toolkit_copied_whole;
pub mod cu103_devel_packages_in_final_stage;
pub mod cu104_package_cache_left_behind;
pub mod cu105_build_arg_invalidates_heavy_layers;
pub mod cu106_source_copied_before_dependencies;
pub mod cu107_cuda_runfile_in_image;
pub mod cu108_compile_without_cache_mount;
pub mod cu109_cuda_compile_without_toolkit;
pub mod cu110_cupti_missing;
pub mod cu111_cupti_library_path_wrong;
pub mod cu112_cupti_headers_without_library;
pub mod cu113_distro_cuda_on_cuda_image;
pub mod cu120_wheel_cuda_mismatch;
pub mod cu121_driver_too_old_for_image;
pub mod cu122_driver_libraries_in_image;
pub mod cu123_require_check_disabled;
pub mod cu124_stubs_on_runtime_path;
pub mod cu125_compat_forced_on_path;
pub mod cu126_gpu_hidden_by_image_env;
pub mod cu127_framework_system_cuda_mismatch;
pub mod cu128_cuda_build_package_unpinned;
pub mod cu129_debug_setting_shipped;
pub mod cu130_cuda_image_tag_invalid;
pub mod cu131_cuda_image_eol;
pub mod cu132_cuda_arch_unsupported;
pub mod cu133_gpu_arch_detected_at_build;
pub mod cu134_arch_list_misses_target_gpu;
pub mod cu135_ngc_framework_image_eol;
pub mod cu136_export_dies_with_run;
pub mod cu137_cuda_repo_key_retired;
pub mod cuda_facts;
pub mod cuda_stages;
pub mod cupti_use;
pub mod installer_python;
pub mod lint_memo;
pub mod package_cache;
pub mod requirement_files;
pub mod runtime_env;
pub mod stack;
pub mod support;

use super::DockerfileRule;

/// Every Dockerfile rule, in code order.
pub static RULES: &[&dyn DockerfileRule] = &[
    &cu001_syntax_error::SyntaxError,
    &cu002_unknown_stage_reference::UnknownStageReference,
    &cu003_unused_stage::UnusedStage,
    &cu004_undefined_arg_in_from::UndefinedArgInFrom,
    &cu005_unknown_rule_in_suppression::UnknownRuleInSuppression,
    &cu006_file_too_complex::FileTooComplex,
    &cu101_devel_image_in_final_stage::DevelImageInFinalStage,
    &cu102_cuda_toolkit_copied_whole::CudaToolkitCopiedWhole,
    &cu103_devel_packages_in_final_stage::DevelPackagesInFinalStage,
    &cu104_package_cache_left_behind::PackageCacheLeftBehind,
    &cu105_build_arg_invalidates_heavy_layers::BuildArgInvalidatesHeavyLayers,
    &cu106_source_copied_before_dependencies::SourceCopiedBeforeDependencies,
    &cu107_cuda_runfile_in_image::CudaRunfileInImage,
    &cu108_compile_without_cache_mount::CompileWithoutCacheMount,
    &cu109_cuda_compile_without_toolkit::CudaCompileWithoutToolkit,
    &cu110_cupti_missing::CuptiMissing,
    &cu111_cupti_library_path_wrong::CuptiLibraryPathWrong,
    &cu112_cupti_headers_without_library::CuptiHeadersWithoutLibrary,
    &cu113_distro_cuda_on_cuda_image::DistroCudaOnCudaImage,
    &cu120_wheel_cuda_mismatch::WheelCudaMismatch,
    &cu121_driver_too_old_for_image::DriverTooOldForImage,
    &cu122_driver_libraries_in_image::DriverLibrariesInImage,
    &cu123_require_check_disabled::RequireCheckDisabled,
    &cu124_stubs_on_runtime_path::StubsOnRuntimePath,
    &cu125_compat_forced_on_path::CompatForcedOnPath,
    &cu126_gpu_hidden_by_image_env::GpuHiddenByImageEnv,
    &cu127_framework_system_cuda_mismatch::FrameworkSystemCudaMismatch,
    &cu128_cuda_build_package_unpinned::CudaBuildPackageUnpinned,
    &cu129_debug_setting_shipped::DebugSettingShipped,
    &cu130_cuda_image_tag_invalid::CudaImageTagInvalid,
    &cu131_cuda_image_eol::CudaImageEol,
    &cu132_cuda_arch_unsupported::CudaArchUnsupported,
    &cu133_gpu_arch_detected_at_build::GpuArchDetectedAtBuild,
    &cu134_arch_list_misses_target_gpu::ArchListMissesTargetGpu,
    &cu135_ngc_framework_image_eol::NgcFrameworkImageEol,
    &cu136_export_dies_with_run::ExportDiesWithRun,
    &cu137_cuda_repo_key_retired::CudaRepoKeyRetired,
];
