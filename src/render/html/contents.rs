//! What is in an image besides its size: the minimum driver of each CUDA runtime, the CUDA
//! inventory, the libraries shipped twice, the dead copies behind the wasted bytes, and the shared
//! libraries the loader would not find.

use std::fmt::{self, Write as _};

use super::source_link;
use crate::image::fs::DeadCopy;
use crate::image::inventory::LibraryFamily;
use crate::image::linkage::UnresolvedNeed;
use crate::image::summary::{ImageSummary, LoadedWhen, RuntimeDriver};
use crate::knowledge::Version;
use crate::render::shared::{xml_attr, xml_text};
use crate::units::human_bytes;

/// Rows of a long table in view; the rest are one click away.
const SHOWN_ROWS: usize = 8;

/// Rows of a long table in the page at all: a real image can have tens of thousands of dead
/// copies, which would make the page too heavy to open.
const MAX_ROWS: usize = 500;

/// Each CUDA runtime in the image with the least driver it needs; runtimes whose release the file
/// does not tell (a `libcudart.so.12` without a wheel beside it) are listed as unknown.
pub(super) fn write_drivers(html: &mut String, image: &ImageSummary) -> fmt::Result {
    html.push_str("<div class=\"card drivers\">\n<h3>Minimum driver</h3>\n");
    let runtimes: Vec<_> = image.inventory.cuda_runtimes().collect();
    if runtimes.is_empty() {
        html.push_str("<p class=\"empty\">No CUDA runtime (<code>libcudart</code>) in the image.</p>\n</div>\n");
        return Ok(());
    }
    let highest = image
        .runtime_drivers
        .iter()
        .filter_map(|runtime| Some((Version::parse(&runtime.min_driver)?, runtime)))
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, runtime)| runtime);
    if let Some(runtime) = highest {
        writeln!(
            html,
            "<p class=\"headline\" data-min-driver=\"{driver}\">Hosts need driver \
             <strong>≥ {driver}</strong> <span class=\"muted\">for CUDA {cuda}</span></p>",
            driver = xml_text(&runtime.min_driver),
            cuda = xml_text(&runtime.cuda),
        )?;
    }
    html.push_str(
        "<table class=\"runtimes\">\n<tr><th>CUDA runtime</th><th>CUDA</th><th>minimum driver</th></tr>\n",
    );
    for library in runtimes {
        let known: Option<&RuntimeDriver> = image
            .runtime_drivers
            .iter()
            .find(|runtime| runtime.path == library.path);
        let pip = if library.pip {
            " <span class=\"tag\">pip</span>"
        } else {
            ""
        };
        match known {
            Some(runtime) => writeln!(
                html,
                "<tr class=\"runtime\" data-path=\"{path_attr}\" data-cuda=\"{cuda_attr}\" \
                 data-min-driver=\"{driver_attr}\"><td><code>{path}</code>{pip}</td>\
                 <td>{cuda}</td><td class=\"driver\">{driver}</td></tr>",
                path_attr = xml_attr(&library.path),
                cuda_attr = xml_attr(&runtime.cuda),
                driver_attr = xml_attr(&runtime.min_driver),
                path = xml_text(&library.path),
                cuda = xml_text(&runtime.cuda),
                driver = xml_text(&runtime.min_driver),
            )?,
            None => writeln!(
                html,
                "<tr class=\"runtime unknown\" data-path=\"{path_attr}\"><td><code>{path}</code>{pip}</td>\
                 <td>{version}</td><td class=\"muted\">unknown*</td></tr>",
                path_attr = xml_attr(&library.path),
                path = xml_text(&library.path),
                version = xml_text(library.version.as_deref().unwrap_or("?")),
            )?,
        }
    }
    html.push_str("</table>\n");
    if image.inventory.cuda_runtimes().any(|library| {
        !image
            .runtime_drivers
            .iter()
            .any(|runtime| runtime.path == library.path)
    }) {
        html.push_str(
            "<p class=\"source\">* The file name gives only the major release \
             (<code>libcudart.so.12</code>) and no wheel beside it tells more, so no minimum driver \
             follows from it.</p>\n",
        );
    }
    let mut sources: Vec<&str> = image
        .runtime_drivers
        .iter()
        .map(|runtime| runtime.source.as_str())
        .collect();
    sources.dedup();
    for source in sources {
        writeln!(
            html,
            "<p class=\"source\">Source: {}</p>",
            source_link(source)
        )?;
    }
    html.push_str("</div>\n");
    Ok(())
}

