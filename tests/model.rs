//! The build model over realistic multi-stage Dockerfiles in
//! `fixtures/model/`: ARG resolution, stage graph, ENV, RUN commands and
//! package installs, each checked against what BuildKit would do.

use cudalint::dockerfile::model::{
    BaseImage, BuildModel, BuildOptions, DependencyKind, DependencyTarget, ShellCommand,
};
use cudalint::dockerfile::packages::{package_installs, PackageManager};
use cudalint::dockerfile::platform::Platform;
use cudalint::dockerfile::{build_model, parse};

fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/model/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn model_with(name: &str, options: &BuildOptions) -> (String, BuildModel) {
    let text = fixture(name);
    let dockerfile = parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let model = build_model(&dockerfile, options);
    (text, model)
}

fn model(name: &str) -> (String, BuildModel) {
    model_with(name, &BuildOptions::default())
}

fn words(command: &ShellCommand) -> Vec<&str> {
    command.words.iter().map(|w| w.text.as_str()).collect()
}

fn image_of(model: &BuildModel, stage: usize) -> (Option<String>, String, Option<String>) {
    match &model.stages[stage].base {
        BaseImage::Image(r) => (r.registry.clone(), r.repository.clone(), r.tag.clone()),
        other => panic!("stage {stage} base is {other:?}"),
    }
}

#[test]
fn global_args_resolve_into_from() {
    let (text, m) = model("pytorch_multistage.Dockerfile");
    let globals: Vec<_> = m
        .global_args
        .iter()
        .map(|a| (a.name.as_str(), a.value.as_deref()))
        .collect();
    assert_eq!(
        globals,
        vec![
            ("CUDA_VERSION", Some("12.4.1")),
            ("UBUNTU", Some("22.04")),
            (
                "BASE_DEVEL",
                Some("nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04")
            ),
            ("TORCH_VERSION", Some("2.5.1")),
            ("PYTHON", None),
        ]
    );
    assert_eq!(m.stages.len(), 3);
    let builder = &m.stages[0];
    assert_eq!(builder.name.as_deref(), Some("builder"));
    assert_eq!(
        builder.base_text,
        "nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04"
    );
    assert_eq!(
        &text[builder.base_span.start..builder.base_span.end],
        "${BASE_DEVEL}"
    );
    assert_eq!(
        image_of(&m, 0),
        (
            None,
            "nvidia/cuda".into(),
            Some("12.4.1-cudnn-devel-ubuntu22.04".into())
        )
    );
    // BUILDPLATFORM is defined by BuildKit: the machine's platform.
    assert_eq!(
        builder.platform.as_deref(),
        Some(Platform::host().to_string().as_str())
    );
    assert!(builder.undefined_args.is_empty());
    assert_eq!(
        image_of(&m, 2).2.as_deref(),
        Some("12.4.1-cudnn-runtime-ubuntu22.04")
    );
}

#[test]
fn build_args_override_declared_args_only() {
    let options = BuildOptions {
        build_args: vec![
            ("CUDA_VERSION".into(), "12.6.2".into()),
            ("UNDECLARED".into(), "x".into()),
            ("TORCH_VERSION".into(), "2.4.0".into()),
            ("BUILDPLATFORM".into(), "linux/amd64".into()),
        ],
        target: None,
        platform: None,
    };
    let (_, m) = model_with("pytorch_multistage.Dockerfile", &options);
    assert!(m.global_args.iter().all(|a| a.name != "UNDECLARED"));
    // BASE_DEVEL's default is expanded with the overridden CUDA_VERSION.
    assert_eq!(
        m.stages[0].base_text,
        "nvidia/cuda:12.6.2-cudnn-devel-ubuntu22.04"
    );
    assert_eq!(m.stages[0].platform.as_deref(), Some("linux/amd64"));
    let pip = &m.stages[0].runs[0].commands[2];
    assert_eq!(words(pip)[2], "torch==2.4.0");
}

#[test]
fn target_selects_stage_case_insensitively() {
    let (_, m) = model("pytorch_multistage.Dockerfile");
    assert_eq!(m.target, Some(2));
    assert_eq!(
        m.target_stage().and_then(|s| s.name.as_deref()),
        Some("runtime")
    );
    let options = BuildOptions {
        target: Some("WHEELS".into()),
        ..Default::default()
    };
    let (_, m) = model_with("pytorch_multistage.Dockerfile", &options);
    assert_eq!(m.target, Some(1));
    assert_eq!(m.unused_stages(), vec![2]);
    let options = BuildOptions {
        target: Some("nope".into()),
        ..Default::default()
    };
    let (_, m) = model_with("pytorch_multistage.Dockerfile", &options);
    assert_eq!(m.target, None);
    assert!(m.unused_stages().is_empty());
}

