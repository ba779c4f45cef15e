//! Fixture files shared by the rule harness (`tests/rules.rs`) and the fix
//! round trip (`tests/fixes.rs`): where they live, the options a fixture
//! asks for in its `# cudalint-test:` first line, and linting one.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use cudalint::diagnostic::Diagnostic;
use cudalint::dockerfile::platform::Platform;
use cudalint::engine::{Engine, EngineOptions};
use cudalint::source::SourceFile;

/// A fixture's first line may start with this, followed by flags.
pub const OPTIONS_PREFIX: &str = "# cudalint-test:";

/// The platform a fixture is built for unless it says `--platform`.
pub const FIXTURE_PLATFORM: &str = "linux/amd64";

/// `fixtures/dockerfile/<code>`.
pub fn fixtures_dir(code: &str) -> PathBuf {
    fixtures_root().join(code)
}

/// `fixtures/dockerfile`.
pub fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/dockerfile")
}

/// Engine options from a fixture's `# cudalint-test:` first line:
/// `--build-arg K=V --target STAGE --platform OS/ARCH --targets A,B
/// --driver VERSION --gpu NAME`.
pub fn fixture_options(text: &str) -> EngineOptions {
    let mut options = EngineOptions::default();
    // Fixtures are judged for one platform whatever machine runs them.
    options.build.platform = Some(Platform::parse(FIXTURE_PLATFORM).unwrap());
    let Some(line) = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix(OPTIONS_PREFIX))
    else {
        return options;
    };
    let mut words = line.split_whitespace();
    while let Some(flag) = words.next() {
        let value = words
            .next()
            .unwrap_or_else(|| panic!("`{flag}` needs a value in `{line}`"))
            .to_string();
        match flag {
            "--build-arg" => {
                let (key, value) = value.split_once('=').expect("--build-arg K=V");
                options
                    .build
                    .build_args
                    .push((key.to_string(), value.to_string()));
            }
            "--target" => options.build.target = Some(value),
            "--platform" => options.build.platform = Some(Platform::parse(&value).unwrap()),
            "--driver" => options.settings.target_driver = Some(value),
            // `targets = [...]` of .cudalint.toml, comma-separated.
            "--targets" => options
                .settings
                .targets
                .extend(value.split(',').map(str::to_string)),
            "--gpu" => options.settings.target_gpus.push(value),
            other => panic!("unknown fixture option `{other}`"),
        }
    }
    options
}

/// The engine a fixture asks for.
pub fn fixture_engine(text: &str) -> Engine {
    Engine::new(fixture_options(text))
}

/// A fixture read from disk, named by its file name.
pub fn fixture_source(path: &Path) -> SourceFile {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    SourceFile::new(name, text)
}

/// A fixture and its findings under the options it asks for.
/// The date fixtures are judged on.
pub const FIXTURE_TODAY: &str = "2026-11-23";

pub fn lint_fixture(path: &Path) -> (SourceFile, Vec<Diagnostic>) {
    // EOL and deletion depend on the date: fixtures are judged as of the
    // day the knowledge was checked.
    std::env::set_var(cudalint::knowledge::clock::TODAY_VAR, FIXTURE_TODAY);
    let source = fixture_source(path);
    let mut options = fixture_options(&source.text);
    options.context = fixture_context(path);
    let findings = Engine::new(options).lint_source(&source);
    (source, findings)
}

/// A fixture's build context (where `COPY requirements.txt .` reads from):
/// the directory beside it named after it, `fail_x.Dockerfile` →
/// `fail_x.context/`; none when there is no such directory.
pub fn fixture_context(path: &Path) -> Option<PathBuf> {
    let stem = path.file_stem()?.to_string_lossy().into_owned();
    let dir = path.with_file_name(format!("{stem}.context"));
    dir.is_dir().then_some(dir)
}

/// `fixtures/dockerfile/<code>/<prefix>*.Dockerfile`, sorted.
pub fn fixtures(code: &str, prefix: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(fixtures_dir(code)) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.starts_with(prefix) && name.ends_with(".Dockerfile")
        })
        .collect();
    paths.sort();
    paths
}

/// Every rule directory under `fixtures/dockerfile`, sorted.
pub fn fixture_codes() -> Vec<String> {
    let mut codes: Vec<String> = std::fs::read_dir(fixtures_root())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    codes.sort();
    codes
}