/// The CUDA inventory: libraries, toolkits, torch, pip packages, NVIDIA environment and labels.
pub(super) fn write_inventory(html: &mut String, image: &ImageSummary) -> fmt::Result {
    let inventory = &image.inventory;
    html.push_str("<div class=\"card inventory\">\n<h3>CUDA inventory</h3>\n");
    let mut libraries: Vec<_> = inventory.libraries.iter().collect();
    libraries.sort_by(|a, b| (a.family, &a.path).cmp(&(b.family, &b.path)));
    if libraries.is_empty() {
        html.push_str(
            "<p class=\"empty\">No CUDA libraries (runtime, CUPTI, cuDNN, NCCL, cuBLAS).</p>\n",
        );
    } else {
        html.push_str(
            "<table class=\"libraries\">\n<tr><th>library</th><th>version</th><th>path</th>\
             <th>SONAME</th><th class=\"num\">size</th></tr>\n",
        );
        for library in libraries {
            let family = match library.family {
                LibraryFamily::CudaRuntime => "CUDA runtime",
                LibraryFamily::Cupti => "CUPTI",
                LibraryFamily::Cudnn => "cuDNN",
                LibraryFamily::Nccl => "NCCL",
                LibraryFamily::Cublas => "cuBLAS",
            };
            writeln!(
                html,
                "<tr class=\"library\" data-path=\"{path_attr}\" data-bytes=\"{bytes}\">\
                 <td>{family}{pip}</td><td>{version}</td><td><code>{path}</code></td>\
                 <td><code>{soname}</code></td><td class=\"num\">{size}</td></tr>",
                path_attr = xml_attr(&library.path),
                bytes = library.size,
                pip = if library.pip {
                    " <span class=\"tag\">pip</span>"
                } else {
                    ""
                },
                version = xml_text(
                    library
                        .release
                        .as_deref()
                        .or(library.version.as_deref())
                        .unwrap_or("?")
                ),
                path = xml_text(&library.path),
                soname = xml_text(library.soname.as_deref().unwrap_or("")),
                size = human_bytes(library.size),
            )?;
        }
        html.push_str("</table>\n");
    }
    let mut items: Vec<String> = Vec::new();
    for toolkit in &inventory.toolkits {
        items.push(format!(
            "CUDA toolkit <strong>{}</strong> <code>{}</code>",
            xml_text(toolkit.version.as_deref().unwrap_or("?")),
            xml_text(&toolkit.path)
        ));
    }
    for torch in &inventory.torch {
        items.push(format!(
            "torch <strong>{}</strong> built for {} <code>{}</code>",
            xml_text(torch.version.as_deref().unwrap_or("?")),
            match &torch.cuda {
                Some(cuda) => format!("CUDA <strong>{}</strong>", xml_text(cuda)),
                None => "no CUDA (CPU)".to_owned(),
            },
            xml_text(&torch.path)
        ));
    }
    if !items.is_empty() {
        html.push_str("<ul class=\"plain\">\n");
        for item in items {
            writeln!(html, "<li>{item}</li>")?;
        }
        html.push_str("</ul>\n");
    }
    for (title, packages) in [
        ("NVIDIA pip packages", &inventory.nvidia_packages),
        ("CUDA Python packages", &inventory.cuda_python_packages),
    ] {
        if packages.is_empty() {
            continue;
        }
        write!(html, "<h4>{title}</h4>\n<ul class=\"packages\">")?;
        for package in packages {
            write!(
                html,
                "<li title=\"{}\"><strong>{}</strong> {}</li>",
                xml_attr(&package.path),
                xml_text(&package.name),
                xml_text(&package.version)
            )?;
        }
        html.push_str("</ul>\n");
    }
    for (title, map) in [
        ("NVIDIA environment", &inventory.nvidia_env),
        ("NVIDIA labels", &inventory.nvidia_labels),
    ] {
        if map.is_empty() {
            continue;
        }
        writeln!(html, "<h4>{title}</h4>\n<table class=\"pairs\">")?;
        for (key, value) in map {
            writeln!(
                html,
                "<tr><td><code>{}</code></td><td><code>{}</code></td></tr>",
                xml_text(key),
                xml_text(value)
            )?;
        }
        html.push_str("</table>\n");
    }
    html.push_str("</div>\n");
    Ok(())
}

