//! `cudalint server` through real clients: runs the pytest-lsp suite in
//! tests/lsp/ (and its Neovim test) against the binary under test. The
//! clients come from `scripts/lsp-test-env up` (a venv with pytest-lsp under
//! .cache/lsp-test/, Debian's neovim); without them the test says so and
//! passes, except under CI=true, where it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

/// KEY=VALUE lines of .cache/lsp-test/env.
fn test_env(root: &Path) -> Option<Vec<(String, String)>> {
    let text = std::fs::read_to_string(root.join(".cache/lsp-test/env")).ok()?;
    Some(
        text.lines()
            .filter_map(|line| line.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

#[test]
fn lsp_clients_pass_the_pytest_suite() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let Some(env) = test_env(&root) else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true and .cache/lsp-test/env is missing: run scripts/lsp-test-env up"
        );
        eprintln!("NOTICE: LSP client tests skipped: run scripts/lsp-test-env up");
        return;
    };
    let python = env
        .iter()
        .find(|(k, _)| k == "CUDALINT_LSP_PYTHON")
        .map(|(_, v)| v.clone())
        .expect("CUDALINT_LSP_PYTHON in .cache/lsp-test/env");
    let status = Command::new(python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/lsp"])
        .current_dir(&root)
        .envs(env)
        .env("CUDALINT_BIN", env!("CARGO_BIN_EXE_cudalint"))
        .status()
        .expect("cannot run pytest");
    // pytest: 0 all passed, 1 some failed, 5 none collected (a broken
    // suite, never a pass).
    match status.code() {
        Some(0) => {}
        Some(5) => panic!("pytest collected no tests in tests/lsp"),
        other => panic!("the LSP client tests failed (pytest exit {other:?}; output above)"),
    }
}
