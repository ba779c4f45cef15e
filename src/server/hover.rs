//! Hover: on a `FROM` line, what `cudalint facts` says about its base image
//! (the reference after `ARG` expansion with the build's `--build-arg`s,
//! exactly as the rules see it); on a rule code or name in a `# cudalint
//! ignore=` comment, the rule's summary and a link to its documentation.

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind};

use super::diagnostics::rule_doc_url;
use super::documents::{Document, Encoding};
use crate::dockerfile::ast::Dockerfile;
use crate::dockerfile::model::BaseImage;
use crate::engine::Engine;

/// The hover at byte `offset` of `document`, if there is one. `linted` is
/// the syntax tree of the document's current text when its lint kept one
/// (the text is parsed here otherwise: an edit not linted yet).
pub fn hover(
    engine: &Engine,
    document: &Document,
    linted: Option<&Dockerfile>,
    offset: usize,
    encoding: Encoding,
) -> Option<Hover> {
    let parsed;
    let dockerfile = match linted {
        Some(dockerfile) => dockerfile,
        None => {
            parsed = crate::dockerfile::parse_syntax(&document.text).ok()?.0;
            &parsed
        }
    };
    let (markdown, span) = from_facts(engine, dockerfile, offset)
        .or_else(|| suppression_rule(engine, dockerfile, document, offset))?;
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: markdown,
        }),
        range: Some(document.range(span, encoding)),
    })
}

/// The facts of the base image of the `FROM` instruction at `offset`.
fn from_facts(
    engine: &Engine,
    dockerfile: &Dockerfile,
    offset: usize,
) -> Option<(String, crate::source::Span)> {
    let index = dockerfile
        .instructions
        .iter()
        .position(|i| i.keyword == "from" && i.span.start <= offset && offset <= i.span.end)?;
    let options = engine.options();
    let knowledge = &options.knowledge;
    // A stage's base depends only on what comes before its `FROM` (the
    // global ARGs, earlier stages): the model is built up to it, so the
    // RUNs after it are not split on every hover.
    let before = Dockerfile {
        directives: dockerfile.directives.clone(),
        escape: dockerfile.escape,
        instructions: dockerfile.instructions[..=index].to_vec(),
        comments: dockerfile.comments.clone(),
        warnings: Vec::new(),
    };
    let model = crate::dockerfile::build_model_with(&before, &options.build, &|image| {
        knowledge.images.image_env(image)
    });
    let stage = model.stages.iter().find(|s| s.from_instruction == index)?;
    let mut out = String::new();
    match &stage.base {
        BaseImage::Image(image) => {
            out.push_str(&format!("**`{}`**", image.text));
            let written = &dockerfile.instructions[index];
            if written
                .args
                .first()
                .is_some_and(|word| word.text != image.text)
            {
                out.push_str(" (ARGs resolved)");
            }
            out.push_str("\n\n");
            for fact in crate::facts::facts_for(knowledge, image, crate::knowledge::clock::today())
            {
                out.push_str(&format!("- **{}**: {}", fact.name, fact.value));
                if let Some(source) = &fact.source {
                    out.push_str(&format!("  \n  _source_: {source}"));
                }
                out.push('\n');
            }
            if let Some(checked) = &knowledge.checked {
                out.push_str(&format!("\n_knowledge checked {checked}_\n"));
            }
        }
        BaseImage::Stage(base) => {
            let name = model.stages[*base].name.as_deref().unwrap_or("(unnamed)");
            out.push_str(&format!("Built on stage {base} `{name}` of this file"));
        }
        BaseImage::Scratch => out.push_str("`scratch`: an empty image"),
        BaseImage::Unresolved => out.push_str(&format!(
            "`{}`: the reference holds variables no `ARG` or build argument sets",
            stage.base_text
        )),
    }
    Some((out, stage.base_span))
}

/// The rule named under `offset` in a `# cudalint [global] ignore=` comment.
fn suppression_rule(
    engine: &Engine,
    dockerfile: &Dockerfile,
    document: &Document,
    offset: usize,
) -> Option<(String, crate::source::Span)> {
    let comment = dockerfile
        .comments
        .iter()
        .find(|c| c.span.start <= offset && offset <= c.span.end)?;
    let text = &document.text[comment.span.start..comment.span.end];
    let ignore = text.find("ignore")?;
    let list_start = comment.span.start + ignore + text[ignore..].find('=')? + 1;
    if offset < list_start
        || !text
            .trim_start_matches(['#', ' ', '\t'])
            .starts_with("cudalint")
    {
        return None;
    }
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let line = &document.text;
    let start = line[..offset]
        .rfind(|c: char| !is_name(c))
        .map_or(0, |i| i + 1)
        .max(list_start);
    let end = line[offset..]
        .find(|c: char| !is_name(c))
        .map_or(comment.span.end, |i| offset + i)
        .min(comment.span.end);
    let word = line.get(start..end)?;
    let meta = crate::config::find_rule(engine.rule_metas(), word)?;
    let mut out = format!(
        "**{}** `{}` ({})\n\n{}",
        meta.code, meta.name, meta.default_severity, meta.summary
    );
    let doc_base = engine.options().settings.doc_url_base.as_deref();
    if let Some(url) = rule_doc_url(doc_base, meta.code) {
        out.push_str(&format!(
            "\n\n[Documentation]({url}) · `cudalint explain {}`",
            meta.code
        ));
    }
    Some((out, crate::source::Span::new(start, end)))
}
