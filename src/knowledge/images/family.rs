//! CUDA base-image families other than `nvidia/cuda` (`pytorch/pytorch`,
//! NGC, user-declared ones): their tag templates (`{cuda}-cuda{cudnn}-…`),
//! how a tag is matched against one, and how a family's tags are checked.

use super::super::version::Version;
use super::schema::FamilyToml;
use super::tag::TagProblem;
use super::view::Variant;

/// One piece of a family's tag template.
#[derive(Clone, Debug, PartialEq, Eq)]
enum TemplatePart {
    Literal(String),
    /// `cuda`, `cudnn`, `variant`, `os`, `release` or `*`.
    Slot(String),
}

const TEMPLATE_SLOTS: &[&str] = &["cuda", "cudnn", "variant", "os", "release", "*"];

/// A CUDA base-image family other than `nvidia/cuda`.
#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    pub name: String,
    pub repositories: Vec<String>,
    pub tag: String,
    template: Vec<TemplatePart>,
    /// Tag word → variant.
    pub variants: Vec<(String, Variant)>,
    /// The variant when the tag has no `{variant}`.
    pub variant: Option<Variant>,
    pub cupti_in: Option<Vec<Variant>>,
    pub compiler_in: Option<Vec<Variant>>,
    pub unknown: Vec<String>,
    /// CU130 checks tags of this family that start with a digit.
    pub validate: bool,
    pub source: String,
}

/// The values a family's template took from a tag.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TemplateMatch {
    pub cuda: Option<String>,
    pub cudnn: Option<String>,
    pub variant: Option<String>,
    pub os: Option<String>,
    pub release: Option<String>,
}

impl Family {
    /// Match `tag` against the template: each slot takes the text up to the
    /// next literal part (or the rest of the tag), and must not be empty.
    pub fn match_tag(&self, tag: &str) -> Option<TemplateMatch> {
        let mut found = TemplateMatch::default();
        let mut rest = tag;
        let mut parts = self.template.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                TemplatePart::Literal(literal) => rest = rest.strip_prefix(literal.as_str())?,
                TemplatePart::Slot(name) => {
                    let end = match parts.peek() {
                        Some(TemplatePart::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    let value = rest.get(..end)?;
                    if value.is_empty() {
                        return None;
                    }
                    rest = rest.get(end..)?;
                    let slot = match name.as_str() {
                        "cuda" => &mut found.cuda,
                        "cudnn" => &mut found.cudnn,
                        "variant" => &mut found.variant,
                        "os" => &mut found.os,
                        "release" => &mut found.release,
                        _ => continue,
                    };
                    *slot = Some(value.to_string());
                }
            }
        }
        rest.is_empty().then_some(found)
    }

    pub(super) fn variant_of(&self, word: &str) -> Option<Variant> {
        self.variants
            .iter()
            .find(|(w, _)| w == word)
            .map(|&(_, v)| v)
    }

    fn has_slot(&self, slot: &str) -> bool {
        self.template
            .iter()
            .any(|p| matches!(p, TemplatePart::Slot(s) if s == slot))
    }
}

pub(super) fn family_from_raw(f: FamilyToml) -> Result<Family, String> {
    let template =
        parse_template(&f.tag).map_err(|e| format!("images.families `{}`: {e}", f.name))?;
    let mut variants = Vec::new();
    for (word, name) in &f.variants {
        let variant = Variant::parse(name).ok_or_else(|| {
            format!(
                "images.families `{}`: unknown variant `{name}` for `{word}`",
                f.name
            )
        })?;
        variants.push((word.clone(), variant));
    }
    let parse_list =
        |list: &Option<Vec<String>>, key: &str| -> Result<Option<Vec<Variant>>, String> {
            list.as_ref()
                .map(|names| {
                    names
                        .iter()
                        .map(|n| {
                            Variant::parse(n).ok_or_else(|| {
                                format!(
                                    "images.families `{}`: unknown variant `{n}` in {key}",
                                    f.name
                                )
                            })
                        })
                        .collect()
                })
                .transpose()
        };
    let variant = match &f.variant {
        Some(name) => Some(
            Variant::parse(name)
                .ok_or_else(|| format!("images.families `{}`: unknown variant `{name}`", f.name))?,
        ),
        None => None,
    };
    for fact in &f.unknown {
        if !["cuda", "has_cupti", "has_compiler"].contains(&fact.as_str()) {
            return Err(format!(
                "images.families `{}`: unknown fact `{fact}` (cuda, has_cupti, has_compiler)",
                f.name
            ));
        }
    }
    let family = Family {
        cupti_in: parse_list(&f.cupti_in, "cupti_in")?,
        compiler_in: parse_list(&f.compiler_in, "compiler_in")?,
        name: f.name,
        repositories: f
            .repositories
            .iter()
            .map(|r| r.trim_end_matches('/').to_string())
            .collect(),
        tag: f.tag,
        template,
        variants,
        variant,
        unknown: f.unknown,
        validate: f.validate,
        source: f.source,
    };
    if family.has_slot("variant") && family.variants.is_empty() {
        return Err(format!(
            "images.families `{}`: the tag has `{{variant}}` but `variants` maps no words",
            family.name
        ));
    }
    Ok(family)
}

