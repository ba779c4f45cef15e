//! CU131 cuda-image-eol: the base image's CUDA release is end-of-life (no
//! more rebuilds or security fixes, tags deleted after six months) or its
//! tags were already deleted (the pull fails).
//!
//! The advice must not break the build: when it moves to a new CUDA major,
//! it also names what the file pins that the new major cannot take (an
//! architecture list with architectures it dropped, a PyTorch index of the
//! old major), and the newest release of the file's own major with its
//! status, so the user can choose.

use std::sync::LazyLock;

use memchr::memmem::Finder;

use crate::checks::dockerfile::cuda_stages::pulled_images;
use crate::checks::dockerfile::support::{root_image, stage_instructions};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::arch_lists;
use crate::dockerfile::model::ImageRef;
use crate::knowledge::clock::{today, Date};
use crate::knowledge::images::{
    parse_cuda_tag, CudaTag, EolBasis, EolInfo, ImageKnowledge, ReleaseStatus,
};
use crate::knowledge::toolkits::ArchSupport;
use crate::knowledge::Version;
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU131",
    name: "cuda-image-eol",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The CUDA base image release is end-of-life or deleted",
    doc: Doc::Page,
};

pub struct CudaImageEol;

impl DockerfileRule for CudaImageEol {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        for (image, span) in pulled_images(ctx) {
            report(ctx, image, span, out);
        }
    }
}

fn report(ctx: &DockerfileContext<'_>, image: &ImageRef, span: Span, out: &mut Vec<Diagnostic>) {
    let images = &ctx.knowledge.images;
    let canonical = images.canonicalize(image);
    if !images.is_nvidia_cuda(&canonical.repository) {
        return;
    }
    let Some(tag) = canonical
        .tag
        .as_deref()
        .and_then(|t| parse_cuda_tag(t).ok())
    else {
        return;
    };
    // A tag that was never published is CU130's finding: calling it
    // end-of-life or deleted would say it once existed.
    if !images.validate_tag(image).is_empty() {
        return;
    }
    let Some(eol) = images.eol(tag.version) else {
        return;
    };
    let state = DeletionState::of(&eol, today());
    let replacement = replacement(images, &eol, &tag);
    let mut help = replacement.help;
    if let Some(to) = replacement.to.filter(|v| v.major() != tag.version.major()) {
        let compiles = tag.middle().is_some_and(|m| m.contains("devel"));
        let pinned = pinned_for_old_major(ctx, image, to, compiles);
        if !pinned.is_empty() {
            help = format!(
                "{help}, and change with it what CUDA {} cannot take: {}",
                to.major(),
                pinned.join("; ")
            );
            if let Some(stay) = newest_of_major(images, &tag) {
                help = format!("{help}; or {stay}");
            }
        }
    }
    let mut diagnostic = Diagnostic::at(&META, span, message(image, &eol, state))
        .with_help(help)
        .with_source(eol.source.clone());
    if let Some(note) = replacement.note {
        diagnostic = diagnostic.with_note(note);
    }
    if let Some(policy) = &images.policy {
        diagnostic = diagnostic.with_source(policy.source.clone());
    }
    out.push(diagnostic);
}

/// Where an EOL release's tags stand on the day cudalint runs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum DeletionState {
    /// Deleted (catalogue says so, or EOL + the policy's months has passed).
    Deleted { on: Option<Date> },
    /// Still pullable; deleted on that date (when the EOL date is known).
    Due { on: Option<Date> },
}

impl DeletionState {
    fn of(eol: &EolInfo, today: Date) -> DeletionState {
        if eol.status == ReleaseStatus::Removed {
            return DeletionState::Deleted { on: None };
        }
        let on = match (
            eol.since.as_deref().and_then(Date::parse),
            eol.deletion_after_months,
        ) {
            (Some(since), Some(months)) => Some(since.plus_months(months)),
            _ => None,
        };
        match on {
            Some(on) if on <= today => DeletionState::Deleted { on: Some(on) },
            on => DeletionState::Due { on },
        }
    }
}

fn message(image: &ImageRef, eol: &EolInfo, state: DeletionState) -> String {
    let why = match (&eol.basis, &eol.since) {
        (EolBasis::Superseded { by }, Some(since)) => {
            format!(" since {since} (and superseded by {by})")
        }
        (EolBasis::Superseded { by }, None) => format!(" (superseded by {by})"),
        (_, Some(since)) => format!(" since {since}"),
        _ => String::new(),
    };
    match state {
        DeletionState::Deleted { on: None } => format!(
            "`{}`: CUDA {} images were deleted from the registry, so the pull fails",
            image.text, eol.version
        ),
        DeletionState::Deleted { on: Some(on) } => format!(
            "`{}`: CUDA {} images are end-of-life{why} and were due for deletion on {on}: the tag is deleted and the pull may already fail",
            image.text, eol.version
        ),
        DeletionState::Due { on: Some(on) } => format!(
            "`{}`: CUDA {} images are end-of-life{why}: no more rebuilds or security fixes, and the tag is deleted on {on}",
            image.text, eol.version
        ),
        DeletionState::Due { on: None } => format!(
            "`{}`: CUDA {} images are end-of-life{why}: no more rebuilds or security fixes, and the tag is due for deletion",
            image.text, eol.version
        ),
    }
}

