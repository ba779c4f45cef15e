//! `cudalint facts IMAGE-REF`: what the knowledge says about a base image
//! (variant, CUDA, driver needs, NVIDIA_REQUIRE_CUDA, CUPTI, size, support
//! status), each fact with its source. This is how a user checks why a rule
//! fired, and how a reviewer reads the data.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use serde::Serialize;

use crate::dockerfile::model::ImageRef;
use crate::image::source::ImageSource;
use crate::knowledge::clock::{today, Date};
use crate::knowledge::images::{parse_cuda_tag, EolBasis, ReleaseStatus, Variant};
use crate::knowledge::Knowledge;

/// The output formats of `cudalint facts`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FactsFormat {
    Text,
    Json,
}

/// Arguments of `cudalint facts`.
#[derive(Debug, clap::Args)]
pub struct FactsArgs {
    /// A base image reference, e.g. `nvidia/cuda:12.4.1-devel-ubuntu22.04`.
    #[arg(value_name = "IMAGE-REF")]
    pub image: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FactsFormat::Text)]
    pub format: FactsFormat,
    /// Knowledge files layered over the built-in knowledge.
    #[arg(long, value_name = "FILE")]
    pub knowledge: Vec<PathBuf>,
}

/// One fact about the image and where it comes from.
#[derive(Debug, Serialize)]
pub struct Fact {
    pub name: &'static str,
    pub value: String,
    pub source: Option<String>,
}

/// The facts the knowledge holds about `image`, as of `on`.
pub fn facts_for(knowledge: &Knowledge, image: &ImageRef, on: Date) -> Vec<Fact> {
    let images = &knowledge.images;
    let mut facts = Vec::new();
    let mut push = |name, value: String, source: Option<&str>| {
        facts.push(Fact {
            name,
            value,
            source: source.filter(|s| !s.is_empty()).map(str::to_string),
        })
    };
    let Some(base) = images.classify(image) else {
        push("family", "not a known CUDA base image".into(), None);
        return facts;
    };
    let family_source = if base.family == "nvidia/cuda" {
        images.nvidia_cuda_source.as_str()
    } else {
        base.source.as_str()
    };
    push("family", base.family.clone(), Some(family_source));
    let tag = image.tag.as_deref().and_then(|t| parse_cuda_tag(t).ok());
    let variant_info = base.variant.and_then(|v| images.variant(v));
    push(
        "variant",
        base.variant.map_or("unknown".into(), |v| v.to_string()),
        variant_info.map(|i| i.source.as_str()),
    );
    if let Some(os) = &base.os {
        push("os", os.clone(), None);
    }
    let Some(cuda) = base.cuda.filter(|_| !base.is_unknown("cuda")) else {
        push("cuda", "unknown".into(), Some(&base.source));
        return facts;
    };
    // The CUDA version is the tag's own first field.
    push("cuda", cuda.to_string(), None);

    let toolkits = &knowledge.toolkits;
    match toolkits.release_for(cuda) {
        Some(release) => push(
            "minimum driver",
            format!(
                "{} (CUDA {}){}",
                release.driver,
                release.label,
                if release.confirmed {
                    ""
                } else {
                    ", not confirmed"
                }
            ),
            Some(&release.source),
        ),
        None => push("minimum driver", "unknown".into(), None),
    }
    if let Some(floor) = toolkits.minor_compat_floor(cuda.major()) {
        push(
            "minor-version compatibility floor",
            format!(
                "{} (any CUDA {}.x starts, with limits)",
                floor.floor, floor.major
            ),
            Some(&floor.source),
        );
    }
    if base.family == "nvidia/cuda" {
        push(
            "NVIDIA_REQUIRE_CUDA",
            format!(
                "cuda>={}, or-ed with brand=…,driver>=N,driver<N+1 clauses for older driver branches",
                cuda.major_minor()
            ),
            variant_info.map(|i| i.source.as_str()),
        );
    }

    let cupti_source = variant_info.map(|i| i.source.as_str());
    let cupti = if base.is_unknown("has_cupti") {
        "unknown".to_string()
    } else if base.has_cupti {
        let soname = knowledge
            .cupti
            .major(cuda.major())
            .map(|m| m.soname_for(cuda.minor()))
            .unwrap_or_else(|| "libcupti".into());
        format!("yes: {soname} in /usr/local/cuda/targets/<arch>/lib (in the ld cache)")
    } else {
        "no (base and runtime variants do not install cuda-cupti)".to_string()
    };
    push("CUPTI", cupti, cupti_source);

    if base.family == "nvidia/cuda" {
        let layers: &[Variant] = match base.variant {
            Some(Variant::Base) => &[Variant::Base],
            Some(Variant::Runtime) => &[Variant::Base, Variant::Runtime],
            Some(Variant::Devel) => &[Variant::Base, Variant::Runtime, Variant::Devel],
            None => &[],
        };
        let mut mib: u64 = layers
            .iter()
            .filter_map(|v| images.variant(*v))
            .map(|i| i.adds_mib)
            .sum();
        if tag
            .as_ref()
            .is_some_and(|t| t.flavour.as_deref().is_some_and(|f| f.starts_with("cudnn")))
        {
            mib += images.cudnn.as_ref().map_or(0, |c| c.mib);
        }
        if mib > 0 {
            push(
                "approximate size",
                format!("≈{:.1} GiB of CUDA packages, uncompressed, on top of the OS (measured for 13.0.2)", mib as f64 / 1024.0),
                cupti_source,
            );
        }
        support(knowledge, cuda, on, &mut push);
    }
    facts
}

