//! Hand-built reports shared by the rendering tests: real `Diagnostic`s
//! anchored in real `SourceFile`s, covering every kind of location.

#![allow(dead_code)]

use cudalint::checks::{Category, Doc, FixAvailability, RuleMeta};
use cudalint::diagnostic::{Diagnostic, Edit, Fix, FixSafety, Location, Severity};
use cudalint::render::{render, FailedInput, Format, Report};
use cudalint::source::{SourceFile, Span};

pub static DEVEL_FINAL: RuleMeta = RuleMeta {
    code: "CU101",
    name: "devel-image-in-final-stage",
    category: Category::Size,
    default_severity: Severity::Error,
    fix: FixAvailability::Sometimes,
    summary: "The final stage is built on a CUDA devel image",
    doc: Doc::Text(
        "# CU101\n\n## What it does\nFlags a final stage whose base is a CUDA `devel` image.\n\n\
          ## Why is this bad?\nDevel images carry compilers and headers the runtime never uses.\n\n\
          ## Example\n```dockerfile\nFROM nvidia/cuda:12.2.0-devel-ubuntu22.04\n```\n\n\
          ## Use instead\n```dockerfile\nFROM nvidia/cuda:12.2.0-runtime-ubuntu22.04\n```\n\n\
          ## References\n- https://hub.docker.com/r/nvidia/cuda\n",
    ),
};

pub static TOOLKIT_APT: RuleMeta = RuleMeta {
    code: "CU102",
    name: "full-toolkit-installed",
    category: Category::Size,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary: "A full CUDA toolkit is installed where runtime libraries suffice",
    doc: Doc::Text(""),
};

pub static CUPTI_MISSING: RuleMeta = RuleMeta {
    code: "CU201",
    name: "cupti-outside-library-path",
    category: Category::Correctness,
    default_severity: Severity::Info,
    fix: FixAvailability::None,
    summary: "libcupti is present but not on the library path",
    doc: Doc::Text("## What it does\nLooks for CUPTI in the image.\n"),
};

pub static SYNTAX_DIRECTIVE: RuleMeta = RuleMeta {
    code: "CU001",
    name: "missing-syntax-directive",
    category: Category::Structure,
    default_severity: Severity::Style,
    fix: FixAvailability::Always,
    summary: "No `# syntax=` directive pins the Dockerfile frontend",
    doc: Doc::Text(""),
};

pub static RULES: &[&RuleMeta] = &[
    &SYNTAX_DIRECTIVE,
    &DEVEL_FINAL,
    &TOOLKIT_APT,
    &CUPTI_MISSING,
];

/// A message exercising every escaping rule of every format.
pub const NASTY_MESSAGE: &str =
    "\"quoted\" <tag attr='x'> & 50% done: a,b\ttab\r\nnext line \u{1}\u{1b}[31m é ✓ 🚀 ]]> --";

pub const DOCKERFILE: &str = "FROM nvidia/cuda:12.2.0-devel-ubuntu22.04 AS build\n\
RUN apt-get update && \\\n\
\tapt-get install -y --no-install-recommends \\\n\
\t    cuda-toolkit-12-2\n\
FROM nvidia/cuda:12.2.0-devel-ubuntu22.04\n\
COPY --from=build /usr/local/cuda /usr/local/cuda\n";

pub const TRAIN: &str = r"# syntax=docker/dockerfile:1
FROM pytorch/pytorch:2.3.0-cuda12.1-cudnn8-devel
RUN pip install \
    torch==2.3.0 \
    torchvision \
    nvidia-cuda-runtime-cu12 \
    nvidia-cudnn-cu12 \
    nvidia-nccl-cu12 \
    flash-attn
";

pub const IMAGE: &str = "nvcr.io/nvidia/pytorch:24.01-py3";

fn span_of(text: &str, needle: &str) -> Span {
    let start = text.find(needle).expect("needle in text");
    Span::new(start, start + needle.len())
}

/// Fills in line/column as the engine does.
fn placed(source: &SourceFile, mut diag: Diagnostic) -> Diagnostic {
    diag.origin = source.name.clone();
    if let Location::Source { span, start, end } = &mut diag.location {
        *start = Some(source.line_col(span.start));
        *end = Some(source.line_col(span.end));
    }
    diag
}

pub struct Fixture {
    pub sources: Vec<SourceFile>,
    pub diagnostics: Vec<Diagnostic>,
    pub inputs: Vec<String>,
    pub failed_inputs: Vec<FailedInput>,
}

impl Fixture {
    pub fn report(&self) -> Report<'_> {
        Report {
            diagnostics: &self.diagnostics,
            rules: RULES,
            sources: &self.sources,
            inputs: &self.inputs,
            failed_inputs: &self.failed_inputs,
            tool_version: "0.1.0",
            show_sources: false,
            doc_url_base: None,
            notices: &[],
            images: &[],
        }
    }
}

