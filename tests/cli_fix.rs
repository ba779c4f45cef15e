//! `cudalint fix` end to end: `--diff` shows the edits and touches nothing,
//! `--write` applies them so that linting the file again no longer reports
//! the fixed findings, and the exit codes README documents hold.

#[path = "support/cli.rs"]
mod cli_support;

use cli_support::{cudalint, cudalint_stdin, json_codes, stderr, stdout, TempDir};

/// Safe fixes of CU101 (runtime tag) and CU104 (apt lists, pip cache):
/// `python3 -m http.server` needs neither nvcc nor CUPTI.
const DEVEL_AND_CACHES: &str = "\
FROM nvidia/cuda:13.0.2-cudnn-devel-ubuntu24.04
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip
RUN pip install --break-system-packages numpy==2.1.3
CMD [\"python3\", \"-m\", \"http.server\"]
";

/// A safe CU111 fix: the platform is pinned, so the arch directory is known.
const CUPTI_DIR: &str = "\
FROM --platform=linux/arm64 nvidia/cuda:13.0.2-cudnn-runtime-ubuntu24.04
RUN apt-get update && apt-get install -y --no-install-recommends cuda-cupti-12-8 \\
    && rm -rf /var/lib/apt/lists/*
ENV LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64
";

/// Only CU104 (pip cache), a warning.
const PIP_CACHE: &str = "\
FROM nvidia/cuda:13.0.2-cudnn-runtime-ubuntu24.04
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip \\
    && rm -rf /var/lib/apt/lists/*
RUN pip install --break-system-packages numpy==2.1.3
";

/// A CU002 typo (error, unsafe fix only).
const TYPO: &str = "\
FROM nvidia/cuda:13.0.2-cudnn-runtime-ubuntu24.04 AS builder
RUN echo built > /out
FROM nvidia/cuda:13.0.2-cudnn-runtime-ubuntu24.04
COPY --from=buidler /out /out
";

#[test]
fn diff_prints_a_unified_diff_and_leaves_the_file_alone() {
    let dir = TempDir::new("fix-diff");
    let file = dir.write("Dockerfile", PIP_CACHE);
    let output = cudalint(&dir.0, &["fix", "--diff", "Dockerfile"]);
    let diff = stdout(&output);
    assert!(
        diff.starts_with("--- a/Dockerfile\n+++ b/Dockerfile\n@@ -1,4 +1,4 @@\n"),
        "{diff}"
    );
    assert!(diff.contains(
        "-RUN pip install --break-system-packages numpy==2.1.3\n\
         +RUN pip install --no-cache-dir --break-system-packages numpy==2.1.3\n"
    ));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), PIP_CACHE);
    assert!(stderr(&output).contains("would fix 1 finding(s), 0 remaining"));
    // Nothing would remain: 0, although linting the file as it is fails.
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(cudalint(&dir.0, &["Dockerfile"]).status.code(), Some(1));
    // `fix` without --write is the same dry run.
    assert_eq!(stdout(&cudalint(&dir.0, &["fix", "Dockerfile"])), diff);
}

#[test]
fn write_applies_safe_fixes_of_three_rules_and_relinting_is_clean() {
    let dir = TempDir::new("fix-write");
    let devel = dir.write("devel.Dockerfile", DEVEL_AND_CACHES);
    let cupti = dir.write("cupti.Dockerfile", CUPTI_DIR);
    let files = ["devel.Dockerfile", "cupti.Dockerfile"];
    let lint = |args: &[&str]| cudalint(&dir.0, &[&["--format", "json"], args, &files].concat());
    let mut codes = json_codes(&lint(&[]));
    codes.sort();
    codes.dedup();
    assert_eq!(codes, ["CU101", "CU104", "CU111"]);

    let written = cudalint(&dir.0, &[&["fix", "--write"], &files[..]].concat());
    assert_eq!(written.status.code(), Some(0), "{}", stderr(&written));
    assert_eq!(stdout(&written), "", "--write alone prints no diff");
    assert!(stderr(&written).contains("devel.Dockerfile: fixed 3 finding(s), 0 remaining"));
    assert!(stderr(&written).contains("cupti.Dockerfile: fixed 1 finding(s), 0 remaining"));
    let fixed_devel = std::fs::read_to_string(&devel).unwrap();
    assert_eq!(
        fixed_devel,
        "\
FROM nvidia/cuda:13.0.2-cudnn-runtime-ubuntu24.04
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir --break-system-packages numpy==2.1.3
CMD [\"python3\", \"-m\", \"http.server\"]
"
    );
    assert_eq!(
        std::fs::read_to_string(&cupti).unwrap(),
        CUPTI_DIR.replace(
            "/usr/local/cuda/extras/CUPTI/lib64",
            "/usr/local/cuda/targets/sbsa-linux/lib"
        )
    );

    let after = lint(&[]);
    assert_eq!(json_codes(&after), Vec::<String>::new());
    assert_eq!(after.status.code(), Some(0));

    // A second run finds nothing to do and leaves the files as they are.
    let again = cudalint(
        &dir.0,
        &[&["fix", "--write", "--diff"], &files[..]].concat(),
    );
    assert_eq!(
        (again.status.code(), stdout(&again)),
        (Some(0), String::new())
    );
    assert_eq!(std::fs::read_to_string(&devel).unwrap(), fixed_devel);
}

#[test]
fn exit_codes_follow_what_remains_after_fixing() {
    let dir = TempDir::new("fix-exit");
    let file = dir.write("Dockerfile", TYPO);
    // The CU002 error has only an unsafe fix: it remains, so 1.
    let safe = cudalint(&dir.0, &["fix", "--write", "Dockerfile"]);
    assert_eq!(safe.status.code(), Some(1));
    assert!(stderr(&safe).contains("(more with --unsafe-fixes)"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), TYPO);
    // The threshold applies as for `lint`.
    let lenient = cudalint(
        &dir.0,
        &["fix", "--failure-threshold", "none", "Dockerfile"],
    );
    assert_eq!(lenient.status.code(), Some(0));
    // With --unsafe-fixes the typo is fixed and nothing is left.
    let unsafe_fixes = cudalint(&dir.0, &["fix", "--write", "--unsafe-fixes", "Dockerfile"]);
    assert_eq!(unsafe_fixes.status.code(), Some(0));
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("COPY --from=builder /out /out"));
    // A file that cannot be read: 2.
    let missing = cudalint(&dir.0, &["fix", "nope.Dockerfile"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("nope.Dockerfile"));
}

#[test]
fn write_on_stdin_prints_the_whole_file_fixed_or_not() {
    let dir = TempDir::new("fix-stdin");
    let fixed = cudalint_stdin(&dir.0, &["fix", "--write", "-"], PIP_CACHE);
    assert_eq!(fixed.status.code(), Some(0));
    assert_eq!(
        stdout(&fixed),
        PIP_CACHE.replace("pip install", "pip install --no-cache-dir")
    );
    // Nothing to fix still gives the file back, not an empty stream.
    let clean = stdout(&fixed);
    let unchanged = cudalint_stdin(&dir.0, &["fix", "--write", "-"], &clean);
    assert_eq!(stdout(&unchanged), clean);
}
