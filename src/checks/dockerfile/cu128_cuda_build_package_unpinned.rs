//! CU128 cuda-build-package-unpinned: an apt install, without a version, of
//! an NVIDIA repository package that is built once per CUDA release (NCCL's
//! `libnccl2`, cuDNN 8's `libcudnn8`) on an `nvidia/cuda` image. apt takes
//! the highest version, the build for the newest CUDA in the repository,
//! which may be of another CUDA major than the image; where the image holds
//! the package (`apt-mark hold`), `-y` without
//! `--allow-change-held-packages` fails the build instead.

use crate::checks::dockerfile::support::base_facts;
use crate::checks::{Category, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::packages::{PackageInstall, PackageManager, RequestedPackage};
use crate::knowledge::images::BaseImageFacts;
use crate::knowledge::resolution::CudaBuilds;
use crate::knowledge::Version;
use crate::prediction::Prediction;

pub static META: RuleMeta = RuleMeta {
    code: "CU128",
    name: "cuda-build-package-unpinned",
    category: Category::Compatibility,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "An NVIDIA package built per CUDA release is installed without a version and gets another CUDA's build",
    doc: include_str!("../../../docs/rules/CU128.md"),
};

pub struct CudaBuildPackageUnpinned;

/// apt's option that lets an install change held packages.
const ALLOW_HELD: &str = "--allow-change-held-packages";

impl DockerfileRule for CudaBuildPackageUnpinned {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        for stage in &ctx.model.stages {
            let Some(facts) = base_facts(ctx, stage) else {
                continue;
            };
            let (Some(cuda), Some(os)) = (facts.cuda, facts.os.clone()) else {
                continue;
            };
            if facts.family != "nvidia/cuda" {
                continue;
            }
            for run in &stage.runs {
                for install in run
                    .installs
                    .iter()
                    .filter(|i| i.manager == PackageManager::Apt)
                {
                    for package in install.packages.iter().filter(|p| !p.is_location) {
                        let Some(builds) = ctx.knowledge.resolution.cuda_builds(&package.name)
                        else {
                            continue;
                        };
                        if let Some(d) = judge(install, package, builds, &facts, cuda, &os) {
                            out.push(d);
                        }
                    }
                }
            }
        }
    }
}

fn judge(
    install: &PackageInstall,
    package: &RequestedPackage,
    builds: &CudaBuilds,
    facts: &BaseImageFacts,
    cuda: Version,
    os: &str,
) -> Option<Diagnostic> {
    if let Some(version) = package.constraint.as_deref() {
        // `libnccl2=2.21.5-1+cuda12.4`: the build is named; judge its CUDA.
        let build = version.rsplit_once("+cuda")?.1;
        let built_for = Version::parse(build)?;
        if built_for.major() == cuda.major() {
            return None;
        }
        return Some(
            Diagnostic::at(
                &META,
                package.word.span,
                format!(
                    "`{}` is the CUDA {built_for} build, but the image provides CUDA {cuda}",
                    package.word.text
                ),
            )
            .with_help(format!(
                "pick the `+cuda{}.{}` build of that version (or the version the image's `NV_LIBNCCL_PACKAGE`/`NV_CUDNN_PACKAGE` names)",
                cuda.major(),
                cuda.minor()
            ))
            .with_note(format!("source: {}", builds.source))
            .with_prediction(Prediction::AptCudaBuild {
                package: package.name.clone(),
                cuda_major: built_for.major(),
            }),
        );
    }
    let newest = builds.newest_for(os)?;
    let held = facts.variant.is_some_and(|v| {
        builds.held_in.iter().any(|h| h == v.as_str())
            && (!builds.held_needs_cudnn || facts.cudnn.is_some())
    });
    // Where the newest build is of the image's own CUDA major, a held
    // package is either already the newest (apt does nothing) or a newer
    // NCCL of the same CUDA: neither is known to break.
    if newest.major() == cuda.major() {
        return None;
    }
    let outcome = if held && !install.has_option(ALLOW_HELD) {
        "the image holds it (`apt-mark hold`), so with `-y` apt stops with \"Held packages were changed and -y was used without --allow-change-held-packages\"".to_string()
    } else {
        format!(
            "apt takes the highest version, the build for the newest CUDA in NVIDIA's {os} repository: a CUDA {} build on a CUDA {cuda} image",
            newest.major()
        )
    };
    let mut diagnostic = Diagnostic::at(
        &META,
        package.word.span,
        format!(
            "`{}` without a version on `{}`: {outcome}",
            package.name, facts.family
        ),
    )
    .with_help(format!(
        "pin the build for the image's CUDA: `{}=<version>+cuda{}.{}` (NVIDIA's images name theirs in `NV_LIBNCCL_PACKAGE` / `NV_CUDNN_PACKAGE`)",
        package.name,
        cuda.major(),
        cuda.minor()
    ))
    .with_note(format!("source: {}", builds.source));
    if held && !install.has_option(ALLOW_HELD) {
        diagnostic = diagnostic.with_note(format!(
            "with `{ALLOW_HELD}` it would install a CUDA {} build instead",
            newest.major()
        ));
    } else {
        // What the built image holds if apt did take the newest build (a held package without the
        // option fails the build instead: nothing to check in an image).
        diagnostic = diagnostic.with_prediction(Prediction::AptCudaBuild {
            package: package.name.clone(),
            cuda_major: newest.major(),
        });
    }
    Some(diagnostic)
}
