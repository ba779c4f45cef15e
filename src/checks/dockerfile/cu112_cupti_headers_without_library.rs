//! CU112 cupti-headers-without-library: a source build that profiles with
//! CUPTI (PyTorch with Kineto: a build in a pytorch checkout, or one that
//! sets `USE_KINETO`/`USE_CUPTI_SO`) runs where CUPTI's headers are
//! installed and the library it links is not, or the reverse. PyTorch's CMake
//! then builds Kineto without CUPTI and the profiler records no GPU work.
//! Which base images and packages hold which CUPTI part is data
//! (`rules/cupti.toml` `build_parts`, `rules/images.toml` variants); a part
//! the Dockerfile leaves unknown keeps the rule quiet.

use crate::checks::dockerfile::build_steps::{
    built_stages, env_before, source_builds, SourceBuild,
};
use crate::checks::dockerfile::support::base_facts;
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::ast::Command;
use crate::dockerfile::model::{BaseImage, Reach, RunStep, Stage};
use crate::dockerfile::packages::PackageManager;
use crate::knowledge::cupti::{CuptiParts, Manager};

/// The project whose checkout marks a PyTorch source build.
const TORCH_CHECKOUT: &str = "pytorch";

fn message(parts: CuptiParts, shared: bool, origin: &str) -> String {
    let library = if shared {
        "`libcupti.so` (USE_CUPTI_SO)"
    } else {
        "`libcupti_static.a`"
    };
    if parts.headers {
        format!("this PyTorch source build profiles with CUPTI, and the stage has CUPTI's headers but not {library} ({origin}): CMake builds Kineto without CUPTI, so the profiler records no GPU activity")
    } else {
        format!("this PyTorch source build profiles with CUPTI, and the stage has CUPTI's library but not its headers (`cupti.h`; {origin}): CMake builds Kineto without CUPTI, so the profiler records no GPU activity")
    }
}

pub static META: RuleMeta = RuleMeta {
    code: "CU112",
    name: "cupti-headers-without-library",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary:
        "A CUPTI-enabled source build finds CUPTI's headers without its library, or the reverse",
    doc: Doc::Page,
};

pub struct CuptiHeadersWithoutLibrary;

impl DockerfileRule for CuptiHeadersWithoutLibrary {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let cupti = &ctx.knowledge.cupti;
        for stage in built_stages(ctx) {
            'steps: for step in &stage.runs {
                for build in source_builds(ctx, stage, step) {
                    let mut settings = env_before(ctx, stage, step.instruction);
                    settings.extend(build.command.assignments.iter().cloned());
                    if !profiling_build(ctx, &build, &settings) {
                        continue;
                    }
                    let shared = settings.iter().any(|(k, v)| {
                        cupti.build_parts.is_shared_switch(k)
                            && !cupti.source_builds.false_values.contains(v)
                    });
                    let Some((parts, origin)) = parts_before(ctx, stage, step, &build) else {
                        continue;
                    };
                    let library = if shared {
                        parts.shared
                    } else {
                        parts.static_lib
                    };
                    if parts.headers == library {
                        continue;
                    }
                    out.push(
                        Diagnostic::at(&META, build.command.span, message(parts, shared, &origin))
                            .with_help("install CUPTI's development package next to its library (NVIDIA's `cuda-cupti-dev-X-Y`, conda `cuda-cupti-dev` with `cuda-cupti-static`), or build on the devel image")
                            .with_note("PyTorch's CMake needs `cupti.h` and the library together; with one missing it prints \"Could not find CUPTI library, using CPU-only Kineto build\" and the build succeeds")
                            .with_source(cupti.build_parts.source.clone()),
                    );
                    // One finding per stage: the later builds see the same CUPTI.
                    break 'steps;
                }
            }
        }
    }
}

