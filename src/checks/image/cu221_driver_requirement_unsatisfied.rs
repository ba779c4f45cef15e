//! CU221 driver-requirement-unsatisfied: with a target driver (`--driver VERSION|host`, config
//! `[target] driver`), the image's `NVIDIA_REQUIRE_*` fail when evaluated as the NVIDIA Container
//! Toolkit does (the container is refused), or a CUDA runtime in the image (system or pip) needs a
//! newer driver than the target (programs fail at their first CUDA call, or run only through
//! minor-version compatibility).

use std::collections::BTreeSet;

use super::require::{self, HostProperties, Outcome};
use super::{ImageContext, ImageRule};
use crate::checks::{Category, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::image::facts::FsView;
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
    doc: include_str!("../../../docs/rules/CU221.md"),
};

/// The GPU architectures `--gpu` names, as versions (`sm_90` → 9.0).
fn target_archs(gpus: &[String]) -> Vec<Version> {
    gpus.iter()
        .filter_map(|gpu| {
            let digits: String = gpu.chars().filter(char::is_ascii_digit).collect();
            let (major, minor) = digits.split_at(digits.len().checked_sub(1)?);
            Version::parse(&format!("{major}.{minor}"))
        })
        .collect()
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
        for library in ctx.image.inventory.cuda_runtimes() {
            let Some(cuda) = library.cuda_release() else {
                continue;
            };
            if runtime_env.is_compat_dir(library.path.rsplit_once('/').map_or("", |(dir, _)| dir))
                || !judged.insert(cuda)
            {
                continue;
            }
            let layer = ctx
                .image
                .report
                .fs
                .lstat(&library.path)
                .map_or(0, |node| node.layer);
            let finding = match toolkits.driver_verdict(cuda, driver) {
                DriverVerdict::Satisfied | DriverVerdict::Unknown => continue,
                DriverVerdict::BelowFloor { floor, release } => {
                    let mut finding = ctx
                        .finding_at(
                            &META,
                            layer,
                            &library.path,
                            format!(
                                "the CUDA {cuda} runtime `{}` needs driver {} or newer even with minor-version compatibility; \
                                 on driver {driver} CUDA does not start",
                                library.path, floor.floor
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
                    finding
                }
                DriverVerdict::MinorCompat { release, floor } => {
                    let mut finding = ctx
                        .finding_at(
                            &META,
                            layer,
                            &library.path,
                            format!(
                                "the CUDA {cuda} runtime `{}` needs driver {} ({}); driver {driver} runs it only through \
                                 minor-version compatibility",
                                library.path, release.driver, release.label
                            ),
                        )
                        .with_help(format!("upgrade the hosts' driver to {} or newer", release.driver))
                        .with_note(toolkits.limits.minor_compat.clone())
                        .with_source(release.source.clone())
                        .with_source(floor.source.clone());
                    finding.severity = Severity::Warning;
                    finding
                }
            };
            out.push(finding);
        }
    }
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
