//! In-process benchmark of the lint pipeline (parse, model, every rule,
//! engine), for the goals of issue 2: BuildKit's 393 frontend Dockerfiles in
//! one process, and one generated 10,000-instruction multi-stage file; and
//! for issue 25 (a language server lints on every pause in typing) the
//! growth curve: one-stage files of 2,502, 5,002, 10,002 and 20,002
//! instructions, a fifth of them `apt-get install` and a fifth `pip
//! install` (the files of `benches/lsp/generate.py scale`, which
//! `scripts/bench-lsp` times through the release CLI), each size's time, its
//! ratio to the size before and the growth exponent (1: linear), once with
//! the rules on the cores the engine takes and once on one thread.
//!
//! Run with `cargo bench --bench lint` (or `./scripts/bench`, which also
//! compares against hadolint). Prints the best and median time of repeated
//! passes, and the peak resident memory of the process.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use cudalint::dockerfile::{build_model, model::BuildOptions, parser::parse_bytes};
use cudalint::engine::{Engine, EngineOptions, RuleThreads};

// The same allocator as the `cudalint` binary, so the figures are the CLI's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this
    // too, without it, and then one pass is enough to show it still works.
    let passes = if std::env::args().any(|arg| arg == "--bench") {
        30
    } else {
        1
    };
    let time = |work: &mut dyn FnMut()| time(passes, work);
    let engine = Engine::new(EngineOptions::default());

    match corpus() {
        Some(files) => {
            let bytes: usize = files.iter().map(|(_, text)| text.len()).sum();
            let lint = time(&mut || {
                for (name, text) in &files {
                    black_box(engine.lint_bytes(name.clone(), text));
                }
            });
            let parse = time(&mut || {
                for (_, text) in &files {
                    black_box(parse_bytes(text).ok());
                }
            });
            report(
                &format!("{} frontend files ({bytes} bytes), lint", files.len()),
                lint,
            );
            report(
                &format!("{} frontend files, parse only", files.len()),
                parse,
            );
        }
        None => println!("corpus: ../shared/conformance not found, skipped"),
    }

    let generated = generate(10_000);
    let instructions = parse_bytes(generated.as_bytes())
        .map(|file| file.instructions.len())
        .unwrap_or(0);
    let lint = time(&mut || {
        black_box(engine.lint_bytes("generated.Dockerfile".into(), generated.as_bytes()));
    });
    let parse = time(&mut || {
        black_box(parse_bytes(generated.as_bytes()).ok());
    });
    let model = parse_bytes(generated.as_bytes()).ok().map(|file| {
        time(&mut || {
            black_box(build_model(&file, &BuildOptions::default()));
        })
    });
    let label = format!(
        "generated file ({instructions} instructions, {} bytes)",
        generated.len()
    );
    report(&format!("{label}, lint"), lint);
    report(&format!("{label}, parse only"), parse);
    if let Some(model) = model {
        report(&format!("{label}, model only"), model);
    }
    // The rules of a large file share the machine's cores (up to four);
    // the one-thread curve is the work itself.
    let threads = RuleThreads::available().0;
    growth_curve(&engine, passes, &format!("rules on {threads} threads"));
    let one_thread = Engine::new(EngineOptions {
        rule_threads: RuleThreads(1),
        ..EngineOptions::default()
    });
    growth_curve(&one_thread, passes, "rules on 1 thread");
    println!(
        "peak RSS: {}",
        peak_rss().unwrap_or_else(|| "unknown".into())
    );
}

/// BuildKit's frontend-test Dockerfiles, when the shared conformance folder is there.
fn corpus() -> Option<Vec<(String, Vec<u8>)>> {
    let dir = std::env::var_os("CUDALINT_BENCH_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../shared/conformance/buildkit/frontend-tests")
        });
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "Dockerfile"))
        .filter_map(|path| Some((path.display().to_string(), std::fs::read(&path).ok()?)))
        .collect();
    files.sort();
    (!files.is_empty()).then_some(files)
}