/// A PyTorch build (of a pytorch checkout, or one that sets a Kineto or
/// CUPTI switch) that does not turn Kineto off.
fn profiling_build(
    ctx: &DockerfileContext<'_>,
    build: &SourceBuild<'_>,
    settings: &[(String, String)],
) -> bool {
    let cupti = &ctx.knowledge.cupti;
    let switched = settings.iter().any(|(k, _)| {
        cupti.source_builds.switches.contains(k) || cupti.build_parts.is_shared_switch(k)
    });
    let disabled = settings
        .iter()
        .any(|(k, v)| cupti.source_builds.disables(k, v));
    let name = checkout_name(build);
    let other = cupti
        .build_parts
        .not_torch
        .iter()
        .any(|n| n.eq_ignore_ascii_case(&name));
    (name.eq_ignore_ascii_case(TORCH_CHECKOUT) || (switched && !other)) && !disabled
}

/// The name of the checkout a build builds: the last component of its
/// path or URL, or of its directory for `.` (`/opt/pytorch`,
/// `github.com/pytorch/vision.git@v0.20.1` → `vision`).
fn checkout_name(build: &SourceBuild<'_>) -> String {
    let built = match build.target.trim_end_matches('/') {
        "" | "." => build.cwd.as_deref().unwrap_or(""),
        target => target,
    };
    let last = built.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    let name = last.split(['@', '#']).next().unwrap_or("");
    name.trim_end_matches(".git").to_string()
}

/// The CUPTI parts the stage holds when `build` runs, and where they come
/// from for the message; `None` when the Dockerfile leaves them unknown
/// (an unknown base, a CUDA package the data does not know, a copied toolkit
/// or a runfile install).
fn parts_before(
    ctx: &DockerfileContext<'_>,
    stage: &Stage,
    step: &RunStep,
    build: &SourceBuild<'_>,
) -> Option<(CuptiParts, String)> {
    let cupti = &ctx.knowledge.cupti;
    let chain = ctx.model.ancestry(stage.index);
    let root = chain.last().and_then(|&i| ctx.model.stages.get(i))?;
    let mut parts = match (base_facts(ctx, stage), &root.base) {
        (Some(f), _) if f.is_unknown("has_cupti") => return None,
        (Some(f), _) if f.has_cupti => CuptiParts::ALL,
        (Some(_), _) | (None, BaseImage::Scratch) => CuptiParts::default(),
        (None, BaseImage::Image(image)) if cupti.base_without_cuda(&image.repository) => {
            CuptiParts::default()
        }
        _ => return None,
    };
    let mut origin = format!("base `{}`", root.base_text);
    for &index in chain.iter().rev() {
        let s = ctx.model.stages.get(index)?;
        for at in s.instructions.clone() {
            if at > step.instruction {
                break;
            }
            if let Some(Command::Copy(copy) | Command::Add(copy)) =
                ctx.dockerfile.instructions.get(at).map(|i| &i.command)
            {
                let toolkit = copy.sources.iter().any(|w| cupti.copies.matches(&w.text))
                    || cupti.copies.matches(&copy.dest.text);
                if toolkit {
                    return None;
                }
            }
            let Some(run) = s.runs.iter().find(|r| r.instruction == at) else {
                continue;
            };
            let last = if at == step.instruction {
                build.position
            } else {
                run.commands.len()
            };
            let runfile = run.commands.iter().take(last).any(|c| {
                c.reach != Reach::Skipped
                    && c.words
                        .iter()
                        .any(|w| cupti.library_path.is_runfile(&w.text))
            });
            if runfile {
                return None;
            }
            for install in run.installs.iter().filter(|i| i.command < last) {
                if run
                    .commands
                    .get(install.command)
                    .is_some_and(|c| c.reach == Reach::Skipped)
                {
                    continue;
                }
                let manager = match install.manager {
                    PackageManager::Apt => Manager::Apt,
                    m if m.is_conda() => Manager::Conda,
                    _ => continue,
                };
                for package in &install.packages {
                    match cupti.build_parts.parts_of(manager, &package.name) {
                        Some((found, _)) => {
                            parts.add(found);
                            origin = format!("`{}` installed", package.word.text);
                        }
                        // A CUPTI package the data does not place: unknown.
                        None if package.name.contains("cupti") => return None,
                        None => {}
                    }
                }
            }
        }
    }
    Some((parts, origin))
}