#[test]
fn stage_chains_and_env_inheritance() {
    let (_, m) = model("pytorch_multistage.Dockerfile");
    assert_eq!(m.stages[1].base, BaseImage::Stage(0));
    assert_eq!(m.ancestry(1), vec![1, 0]);
    assert_eq!(m.stage_by_name("Builder").map(|s| s.index), Some(0));
    assert_eq!(m.env_value(0, "CUDA_HOME"), Some("/usr/local/cuda"));
    // The base image's PATH is unknown here, so the reference stays.
    assert_eq!(m.env_value(0, "PATH"), Some("/usr/local/cuda/bin:${PATH}"));
    assert_eq!(m.env_value(0, "TORCH_CUDA_ARCH_LIST"), Some("8.0 9.0"));
    // `FROM builder` inherits ENV and prepends to the inherited PATH.
    assert_eq!(
        m.env_value(1, "PATH"),
        Some("/opt/venv/bin:/usr/local/cuda/bin:${PATH}")
    );
    assert_eq!(m.env_value(1, "CUDA_HOME"), Some("/usr/local/cuda"));
    // An image base inherits nothing from earlier stages.
    assert_eq!(m.env_value(2, "CUDA_HOME"), None);
    let names: Vec<_> = m.stages[1].env.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, vec!["CUDA_HOME", "PATH", "TORCH_CUDA_ARCH_LIST"]);
}

