//! CU210 devel-content-in-image: the shipped image carries CUDA development content (nvcc, toolkit
//! headers, static libraries, Nsight, docs and samples; the categories are data). One finding per
//! layer that added some, with the bytes per category and the history line that made the layer.

use std::collections::BTreeMap;

use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::image::content::DevelFile;
use crate::units::human_bytes;

pub struct DevelContentInImage;

static META: RuleMeta = RuleMeta {
    code: "CU210",
    name: "devel-content-in-image",
    category: Category::Size,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary:
        "The image ships CUDA development content: compiler, headers, static libraries, Nsight",
    doc: Doc::Page,
};

/// The deepest directory holding every path.
fn common_dir<'a>(paths: impl Iterator<Item = &'a str>) -> String {
    let mut common: Option<Vec<&str>> = None;
    for path in paths {
        let parts: Vec<&str> = path.split('/').collect();
        let dir = &parts[..parts.len().saturating_sub(1)];
        common = Some(match common {
            None => dir.to_vec(),
            Some(prefix) => prefix
                .iter()
                .zip(dir)
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| *a)
                .collect(),
        });
    }
    let joined = common.unwrap_or_default().join("/");
    if joined.is_empty() {
        "/".to_owned()
    } else {
        joined
    }
}

impl ImageRule for DevelContentInImage {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        let mut by_layer: BTreeMap<usize, Vec<&DevelFile>> = BTreeMap::new();
        for file in &ctx.image.content.devel {
            by_layer.entry(file.layer).or_default().push(file);
        }
        for (layer, files) in by_layer {
            let total: u64 = files.iter().map(|file| file.size).sum();
            if total < ctx.settings.image.devel_bytes {
                continue;
            }
            let mut finding = ctx.finding_at(
                &META,
                layer,
                &common_dir(files.iter().map(|file| file.path.as_str())),
                format!(
                    "layer {} adds {} of CUDA development content in {} files",
                    layer + 1,
                    human_bytes(total),
                    files.len()
                ),
            );
            for category in ctx.content.devel_categories() {
                let in_category: Vec<&&DevelFile> = files
                    .iter()
                    .filter(|file| file.category == category.name)
                    .collect();
                if in_category.is_empty() {
                    continue;
                }
                let bytes: u64 = in_category.iter().map(|file| file.size).sum();
                let largest = in_category
                    .iter()
                    .max_by_key(|file| file.size)
                    .map(|file| file.path.as_str())
                    .unwrap_or_default();
                finding = finding
                    .with_note(format!(
                        "{}: {} in {} files ({}), largest {largest}",
                        category.name,
                        human_bytes(bytes),
                        in_category.len(),
                        category.description
                    ))
                    .with_source(category.source.clone());
            }
            out.push(finding.with_help(
                "build in a devel stage and copy only what runs into a runtime-based final stage \
                 (nvidia/cuda:*-runtime-* or a slim base with the pip nvidia-* wheels)",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::common_dir;

    #[test]
    fn common_directory() {
        assert_eq!(
            common_dir(["/usr/local/cuda/include/a.h", "/usr/local/cuda/bin/nvcc"].into_iter()),
            "/usr/local/cuda"
        );
        assert_eq!(common_dir(["/a/b.h", "/c/d.h"].into_iter()), "/");
    }
}
