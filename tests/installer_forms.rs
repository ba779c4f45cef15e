//! Every way of running pip reads the same to the rules that read pip.
//!
//! One table: each scenario is a Dockerfile with an `{INSTALL}` slot, linted
//! once per installer form (`pip`, `pip3`, `python3 -m pip`, a venv's pip,
//! conda's pip, `uv pip` …) put in that slot. For every rule that reads
//! Python installs, the findings (rule and line) must be those of the plain
//! `pip install` form, and each scenario must make at least one of them fire,
//! so that the table cannot pass by saying nothing. Cache findings (CU104)
//! are left out: the cache options and directories are the installer's own.
//! A second, smaller table does the same for conda's installers (conda,
//! mamba, micromamba) where the rules read conda.

#[path = "support/fixture.rs"]
mod fixture;

use std::collections::BTreeSet;

use cudalint::engine::{Engine, EngineOptions};
use cudalint::source::SourceFile;

/// Rules whose findings rest on what a Python install installs.
const PIP_RULES: &[&str] = &[
    "CU101", "CU103", "CU108", "CU109", "CU110", "CU120", "CU123", "CU127", "CU132", "CU133",
];

/// The reference form every other form must match.
const REFERENCE: &str = "pip install";

/// Installer forms that run the image's own Python (the scenarios whose
/// outcome depends on the Python version hold for these).
const SAME_PYTHON_FORMS: &[&str] = &[
    "pip3 install",
    "pip3.10 install",
    "/usr/bin/pip3 install",
    "python -m pip install",
    "python3 -m pip install",
    "python3 -u -m pip install",
    "sudo -H pip3 install",
    "env PIP_NO_INPUT=1 pip install",
    "uv pip install --system",
    "python3 -m uv pip install --system",
    "uv pip install --python /usr/bin/python3",
    "uv pip install --system --index-strategy unsafe-best-match",
    "python3 -m pip --no-cache-dir install",
];

/// Forms that may run another interpreter (a venv's, conda's): the
/// scenarios that name the build exactly hold for them too.
const OTHER_PYTHON_FORMS: &[&str] = &[
    "/venv/bin/pip install",
    "/venv/bin/python -m pip install",
    ".venv/bin/python -m pip install",
    "/opt/conda/bin/pip install",
    "conda run -n app pip install",
    "micromamba run -n base pip install",
];

/// A Dockerfile with an `{INSTALL}` slot, and whether its outcome depends
/// on which Python runs the install (an unpinned or ranged requirement).
struct Scenario {
    name: &'static str,
    dockerfile: &'static str,
    python_dependent: bool,
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "torch from the cu124 index on a CUDA 11.8 base (CU120)",
        dockerfile: "FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04\n\
RUN {INSTALL} --no-deps torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124\n",
        python_dependent: false,
    },
    Scenario {
        name: "a CUDA 12 onnxruntime-gpu release on a CUDA 11.8 base (CU127)",
        dockerfile: "FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04\n\
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip && rm -rf /var/lib/apt/lists/*\n\
RUN {INSTALL} onnxruntime-gpu==1.20.1 numpy\n",
        python_dependent: false,
    },
    Scenario {
        // Reduced from huggingface/diffusers docker/diffusers-onnxruntime-cuda/Dockerfile
        // (corpus 100): pip takes the newest torch of all indexes (PyPI's), uv the
        // cu117 index's; either is another CUDA major than the base.
        name: "unpinned torch with the cu117 extra index on a CUDA 12.1 base (CU120)",
        dockerfile: "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\n\
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip && rm -rf /var/lib/apt/lists/*\n\
RUN {INSTALL} torch torchvision \"onnxruntime-gpu>=1.13.1\" --extra-index-url https://download.pytorch.org/whl/cu117\n",
        python_dependent: true,
    },
    Scenario {
        name: "unpinned torch from PyPI on a CUDA 11.8 base (CU120)",
        dockerfile: "FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04\n\
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip && rm -rf /var/lib/apt/lists/*\n\
RUN {INSTALL} torch torchvision\n",
        python_dependent: true,
    },
    Scenario {
        name: "a torch CUDA extension built without an arch list on a devel base (CU133)",
        dockerfile: "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n\
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip git && rm -rf /var/lib/apt/lists/*\n\
RUN {INSTALL} torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124\n\
RUN FORCE_CUDA=1 {INSTALL} --no-build-isolation git+https://github.com/facebookresearch/pytorch3d.git\n",
        python_dependent: false,
    },
];

/// `(rule, line)` of each finding of a pip-reading rule.
fn findings(dockerfile: &str) -> BTreeSet<(String, usize)> {
    std::env::set_var(
        cudalint::knowledge::clock::TODAY_VAR,
        fixture::FIXTURE_TODAY,
    );
    let mut options = EngineOptions::default();
    options.build.platform =
        Some(cudalint::dockerfile::platform::Platform::parse(fixture::FIXTURE_PLATFORM).unwrap());
    let source = SourceFile::new("Dockerfile".to_string(), dockerfile.to_string());
    Engine::new(options)
        .lint_source(&source)
        .into_iter()
        .filter(|f| PIP_RULES.contains(&f.code))
        .map(|f| (f.code.to_string(), f.start().map_or(0, |at| at.line)))
        .collect()
}

#[test]
fn every_installer_form_reads_like_pip() {
    let mut problems = Vec::new();
    for scenario in SCENARIOS {
        let expected = findings(&scenario.dockerfile.replace("{INSTALL}", REFERENCE));
        if expected.is_empty() {
            problems.push(format!(
                "{}: the `{REFERENCE}` form finds nothing, so the scenario proves nothing",
                scenario.name
            ));
            continue;
        }
        let forms = SAME_PYTHON_FORMS.iter().chain(
            OTHER_PYTHON_FORMS
                .iter()
                .filter(|_| !scenario.python_dependent),
        );
        for form in forms {
            let found = findings(&scenario.dockerfile.replace("{INSTALL}", form));
            if found != expected {
                problems.push(format!(
                    "{}: `{form}` finds {found:?}, `{REFERENCE}` finds {expected:?}",
                    scenario.name
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The conda-family forms, against `conda install`.
const CONDA_FORMS: &[&str] = &[
    "mamba install",
    "micromamba install",
    "/opt/conda/bin/conda install",
    "/opt/conda/bin/mamba install",
    "conda install -n base",
    "micromamba install -n base",
];

/// Scenarios with a `{CONDA}` slot for `conda install` and its kin.
const CONDA_SCENARIOS: &[Scenario] = &[Scenario {
    name: "pytorch-cuda 12.1 from the nvidia channel on a CUDA 11.8 stage (CU120)",
    dockerfile: "FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04\n\
RUN {CONDA} -y -c pytorch -c nvidia pytorch=2.3.1 pytorch-cuda=12.1\n",
    python_dependent: false,
}];

#[test]
fn every_conda_form_reads_like_conda() {
    let mut problems = Vec::new();
    for scenario in CONDA_SCENARIOS {
        let expected = findings(&scenario.dockerfile.replace("{CONDA}", "conda install"));
        if expected.is_empty() {
            problems.push(format!("{}: `conda install` finds nothing", scenario.name));
            continue;
        }
        for form in CONDA_FORMS {
            let found = findings(&scenario.dockerfile.replace("{CONDA}", form));
            if found != expected {
                problems.push(format!(
                    "{}: `{form}` finds {found:?}, `conda install` finds {expected:?}",
                    scenario.name
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