/// A realistic multi-stage CUDA build of about `instructions` instructions:
/// stages of 100 instructions, each FROM an earlier stage or a CUDA image,
/// with ARG/ENV/LABEL, continued RUN lines (apt, pip), heredocs and COPY --from.
fn generate(instructions: usize) -> String {
    let mut text =
        String::from("# syntax=docker/dockerfile:1\nARG CUDA=12.8.1\nARG UBUNTU=22.04\n");
    let stages = instructions / 100;
    for stage in 0..stages {
        if stage == 0 || stage % 10 == 0 {
            text += &format!("FROM nvidia/cuda:${{CUDA}}-devel-ubuntu${{UBUNTU}} AS s{stage}\n");
        } else {
            text += &format!("FROM s{} AS s{stage}\n", stage - 1);
        }
        for i in 0..99 {
            match i % 9 {
                0 => text += &format!("ARG V{i}=value{i}\n"),
                1 => text += &format!("ENV PATH_{i}=/opt/{stage}/{i}:$PATH LD_{i}=\"${{V{}}}\"\n", i - 1),
                2 => text += &format!(
                    "RUN apt-get update \\\n    && apt-get install -y --no-install-recommends \\\n       pkg-{i} lib{stage}-dev \\\n    && rm -rf /var/lib/apt/lists/*\n"
                ),
                3 => text += &format!(
                    "RUN pip install --no-cache-dir torch==2.7.1 --index-url https://download.pytorch.org/whl/cu126 pkg{i}==1.{stage}\n"
                ),
                4 => text += &format!("LABEL org.example.stage=\"{stage}\" org.example.step=\"{i}\"\n"),
                5 if stage > 0 => text += &format!(
                    "COPY --from=s{} --link /opt/{}/out /opt/{stage}/in{i}\n",
                    stage - 1,
                    stage - 1
                ),
                6 => text += &format!("RUN <<EOF\nset -e\necho step {i} > /tmp/{i}\nmake -j2 target{i}\nEOF\n"),
                7 => text += &format!("WORKDIR /opt/{stage}/{i}\n"),
                _ => text += &format!("RUN [\"/bin/sh\", \"-c\", \"echo {stage} {i}\"]\n"),
            }
        }
    }
    text
}

/// Blocks of the growth curve's files: 2 + 5 × blocks instructions.
const GROWTH_BLOCKS: [usize; 4] = [500, 1_000, 2_000, 4_000];

/// The lint's time per size of [`scale`] file, with the ratio to the size
/// before and the exponent k of time ∝ instructions^k between them. Under
/// `cargo test` (one pass) only the smallest size runs.
fn growth_curve(engine: &Engine, passes: usize, threads: &str) {
    let sizes = if passes > 1 {
        &GROWTH_BLOCKS[..]
    } else {
        &GROWTH_BLOCKS[..1]
    };
    let mut before: Option<(usize, f64)> = None;
    for &blocks in sizes {
        let text = scale(blocks);
        let instructions = 2 + 5 * blocks;
        let (best, median) = time(passes, &mut || {
            black_box(engine.lint_bytes("scale.Dockerfile".into(), text.as_bytes()));
        });
        let seconds = best.as_secs_f64();
        let growth = match before {
            Some((n, t)) => {
                let ratio = seconds / t;
                let exponent = ratio.ln() / (instructions as f64 / n as f64).ln();
                format!(
                    "  x{ratio:.2} for x{:.1} instructions: n^{exponent:.2}",
                    instructions as f64 / n as f64
                )
            }
            None => String::new(),
        };
        println!(
            "{:70} best {:8.2} ms   median {:8.2} ms{growth}",
            format!("growth: {instructions} instructions, lint ({threads})"),
            seconds * 1e3,
            median.as_secs_f64() * 1e3,
        );
        before = Some((instructions, seconds));
    }
}

/// `benches/lsp/generate.py scale BLOCKS`, line for line: one CUDA stage of
/// BLOCKS blocks, each an `apt-get install`, a `pip install`, an ENV, a COPY
/// and a RUN.
fn scale(blocks: usize) -> String {
    let mut text =
        String::from("ARG CUDA=12.4.1\nFROM nvidia/cuda:${CUDA}-devel-ubuntu22.04 AS build\n");
    for n in 0..blocks {
        text += &format!(
            "RUN apt-get update && apt-get install -y --no-install-recommends libpkg{n}-dev tool{n} && rm -rf /var/lib/apt/lists/*\n"
        );
        text += &format!(
            "RUN pip install --no-cache-dir package{n}==1.{}.0 helper{n}\n",
            n % 50
        );
        text += &format!("ENV STEP_{n}=/opt/step{n}\n");
        text += &format!("COPY src/part{n} /opt/step{n}/\n");
        text += &format!("RUN make -C /opt/step{n} -j2 && echo done {n}\n");
    }
    text
}

/// Best and median of `passes` runs of `work`, after one warm-up run.
fn time(passes: usize, work: &mut dyn FnMut()) -> (Duration, Duration) {
    work();
    let mut samples: Vec<Duration> = (0..passes)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed()
        })
        .collect();
    samples.sort();
    (samples[0], samples[passes / 2])
}

fn report(label: &str, (best, median): (Duration, Duration)) {
    println!(
        "{label:70} best {:8.2} ms   median {:8.2} ms",
        best.as_secs_f64() * 1e3,
        median.as_secs_f64() * 1e3
    );
}

/// Peak resident set size, from /proc (Linux).
fn peak_rss() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .map(|line| line.trim_start_matches("VmHWM:").trim().to_string())
}