/// What to move to, and what changes if the file's OS or variant cannot be kept.
struct Replacement {
    help: String,
    note: Option<String>,
    /// The release advised, when one is.
    to: Option<Version>,
}

/// What the stages built on `image` pin that CUDA `to` cannot take: an
/// architecture list naming architectures `to` dropped, a PyTorch wheel
/// index of another CUDA major, and (on a devel image, which builds against
/// torch) a PyPI torch pin of another CUDA major.
fn pinned_for_old_major(
    ctx: &DockerfileContext<'_>,
    image: &ImageRef,
    to: Version,
    compiles: bool,
) -> Vec<String> {
    let toolkits = &ctx.knowledge.toolkits;
    let mut out: Vec<String> = Vec::new();
    let stages = ctx
        .model
        .stages
        .iter()
        .filter(|stage| root_image(ctx, stage).is_some_and(|root| root.text == image.text));
    for stage in stages {
        for list in arch_lists::stage_lists(stage_instructions(ctx, stage), stage) {
            if !list.is_known() {
                continue;
            }
            let dropped: Vec<String> = list
                .entries
                .iter()
                .filter(|entry| {
                    toolkits.parse_arch(&entry.text).is_some_and(|arch| {
                        matches!(
                            toolkits.arch_ref_support(to, &arch),
                            ArchSupport::Dropped(_)
                        )
                    })
                })
                .map(|entry| format!("`{}`", entry.text))
                .collect();
            if dropped.is_empty() {
                continue;
            }
            let text = format!(
                "{} names {}, which CUDA {} cannot build",
                list.setting,
                dropped.join(", "),
                to.major()
            );
            if !out.contains(&text) {
                out.push(text);
            }
        }
        for step in &stage.runs {
            let torch_pins = if compiles {
                pypi_torch_of_old_major(ctx, step, to)
            } else {
                Vec::new()
            };
            for text in torch_pins {
                if !out.contains(&text) {
                    out.push(text);
                }
            }
            for command in &step.commands {
                for word in command.program_words() {
                    let Some(index) = torch_index(&word.text) else {
                        continue;
                    };
                    let text = match index_major(index) {
                        Some(major) if major == to.major() => continue,
                        Some(major) => format!(
                            "the PyTorch index `{index}` serves CUDA {major} wheels (use a CUDA {} index, `cu{}0` or newer, and a torch release published there)",
                            to.major(),
                            to.major()
                        ),
                        None => format!(
                            "the PyTorch index `{index}` is built from a variable: it must name an index PyTorch publishes for CUDA {}",
                            to.major()
                        ),
                    };
                    if !out.contains(&text) {
                        out.push(text);
                    }
                }
            }
        }
    }
    out
}

/// `torch==X.Y.Z` pins installed from PyPI (no PyTorch index on the
/// command) whose PyPI wheel is a build of another CUDA major than `to`.
fn pypi_torch_of_old_major(
    ctx: &DockerfileContext<'_>,
    step: &crate::dockerfile::model::RunStep,
    to: Version,
) -> Vec<String> {
    let packages = &ctx.knowledge.packages;
    let mut out = Vec::new();
    for install in step.installs.iter().filter(|i| i.manager.is_python()) {
        if install
            .index_urls
            .iter()
            .any(|url| torch_index(url).is_some())
        {
            continue;
        }
        for package in install.packages.iter().filter(|p| p.name == "torch") {
            let Some(pinned) = package
                .constraint
                .as_deref()
                .and_then(|c| c.strip_prefix("=="))
                .and_then(|v| Version::parse(v.trim()))
            else {
                continue;
            };
            let Some(default) = packages.pypi_default("torch", pinned) else {
                continue;
            };
            if default.cuda.major() == to.major() {
                continue;
            }
            out.push(format!(
                "`torch=={}` from PyPI is a CUDA {} build, which a CUDA {} toolkit will not build extensions against (pin a torch release whose PyPI wheel is a CUDA {} build)",
                pinned,
                default.cuda.major(),
                to.major(),
                to.major()
            ));
        }
    }
    out
}

/// The `cuXYZ` segment of a PyTorch wheel index URL in `word`.
fn torch_index(word: &str) -> Option<&str> {
    const INDEX: &str = "download.pytorch.org/whl/";
    // One searcher for every word of every RUN (a `split_once` sets one up
    // per call).
    static FINDER: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(INDEX));
    let at = FINDER.find(word.as_bytes())?;
    // The index is ASCII, so `at + INDEX.len()` is a character boundary.
    let rest = &word[at + INDEX.len()..];
    let rest = rest
        .strip_prefix("nightly/")
        .or_else(|| rest.strip_prefix("test/"))
        .unwrap_or(rest);
    let segment = rest.split(['/', ' ', '"', '\'']).next()?;
    segment.starts_with("cu").then_some(segment)
}

