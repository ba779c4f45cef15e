//! The headless Chromium `scripts/html-test-env up` prepares for the HTML report tests (Debian's
//! `chromium`). Outside CI a missing browser skips the test with a visible notice; with `CI=true`
//! it fails, because CI must never pass by skipping the HTML tests.
//!
//! Each run gets a fresh profile, no sandbox (the tests run as root), no GPU, and no network
//! services of the browser's own (QUIC, background networking, component updates, sync), and its
//! log on stderr, where Chromium writes every console message of the page as a `CONSOLE` line.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A run longer than this is a hung browser, killed and reported.
const RUN_LIMIT: Duration = Duration::from_secs(120);

pub struct Chromium {
    pub executable: PathBuf,
    /// Profiles and outputs of the runs, removed on drop.
    scratch: PathBuf,
}

/// What Chromium made of a page.
pub struct Rendered {
    /// The DOM after load, serialised (`--dump-dom`).
    pub dom: String,
    /// The page's console messages (script errors, blocked loads, `console.*` calls), one per
    /// `CONSOLE` line of the log.
    pub console: Vec<String>,
}

impl Chromium {
    /// The prepared browser, or `None` (with a notice on stderr) when it is absent outside CI.
    pub fn get(test: &str) -> Option<Chromium> {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(".cache/html-test/env");
        let executable = std::fs::read_to_string(&file).ok().and_then(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix("CUDALINT_CHROMIUM="))
                .map(PathBuf::from)
        });
        let Some(executable) = executable.filter(|path| path.is_file()) else {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!(
                    "{test}: {} names no chromium: `scripts/html-test-env up` did not prepare the \
                     headless browser, and CI must not skip the HTML report tests",
                    file.display()
                );
            }
            eprintln!(
                "NOTICE {test}: skipped: no headless chromium (run `scripts/html-test-env up` as root)"
            );
            return None;
        };
        // One directory per browser: the tests of a binary run in parallel, in one process.
        static BROWSERS: AtomicUsize = AtomicUsize::new(0);
        let scratch = std::env::temp_dir().join(format!(
            "cudalint-chromium-{test}-{}-{}",
            std::process::id(),
            BROWSERS.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).unwrap();
        Some(Chromium {
            executable,
            scratch,
        })
    }

    /// A directory for this test's files (pages, screenshots), removed with the browser.
    pub fn scratch(&self) -> &Path {
        &self.scratch
    }

    /// Loads `page` and returns its DOM after load and its console messages.
    pub fn render(&self, page: &Path) -> Rendered {
        let (stdout, stderr) = self.run(page, &["--dump-dom"]);
        assert!(
            stdout.contains("</html>"),
            "chromium dumped no DOM for {}; its log:\n{stderr}",
            page.display()
        );
        Rendered {
            dom: stdout,
            console: console_lines(&stderr),
        }
    }

    /// Writes a `width`×`height` screenshot of `page` to `png`; returns the page's console messages.
    pub fn screenshot(&self, page: &Path, png: &Path, width: u32, height: u32) -> Vec<String> {
        let _ = std::fs::remove_file(png);
        let (_, stderr) = self.run(
            page,
            &[
                &format!("--screenshot={}", png.display()),
                &format!("--window-size={width},{height}"),
                "--hide-scrollbars",
            ],
        );
        assert!(
            png.is_file(),
            "chromium wrote no screenshot of {}; its log:\n{stderr}",
            page.display()
        );
        console_lines(&stderr)
    }

    /// One headless run over `page` with `extra` flags; stdout and stderr. Output goes to files,
    /// not pipes, so a chatty browser cannot block on a full pipe while it is waited for.
    fn run(&self, page: &Path, extra: &[&str]) -> (String, String) {
        let run = tempdir_in(&self.scratch);
        let stdout_path = run.join("stdout");
        let stderr_path = run.join("stderr");
        let page = std::fs::canonicalize(page).unwrap();
        let mut child = Command::new(&self.executable)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--enable-logging=stderr",
                "--v=0",
            ])
            .arg(format!("--user-data-dir={}", run.join("profile").display()))
            .args(extra)
            .arg(format!("file://{}", page.display()))
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout_path).unwrap())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {}: {error}", self.executable.display()));
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > RUN_LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "chromium did not finish {} in {RUN_LIMIT:?}",
                    page.display()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let stdout = std::fs::read_to_string(&stdout_path).unwrap();
        let stderr = std::fs::read_to_string(&stderr_path).unwrap();
        assert!(status.success(), "chromium failed ({status}):\n{stderr}");
        (stdout, stderr)
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// The console messages in a Chromium log: `[…:INFO:CONSOLE(12)] "message", source: … (12)`
/// (older builds) or `[…:INFO:CONSOLE:12] "message", source: …` (newer ones).
fn console_lines(log: &str) -> Vec<String> {
    log.lines()
        .filter(|line| line.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect()
}

fn tempdir_in(parent: &Path) -> PathBuf {
    for attempt in 0.. {
        let dir = parent.join(format!("run-{attempt}"));
        if std::fs::create_dir(&dir).is_ok() {
            return dir;
        }
    }
    unreachable!()
}
