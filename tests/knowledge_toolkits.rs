//! The embedded toolkit and package knowledge answers the questions the
//! CU120/CU121/CU122/CU132 rules ask, with the facts of
//! shared/knowledge/cuda-packaging.md.

use cudalint::checks::dockerfile::cuda_facts::stage_pins;
use cudalint::knowledge::packages::{PackageKnowledge, SpecCuda};
use cudalint::knowledge::toolkits::{ArchRef, ArchSupport, DriverVerdict, ToolkitKnowledge};
use cudalint::knowledge::Version;

fn v(text: &str) -> Version {
    Version::parse(text).unwrap()
}

fn toolkits() -> ToolkitKnowledge {
    ToolkitKnowledge::embedded().unwrap()
}

fn packages() -> PackageKnowledge {
    PackageKnowledge::embedded().unwrap()
}

#[test]
fn every_entry_has_a_source() {
    let t = toolkits();
    assert!(t.releases.len() >= 50, "{} release rows", t.releases.len());
    assert!(t.releases.iter().all(|r| !r.source.is_empty()));
    assert!(t.minor_compat.iter().all(|f| !f.source.is_empty()));
    assert!(t.architectures.iter().all(|a| !a.source.is_empty()));
    assert!(t.arch_names.iter().all(|n| !n.source.is_empty()));
    let p = packages();
    assert!(p.driver_userspace.iter().all(|d| !d.source.is_empty()));
    assert!(p.pypi_defaults.iter().all(|d| !d.source.is_empty()));
}

#[test]
fn release_rows_follow_update_numbers() {
    let t = toolkits();
    let driver = |cuda: &str| t.release_for(v(cuda)).map(|r| r.driver.to_string());
    assert_eq!(driver("12.4.1").as_deref(), Some("550.54.15"));
    assert_eq!(driver("12.4.0").as_deref(), Some("550.54.14"));
    // A `cu124` wheel only says 12.4: the GA row is the least it needs.
    assert_eq!(driver("12.4").as_deref(), Some("550.54.14"));
    assert_eq!(driver("12.8.0").as_deref(), Some("570.26"));
    assert_eq!(driver("13.0.2").as_deref(), Some("580.95.05"));
    assert_eq!(driver("11.8.0").as_deref(), Some("520.61.05"));
    // 11.0 numbers its updates differently: 11.0.3 is Update 1.
    assert_eq!(driver("11.0.3").as_deref(), Some("450.51.06"));
    // An update the table lacks falls back to the latest one before it.
    assert_eq!(driver("12.6.9").as_deref(), Some("560.35.05"));
    assert_eq!(driver("12"), None);
    assert_eq!(driver("12.7"), None);
    assert!(t.release_for(v("13.2.0")).unwrap().confirmed);
    // 13.3 and 13.4 have rows of their own (13.4's third field is a build).
    assert_eq!(driver("13.3.1").as_deref(), Some("610.43.02"));
    assert_eq!(driver("13.4.2").as_deref(), Some("615.0"));
    assert_eq!(
        t.driver_branch(v("580.95.05")).unwrap().eol.as_deref(),
        Some("2028-06-01")
    );
}

#[test]
fn driver_verdicts_use_minor_compat_floors() {
    let t = toolkits();
    let driver = v("535.104.05");
    assert_eq!(
        t.driver_verdict(v("12.2.2"), driver),
        DriverVerdict::Satisfied
    );
    assert_eq!(
        t.driver_verdict(v("11.8.0"), driver),
        DriverVerdict::Satisfied
    );
    match t.driver_verdict(v("12.4.1"), driver) {
        DriverVerdict::MinorCompat { release, floor } => {
            assert_eq!(release.driver, v("550.54.15"));
            assert_eq!(floor.floor, v("525.60.13"));
        }
        other => panic!("{other:?}"),
    }
    match t.driver_verdict(v("13.0.0"), driver) {
        DriverVerdict::BelowFloor { floor, release } => {
            assert_eq!(floor.floor, v("580.65.06"));
            assert_eq!(release.unwrap().driver, v("580.65.06"));
        }
        other => panic!("{other:?}"),
    }
    // A bare major has no release row, only the floor.
    assert_eq!(t.driver_verdict(v("12"), driver), DriverVerdict::Unknown);
    assert!(matches!(
        t.driver_verdict(v("12"), v("470.82.01")),
        DriverVerdict::BelowFloor { release: None, .. }
    ));
    // 11.0 GA needs less than the 11.x floor: its own row decides.
    assert_eq!(
        t.driver_verdict(v("11.0.2"), v("450.51.05")),
        DriverVerdict::Satisfied
    );
    // Newer drivers run older toolkits.
    assert_eq!(
        t.driver_verdict(v("12.9.1"), v("580.95.05")),
        DriverVerdict::Satisfied
    );
    // Pre-11 toolkits are not in the tables.
    assert_eq!(
        t.driver_verdict(v("10.2"), v("410.48")),
        DriverVerdict::Unknown
    );
}

