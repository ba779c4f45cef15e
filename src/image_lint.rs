//! From an image reference to its findings: read the image from its source, index it once
//! ([`ScannedImage`]), run the image rules through the engine (rule selection and severities as for
//! Dockerfiles), link each finding to the Dockerfile instruction that made its layer when the
//! Dockerfile is known, and keep the summary the report shows. `cudalint image` and `cudalint build`
//! both come through here.

use anyhow::Context;

use crate::diagnostic::Diagnostic;
use crate::engine::Engine;
use crate::image::inventory::Inventory;
use crate::image::provenance;
use crate::image::report::ImageReport;
use crate::image::scan::ScannedImage;
use crate::image::source::{ImageSource, LoadOptions, LoadedImage, Platform};
use crate::image::summary::ImageSummary;
use crate::source::SourceFile;

/// One image, linted.
pub struct ImageLinted {
    /// Final findings, sorted; `origin` is the reference.
    pub diagnostics: Vec<Diagnostic>,
    pub summary: ImageSummary,
    /// The image's CUDA content, for confirming what Dockerfile findings predicted
    /// ([`crate::image::confirm`]).
    pub inventory: Inventory,
}

/// The platform the engine's build options name, in the image sources' terms.
pub fn platform_of(engine: &Engine) -> Option<Platform> {
    let platform = engine.options().build.platform.as_ref()?;
    Platform::parse(&platform.to_string()).ok()
}

/// Reads the image `reference` names (any source `cudalint image` takes) and lints it; with
/// `dockerfile`, findings point at the instruction that made their layer too.
pub fn scan_and_lint(
    reference: &str,
    engine: &Engine,
    dockerfile: Option<&SourceFile>,
) -> anyhow::Result<ImageLinted> {
    let options = LoadOptions {
        platform: platform_of(engine),
        ..LoadOptions::default()
    };
    load_and_lint(reference, &options, engine, dockerfile)
}

/// As [`scan_and_lint`], with the load options spelled out (progress, rootfs config).
pub fn load_and_lint(
    reference: &str,
    options: &LoadOptions,
    engine: &Engine,
    dockerfile: Option<&SourceFile>,
) -> anyhow::Result<ImageLinted> {
    let source = ImageSource::parse(reference)?;
    let image = source
        .load(options)
        .with_context(|| format!("cannot read image {reference}"))?;
    Ok(lint_loaded(reference, image, engine, dockerfile))
}

/// Lints an image already read.
pub fn lint_loaded(
    reference: &str,
    image: LoadedImage,
    engine: &Engine,
    dockerfile: Option<&SourceFile>,
) -> ImageLinted {
    let scanned = ScannedImage::scan(
        ImageReport::build(reference, image),
        &engine.options().knowledge,
    );
    let mut diagnostics = engine.lint_image(&scanned);
    if let Some(dockerfile) = dockerfile {
        let made_by = provenance::layer_instructions(&scanned, dockerfile, &engine.options().build);
        provenance::link(&mut diagnostics, &scanned, dockerfile, &made_by);
    }
    let summary = ImageSummary::new(&scanned, &engine.options().knowledge);
    ImageLinted {
        diagnostics,
        summary,
        inventory: scanned.inventory,
    }
}
