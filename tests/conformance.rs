//! Conformance with BuildKit's own parser test data (moby/buildkit), read
//! from `../shared/conformance` or `$CUDALINT_CONFORMANCE_DIR` when present:
//! the 33 dump files must match byte for byte, the 4 negative files must
//! fail with a located error, and the 393 frontend test files must parse to
//! the instruction and heredoc counts BuildKit's parser finds.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use cudalint::dockerfile::{dump, parse_bytes, parse_syntax};

fn conformance_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("CUDALINT_CONFORMANCE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance"),
    };
    dir.join("buildkit").is_dir().then(|| dir.join("buildkit"))
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn text(path: &Path) -> String {
    String::from_utf8(fs::read(path).unwrap()).unwrap()
}

#[test]
fn buildkit_conformance() {
    let Some(root) = conformance_dir() else {
        let _ = writeln!(
            std::io::stderr(),
            "conformance: skipped (no ../shared/conformance and no CUDALINT_CONFORMANCE_DIR)"
        );
        return;
    };

    let mut failures = Vec::new();

    let testfiles = sorted_dirs(&root.join("testfiles"));
    let mut dumps_ok = 0;
    for dir in &testfiles {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let expected = text(&dir.join("result"));
        match parse_syntax(&text(&dir.join("Dockerfile"))) {
            Ok((dockerfile, _)) => {
                let got = dump(&dockerfile);
                if got == expected {
                    dumps_ok += 1;
                } else {
                    failures.push(format!(
                        "testfiles/{name}: dump differs\n--- expected\n{expected}--- got\n{got}"
                    ));
                }
            }
            Err(e) => failures.push(format!("testfiles/{name}: {e}")),
        }
    }

    let negatives = sorted_dirs(&root.join("testfiles-negative"));
    let mut negatives_ok = 0;
    for dir in &negatives {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let bytes = fs::read(dir.join("Dockerfile")).unwrap();
        match parse_bytes(&bytes) {
            Ok(_) => failures.push(format!("testfiles-negative/{name}: parsed without error")),
            Err(e) if e.span.start <= e.span.end && e.span.end <= bytes.len() => negatives_ok += 1,
            Err(e) => failures.push(format!(
                "testfiles-negative/{name}: span {:?} outside file",
                e.span
            )),
        }
    }

    let table = text(&root.join("frontend-tests.tsv"));
    let mut frontend_total = 0;
    let mut frontend_ok = 0;
    let mut strict_ok = 0;
    for row in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = row.split('\t').collect();
        let (file, instructions, heredocs) = (
            cols[0],
            cols[1].parse::<usize>().unwrap(),
            cols[2].parse::<usize>().unwrap(),
        );
        frontend_total += 1;
        let source = text(&root.join("frontend-tests").join(file));
        match parse_syntax(&source) {
            Ok((dockerfile, errors)) => {
                let got_heredocs: usize = dockerfile
                    .instructions
                    .iter()
                    .map(|i| i.heredocs.len())
                    .sum();
                if dockerfile.instructions.len() == instructions && got_heredocs == heredocs {
                    frontend_ok += 1;
                } else {
                    failures.push(format!(
                        "frontend-tests/{file}: {} instructions, {got_heredocs} heredocs; BuildKit: {instructions}, {heredocs}",
                        dockerfile.instructions.len()
                    ));
                }
                if errors.is_empty() {
                    strict_ok += 1;
                }
            }
            Err(e) => failures.push(format!("frontend-tests/{file}: {e}")),
        }
    }

    // Written straight to stderr so the figures show without --nocapture.
    let summary = format!(
        "conformance: testfiles {dumps_ok}/{}, negative {negatives_ok}/{}, frontend {frontend_ok}/{frontend_total} \
         ({strict_ok} also pass the instruction checks)",
        testfiles.len(),
        negatives.len()
    );
    let _ = writeln!(std::io::stderr(), "{summary}");
    assert!(
        failures.is_empty(),
        "{} conformance failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(
        (testfiles.len(), negatives.len(), frontend_total),
        (33, 4, 393)
    );
}