/// The CUDA major of `cu121` (12), `cu118` (11), `cu130` (13); `None` when
/// not written out (`cu${CUDA}`).
fn index_major(index: &str) -> Option<u32> {
    let digits = index.strip_prefix("cu")?;
    if digits.len() < 3 || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.get(..digits.len() - 1)?.parse().ok()
}

/// The newest release of `tag`'s own major that publishes its variant and
/// OS, with its status: the choice when the file cannot move to a new major.
fn newest_of_major(images: &ImageKnowledge, tag: &CudaTag) -> Option<String> {
    let (middle, os) = (tag.middle()?, tag.os.as_deref()?);
    let release = images
        .releases
        .iter()
        .filter(|r| r.version.major() == tag.version.major() && r.version >= tag.version)
        .find(|r| r.publishes(&middle, os) == Some(true))?;
    let v = release.version;
    let status = match images.eol(v) {
        None => "supported".to_string(),
        Some(eol) => match eol.since {
            Some(since) => format!("itself end-of-life since {since}"),
            None => "itself end-of-life".to_string(),
        },
    };
    let same = if v == tag.version {
        " (the file's own release)"
    } else {
        ""
    };
    Some(format!(
        "stay on CUDA {}: `nvidia/cuda:{v}-{middle}-{os}` is its newest release with this variant and OS{same}, {status}",
        tag.version.major()
    ))
}

/// The supported release to move to: the superseding point release when it
/// is itself supported, otherwise the newest supported release (same major
/// first). The tag keeps the file's variant and OS where NVIDIA publishes
/// them.
fn replacement(images: &ImageKnowledge, eol: &EolInfo, tag: &CudaTag) -> Replacement {
    let mut candidates: Vec<Version> = Vec::new();
    if let EolBasis::Superseded { by } = eol.basis {
        if images.eol(by).is_none() {
            candidates.push(by);
        }
    }
    candidates.extend(eol.supported_alternatives.iter().copied());
    let mut seen = Vec::new();
    candidates.retain(|v| {
        let new = !seen.contains(v);
        seen.push(*v);
        new
    });
    let Some(&first) = candidates.first() else {
        return Replacement {
            help: "move to a supported CUDA image release".into(),
            note: None,
            to: None,
        };
    };
    let (Some(middle), Some(os)) = (tag.middle(), tag.os.as_deref()) else {
        return Replacement {
            help: format!("move to a supported CUDA image release: {first}"),
            note: None,
            to: Some(first),
        };
    };
    let keeps = |v: Version| {
        images
            .release(v)
            .map(|r| r.publishes(&middle, os))
            .unwrap_or(None)
    };
    let new_major = |v: Version| {
        (v.major() != tag.version.major())
            .then(|| format!("this moves to CUDA {}, a new major version: check the driver and the CUDA of every wheel", v.major()))
    };
    if let Some(&v) = candidates.iter().find(|&&v| keeps(v) == Some(true)) {
        return Replacement {
            help: format!("move to `nvidia/cuda:{v}-{middle}-{os}`, a supported release"),
            note: new_major(v),
            to: Some(v),
        };
    }
    // Same OS and variant, another flavour (`cudnn8-runtime` → `cudnn-runtime`).
    let same_variant = |v: Version| {
        let release = images.release(v)?;
        release
            .middles_for(os)
            .into_iter()
            .find(|m| m.rsplit('-').next() == middle.rsplit('-').next())
            .map(|m| (v, m.to_string()))
    };
    if let Some((v, other)) = candidates.iter().find_map(|&v| same_variant(v)) {
        let change = format!("the tag form changes from `{middle}` to `{other}`");
        return Replacement {
            help: format!("move to `nvidia/cuda:{v}-{other}-{os}`, a supported release"),
            note: Some(match new_major(v) {
                Some(major) => format!("{change}; {major}"),
                None => change,
            }),
            to: Some(v),
        };
    }
    // Nothing listed keeps both; say what changes.
    let release = images.release(first);
    let published_os: Vec<&str> = release.map(|r| r.os_names()).unwrap_or_default();
    let change = if published_os.contains(&os) {
        let middles = release.map(|r| r.middles_for(os)).unwrap_or_default();
        format!(
            "no `{middle}` tag of CUDA {first} is known for {os} (known: {})",
            middles.join(", ")
        )
    } else if published_os.is_empty() {
        format!("the catalogue lists no tags of CUDA {first}")
    } else {
        format!(
            "CUDA {first} is not known to be published for {os} (known: {}): the OS changes",
            published_os.join(", ")
        )
    };
    let major = new_major(first)
        .map(|m| format!("; {m}"))
        .unwrap_or_default();
    Replacement {
        help: format!("move to a supported CUDA image release: {first}"),
        note: Some(format!("{change}{major}")),
        to: Some(first),
    }
}