#[test]
fn architecture_support_per_toolkit() {
    let t = toolkits();
    let support = |toolkit: &str, token: &str| {
        let arch = t.parse_arch(token).unwrap();
        match t.arch_ref_support(v(toolkit), &arch) {
            ArchSupport::Supported => "ok",
            ArchSupport::NotYet(_) => "not-yet",
            ArchSupport::Dropped(_) => "dropped",
            ArchSupport::Unknown => "unknown",
        }
    };
    assert_eq!(support("11.0", "sm_30"), "dropped");
    assert_eq!(support("11.8", "3.5"), "ok");
    assert_eq!(support("12.1", "3.5"), "dropped");
    assert_eq!(support("12.1", "Kepler"), "dropped");
    assert_eq!(support("13.0", "sm_70"), "dropped");
    assert_eq!(support("13.0", "Maxwell"), "dropped");
    assert_eq!(support("12.9", "7.0"), "ok");
    assert_eq!(support("13.0", "7.5"), "ok");
    assert_eq!(support("11.7", "9.0"), "not-yet");
    assert_eq!(support("11.8", "90a"), "ok");
    assert_eq!(support("12.6", "sm_100"), "not-yet");
    assert_eq!(support("12.6", "Blackwell"), "not-yet");
    assert_eq!(support("12.8", "Blackwell"), "ok");
    assert_eq!(support("12.8.1", "12.0"), "ok");
    assert_eq!(support("13.0", "sm_101"), "dropped");
    // Ampere's 8.6 came after 11.0, but 8.0 builds: a name is not flagged.
    assert_eq!(support("11.0", "Ampere"), "ok");
    assert_eq!(support("10.2", "3.0"), "unknown");
    assert_eq!(support("12.4", "9.9"), "unknown");
    assert!(matches!(t.parse_arch("Hopper"), Some(ArchRef::Name(_))));
}

fn pin_of(p: &PackageKnowledge, spec: &str) -> Option<String> {
    match p.classify_requirement(spec, true) {
        Some(SpecCuda::Pin(pin)) => Some(format!(
            "{}{}",
            pin.cuda,
            if pin.system { " system" } else { "" }
        )),
        Some(SpecCuda::Cpu) => Some("cpu".into()),
        None => None,
    }
}

#[test]
fn pip_requirements_pin_cuda() {
    let p = packages();
    let cases = [
        ("torch==2.5.1+cu121", Some("12.1")),
        ("torch==2.5.1+cpu", Some("cpu")),
        ("torch==2.5.1", Some("12.4")),
        ("torch==2.7.1", Some("12.6")),
        ("torch==2.11.0", Some("13.0")),
        ("torch==2.13.0", Some("13.0")),
        ("torch==2.16.0", None),
        ("torch", None),
        ("torch>=2.1", None),
        ("jax[cuda12]", Some("12")),
        ("jax[cuda12_pip]==0.4.30", Some("12")),
        ("jax[cuda12-local]", Some("12 system")),
        ("jax[cuda13]", Some("13")),
        ("jax", None),
        ("tensorflow[and-cuda]", Some("12")),
        ("tensorflow[and-cuda]==2.14.0", None),
        ("tensorflow[and-cuda]==2.16.1", Some("12")),
        // `jax[cuda]` maps to another build per release: an exact pin is judged by it.
        ("jax[cuda]==0.4.20", Some("11 system")),
        ("jax[cuda]==0.4.30", Some("12")),
        ("jax[cuda]", None),
        // `tensorrt` from PyPI installs the build for one CUDA major per release.
        ("tensorrt==10.3.0", Some("12")),
        ("tensorrt==11.4.0.106", Some("13")),
        ("tensorrt-cu12", Some("12")),
        // CuPy brings no CUDA (without `[ctk]`) and loads the image's: CU127's.
        ("cupy-cuda11x", None),
        ("cupy-cuda12x==13.3.0", None),
        ("cupy-cuda118", None),
        ("nvidia-cudnn-cu12==9.1.0.70", Some("12")),
        ("nvidia-cuda-runtime-cu12==12.4.127", Some("12.4")),
        ("nvidia-cuda-runtime-cu11", Some("11")),
        ("cuda-toolkit==13.0.2", Some("13.0")),
        ("cuda-toolkit[cublas,cudart]==12.8.1", Some("12.8")),
        // ONNX Runtime loads the image's CUDA: which CUDA a release was built for is CU127's
        // (rules/resolution.toml), not a wheel's own pin.
        ("onnxruntime-gpu==1.22.0", None),
        ("onnxruntime-gpu", None),
        ("nvidia-ml-py", None),
        ("torchvision==0.20.1+cu124", Some("12.4")),
        ("torch==2.5.1+cu124; platform_system == \"Linux\"", Some("12.4")),
        ("https://download.pytorch.org/whl/cu118/torch-2.1.0%2Bcu118-cp311-cp311-linux_x86_64.whl", Some("11.8")),
        ("./local/path", None),
        ("-r", None),
    ];
    for (spec, want) in cases {
        assert_eq!(pin_of(&p, spec).as_deref(), want, "{spec}");
    }
    // With another index in play, a bare pin is not PyPI's build.
    assert_eq!(p.classify_requirement("torch==2.5.1", false), None);
}

