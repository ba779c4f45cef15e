//! CU135 ngc-framework-image-eol: the base image is an NGC framework
//! container (`nvcr.io/nvidia/pytorch:24.02-py3`, `tritonserver`, …) whose
//! monthly release is out of NVIDIA's support and at least the policy's
//! months old. The support window, the known releases and what each is
//! built on are data (`rules/ngc.toml`); this file decides and words.

use crate::checks::dockerfile::cuda_stages::pulled_images;
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::model::ImageRef;
use crate::knowledge::clock::{today, Date};
use crate::knowledge::ngc::{parse_ngc_tag, NgcKnowledge, NgcRelease, NgcRepository, NgcTag};
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU135",
    name: "ngc-framework-image-eol",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "The NGC framework container release is out of NVIDIA's support",
    doc: Doc::Page,
};

pub struct NgcFrameworkImageEol;

impl DockerfileRule for NgcFrameworkImageEol {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let ngc = &ctx.knowledge.ngc;
        let today = today();
        for (image, span) in pulled_images(ctx) {
            let canonical = ctx.knowledge.images.canonicalize(image);
            let Some(repository) = ngc.repository(&canonical.repository) else {
                continue;
            };
            let Some(tag) = canonical.tag.as_deref().and_then(parse_ngc_tag) else {
                continue;
            };
            if let Some(stale) = Stale::judge(ngc, repository, &tag, today) {
                out.push(render(image, span, ngc, repository, &tag, &stale));
            }
        }
    }
}

/// A release the rule reports: superseded, and old enough.
struct Stale<'k> {
    /// Whole months since the release month.
    age_months: i32,
    /// What the release is built on, when recorded.
    built_on: Option<&'k NgcRelease>,
}

impl<'k> Stale<'k> {
    /// `None` when the release is the newest known (or newer: unknown to
    /// the data, so not judged), or younger than the policy's months.
    fn judge(
        ngc: &'k NgcKnowledge,
        repository: &NgcRepository,
        tag: &NgcTag,
        today: Date,
    ) -> Option<Stale<'k>> {
        let policy = ngc.policy.as_ref()?;
        if tag.release >= repository.newest_known {
            return None;
        }
        let age_months = tag.release.months_until(today);
        if age_months < policy.report_after_months as i32 {
            return None;
        }
        Some(Stale {
            age_months,
            built_on: ngc.release(&repository.name, tag.release),
        })
    }
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

fn render(
    image: &ImageRef,
    span: Span,
    ngc: &NgcKnowledge,
    repository: &NgcRepository,
    tag: &NgcTag,
    stale: &Stale<'_>,
) -> Diagnostic {
    let date = tag.release.date();
    let month = MONTHS[(date.month - 1) as usize];
    let message = format!(
        "`{}`: NGC {} release {} ({month} {}, {} months ago) is out of support: NVIDIA supports each monthly framework release only until the next one, and later releases exist (newest known: {})",
        image.text,
        repository.product,
        tag.release,
        date.year,
        stale.age_months,
        repository.newest_known,
    );
    let mut diagnostic = Diagnostic::at(&META, span, message).with_help(help(repository, tag));
    if let Some(release) = stale.built_on {
        if let Some(note) = built_on_note(tag, release) {
            diagnostic = diagnostic.with_note(note);
        }
        diagnostic = diagnostic.with_source(release.source.clone());
    }
    if let Some(policy) = &ngc.policy {
        diagnostic = diagnostic
            .with_source(policy.source.clone())
            .with_source(policy.tag_source.clone());
    }
    diagnostic.with_source(repository.source.clone())
}

/// The newest known tag with the file's ending when that ending is known to
/// be published for it; otherwise the release alone.
fn help(repository: &NgcRepository, tag: &NgcTag) -> String {
    let newest = repository.newest_known;
    if repository.suffixes.contains(&tag.suffix) {
        format!(
            "move to a current release, such as `{}:{newest}{}` (the newest cudalint knows), and check that the hosts' driver supports its CUDA",
            repository.name, tag.suffix
        )
    } else {
        format!(
            "move to a current release ({newest} or later; check on NGC which tag endings it publishes), and check that the hosts' driver supports its CUDA"
        )
    }
}

fn built_on_note(tag: &NgcTag, release: &NgcRelease) -> Option<String> {
    match (&release.cuda, release.driver) {
        (Some(cuda), Some(driver)) => Some(format!(
            "release {} is built on CUDA {cuda} and needs driver {driver} or later (data-center GPUs: older branches through CUDA forward compatibility)",
            tag.release
        )),
        (Some(cuda), None) => Some(format!("release {} is built on CUDA {cuda}", tag.release)),
        (None, Some(driver)) => Some(format!(
            "release {} needs driver {driver} or later",
            tag.release
        )),
        (None, None) => None,
    }
}
