//! CU221 driver-requirement-unsatisfied: with a target driver (`--driver VERSION|host`, config
//! `[target] driver`), the image's `NVIDIA_REQUIRE_*` fail when evaluated as the NVIDIA Container
//! Toolkit does (the container is refused), or a CUDA runtime in the image (system or pip, or linked
//! statically into a program or library, as nvcc does by default) needs a newer driver than the
//! target (programs fail at their first CUDA call, or run only through minor-version compatibility).
//!
//! A statically linked runtime leaves no `libcudart.so` to read a version from. Its object carries
//! GPU code and NEEDs neither `libcudart.so` (the shared runtime) nor `libcuda.so` (the driver API):
//! the runtime inside it opens the driver itself. The release is that of the ptxas that built its
//! cubins, which nvcc links with the `cudart_static` of the same toolkit.

use std::collections::BTreeSet;

use super::require::{self, HostProperties, Outcome};
use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::image::facts::FsView;
use crate::image::gpu::{coverage, Coverage};
use crate::knowledge::toolkits::DriverVerdict;
use crate::knowledge::Version;

pub struct DriverRequirementUnsatisfied;

static META: RuleMeta = RuleMeta {
    code: "CU221",
    name: "driver-requirement-unsatisfied",
    category: Category::Compatibility,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "The target driver fails the image's NVIDIA_REQUIRE_CUDA or is too old for a CUDA runtime in it",
    doc: Doc::Page,
};

/// The GPUs `--gpu` names, as compute capabilities (`sm_90` → 9.0, `V100` → 7.0).
fn target_archs(gpus: &[String]) -> Vec<Version> {
    let fleet = crate::knowledge::gpus::Gpus::embedded();
    gpus.iter()
        .filter_map(|gpu| fleet.parse_target(gpu).ok())
        .filter_map(|gpu| Version::parse(&gpu.capability.to_string()))
        .collect()
}

/// Whether minor-version compatibility leaves something out: PTX newer than the driver's CUDA that
/// a GPU of the fleet (every GPU without `--gpu`) could need.
enum JitRisk {
    None,
    /// The first library loaded at start whose PTX is too new for the driver.
    Library(String),
}

fn ptx_jit_beyond_driver(ctx: &ImageContext<'_>, driver_cuda: Version) -> Option<JitRisk> {
    let fleet = crate::knowledge::gpus::Gpus::embedded();
    let targets = super::gpu_fleet::targets(ctx);
    let too_new = |isa| fleet.ptx_too_new(isa, driver_cuda).is_some();
    for objects in super::gpu_fleet::families(ctx).values() {
        for loaded in objects.iter().filter(|loaded| loaded.at_start) {
            let code = &loaded.object.code;
            let risky = if targets.is_empty() {
                code.ptx_isa().into_iter().any(too_new)
            } else {
                targets.iter().any(|gpu| {
                    matches!(coverage(code, gpu.capability), Coverage::PtxOnly { isa, .. } if too_new(isa))
                })
            };
            if risky {
                return Some(JitRisk::Library(loaded.object.path.clone()));
            }
        }
    }
    Some(JitRisk::None)
}

impl ImageRule for DriverRequirementUnsatisfied {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        let Some(driver) = ctx
            .settings
            .target_driver
            .as_deref()
            .and_then(Version::parse)
        else {
            return;
        };
        let toolkits = &ctx.knowledge.toolkits;
        let runtime_env = &ctx.knowledge.cupti.runtime;
        let config = &ctx.image.report.config;
        let driver_cuda = toolkits.newest_release_for_driver(driver);
        let host = HostProperties {
            cuda: driver_cuda.map(|release| release.version.major_minor()),
            driver: Some(driver),
            archs: target_archs(&ctx.settings.target_gpus),
        };