#[test]
fn index_urls_and_conda_specs() {
    let p = packages();
    let url = |u: &str| match p.classify_index_url(u) {
        Some(SpecCuda::Pin(pin)) => pin.cuda.to_string(),
        Some(SpecCuda::Cpu) => "cpu".into(),
        None => "-".into(),
    };
    assert_eq!(url("https://download.pytorch.org/whl/cu124"), "12.4");
    assert_eq!(
        url("https://download.pytorch.org/whl/nightly/cu130"),
        "13.0"
    );
    assert_eq!(url("https://download.pytorch.org/whl/cpu"), "cpu");
    assert_eq!(url("https://download.pytorch.org/whl/rocm6.2"), "-");
    assert_eq!(url("https://pypi.org/simple"), "-");
    let conda = |s: &str| p.classify_conda_spec(s).map(|pin| pin.cuda.to_string());
    assert_eq!(conda("pytorch-cuda=12.1").as_deref(), Some("12.1"));
    assert_eq!(conda("pytorch-cuda==11.8").as_deref(), Some("11.8"));
    assert_eq!(conda("cuda-version=12.4").as_deref(), Some("12.4"));
    assert_eq!(
        conda("conda-forge::cudatoolkit=11.8.0=h6a678d5_0").as_deref(),
        Some("11.8")
    );
    assert_eq!(conda("cuda-version>=12"), None);
    assert_eq!(conda("pytorch=2.1"), None);
    assert_eq!(
        p.classify_conda_channel("nvidia/label/cuda-12.1.0")
            .map(|pin| pin.cuda.to_string())
            .as_deref(),
        Some("12.1")
    );
}

/// The CUDA pins `stage_pins` finds in `RUN {command}` of a stage that
/// sets `env` (as `ENV` lines): (the pinning word, the CUDA it pins).
fn pins(command: &str, env: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut text = String::from("FROM ubuntu:22.04\n");
    for (key, value) in env {
        text.push_str(&format!("ENV {key}={value}\n"));
    }
    text.push_str(&format!("RUN {command}\n"));
    let dockerfile = cudalint::dockerfile::parse(&text).unwrap();
    let model = cudalint::dockerfile::build_model(&dockerfile, &Default::default());
    let knowledge = cudalint::knowledge::Knowledge::embedded().unwrap();
    let source = cudalint::source::SourceFile::new("Dockerfile".to_string(), text.clone());
    let settings = cudalint::config::Settings::default();
    let memo = cudalint::checks::dockerfile::lint_memo::LintMemo::default();
    let ctx = cudalint::checks::DockerfileContext {
        source: &source,
        dockerfile: &dockerfile,
        model: &model,
        knowledge: &knowledge,
        settings: &settings,
        build_context: None,
        memo: &memo,
    };
    stage_pins(&ctx, &model.stages[0])
        .into_iter()
        .map(|f| (f.text, f.pin.cuda.to_string()))
        .collect()
}