fn parse_template(text: &str) -> Result<Vec<TemplatePart>, String> {
    let mut parts = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        match rest.find('{') {
            Some(0) => {
                let close = rest.find('}').ok_or("unclosed `{` in tag template")?;
                let name = rest.get(1..close).unwrap_or("");
                if !TEMPLATE_SLOTS.contains(&name) {
                    return Err(format!(
                        "unknown placeholder `{{{name}}}` (known: {})",
                        TEMPLATE_SLOTS.join(", ")
                    ));
                }
                if matches!(parts.last(), Some(TemplatePart::Slot(_))) {
                    return Err("two placeholders need literal text between them".into());
                }
                parts.push(TemplatePart::Slot(name.to_string()));
                rest = rest.get(close + 1..).unwrap_or("");
            }
            Some(open) => {
                parts.push(TemplatePart::Literal(
                    rest.get(..open).unwrap_or("").to_string(),
                ));
                rest = rest.get(open..).unwrap_or("");
            }
            None => {
                parts.push(TemplatePart::Literal(rest.to_string()));
                rest = "";
            }
        }
    }
    Ok(parts)
}

pub(super) fn validate_family_tag(family: &Family, tag: Option<&str>) -> Vec<TagProblem> {
    // Named tags (`latest`, `nightly`) are left alone: only version-shaped
    // tags are checked against the template.
    let Some(tag) = tag.filter(|t| t.starts_with(|c: char| c.is_ascii_digit())) else {
        return Vec::new();
    };
    let Some(found) = family.match_tag(tag) else {
        return vec![TagProblem::Malformed {
            reason: format!("does not have the form of {} tags", family.name),
            expected: family.tag.clone(),
        }];
    };
    let mut problems = Vec::new();
    if let Some(word) = found.variant {
        if family.variant_of(&word).is_none() {
            problems.push(TagProblem::UnknownVariant {
                word,
                known: family.variants.iter().map(|(w, _)| w.clone()).collect(),
            });
        }
    }
    if let Some(cuda) = found.cuda {
        if Version::parse(&cuda).is_none() {
            problems.push(TagProblem::Malformed {
                reason: format!("has `{cuda}` where the CUDA version belongs"),
                expected: family.tag.clone(),
            });
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_take_text_up_to_the_next_literal() {
        let raw = FamilyToml {
            name: "t".into(),
            repositories: vec!["pytorch/pytorch".into()],
            tag: "{*}-cuda{cuda}-cudnn{cudnn}-{variant}".into(),
            variants: [("runtime".to_string(), "runtime".to_string())].into(),
            variant: None,
            cupti_in: None,
            compiler_in: None,
            unknown: vec![],
            validate: true,
            source: "test".into(),
        };
        let family = family_from_raw(raw).unwrap();
        let m = family.match_tag("2.5.1-cuda12.4-cudnn9-runtime").unwrap();
        assert_eq!(m.cuda.as_deref(), Some("12.4"));
        assert_eq!(m.cudnn.as_deref(), Some("9"));
        assert_eq!(m.variant.as_deref(), Some("runtime"));
        assert_eq!(family.match_tag("2.5.1-cuda12.4-cudnn9"), None);
        assert!(parse_template("{cuda}{os}").is_err());
        assert!(parse_template("{cuda").is_err());
        assert!(parse_template("{nope}").is_err());
    }
}