        // The requirement variables, or the legacy `cuda>=<CUDA_VERSION major.minor>`.
        let mut requirements: Vec<(String, String)> = config
            .env
            .iter()
            .filter_map(|pair| pair.split_once('='))
            .filter(|(key, value)| key.starts_with("NVIDIA_REQUIRE_") && !value.trim().is_empty())
            .map(|(key, value)| (format!("`{key}={value}`"), value.to_owned()))
            .collect();
        if requirements.is_empty() {
            if let Some(version) = config
                .env_var(&runtime_env.legacy_version_var)
                .and_then(Version::parse)
            {
                requirements.push((
                    format!(
                        "`{}={}` (checked as `cuda>={}`)",
                        runtime_env.legacy_version_var,
                        config
                            .env_var(&runtime_env.legacy_version_var)
                            .unwrap_or_default(),
                        version.major_minor()
                    ),
                    format!("cuda>={}", version.major_minor()),
                ));
            }
        }
        let disabled = config
            .env_var(&runtime_env.disable_require_var)
            .is_some_and(|value| runtime_env.parses_true(value));
        for (stated, value) in &requirements {
            if disabled || require::evaluate(value, &host) != Outcome::Unsatisfied {
                continue;
            }
            let mut finding = ctx
                .finding_on_image(
                    &META,
                    format!(
                        "driver {driver} fails the image's {stated}: the NVIDIA Container Toolkit refuses to start the container"
                    ),
                )
                .with_help("run on hosts with a newer driver, or build the image on a CUDA the fleet's driver supports")
                .with_note("alternatives separated by spaces are ORed, constraints joined by commas are ANDed")
                .with_source(runtime_env.source.clone());
            if let Some(release) = driver_cuda {
                finding = finding
                    .with_note(format!(
                        "driver {driver} supports CUDA up to {} (cuda in the requirement)",
                        release.version.major_minor()
                    ))
                    .with_source(release.source.clone());
            }
            out.push(finding);
        }

        let mut judged = BTreeSet::new();
        let shared = ctx.image.inventory.cuda_runtimes().filter_map(|library| {
            let layer = ctx
                .image
                .report
                .fs
                .lstat(&library.path)
                .map_or(0, |node| node.layer);
            Some(Runtime {
                path: library.path.clone(),
                layer,
                cuda: library.cuda_release()?,
                linked: Linked::Shared,
            })
        });
        let runtimes: Vec<Runtime> = shared.chain(static_runtimes(ctx)).collect();
        for runtime in &runtimes {
            let Runtime {
                path,
                layer,
                cuda,
                linked,
            } = runtime;
            let (cuda, layer) = (*cuda, *layer);
            if runtime_env.is_compat_dir(path.rsplit_once('/').map_or("", |(dir, _)| dir))
                || !judged.insert(cuda)
            {
                continue;
            }
            let what = match linked {
                Linked::Shared => format!("the CUDA {cuda} runtime `{path}`"),
                Linked::Static => format!(
                    "`{path}`, which links the CUDA {cuda} runtime statically (its SASS was built by CUDA {cuda}'s ptxas),"
                ),
            };
            let finding = match toolkits.driver_verdict(cuda, driver) {
                DriverVerdict::Satisfied | DriverVerdict::Unknown => continue,
                DriverVerdict::BelowFloor { floor, release } => {
                    let mut finding = ctx
                        .finding_at(
                            &META,
                            layer,
                            path,
                            format!(
                                "{what} needs driver {} or newer even with minor-version compatibility; \
                                 on driver {driver} its first CUDA call fails with `cudaErrorInsufficientDriver`",
                                floor.floor
                            ),
                        )
                        .with_help(format!(
                            "upgrade the hosts' driver to {} or newer, or ship a runtime the driver supports",
                            release.map_or(floor.floor, |r| r.driver)
                        ))
                        .with_note(toolkits.limits.below_floor.clone())
                        .with_source(floor.source.clone());
                    if let Some(release) = release {
                        finding = finding.with_source(release.source.clone());
                    }
                    if *linked == Linked::Static {
                        finding = finding.with_source(STATIC_BY_DEFAULT.to_owned());
                    }
                    finding
                }
                DriverVerdict::MinorCompat { release, floor } => {
                    let mut finding = ctx
                        .finding_at(
                            &META,
                            layer,
                            path,
                            format!(
                                "{what} needs driver {} ({}); driver {driver} runs it only through \
                                 minor-version compatibility",
                                release.driver, release.label
                            ),
                        )
                        .with_help(format!(
                            "upgrade the hosts' driver to {} or newer",
                            release.driver
                        ))
                        .with_note(toolkits.limits.minor_compat.clone())
                        .with_source(release.source.clone())
                        .with_source(floor.source.clone());
                    // What minor-version compatibility does not cover is JIT compilation of PTX
                    // newer than the driver: with the image's GPU code read, say whether it is needed.
                    match driver_cuda.and_then(|release| {
                        ptx_jit_beyond_driver(ctx, release.version.major_minor())
                    }) {
                        Some(JitRisk::None) => {
                            finding = finding.with_note(
                                "no library loaded at start needs PTX newer than the driver compiles \
                                 (for the target GPUs, or at all without --gpu): the image runs fully",
                            );
                            finding.severity = Severity::Info;
                        }
                        Some(JitRisk::Library(path)) => {
                            finding = finding.with_note(format!(
                                "`{path}` carries PTX newer than the driver compiles: a GPU that reaches it only \
                                 through that PTX fails (CU232 names it with --gpu)"
                            ));
                            finding.severity = Severity::Warning;
                        }
                        None => finding.severity = Severity::Warning,
                    }
                    finding
                }
            };
            out.push(finding);
        }
    }
}