fn support(
    knowledge: &Knowledge,
    cuda: crate::knowledge::Version,
    on: Date,
    push: &mut impl FnMut(&'static str, String, Option<&str>),
) {
    let images = &knowledge.images;
    match images.eol(cuda) {
        None if images.release(cuda).is_some() => push(
            "support",
            "supported".into(),
            images.release(cuda).map(|r| r.source.as_str()),
        ),
        None => push(
            "support",
            "unknown (not in the catalogue)".into(),
            Some(&images.nvidia_cuda_source),
        ),
        Some(eol) => {
            let deletion = eol
                .since
                .as_deref()
                .and_then(Date::parse)
                .zip(eol.deletion_after_months)
                .map(|(since, months)| since.plus_months(months));
            let state = match (eol.status, deletion) {
                (ReleaseStatus::Removed, _) => "deleted from the registries".to_string(),
                (_, Some(date)) if date <= on => format!("deleted (due on {date})"),
                (_, Some(date)) => format!("to be deleted on {date}"),
                _ => "due for deletion".to_string(),
            };
            let since = eol
                .since
                .as_deref()
                .map(|s| format!(" since {s}"))
                .unwrap_or_default();
            let superseded = match eol.basis {
                EolBasis::Superseded { by } => format!(", superseded by {by}"),
                _ => String::new(),
            };
            push(
                "support",
                format!("end of life{since}{superseded}; {state}"),
                Some(&eol.source),
            );
        }
    }
}

/// The image name in `reference`, which may be any reference `cudalint image` takes: the knowledge
/// knows base images by name, so a transport that names one (`docker-daemon:NAME`) gives its name
/// and one that names a file or directory is refused. A bare name is a name here even where a file
/// of that name happens to exist.
fn image_name(reference: &str) -> anyhow::Result<String> {
    let Ok(source) = ImageSource::parse(reference) else {
        bail!("`{reference}` is not an image reference");
    };
    match (source.image_name(), &source) {
        (Some(name), _) => Ok(name.to_owned()),
        (None, ImageSource::Path(_)) if !reference.starts_with(['/', '.']) => {
            Ok(reference.to_owned())
        }
        (None, _) => bail!(
            "`{reference}` names an image file or directory; `cudalint facts` looks base images up \
             by name (e.g. nvidia/cuda:12.4.1-runtime-ubuntu22.04)"
        ),
    }
}

/// Print the facts about `args.image`.
pub fn run(
    args: &FactsArgs,
    knowledge: &Knowledge,
    out: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    let name = image_name(&args.image)?;
    let Some(image) = ImageRef::parse(&name) else {
        bail!("`{}` is not an image reference", args.image);
    };
    let facts = facts_for(knowledge, &image, today());
    match args.format {
        FactsFormat::Json => {
            #[derive(Serialize)]
            struct Output<'a> {
                image: &'a str,
                checked: Option<&'a str>,
                facts: &'a [Fact],
            }
            serde_json::to_writer_pretty(
                &mut *out,
                &Output {
                    image: &image.text,
                    checked: knowledge.checked.as_deref(),
                    facts: &facts,
                },
            )?;
            writeln!(out)?;
        }
        FactsFormat::Text => {
            writeln!(out, "{}", image.text)?;
            for fact in &facts {
                writeln!(out, "  {}: {}", fact.name, fact.value)?;
                if let Some(source) = &fact.source {
                    writeln!(out, "    source: {source}")?;
                }
            }
            if let Some(checked) = &knowledge.checked {
                writeln!(out, "(knowledge checked {checked})")?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