/// Duplicated CUDA libraries and the dead copies behind the wasted bytes.
pub(super) fn write_waste(html: &mut String, image: &ImageSummary) -> fmt::Result {
    if !image.duplicates.is_empty() {
        html.push_str(
            "<div class=\"card duplicates\">\n<h3>CUDA libraries shipped more than once</h3>\n\
             <table>\n<tr><th>SONAME</th><th>kept</th><th>extra copies</th><th class=\"num\">saved by keeping one</th></tr>\n",
        );
        for group in &image.duplicates {
            let extra: Vec<String> = group
                .extra
                .iter()
                .map(|copy| {
                    format!(
                        "<code>{}</code> <span class=\"muted\">layer {}</span>",
                        xml_text(&copy.path),
                        copy.layer + 1
                    )
                })
                .collect();
            writeln!(
                html,
                "<tr data-bytes=\"{saved}\"><td><code>{soname}</code></td>\
                 <td><code>{kept}</code> <span class=\"muted\">layer {layer}</span></td>\
                 <td>{extra}</td><td class=\"num\">{human}</td></tr>",
                saved = group.saved_bytes(),
                soname = xml_text(&group.soname),
                kept = xml_text(&group.kept.path),
                layer = group.kept.layer + 1,
                extra = extra.join("<br>"),
                human = human_bytes(group.saved_bytes()),
            )?;
        }
        html.push_str("</table>\n</div>\n");
    }
    if !image.dead_copies.is_empty() {
        let mut copies: Vec<_> = image.dead_copies.iter().collect();
        copies.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| a.path.cmp(&b.path)));
        writeln!(
            html,
            "<div class=\"card dead\">\n<h3>Wasted: files a later layer deleted or overwrote \
             <span class=\"count\">{}</span></h3>",
            copies.len()
        )?;
        let header =
            "<tr><th>path</th><th class=\"num\">size</th><th>added in</th><th>then</th></tr>";
        let row = |copy: &&DeadCopy| {
            format!(
                "<tr data-bytes=\"{bytes}\"><td><code>{path}</code></td><td class=\"num\">{human}</td>\
                 <td>layer {layer}</td><td>{how} in layer {by}</td></tr>",
                bytes = copy.size,
                path = xml_text(&copy.path),
                human = human_bytes(copy.size),
                layer = copy.layer + 1,
                how = if copy.deleted {
                    "deleted"
                } else {
                    "overwritten"
                },
                by = copy.by_layer + 1,
            )
        };
        write_long_table(html, header, &copies, row, |rest| {
            format!(
                "{} smaller ({})",
                rest.len(),
                human_bytes(rest.iter().map(|copy| copy.size).sum())
            )
        })?;
        html.push_str("</div>\n");
    }
    Ok(())
}

