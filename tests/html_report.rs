//! The HTML report (`--format html`) as a browser shows it. Each page is loaded in headless
//! Chromium (`scripts/html-test-env up`), and the DOM it builds is checked against `--format json`
//! of the same input: the page logs nothing to the console, loads nothing, draws one treemap per
//! image whose parts carry the JSON breakdown's bytes (and whose areas match them), one bar per
//! layer with the JSON's bytes and the exact history line, the JSON's minimum drivers and
//! inventory, every finding with its message, help, notes and location, and a data block equal to
//! the JSON. Fixture images: devel-content and mixed-runtimes (docker-archive), an unpacked
//! filesystem whose paths, history and labels are made of markup, and Dockerfiles (`lint`).

mod support;

#[path = "support/html_env.rs"]
mod html_env;
#[path = "support/image_env.rs"]
mod image_env;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output};

use cudalint::render::Format;
use html_env::Chromium;
use image_env::ImageEnv;
use scraper::{ElementRef, Html, Selector};
use serde_json::Value;

const TEST: &str = "html_report";

/// The chart's drawing area is `viewBox`; each part's rectangle is drawn 1 unit inside its cell
/// (the CUDA devel categories 2), so drawn areas fall short of exact by about a perimeter.
const AREA_TOLERANCE: f64 = 0.015;

fn cudalint(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cudalint"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// The JSON and the HTML report of the same command, which must exit alike.
fn json_and_html(args: &[&str]) -> (Value, String) {
    let json = cudalint(&[args, &["--format", "json"]].concat());
    let html = cudalint(&[args, &["--format", "html"]].concat());
    assert_eq!(
        json.status.code(),
        html.status.code(),
        "{args:?}: the formats exit differently; stderr:\n{}",
        String::from_utf8_lossy(&html.stderr)
    );
    assert!(
        matches!(html.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&html.stderr)
    );
    let json = serde_json::from_slice(&json.stdout).expect("--format json is JSON");
    (json, String::from_utf8(html.stdout).expect("UTF-8"))
}

fn all<'a>(scope: ElementRef<'a>, css: &str) -> Vec<ElementRef<'a>> {
    let selector = Selector::parse(css).unwrap_or_else(|_| panic!("bad selector {css}"));
    scope.select(&selector).collect()
}

fn one<'a>(scope: ElementRef<'a>, css: &str) -> ElementRef<'a> {
    let found = all(scope, css);
    assert_eq!(
        found.len(),
        1,
        "expected one `{css}`, found {}",
        found.len()
    );
    found[0]
}

fn attr<'a>(element: ElementRef<'a>, name: &str) -> &'a str {
    element
        .value()
        .attr(name)
        .unwrap_or_else(|| panic!("<{}> has no {name}", element.value().name()))
}

fn number(element: ElementRef<'_>, name: &str) -> u64 {
    attr(element, name)
        .parse()
        .unwrap_or_else(|_| panic!("{name}={:?} is not a number", attr(element, name)))
}

fn float(element: ElementRef<'_>, name: &str) -> f64 {
    attr(element, name).parse().unwrap()
}

fn text(element: ElementRef<'_>) -> String {
    element.text().collect()
}

