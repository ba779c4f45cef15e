//! CU128 cuda-build-package-unpinned: an apt install, without a version, of
//! an NVIDIA repository package that is built once per CUDA release (NCCL's
//! `libnccl2`, cuDNN 8's `libcudnn8`) on an `nvidia/cuda` image. apt takes
//! the highest version, the build for the newest CUDA in the repository,
//! which may be of another CUDA major than the image; where the image holds
//! the package (`apt-mark hold`), `-y` without
//! `--allow-change-held-packages` fails the build instead. On a base
//! cudalint does not know, `--allow-change-held-packages` itself says the
//! image holds the package at the build for its CUDA, as NVIDIA's images do:
//! the install replaces it with the newest CUDA's build, unless the stage is
//! known to be of that CUDA.

use crate::checks::dockerfile::cuda_facts::stage_cuda;
use crate::checks::dockerfile::support::{base_facts, root_image};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::model::Stage;
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
    doc: Doc::Page,
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
            let facts = base_facts(ctx, stage);
            // An `nvidia/cuda` tag: its CUDA, OS and held packages are known.
            let nvidia = facts
                .as_ref()
                .filter(|facts| facts.family == "nvidia/cuda")
                .and_then(|facts| Some((facts, facts.cuda?, facts.os.clone()?)));
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
                        let finding = match &nvidia {
                            Some((facts, cuda, os)) => {
                                judge(install, package, builds, facts, *cuda, os)
                            }
                            // Another base, known or not.
                            None => judge_held_elsewhere(ctx, stage, install, package, builds),
                        };
                        out.extend(finding);
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

/// `--allow-change-held-packages libnccl2` without a version on a base that
/// is not a known `nvidia/cuda` tag (one built on it, or one cudalint does
/// not know): the option is there because the image
/// holds the package (NVIDIA's CUDA images hold NCCL at the build for their
/// CUDA, and images built on them inherit the hold), and it lets apt replace
/// it with the highest version, the build for the newest CUDA. Quiet where
/// the stage's CUDA is known to be of that major, or where the package's
/// newest build is not of the newest CUDA (cuDNN 8: the base could be of its
/// CUDA).
fn judge_held_elsewhere(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    install: &PackageInstall,
    package: &RequestedPackage,
    builds: &CudaBuilds,
) -> Option<Diagnostic> {
    if package.constraint.is_some() || !install.has_option(ALLOW_HELD) {
        return None;
    }
    let facts = base_facts(ctx, stage);
    let os = facts.as_ref().and_then(|facts| facts.os.clone());
    let newest = match &os {
        Some(os) => builds.newest_for(os)?,
        None => builds.newest.iter().map(|(_, cuda)| *cuda).max()?,
    };
    let newest_cuda = ctx
        .knowledge
        .toolkits
        .releases
        .iter()
        .map(|release| release.version.major())
        .max()?;
    let cuda = stage_cuda(ctx, stage).map(|known| known.version);
    match cuda {
        Some(cuda) if cuda.major() == newest.major() => return None,
        None if newest.major() != newest_cuda => return None,
        _ => {}
    }
    let base = root_image(ctx, stage).map_or(stage.base_text.as_str(), |image| image.text.as_str());
    let repository = match &os {
        Some(os) => format!("NVIDIA's {os} repository"),
        None => newest_by_os(builds),
    };
    let on = match cuda {
        Some(cuda) => format!(" on a CUDA {cuda} stage"),
        None => String::new(),
    };
    Diagnostic::at(
        &META,
        package.word.span,
        format!(
            "`{}` without a version, with `{ALLOW_HELD}`, on `{base}`: the option is there because the image holds the package at the build for its CUDA, and it lets apt replace it with the highest version, the CUDA {} build in {repository}{on}",
            package.name,
            newest.major()
        ),
    )
    .with_help(format!(
        "leave the held build alone, or pin the build for the base's CUDA: `{}=<version>+cuda<X.Y>` (an image built on `nvidia/cuda` names its own in `NV_LIBNCCL_PACKAGE` / `NV_CUDNN_PACKAGE`)",
        package.name
    ))
    .with_note("NVIDIA's CUDA images install NCCL at the build for their CUDA and `apt-mark hold` it; images built on them keep the hold")
    .with_note(format!("source: {}", builds.source))
    .with_prediction(Prediction::AptCudaBuild {
        package: package.name.clone(),
        cuda_major: newest.major(),
    })
    .into()
}

/// "NVIDIA's repositories (CUDA 13 for ubuntu22.04, ubuntu24.04 …; CUDA 12
/// for ubuntu20.04)", from the data.
fn newest_by_os(builds: &CudaBuilds) -> String {
    let mut majors: Vec<u32> = builds.newest.iter().map(|(_, cuda)| cuda.major()).collect();
    majors.sort_unstable_by(|a, b| b.cmp(a));
    majors.dedup();
    let per_major: Vec<String> = majors
        .iter()
        .map(|major| {
            let oses: Vec<&str> = builds
                .newest
                .iter()
                .filter(|(_, cuda)| cuda.major() == *major)
                .map(|(os, _)| os.as_str())
                .collect();
            format!("CUDA {major} for {}", oses.join(", "))
        })
        .collect();
    format!(
        "NVIDIA's repository for the image's OS ({})",
        per_major.join("; ")
    )
}
