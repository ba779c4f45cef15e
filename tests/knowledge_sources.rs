//! Every fact cudalint ships names a source a user can open, and no output
//! or doc carries the project's private working-note codes.

use std::path::{Path, PathBuf};

/// A URL, `owner/repo@rev:path`, or a statement of what was checked on a
/// real system (`checked in nvidia/cuda:…: \`cmd\``).
fn is_public_citation(source: &str) -> bool {
    source.contains("https://")
        || source.contains("http://")
        || source.split_whitespace().any(is_repo_citation)
        || source.contains("checked")
}

/// `owner/repo@rev:path`.
fn is_repo_citation(word: &str) -> bool {
    let Some((repo, rest)) = word.split_once('@') else {
        return false;
    };
    let Some((rev, path)) = rest.split_once(':') else {
        return false;
    };
    let repo_ok = repo.split('/').count() == 2 && repo.split('/').all(|p| !p.is_empty());
    repo_ok
        && !rev.is_empty()
        && rev
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-_".contains(c))
        && !path.is_empty()
}

/// The private codes of the project's working notes.
fn private_reference(text: &str) -> Option<&'static str> {
    const CODES: &[&str] = &[
        "cuda-packaging.md",
        "KB §",
        "[S]",
        "[V]",
        "[D]",
        "[U]",
        "[S:",
        "[V:",
        "[U ",
        "RN3",
        "source key",
    ];
    if let Some(code) = CODES.iter().find(|c| text.contains(*c)) {
        return Some(code);
    }
    // The source keys as words: IMG, DEV (not inside other words).
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| *w == "IMG" || *w == "DEV" || *w == "KB")
        .map(|_| "IMG/DEV/KB")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files(&path, ext));
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
    out.sort();
    out
}

fn sources(value: &toml::Value, at: &str, out: &mut Vec<(String, String)>) {
    match value {
        toml::Value::Table(table) => {
            for (key, v) in table {
                match v {
                    toml::Value::String(s) if key.contains("source") => {
                        out.push((format!("{at}.{key}"), s.clone()))
                    }
                    _ => sources(v, &format!("{at}.{key}"), out),
                }
            }
        }
        toml::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                sources(v, &format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_source_in_the_knowledge_is_public() {
    let mut problems = Vec::new();
    let mut count = 0;
    for path in files(&root().join("rules"), "toml") {
        let text = std::fs::read_to_string(&path).unwrap();
        let doc: toml::Value = toml::from_str(&text).unwrap();
        let mut found = Vec::new();
        sources(&doc, "", &mut found);
        count += found.len();
        for (key, source) in found {
            if !is_public_citation(&source) {
                problems.push(format!(
                    "{}{key}: no URL or owner/repo@rev:path: {source}",
                    path.display()
                ));
            }
            if let Some(code) = private_reference(&source) {
                problems.push(format!(
                    "{}{key}: private reference `{code}`: {source}",
                    path.display()
                ));
            }
        }
        assert!(
            text.contains("checked = "),
            "{}: no `checked` date",
            path.display()
        );
    }
    assert!(
        count > 150,
        "only {count} sources found: the walk is broken"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_doc_message_or_snapshot_carries_private_codes() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for (dir, ext) in [
        ("docs", "md"),
        ("src", "rs"),
        ("tests/snapshots", "snap"),
        ("rules", "toml"),
    ] {
        for path in files(&root().join(dir), ext) {
            checked += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, line) in text.lines().enumerate() {
                if let Some(code) = private_reference(line) {
                    problems.push(format!("{}:{}: `{code}`: {line}", path.display(), n + 1));
                }
            }
        }
    }
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    if let Some(code) = private_reference(&readme) {
        problems.push(format!("README.md: `{code}`"));
    }
    assert!(checked > 50, "only {checked} files read");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_citation_check_tells_public_from_private() {
    assert!(is_public_citation("https://docs.nvidia.com/x"));
    assert!(is_public_citation(
        "pranavmishra90/nvidia-container-images-cuda@60a1c892:doc/README.md"
    ));
    assert!(is_public_citation(
        "checked in nvidia/cuda:13.0.2-cudnn-devel-ubuntu24.04 with `ldconfig -p`"
    ));
    assert!(!is_public_citation("cuda-packaging.md §3.1"));
    assert!(private_reference("RN3 Table 3 [U]").is_some());
    assert!(private_reference("IMG doc/supported-tags.md").is_some());
    assert!(private_reference("IMAGE and DEVICE").is_none());
}