/// Text from a rule or the input as the page shows it: `code spans` set as code (their backticks
/// gone, when they pair up), characters HTML cannot carry replaced, line ends as the HTML parser
/// reads them.
fn shown(text: &str) -> String {
    let text = if text.matches('`').count().is_multiple_of(2) {
        text.replace('`', "")
    } else {
        text.to_owned()
    };
    line_ends(&text)
        .chars()
        .map(|c| {
            let forbidden = matches!(c, '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}');
            if forbidden {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

fn line_ends(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

fn str_of(value: &Value) -> &str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("{value} is not a string"))
}

/// Loads `html` in Chromium, checks that the page said nothing on the console and loads
/// nothing, and returns its DOM.
fn render(chromium: &Chromium, name: &str, html: &str) -> Html {
    let page = chromium.scratch().join(format!("{name}.html"));
    std::fs::write(&page, html).unwrap();
    let rendered = chromium.render(&page);
    assert!(
        rendered.console.is_empty(),
        "{name}: the page logged to the console:\n{}",
        rendered.console.join("\n")
    );
    let dom = Html::parse_document(&rendered.dom);
    let root = dom.root_element();
    let csp = one(root, "meta[http-equiv=\"Content-Security-Policy\"]");
    assert!(attr(csp, "content").starts_with("default-src 'none'"));
    for element in all(root, "*") {
        for (name, _) in element.value().attrs() {
            assert!(
                !matches!(name, "src" | "srcset" | "poster" | "data" | "action"),
                "<{}> loads something: {name}",
                element.value().name()
            );
        }
    }
    assert!(all(root, "link, iframe, object, embed, img, video, audio").is_empty());
    for script in all(root, "script") {
        assert_eq!(
            attr(script, "type"),
            "application/json",
            "only data, no code"
        );
    }
    dom
}

/// Every finding of the JSON is on the page, once, with its code, severity, message, location,
/// help and notes as the JSON gives them.
fn check_findings(dom: &Html, json: &Value) {
    type Shown = (String, String, String, String, Option<String>, Vec<String>);
    let mut expected: Vec<Shown> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| {
            let location = &finding["location"];
            let origin = str_of(&finding["origin"]);
            let place = match str_of(&location["kind"]) {
                "source" => format!("{origin}:{}:{}", location["line"], location["column"]),
                "image" => location["path"].as_str().unwrap_or("").to_owned(),
                _ => origin.to_owned(),
            };
            (
                str_of(&finding["code"]).to_owned(),
                str_of(&finding["severity"]).to_owned(),
                shown(str_of(&finding["message"])),
                shown(&place),
                finding["help"].as_str().map(shown),
                finding["notes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|note| shown(str_of(note)))
                    .collect(),
            )
        })
        .collect();
    let mut on_page: Vec<Shown> = all(dom.root_element(), "li.finding")
        .into_iter()
        .map(|item| {
            let trailer: Vec<(String, String)> = all(item, "dl.trailer > div")
                .into_iter()
                .map(|row| {
                    (
                        line_ends(&text(one(row, "dt"))),
                        line_ends(&text(one(row, "dd"))),
                    )
                })
                .collect();
            let labelled = |label: &str| -> Vec<String> {
                trailer
                    .iter()
                    .filter(|(dt, _)| dt == label)
                    .map(|(_, dd)| dd.clone())
                    .collect()
            };
            let place = all(one(item, ".where"), ".place")
                .first()
                .map(|code| line_ends(&text(*code)))
                .unwrap_or_default();
            assert_eq!(text(one(item, ".code")), attr(item, "data-code"));
            assert_eq!(text(one(item, ".sev")), attr(item, "data-severity"));
            (
                attr(item, "data-code").to_owned(),
                attr(item, "data-severity").to_owned(),
                line_ends(&text(one(item, ".message"))),
                place,
                labelled("help").into_iter().next(),
                labelled("note"),
            )
        })
        .collect();
    assert_eq!(on_page.len(), expected.len(), "one entry per finding");
    expected.sort();
    on_page.sort();
    for (page, json) in on_page.iter().zip(&expected) {
        assert_eq!(page, json);
    }
    let tally = one(dom.root_element(), "p.tally");
    assert_eq!(number(tally, "data-findings"), json["summary"]["findings"]);
}

/// Each image's treemap, legend, layer bars, minimum drivers and inventory against the JSON.
fn check_images(dom: &Html, json: &Value) {
    let images = json["images"].as_array().unwrap();
    let sections = all(dom.root_element(), "section.input.image");
    assert_eq!(sections.len(), images.len(), "one section per image");
    for (section, image) in sections.into_iter().zip(images) {
        assert_eq!(attr(section, "data-input"), str_of(&image["reference"]));
        check_treemap(section, image);
        check_layers(section, image);
        check_drivers(section, image);
        let libraries: BTreeSet<&str> = all(section, "tr.library")
            .into_iter()
            .map(|row| attr(row, "data-path"))
            .collect();
        let expected: BTreeSet<&str> = image["inventory"]["libraries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|library| str_of(&library["path"]))
            .collect();
        assert_eq!(libraries, expected, "the inventory's CUDA libraries");
        let unresolved: BTreeSet<&str> = all(section, "tr.unresolved-object")
            .into_iter()
            .map(|row| attr(row, "data-path"))
            .collect();
        let expected: BTreeSet<&str> = image["unresolved_libraries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|need| str_of(&need["object"]))
            .collect();
        assert_eq!(
            unresolved, expected,
            "the objects with unresolved libraries"
        );
        check_loading_groups(section, image);
    }
}

/// The unresolved objects are grouped as the JSON classifies them, and only the groups that break a
/// start or a GPU backend are shown as problems.
fn check_loading_groups(section: ElementRef<'_>, image: &Value) {
    let on_page: BTreeMap<&str, &str> = all(section, "tr.unresolved-object")
        .into_iter()
        .map(|row| (attr(row, "data-path"), attr(row, "data-loading")))
        .collect();
    let expected: BTreeMap<&str, &str> = image["unresolved_objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|object| (str_of(&object["object"]), str_of(&object["loaded"])))
        .collect();
    assert_eq!(
        on_page, expected,
        "each unresolved object in its loading group"
    );
    for group in all(section, "p.loading-group") {
        let loading = attr(group, "data-loading");
        let members = expected
            .values()
            .filter(|loaded| **loaded == loading)
            .count();
        assert_eq!(
            number(group, "data-objects"),
            members as u64,
            "the {loading} group's count"
        );
        let problem = group.value().classes().any(|class| class == "problem");
        assert_eq!(
            problem,
            matches!(loading, "at-start" | "backend"),
            "the {loading} group is shown as a problem only when it breaks a start or a backend"
        );
    }
}

fn check_treemap(section: ElementRef<'_>, image: &Value) {
    let breakdown = image["breakdown"].as_object().unwrap();
    let total = breakdown["total"].as_u64().unwrap();
    let parts: BTreeMap<&str, u64> = breakdown
        .iter()
        .filter(|(key, _)| *key != "total")
        .map(|(key, bytes)| (key.as_str(), bytes.as_u64().unwrap()))
        .collect();
    assert_eq!(parts.len(), 7, "the JSON breakdown has seven parts");
    assert_eq!(parts.values().sum::<u64>(), total);

    // The legend lists every part, drawn or not.
    let legend: BTreeMap<&str, u64> = all(section, "tr.legend-part")
        .into_iter()
        .map(|row| (attr(row, "data-part"), number(row, "data-bytes")))
        .collect();
    assert_eq!(legend, parts);
    assert_eq!(number(one(section, "tr.legend-total"), "data-bytes"), total);

    let svg = one(section, "svg.treemap");
    assert_eq!(number(svg, "data-total"), total);
    let view: Vec<f64> = attr(svg, "viewBox")
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    let chart_area = view[2] * view[3];
    let drawn: BTreeMap<&str, u64> = all(svg, "g.part")
        .into_iter()
        .map(|group| (attr(group, "data-part"), number(group, "data-bytes")))
        .collect();
    let nonzero: BTreeMap<&str, u64> = parts
        .iter()
        .filter(|(_, bytes)| **bytes > 0)
        .map(|(key, bytes)| (*key, *bytes))
        .collect();
    assert_eq!(drawn, nonzero, "the treemap draws each part with bytes");
    for group in all(svg, "g.part") {
        let rects = all(group, "rect");
        assert!(!rects.is_empty());
        // Each rectangle is drawn 1 unit inside its cell: add the margin back.
        let area: f64 = rects
            .iter()
            .map(|rect| (float(*rect, "width") + 2.0) * (float(*rect, "height") + 2.0))
            .sum();
        let expected = chart_area * number(group, "data-bytes") as f64 / total as f64;
        assert!(
            (area - expected).abs() <= AREA_TOLERANCE * chart_area,
            "{}: drawn area {area:.0}, its bytes give {expected:.0}",
            attr(group, "data-part")
        );
    }
    // The devel rectangle is divided into the devel categories with bytes.
    let categories: BTreeMap<&str, u64> = all(svg, "g.part[data-part=cuda_devel] g.category")
        .into_iter()
        .map(|group| (attr(group, "data-category"), number(group, "data-bytes")))
        .collect();
    let devel: BTreeMap<&str, u64> = image["devel_bytes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| (str_of(&pair[0]), pair[1].as_u64().unwrap()))
        .filter(|(_, bytes)| *bytes > 0)
        .collect();
    if parts["cuda_devel"] > 0 && devel.values().sum::<u64>() == parts["cuda_devel"] {
        assert_eq!(categories, devel);
    }
}

fn check_layers(section: ElementRef<'_>, image: &Value) {
    let layers = image["layers"].as_array().unwrap();
    let rows = all(section, "li.layer");
    assert_eq!(rows.len(), layers.len(), "one bar per layer");
    let largest = layers
        .iter()
        .map(|layer| layer["bytes_added"].as_u64().unwrap())
        .max()
        .unwrap_or(0)
        .max(1);
    for (row, layer) in rows.into_iter().zip(layers) {
        let added = layer["bytes_added"].as_u64().unwrap();
        assert_eq!(
            number(row, "data-layer"),
            layer["index"].as_u64().unwrap() + 1
        );
        assert_eq!(number(row, "data-bytes-added"), added);
        assert_eq!(number(row, "data-bytes-wasted"), layer["bytes_wasted"]);
        assert_eq!(number(row, "data-files-added"), layer["files_added"]);
        // The full history line, exactly, whatever it holds.
        assert_eq!(
            attr(one(row, "code.cmd"), "title"),
            line_ends(layer["created_by"].as_str().unwrap_or(""))
        );
        let style = attr(one(row, ".fill"), "style");
        let width: f64 = style
            .strip_prefix("width:")
            .and_then(|rest| rest.strip_suffix('%'))
            .unwrap_or_else(|| panic!("bar style {style:?}"))
            .parse()
            .unwrap();
        assert!((width - 100.0 * added as f64 / largest as f64).abs() < 0.01);
    }
}

fn check_drivers(section: ElementRef<'_>, image: &Value) {
    let expected: BTreeSet<(&str, &str, &str)> = image["runtime_drivers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|runtime| {
            (
                str_of(&runtime["path"]),
                str_of(&runtime["cuda"]),
                str_of(&runtime["min_driver"]),
            )
        })
        .collect();
    let rows = all(section, "tr.runtime[data-min-driver]");
    let shown: BTreeSet<(&str, &str, &str)> = rows
        .iter()
        .map(|row| {
            assert_eq!(text(one(*row, "td.driver")), attr(*row, "data-min-driver"));
            (
                attr(*row, "data-path"),
                attr(*row, "data-cuda"),
                attr(*row, "data-min-driver"),
            )
        })
        .collect();
    assert_eq!(shown, expected, "the minimum driver of each CUDA runtime");
    // Every CUDA runtime of the inventory has a row, known driver or not.
    let runtimes: BTreeSet<&str> = image["inventory"]["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|library| library["family"] == "cuda_runtime")
        .map(|library| str_of(&library["path"]))
        .collect();
    let listed: BTreeSet<&str> = all(section, "tr.runtime")
        .into_iter()
        .map(|row| attr(row, "data-path"))
        .collect();
    assert_eq!(listed, runtimes);
    // The headline is the highest of them.
    let version =
        |text: &str| -> Vec<u64> { text.split('.').map(|n| n.parse().unwrap()).collect() };
    let highest = expected
        .iter()
        .map(|(_, _, driver)| *driver)
        .max_by_key(|driver| version(driver));
    let headline = all(section, ".drivers .headline");
    match highest {
        Some(driver) => assert_eq!(
            attr(one(section, ".drivers .headline"), "data-min-driver"),
            driver
        ),
        None => assert!(headline.is_empty()),
    }
}

/// The data block holds the JSON's numbers under the JSON's names.
fn check_data(dom: &Html, json: &Value) {
    let script = one(dom.root_element(), "script#cudalint-data");
    let data: Value = serde_json::from_str(&text(script)).expect("the data block is JSON");
    assert_eq!(data["version"], 1);
    for key in ["findings", "error", "warning", "info", "style", "inputs"] {
        assert_eq!(data["summary"][key], json["summary"][key], "summary.{key}");
    }
    let findings = |value: &Value| -> Vec<Value> {
        value
            .as_array()
            .unwrap()
            .iter()
            .map(|finding| {
                serde_json::json!([
                    finding["code"],
                    finding["severity"],
                    finding["origin"],
                    finding["message"]
                ])
            })
            .collect()
    };
    assert_eq!(findings(&data["findings"]), findings(&json["findings"]));
    let images = json["images"].as_array().unwrap();
    assert_eq!(data["images"].as_array().unwrap().len(), images.len());
    for (shown, image) in data["images"].as_array().unwrap().iter().zip(images) {
        for key in ["reference", "breakdown", "devel_bytes", "runtime_drivers"] {
            assert_eq!(shown[key], image[key], "images[].{key}");
        }
        let layers: Vec<Value> = image["layers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|layer| {
                serde_json::json!({
                    "index": layer["index"],
                    "bytes_added": layer["bytes_added"],
                    "bytes_wasted": layer["bytes_wasted"],
                    "files_added": layer["files_added"],
                })
            })
            .collect();
        assert_eq!(shown["layers"], Value::Array(layers));
    }
}

fn check_page(dom: &Html, json: &Value) {
    check_findings(dom, json);
    check_images(dom, json);
    check_data(dom, json);
}

/// A PNG's width and height, from its IHDR chunk.
fn png_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&png[12..16], b"IHDR");
    let word = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    (word(16), word(20))
}

#[test]
fn image_reports_render_in_chromium_and_match_the_json() {
    let Some(env) = ImageEnv::get(TEST) else {
        return;
    };
    let Some(chromium) = Chromium::get(TEST) else {
        return;
    };
    for fixture in [
        "devel-content",
        "mixed-runtimes",
        "backend-plugin-missing",
        "cupy-optional-module",
    ] {
        let reference = format!(
            "docker-archive:{}",
            env.fixture(fixture).docker_archive.display()
        );
        let (json, html) = json_and_html(&["image", &reference]);
        assert!(
            !json["findings"].as_array().unwrap().is_empty(),
            "{fixture} has findings to show"
        );
        let dom = render(&chromium, fixture, &html);
        check_page(&dom, &json);
        assert_eq!(all(dom.root_element(), "svg.treemap").len(), 1);

        // A screenshot as a person sees it, kept under target/ for a look.
        let page = chromium.scratch().join(format!("{fixture}.html"));
        let png = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("html-report-{fixture}.png"));
        let console = chromium.screenshot(&page, &png, 1280, 1600);
        assert!(console.is_empty(), "{console:?}");
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(png_size(&bytes), (1280, 1600));
        // A blank 1280×1600 page compresses to a few kB; the report's colours and text do not.
        assert!(
            bytes.len() > 40_000,
            "{} looks blank ({} bytes)",
            png.display(),
            bytes.len()
        );
    }
}

/// An image whose paths, history line, environment and labels are markup: all of it shows as the
/// text it is, and none of it becomes an element.
#[test]
fn markup_from_the_image_stays_text() {
    let Some(chromium) = Chromium::get(TEST) else {
        return;
    };
    let root = chromium.scratch().join("rootfs");
    let odd_dirs = ["<img src=x onerror=alert(1)>", "\"q'&amp;</script>"];
    for dir in odd_dirs {
        let dir = root.join("opt").join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("libcudart.so.12"), b"not an ELF object").unwrap();
    }
    let history = "/bin/sh -c echo '</script><script>alert(1)</script>' \"&amp;\" <!-- > /x";
    let config = serde_json::json!({
        "architecture": "amd64",
        "os": "linux",
        "config": {
            "Env": ["NVIDIA_VISIBLE_DEVICES=</td><b>all</b>", "CUDA_VERSION=12.4.1"],
            "Labels": {"com.nvidia.note": "\"'<&>]]>"}
        },
        "history": [{"created_by": history}],
        "rootfs": {"type": "layers", "diff_ids": [format!("sha256:{}", "0".repeat(64))]}
    });
    let config_path = chromium.scratch().join("config.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let reference = format!("rootfs:{}", root.display());
    let (json, html) = json_and_html(&[
        "image",
        &reference,
        "--image-config",
        config_path.to_str().unwrap(),
    ]);
    let dom = render(&chromium, "markup", &html);
    check_page(&dom, &json);
    let page = dom.root_element();
    assert!(
        all(page, "b, td b").is_empty(),
        "markup from the image became elements"
    );
    let runtimes: BTreeSet<String> = all(page, "tr.runtime code").into_iter().map(text).collect();
    for dir in odd_dirs {
        assert!(
            runtimes.contains(&format!("/opt/{dir}/libcudart.so.12")),
            "{runtimes:?}"
        );
    }
    let environment: Vec<String> = all(page, "table.pairs code")
        .into_iter()
        .map(text)
        .collect();
    assert!(
        environment.contains(&"</td><b>all</b>".to_owned()),
        "{environment:?}"
    );
    assert!(
        environment.contains(&"\"'<&>]]>".to_owned()),
        "{environment:?}"
    );
}

/// `lint --format html`: the findings of each Dockerfile with their snippets, no image cards.
#[test]
fn dockerfile_reports_show_the_findings_alone() {
    let Some(chromium) = Chromium::get(TEST) else {
        return;
    };
    let dockerfile = chromium.scratch().join("Dockerfile");
    std::fs::write(&dockerfile, support::DOCKERFILE).unwrap();
    let clean = chromium.scratch().join("clean.Dockerfile");
    std::fs::write(
        &clean,
        "# syntax=docker/dockerfile:1\nFROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n",
    )
    .unwrap();
    let (json, html) = json_and_html(&[dockerfile.to_str().unwrap(), clean.to_str().unwrap()]);
    assert!(!json["findings"].as_array().unwrap().is_empty());
    let dom = render(&chromium, "lint", &html);
    check_page(&dom, &json);
    let page = dom.root_element();
    assert!(all(page, "svg, section.image, .layers, .drivers").is_empty());
    assert_eq!(
        all(page, "section.input.file").len(),
        2,
        "the clean file is listed too"
    );
    for item in all(page, "li.finding") {
        let snippet = one(item, "pre.snippet");
        assert!(!all(snippet, "mark").is_empty(), "the span is marked");
    }

    // Every location kind and every escaping hazard, through the library's renderer.
    let fixture = support::with_failed_inputs(support::full());
    let json: Value =
        serde_json::from_str(&support::rendered(Format::Json, &fixture, false)).unwrap();
    let dom = render(
        &chromium,
        "hazards",
        &support::rendered(Format::Html, &fixture, false),
    );
    check_page(&dom, &json);
    let failed: Vec<String> = all(dom.root_element(), "li.failed-input")
        .into_iter()
        .map(|item| attr(item, "data-name").to_owned())
        .collect();
    let expected: Vec<String> = json["failed_inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|input| str_of(&input["name"]).to_owned())
        .collect();
    assert_eq!(failed, expected);
}

/// The console check above can fail: a page with a script error and a blocked load is caught.
#[test]
fn console_messages_are_caught() {
    let Some(chromium) = Chromium::get(TEST) else {
        return;
    };
    let page = chromium.scratch().join("noisy.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" \
         content=\"default-src 'none'; script-src 'unsafe-inline'\"></head><body>\
         <img src=\"https://cudalint.invalid/x.png\"><script>notDefined();</script></body></html>",
    )
    .unwrap();
    let rendered = chromium.render(&page);
    let console = rendered.console.join("\n");
    assert!(console.contains("notDefined"), "{console}");
    assert!(console.contains("Content Security Policy"), "{console}");
}
