//! CU002 unknown-stage-reference: `COPY --from=`, `RUN --mount=from=` or
//! `FROM` names something that is neither a stage of this Dockerfile nor a
//! plausible image reference — almost always a misspelt stage name — or a
//! bare one-word image name one typo away from a stage name.

use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Edit, Fix, FixSafety, Severity};
use crate::dockerfile::model::{DependencyKind, DependencyTarget, ImageRef, StageDependency};
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU002",
    name: "unknown-stage-reference",
    category: Category::Structure,
    default_severity: Severity::Error,
    fix: FixAvailability::Sometimes,
    summary: "A --from/FROM reference names no stage and is not an image reference",
    doc: Doc::Page,
};

/// Names longer than this are not compared (edit distance is quadratic).
const MAX_COMPARED_LEN: usize = 128;

pub struct UnknownStageReference;

impl DockerfileRule for UnknownStageReference {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        for stage in &ctx.model.stages {
            for dependency in &stage.dependencies {
                let candidates = ctx
                    .model
                    .stages
                    .iter()
                    .filter(|other| other.index != stage.index)
                    .filter_map(|other| other.name.as_deref());
                match &dependency.target {
                    DependencyTarget::Invalid => {
                        let suggestion = closest(&dependency.reference, candidates);
                        out.push(diagnostic(ctx, dependency, suggestion, None));
                    }
                    // `--from=buidler` is a valid image name, so BuildKit
                    // would try to pull `docker.io/library/buidler`: a bare
                    // one-word name that is one typo away from a stage is
                    // far more likely a misspelt stage than a Docker Hub
                    // official image.
                    DependencyTarget::Image(image)
                        if image.registry.is_none()
                            && image.tag.is_none()
                            && image.digest.is_none()
                            && !image.repository.contains('/') =>
                    {
                        if let Some(name) = closest(&dependency.reference, candidates) {
                            out.push(diagnostic(ctx, dependency, Some(name), Some(image)));
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

/// The finding; `pulled` is the image BuildKit would fetch instead, when
/// the reference is a valid image name.
fn diagnostic(
    ctx: &DockerfileContext<'_>,
    dependency: &StageDependency,
    suggestion: Option<&str>,
    pulled: Option<&ImageRef>,
) -> Diagnostic {
    let what = match dependency.kind {
        DependencyKind::From => "FROM",
        DependencyKind::Copy => "--from",
        DependencyKind::Mount => "--mount from",
    };
    let message = match pulled {
        Some(image) => format!(
            "{what} `{}` names no stage; it would be pulled as image `docker.io/library/{}`",
            dependency.reference, image.repository
        ),
        None => format!(
            "{what} `{}` names no stage and is not a valid image reference",
            dependency.reference
        ),
    };
    let mut finding = Diagnostic::at(&META, dependency.span, message);
    match suggestion {
        Some(name) => {
            finding = finding.with_help(format!("did you mean stage `{name}`?"));
            if let Some(span) = reference_span(&ctx.source.text, dependency) {
                finding = finding.with_fix(Fix {
                    description: format!("use stage `{name}`"),
                    // The intended stage is a guess.
                    safety: FixSafety::Unsafe,
                    edits: vec![Edit {
                        span,
                        replacement: name.to_string(),
                    }],
                });
            }
        }
        None => {
            finding = finding.with_help(
                "name a stage defined earlier (`FROM … AS name`) or a full image reference",
            );
        }
    }
    finding
}

/// Where the reference text is written in the file, when it is written
/// literally (not produced by ARG expansion): the word itself, or the one
/// `=`-introduced occurrence inside a flag such as `--from=buidler`.
fn reference_span(text: &str, dependency: &StageDependency) -> Option<Span> {
    let written = text.get(dependency.span.start..dependency.span.end)?;
    let reference = dependency.reference.as_str();
    if reference.is_empty() {
        return None;
    }
    if written == reference {
        return Some(dependency.span);
    }
    let mut found = written
        .match_indices(reference)
        .filter(|(at, _)| written[..*at].ends_with('='))
        .filter(|(at, _)| {
            written[at + reference.len()..]
                .chars()
                .next()
                .is_none_or(|c| c == ',' || c.is_whitespace())
        });
    let (at, _) = found.next()?;
    if found.next().is_some() {
        return None;
    }
    let start = dependency.span.start + at;
    Some(Span::new(start, start + reference.len()))
}

/// The candidate closest to `reference` by edit distance, if close enough
/// to be a typo (at most a third of the name, and at least one edit).
fn closest<'a>(reference: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    if reference.is_empty() || reference.len() > MAX_COMPARED_LEN {
        return None;
    }
    let reference = reference.to_ascii_lowercase();
    candidates
        .filter(|c| c.len() <= MAX_COMPARED_LEN)
        .map(|c| (edit_distance(&reference, c), c))
        .filter(|(distance, c)| *distance <= (c.chars().count() / 3).max(1))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, c)| c)
}

/// Levenshtein distance over characters, two rows.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("buidler", "builder"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("runtime", "runtime"), 0);
    }

    #[test]
    fn closest_prefers_near_names_only() {
        let names = ["builder", "runtime"];
        assert_eq!(closest("buidler", names.into_iter()), Some("builder"));
        assert_eq!(closest("Builder", names.into_iter()), Some("builder"));
        assert_eq!(closest("wheels", names.into_iter()), None);
    }
}