/// The shared libraries the loader would not find, one row per object, grouped by how each object is
/// loaded: an object loaded at start breaks its program or import (red), a GPU backend sends its
/// framework to the CPU (red), an on-demand plugin breaks one feature (muted), and an object whose
/// missing names a package imported first provides breaks nothing.
pub(super) fn write_unresolved(html: &mut String, image: &ImageSummary) -> fmt::Result {
    html.push_str("<div class=\"card unresolved\">\n<h3>Shared libraries</h3>\n");
    if image.unresolved_libraries.is_empty() {
        html.push_str(
            "<p class=\"empty clean\">Every DT_NEEDED resolves in the image or from the host driver.</p>\n",
        );
        html.push_str("</div>\n");
        return Ok(());
    }
    // The list is sorted by object, so each object's needs are consecutive.
    let mut objects: Vec<(&UnresolvedNeed, Vec<&str>)> = Vec::new();
    for need in &image.unresolved_libraries {
        match objects.last_mut() {
            Some((first, needs)) if first.object == need.object => needs.push(&need.needed),
            _ => objects.push((need, vec![&need.needed])),
        }
    }
    let loaded_when = |object: &str| {
        image
            .unresolved_objects
            .iter()
            .find(|known| known.object == object)
            .map_or(LoadedWhen::OnDemand, |known| known.loaded)
    };
    let header = "<tr><th>object</th><th>needs, not found</th><th>layer</th></tr>";
    for group in [
        LoadedWhen::AtStart,
        LoadedWhen::Backend,
        LoadedWhen::OnDemand,
        LoadedWhen::ThroughDependency,
        LoadedWhen::OtherMachine,
    ] {
        let rows: Vec<&(&UnresolvedNeed, Vec<&str>)> = objects
            .iter()
            .filter(|(need, _)| loaded_when(&need.object) == group)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let (class, what) = match group {
            LoadedWhen::AtStart => (
                "problem",
                "loaded at start: the program or import that loads it fails",
            ),
            LoadedWhen::Backend => (
                "problem",
                "a GPU backend plugin: the framework runs on the CPU",
            ),
            LoadedWhen::OnDemand => (
                "muted",
                "loaded only on demand: only the feature that opens it fails",
            ),
            LoadedWhen::ThroughDependency => (
                "muted",
                "loaded after a package imported first, which provides what it misses: it loads",
            ),
            LoadedWhen::OtherMachine => ("muted", "built for another machine: never loaded here"),
        };
        writeln!(
            html,
            "<p class=\"{class} loading-group\" data-loading=\"{slug}\" data-objects=\"{count}\">{count} {objects}, {what}:</p>",
            slug = slug(group),
            count = rows.len(),
            objects = if rows.len() == 1 { "object" } else { "objects" },
        )?;
        let row = |(need, needs): &&(&UnresolvedNeed, Vec<&str>)| {
            let needs: Vec<String> = needs
                .iter()
                .map(|soname| format!("<code>{}</code>", xml_text(soname)))
                .collect();
            format!(
                "<tr class=\"unresolved-object\" data-path=\"{path_attr}\" data-loading=\"{slug}\"><td><code>{path}</code></td>\
                 <td>{needs}</td><td class=\"num\">{layer}</td></tr>",
                path_attr = xml_attr(&need.object),
                path = xml_text(&need.object),
                slug = slug(group),
                needs = needs.join(" "),
                layer = need.layer + 1,
            )
        };
        write_long_table(html, header, &rows, row, |rest| {
            format!("{} more", rest.len())
        })?;
    }
    html.push_str("</div>\n");
    Ok(())
}

/// The `data-loading` value of a group: the JSON's name for it.
fn slug(loaded: LoadedWhen) -> &'static str {
    match loaded {
        LoadedWhen::AtStart => "at-start",
        LoadedWhen::Backend => "backend",
        LoadedWhen::OnDemand => "on-demand",
        LoadedWhen::ThroughDependency => "through-dependency",
        LoadedWhen::OtherMachine => "other-machine",
    }
}

/// A table of `rows` that may be long (thousands of dead copies in a real image): the first
/// [`SHOWN_ROWS`] in view, the next up to [`MAX_ROWS`] behind a `<details>` that `more` names, and
/// a line for the rest, which `--format json` lists.
fn write_long_table<T>(
    html: &mut String,
    header: &str,
    rows: &[T],
    row: impl Fn(&T) -> String,
    more: impl Fn(&[T]) -> String,
) -> fmt::Result {
    let shown = rows.len().min(SHOWN_ROWS);
    writeln!(html, "<table>\n{header}")?;
    for item in &rows[..shown] {
        writeln!(html, "{}", row(item))?;
    }
    html.push_str("</table>\n");
    if rows.len() > shown {
        let listed = rows.len().min(MAX_ROWS);
        writeln!(
            html,
            "<details class=\"more\"><summary>{}</summary>\n<table>\n{header}",
            xml_text(&more(&rows[shown..]))
        )?;
        for item in &rows[shown..listed] {
            writeln!(html, "{}", row(item))?;
        }
        html.push_str("</table>\n");
        if rows.len() > listed {
            writeln!(
                html,
                "<p class=\"muted\">…and {} more; <code>--format json</code> lists them all.</p>",
                rows.len() - listed
            )?;
        }
        html.push_str("</details>\n");
    }
    Ok(())
}