#[test]
fn dependencies_of_every_kind() {
    let (text, m) = model("pytorch_multistage.Dockerfile");
    let runtime = &m.stages[2];
    let deps: Vec<_> = runtime
        .dependencies
        .iter()
        .map(|d| (d.kind, d.reference.as_str(), d.target.clone()))
        .collect();
    assert_eq!(deps.len(), 4);
    assert_eq!(
        deps[0],
        (DependencyKind::Copy, "wheels", DependencyTarget::Stage(1))
    );
    assert_eq!(
        deps[1],
        (DependencyKind::Copy, "0", DependencyTarget::Stage(0))
    );
    match &deps[2] {
        (DependencyKind::Copy, _, DependencyTarget::Image(r)) => {
            assert_eq!(r.registry.as_deref(), Some("nvcr.io"));
            assert_eq!(r.repository, "nvidia/pytorch");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        deps[3],
        (DependencyKind::Mount, "builder", DependencyTarget::Stage(0))
    );
    let copy = &runtime.dependencies[0];
    assert_eq!(&text[copy.span.start..copy.span.end], "--from=wheels");
    assert_eq!(m.stages[1].dependencies[0].kind, DependencyKind::From);
    assert_eq!(m.reachable_stages(2), vec![0, 1, 2]);
    assert!(m.unused_stages().is_empty());
}

#[test]
fn run_commands_are_split_and_expanded() {
    let (text, m) = model("pytorch_multistage.Dockerfile");
    let run = &m.stages[0].runs[0];
    assert_eq!(run.cache_mount_targets, vec!["/root/.cache/pip"]);
    let split: Vec<_> = run.commands.iter().map(words).collect();
    assert_eq!(
        split,
        vec![
            vec!["apt-get", "update"],
            vec![
                "apt-get",
                "install",
                "-y",
                "--no-install-recommends",
                "python3-pip",
                "git"
            ],
            vec![
                "pip",
                "install",
                "torch==2.5.1",
                "--index-url",
                "https://download.pytorch.org/whl/cu124"
            ],
        ]
    );
    assert_eq!(
        run.commands[0].assignments,
        vec![("DEBIAN_FRONTEND".to_string(), "noninteractive".to_string())]
    );
    let torch = &run.commands[2].words[2];
    assert_eq!(
        &text[torch.span.start..torch.span.end],
        "torch==${TORCH_VERSION}"
    );
    let git = &run.commands[1].words[5];
    assert_eq!(&text[git.span.start..git.span.end], "git");

    let installs = package_installs(&run.commands);
    assert_eq!(installs.len(), 2);
    assert_eq!(installs[0].manager, PackageManager::Apt);
    assert_eq!(installs[1].manager, PackageManager::Pip);
    assert_eq!(installs[1].command, 2);
    assert_eq!(
        installs[1]
            .package("torch")
            .and_then(|p| p.constraint.as_deref()),
        Some("==2.5.1")
    );
    assert_eq!(
        installs[1].index_urls,
        vec!["https://download.pytorch.org/whl/cu124"]
    );
}

#[test]
fn copy_from_typos_contexts_and_indexes() {
    let (_, m) = model("copy_from_kinds.Dockerfile");
    let last = &m.stages[3];
    let targets: Vec<_> = last
        .dependencies
        .iter()
        .map(|d| (d.kind, d.reference.as_str(), d.target.clone()))
        .collect();
    assert_eq!(
        targets[0],
        (DependencyKind::Copy, "buidler:", DependencyTarget::Invalid)
    );
    // BuildKit refuses variables in --from.
    assert_eq!(
        targets[1],
        (DependencyKind::Copy, "${SRC}", DependencyTarget::Unresolved)
    );
    // A named build context looks like an image reference.
    assert!(
        matches!(&targets[2], (DependencyKind::Copy, "models", DependencyTarget::Image(r)) if r.repository == "models")
    );
    assert_eq!(
        targets[3],
        (DependencyKind::Copy, "7", DependencyTarget::Invalid)
    );
    assert_eq!(
        targets[4],
        (DependencyKind::Copy, "BUILDER", DependencyTarget::Stage(0))
    );
    // Mounts look stages up by name only: `0` is an image name.
    assert!(matches!(
        &targets[5],
        (DependencyKind::Mount, "0", DependencyTarget::Image(_))
    ));
    assert_eq!(targets.len(), 6);

    assert_eq!(m.stages[2].base, BaseImage::Stage(0));
    assert_eq!(m.target, Some(3));
    assert_eq!(m.unused_stages(), vec![1, 2]);
    assert_eq!(
        m.stages[3].runs[1].cache_mount_targets,
        vec!["/var/cache/apt", "/var/lib/apt/lists"]
    );
}

#[test]
fn heredoc_scripts_are_split_when_a_shell_runs_them() {
    let (text, m) = model("heredoc_scripts.Dockerfile");
    let runs = &m.stages[0].runs;
    assert_eq!(runs.len(), 6);
    let split: Vec<Vec<&str>> = runs[0].commands.iter().map(words).collect();
    assert_eq!(
        split,
        vec![
            vec!["set", "-eux"],
            vec!["apt-get", "update"],
            vec![
                "apt-get",
                "install",
                "-y",
                "--no-install-recommends",
                "cuda-nvcc-12-4",
                "libcublas-dev-12-4"
            ],
            vec!["rm", "-rf", "/var/lib/apt/lists/*"],
        ]
    );
    let nvcc = &runs[0].commands[2].words[4];
    assert_eq!(&text[nvcc.span.start..nvcc.span.end], "${PKGS}");
    let update = &runs[0].commands[1].words[1];
    assert_eq!(&text[update.span.start..update.span.end], "update");

    // `bash -euxo pipefail <<'SCRIPT'`: bash reads the body from stdin; the
    // quoted delimiter stops Dockerfile expansion, not the shell's.
    let split: Vec<Vec<&str>> = runs[1].commands.iter().map(words).collect();
    assert_eq!(
        split,
        vec![
            vec!["bash", "-euxo", "pipefail"],
            vec!["pip", "install", "--no-cache-dir", "torch==2.5.1"],
        ]
    );
    // python3 and a python shebang: the bodies are not shell.
    assert_eq!(
        runs[2].commands.iter().map(words).collect::<Vec<_>>(),
        vec![vec!["python3"]]
    );
    assert!(runs[3].commands.is_empty());

    let split: Vec<Vec<&str>> = runs[4].commands.iter().map(words).collect();
    assert_eq!(
        split[1],
        vec![
            "conda",
            "install",
            "-y",
            "-c",
            "nvidia",
            "cuda-toolkit=12.4"
        ]
    );
    assert_eq!(split[2], vec!["echo", "done"]);
    let conda = package_installs(&runs[4].commands);
    assert_eq!(conda[0].channels, vec!["nvidia"]);

    // Exec form with `bash -c`.
    let split: Vec<Vec<&str>> = runs[5].commands.iter().map(words).collect();
    assert_eq!(split[1], vec!["pip", "install", "jax[cuda12]==0.4.30"]);
    let jax = &runs[5].commands[1].words[2];
    assert_eq!(&text[jax.span.start..jax.span.end], "jax[cuda12]==0.4.30");
}

#[test]
fn unresolved_and_undefined_from_args() {
    let (_, m) = model("undefined_args.Dockerfile");
    // Declared without a value: unknown until --build-arg, not undefined.
    assert_eq!(m.stages[0].base, BaseImage::Unresolved);
    assert_eq!(
        m.stages[0].base_text,
        "nvidia/cuda:${CUDA}-devel-ubuntu22.04"
    );
    assert!(m.stages[0].undefined_args.is_empty());
    // Never declared: undefined; a default still resolves its part.
    assert_eq!(m.stages[1].base, BaseImage::Unresolved);
    assert_eq!(m.stages[1].undefined_args, vec!["REGISTRY", "TAG"]);
    assert_eq!(m.stages[1].base_text, "${REGISTRY}/base:latest");
    assert_eq!(image_of(&m, 2).2.as_deref(), Some("22.04"));
    assert_eq!(m.stages[2].undefined_args, vec!["UBUNTU_VERSION"]);
    assert_eq!(
        m.stages[2].platform.as_deref(),
        Some(Platform::host().to_string().as_str())
    );
    assert_eq!(m.stages[3].base, BaseImage::Scratch);
    // Not a valid reference at all.
    assert_eq!(m.stages[4].base, BaseImage::Unresolved);

    let options = BuildOptions {
        build_args: vec![("CUDA".into(), "12.4.1".into())],
        target: Some("a".into()),
        platform: None,
    };
    let (_, m) = model_with("undefined_args.Dockerfile", &options);
    assert_eq!(
        image_of(&m, 0).2.as_deref(),
        Some("12.4.1-devel-ubuntu22.04")
    );
    assert_eq!(m.unused_stages(), vec![1, 2, 3, 4]);
}

fn model_of(text: &str, options: &BuildOptions) -> BuildModel {
    build_model(&parse(text).unwrap(), options)
}

#[test]
fn automatic_platform_args_pick_the_stage_for_the_target_platform() {
    let text = "\
FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04 AS runtime-amd64
FROM nvcr.io/nvidia/l4t-cuda:12.2.12-runtime AS runtime-arm64
FROM runtime-$TARGETARCH AS final
ARG TARGETARCH
ENV ARCH_SEEN=${TARGETARCH}
FROM ubuntu:22.04 AS no-arg
ENV ARCH_SEEN=${TARGETARCH:-unset}
";
    let on = |platform: &str| BuildOptions {
        platform: Some(Platform::parse(platform).unwrap()),
        ..Default::default()
    };
    let m = model_of(text, &on("linux/amd64"));
    assert_eq!(m.stages[2].base, BaseImage::Stage(0));
    assert_eq!(m.stages[2].env_value("ARCH_SEEN"), Some("amd64"));
    // Not visible in a stage that does not declare it (BuildKit's dispatchArg).
    assert_eq!(m.stages[3].env_value("ARCH_SEEN"), Some("unset"));
    let m = model_of(text, &on("linux/aarch64"));
    assert_eq!(m.stages[2].base, BaseImage::Stage(1));
    assert_eq!(m.stages[2].env_value("ARCH_SEEN"), Some("arm64"));
    assert_eq!(m.platform.to_string(), "linux/arm64");
    // A --build-arg still wins, as in BuildKit's defaultArgs.
    let options = BuildOptions {
        build_args: vec![("TARGETARCH".into(), "arm64".into())],
        ..on("linux/amd64")
    };
    assert_eq!(model_of(text, &options).stages[2].base, BaseImage::Stage(1));
}

#[test]
fn global_arg_without_value_keeps_the_automatic_value() {
    let text = "ARG TARGETPLATFORM\nARG BUILDARCH=riscv64\nFROM --platform=$TARGETPLATFORM ubuntu:$BUILDARCH\n";
    let options = BuildOptions {
        platform: Some(Platform::parse("linux/arm64").unwrap()),
        ..Default::default()
    };
    let m = model_of(text, &options);
    assert_eq!(m.stages[0].platform.as_deref(), Some("linux/arm64"));
    assert_eq!(m.stages[0].base_text, "ubuntu:riscv64");
}