/// Every location kind, a multi-line span with tabs, a long elided span, a
/// fix, notes and a message full of special characters.
pub fn full() -> Fixture {
    let dockerfile = SourceFile::new("Dockerfile", DOCKERFILE);
    let train = SourceFile::new("gpu/Dockerfile.train", TRAIN);

    let final_from = span_of(DOCKERFILE, "nvidia/cuda:12.2.0-devel-ubuntu22.04\nCOPY");
    let final_from = Span::new(final_from.start, final_from.end - "\nCOPY".len());
    let devel = Span::new(final_from.start + "nvidia/cuda:12.2.0-".len(), 0);
    let devel = Span::new(devel.start, devel.start + "devel".len());
    let devel_final = Diagnostic::at(
        &DEVEL_FINAL,
        final_from,
        "final stage is based on `nvidia/cuda:12.2.0-devel-ubuntu22.04`, a devel image",
    )
    .with_help("base the final stage on the matching `-runtime-` image")
    .with_note("devel images are about 3.5 GB larger than runtime images")
    .with_fix(Fix {
        description: "use `nvidia/cuda:12.2.0-runtime-ubuntu22.04`".into(),
        safety: FixSafety::Unsafe,
        edits: vec![Edit {
            span: devel,
            replacement: "runtime".into(),
        }],
    });

    let run_start = DOCKERFILE.find("RUN").expect("RUN");
    let run_end = DOCKERFILE
        .find("FROM nvidia/cuda:12.2.0-devel-ubuntu22.04\nCOPY")
        .expect("FROM");
    let toolkit = Diagnostic::at(
        &TOOLKIT_APT,
        Span::new(run_start, run_end),
        "`cuda-toolkit-12-2` installs the whole toolkit (compilers, headers, samples)",
    )
    .with_help("install `cuda-libraries-12-2` or the individual runtime packages");

    let nasty = Diagnostic::at(
        &TOOLKIT_APT,
        span_of(DOCKERFILE, "apt-get update"),
        NASTY_MESSAGE,
    )
    .with_help(NASTY_MESSAGE)
    .with_note("multi-line\nnote");

    let pip_start = TRAIN.find("RUN").expect("RUN");
    // Not placed: the renderer must compute positions from the span itself.
    let mut long_run = Diagnostic::at(
        &TOOLKIT_APT,
        Span::new(pip_start, TRAIN.len() - 1),
        "pip installs CUDA runtime wheels next to a CUDA base image",
    );
    long_run.origin = train.name.clone();

    let syntax_fix = Diagnostic {
        origin: dockerfile.name.clone(),
        ..Diagnostic::at(
            &SYNTAX_DIRECTIVE,
            Span::new(0, 0),
            "no `# syntax=` directive",
        )
    }
    .with_fix(Fix {
        description: "insert `# syntax=docker/dockerfile:1`".into(),
        safety: FixSafety::Safe,
        edits: vec![Edit {
            span: Span::new(0, 0),
            replacement: "# syntax=docker/dockerfile:1\n".into(),
        }],
    });
    let file_level = Diagnostic {
        location: Location::File,
        ..syntax_fix
    };

    let mut image = Diagnostic::in_image(
        &CUPTI_MISSING,
        Some("sha256:5f1e9c2ab0d4".into()),
        Some("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.12".into()),
        "libcupti.so.12 is outside every library search path",
    )
    .with_note("searched: /usr/local/nvidia/lib64, /usr/local/cuda/lib64");
    image.origin = IMAGE.into();

    let mut layerless =
        Diagnostic::in_image(&CUPTI_MISSING, None, None, "no CUPTI anywhere in the image");
    layerless.origin = IMAGE.into();

    let diagnostics = vec![
        file_level,
        placed(
            &dockerfile,
            Diagnostic::at(
                &SYNTAX_DIRECTIVE,
                Span::new(0, 0),
                "empty span at the start",
            ),
        ),
        placed(&dockerfile, toolkit),
        placed(&dockerfile, nasty),
        placed(&dockerfile, devel_final),
        long_run,
        image,
        layerless,
    ];
    Fixture {
        sources: vec![dockerfile, train],
        diagnostics,
        inputs: vec![
            "Dockerfile".into(),
            "gpu/Dockerfile.train".into(),
            "clean.Dockerfile".into(),
            IMAGE.into(),
        ],
        failed_inputs: Vec::new(),
    }
}

/// Nothing found in one clean file.
pub fn empty() -> Fixture {
    Fixture {
        sources: vec![SourceFile::new(
            "Dockerfile",
            "FROM nvidia/cuda:12.2.0-runtime-ubuntu22.04\n",
        )],
        diagnostics: Vec::new(),
        inputs: vec!["Dockerfile".into()],
        failed_inputs: Vec::new(),
    }
}

/// An input name with every escaping hazard a path can hold.
pub const NASTY_NAME: &str = "dir with space/we,ird:name%\"<&>'.Dockerfile";

/// Two inputs that could not be read: one missing, one whose name and
/// message need escaping in every format.
pub fn failed_inputs() -> Vec<FailedInput> {
    vec![
        FailedInput {
            name: "missing.Dockerfile".into(),
            message: "No such file or directory (os error 2)".into(),
        },
        FailedInput {
            name: NASTY_NAME.into(),
            message: NASTY_MESSAGE.into(),
        },
    ]
}

/// `fixture` with [`failed_inputs`] added.
pub fn with_failed_inputs(fixture: Fixture) -> Fixture {
    Fixture {
        failed_inputs: failed_inputs(),
        ..fixture
    }
}

/// Nothing linted: the only input could not be read.
pub fn only_failed() -> Fixture {
    Fixture {
        sources: Vec::new(),
        diagnostics: Vec::new(),
        inputs: Vec::new(),
        failed_inputs: vec![FailedInput {
            name: "Dockerfile".into(),
            message: "it is a directory".into(),
        }],
    }
}

pub fn rendered(format: Format, fixture: &Fixture, color: bool) -> String {
    let mut out = Vec::new();
    render(format, &fixture.report(), &mut out, color).expect("render to a Vec");
    String::from_utf8(out).expect("renderers write UTF-8")
}

pub const ALL_FORMATS: [Format; 8] = [
    Format::Text,
    Format::Json,
    Format::Sarif,
    Format::Checkstyle,
    Format::Junit,
    Format::Gitlab,
    Format::Github,
    Format::Html,
];