/// Where nvcc says the runtime is linked statically unless asked otherwise.
const STATIC_BY_DEFAULT: &str = "https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#cudart-none-shared-static-cudart (`--cudart`: the default is `static`)";

/// How a CUDA runtime is in the image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Linked {
    /// A `libcudart.so` of its own.
    Shared,
    /// Inside a program or library that carries GPU code.
    Static,
}

/// A CUDA runtime the image runs, and the release it belongs to.
struct Runtime {
    path: String,
    layer: usize,
    cuda: Version,
    linked: Linked,
}

/// The objects that carry GPU code built by a known ptxas and NEED neither the shared runtime nor
/// the driver library: their runtime is linked in, of the release that built their code. Objects
/// loaded at start come first, so the finding names one of them when there is one.
fn static_runtimes(ctx: &ImageContext<'_>) -> Vec<Runtime> {
    let mut found: Vec<(bool, Runtime)> = Vec::new();
    for objects in super::gpu_fleet::families(ctx).into_values() {
        for loaded in objects {
            let object = loaded.object;
            let Some((major, minor)) = object.code.toolkit else {
                continue;
            };
            let needs_runtime = match ctx
                .image
                .report
                .fs
                .lstat(&object.path)
                .and_then(|node| node.captured.as_deref())
            {
                Some(crate::image::facts::Captured::Elf(elf)) => elf
                    .needed
                    .iter()
                    .any(|name| name.starts_with("libcudart.so") || name.starts_with("libcuda.so")),
                _ => true,
            };
            let Some(cuda) = Version::parse(&format!("{major}.{minor}")) else {
                continue;
            };
            if !needs_runtime {
                found.push((
                    !loaded.at_start,
                    Runtime {
                        path: object.path,
                        layer: object.layer,
                        cuda,
                        linked: Linked::Static,
                    },
                ));
            }
        }
    }
    found.sort_by(|a, b| (a.0, &a.1.path).cmp(&(b.0, &b.1.path)));
    found.into_iter().map(|(_, runtime)| runtime).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_names_become_compute_capabilities() {
        let archs = target_archs(&["sm_90".into(), "sm_80".into(), "sm_120".into()]);
        assert_eq!(
            archs,
            vec![
                Version::parse("9.0").unwrap(),
                Version::parse("8.0").unwrap(),
                Version::parse("12.0").unwrap()
            ]
        );
    }
}