#[test]
fn commands_yield_pins_at_their_words() {
    let pair = |w: &str, c: &str| (w.to_string(), c.to_string());
    assert_eq!(
        pins("pip install --no-cache-dir torch==2.5.1 --index-url https://download.pytorch.org/whl/cu121", &[]),
        vec![pair("https://download.pytorch.org/whl/cu121", "12.1")]
    );
    assert_eq!(
        pins(
            "python3 -m pip install --index-url=https://download.pytorch.org/whl/cu118 torch",
            &[]
        ),
        vec![pair(
            "--index-url=https://download.pytorch.org/whl/cu118",
            "11.8"
        )]
    );
    assert_eq!(
        pins("pip3 install torch==2.5.1", &[]),
        vec![pair("torch==2.5.1", "12.4")]
    );
    assert!(pins(
        "pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cpu",
        &[]
    )
    .is_empty());
    assert!(pins(
        "pip install torch==2.5.1",
        &[("PIP_INDEX_URL", "https://mirror/simple")]
    )
    .is_empty());
    assert_eq!(
        pins("uv pip install --system torch --torch-backend cu126", &[]),
        vec![pair("cu126", "12.6")]
    );
    assert_eq!(
        pins("pip install -r requirements.txt jax[cuda12]", &[]),
        vec![pair("jax[cuda12]", "12")]
    );
    assert!(pins("pip download torch==2.5.1", &[]).is_empty());
    assert!(pins("echo torch==2.5.1+cu121", &[]).is_empty());
    assert_eq!(
        pins(
            "conda install -y -c pytorch -c nvidia pytorch pytorch-cuda=12.1",
            &[]
        ),
        vec![pair("pytorch-cuda=12.1", "12.1")]
    );
    assert_eq!(
        pins(
            "mamba create -n env -c nvidia/label/cuda-11.8.0 cuda-toolkit",
            &[]
        ),
        vec![pair("nvidia/label/cuda-11.8.0", "11.8")]
    );
    assert!(pins("", &[]).is_empty());
}

#[test]
fn driver_userspace_specs() {
    let p = packages();
    let name = |spec: &str| p.classify_driver_spec(spec).map(|m| m.name);
    for spec in [
        "libnvidia-compute-535",
        "nvidia-utils-535",
        "cuda",
        "libnvidia-ml1",
        "nvidia-driver-cuda-libs",
        "libnvidia-tesla-535-cuda1",
        "cuda-drivers-535",
    ] {
        assert_eq!(name(spec).as_deref(), Some(spec), "{spec}");
    }
    assert_eq!(name("libcuda1=535.261.03-1").as_deref(), Some("libcuda1"));
    assert_eq!(name("libcuda1:amd64").as_deref(), Some("libcuda1"));
    assert_eq!(
        name("nvidia-driver:535-dkms").as_deref(),
        Some("nvidia-driver")
    );
    assert_eq!(
        name("./libcuda1_535.261.03-1_amd64.deb").as_deref(),
        Some("libcuda1")
    );
    // Not driver userspace.
    for spec in [
        "cuda-toolkit-12-4",
        "cuda-compat-12-4",
        "libcudnn9-cuda-12",
        "cuda-drivers-fabricmanager-535",
        "nvidia-container-toolkit",
        "nvidia-driver-local-repo-ubuntu2204-535.104.05",
        "curl",
    ] {
        assert_eq!(name(spec), None, "{spec}");
    }
    let installer = |file: &str| p.classify_driver_installer(file).map(|m| m.name);
    assert_eq!(
        installer("/tmp/NVIDIA-Linux-x86_64-535.104.05.run").as_deref(),
        Some("NVIDIA-Linux-x86_64-535.104.05.run")
    );
    assert_eq!(installer("cuda_12.4.1_550.54.15_linux.run"), None);
    assert_eq!(installer("NVIDIA-Linux-x86_64-535.104.05"), None);
}

#[test]
fn user_entries_extend_and_replace() {
    let mut p = packages();
    let before = p.driver_userspace.len();
    let user = PackageKnowledge::from_toml_text(
        r#"
        [[packages.driver_userspace]]
        pattern = "xorg-x11-drv-nvidia-cuda-libs"
        source = "RPM Fusion"
        [[packages.pypi_defaults]]
        package = "torch"
        versions = ["2.16"]
        cuda = "13.4"
        source = "site knowledge"
        "#,
    )
    .unwrap();
    p.extend(user);
    assert_eq!(p.driver_userspace.len(), before + 1);
    assert!(p.driver_package("xorg-x11-drv-nvidia-cuda-libs").is_some());
    assert_eq!(pin_of(&p, "torch==2.16.0").as_deref(), Some("13.4"));
}

#[test]
fn malformed_user_data_is_an_error() {
    let bad = ToolkitKnowledge::from_toml_text("[[toolkits.releases]]\nversion = \"12.x\"\nlabel = \"x\"\ndriver = \"1\"\nsource = \"s\"\n");
    assert!(bad.is_err());
    let missing_source =
        PackageKnowledge::from_toml_text("[[packages.conda]]\nname = \"cuda-version\"\n");
    assert!(missing_source.is_err());
}

#[test]
fn the_loader_embeds_both_files() {
    let knowledge = cudalint::knowledge::Knowledge::embedded().unwrap();
    assert_eq!(knowledge.toolkits.releases.len(), toolkits().releases.len());
    assert_eq!(knowledge.toolkits.known_from, Some(v("11.0")));
    assert_eq!(
        knowledge.packages.driver_userspace.len(),
        packages().driver_userspace.len()
    );
}
