//! The base-image knowledge: embedded data, classification, tag validation,
//! EOL lookup, runtime twins, devel package patterns, and user files
//! (mirrors, families) with located errors.

use std::path::PathBuf;

use cudalint::dockerfile::model::ImageRef;
use cudalint::knowledge::images::{EolBasis, ReleaseStatus, TagProblem, Variant};
use cudalint::knowledge::{Knowledge, Version};

fn image(registry: Option<&str>, repository: &str, tag: Option<&str>) -> ImageRef {
    let mut text = String::new();
    if let Some(r) = registry {
        text.push_str(r);
        text.push('/');
    }
    text.push_str(repository);
    if let Some(t) = tag {
        text.push(':');
        text.push_str(t);
    }
    ImageRef {
        text,
        registry: registry.map(String::from),
        repository: repository.into(),
        tag: tag.map(String::from),
        digest: None,
    }
}

fn cuda(tag: &str) -> ImageRef {
    image(None, "nvidia/cuda", Some(tag))
}

fn embedded() -> Knowledge {
    Knowledge::embedded().expect("embedded knowledge loads")
}

fn user_file(name: &str, text: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("knowledge-images");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn embedded_data_is_complete_enough_to_use() {
    let k = embedded().images;
    assert!(k.releases.len() >= 40, "{} releases", k.releases.len());
    assert_eq!(k.variants.len(), 3);
    assert!(k.devel_packages.len() >= 20);
    assert!(k.families.iter().any(|f| f.name == "pytorch/pytorch"));
    // Newest first, every entry sourced.
    assert!(k.releases.windows(2).all(|w| w[0].version > w[1].version));
    assert!(k.releases.iter().all(|r| !r.source.is_empty()));
    assert!(k.devel_packages.iter().all(|p| !p.source.is_empty()));
    assert!(k.families.iter().all(|f| !f.source.is_empty()));
    let devel = k.variant(Variant::Devel).unwrap();
    assert!(devel.has_cupti && devel.has_compiler && devel.library_path_stubs);
    let runtime = k.variant(Variant::Runtime).unwrap();
    assert!(!runtime.has_cupti && !runtime.has_compiler);
}

#[test]
fn classifies_nvidia_cuda_tags_from_any_registry_spelling() {
    let k = embedded().images;
    let facts = k.classify(&cuda("12.4.1-cudnn-devel-ubuntu22.04")).unwrap();
    assert_eq!(facts.family, "nvidia/cuda");
    assert_eq!(facts.cuda, Some(Version::new(12, 4, 1)));
    assert_eq!(facts.variant, Some(Variant::Devel));
    assert_eq!(facts.os.as_deref(), Some("ubuntu22.04"));
    assert!(facts.devel_sized && facts.has_cupti && facts.has_compiler);
    assert!(facts.unknown.is_empty());

    let facts = k
        .classify(&image(
            Some("docker.io"),
            "nvidia/cuda",
            Some("11.8.0-cudnn8-runtime-ubuntu22.04"),
        ))
        .unwrap();
    assert_eq!(
        (facts.variant, facts.cudnn),
        (Some(Variant::Runtime), Some(8))
    );
    assert!(!facts.has_cupti && !facts.devel_sized);

    let facts = k
        .classify(&image(
            Some("nvcr.io"),
            "nvidia/cuda",
            Some("12.8.1-base-ubi9"),
        ))
        .unwrap();
    assert_eq!(facts.variant, Some(Variant::Base));

    assert_eq!(k.classify(&image(None, "ubuntu", Some("22.04"))), None);
    assert_eq!(
        k.classify(&image(
            Some("ghcr.io"),
            "nvidia/cuda",
            Some("12.4.1-devel-ubuntu22.04")
        )),
        None
    );
}

#[test]
fn classifies_pytorch_and_ngc_families() {
    let k = embedded().images;
    let rt = k
        .classify(&image(
            None,
            "pytorch/pytorch",
            Some("2.5.1-cuda12.4-cudnn9-runtime"),
        ))
        .unwrap();
    assert_eq!(rt.family, "pytorch/pytorch");
    assert_eq!(rt.cuda, Some(Version::parse("12.4").unwrap()));
    assert_eq!((rt.variant, rt.cudnn), (Some(Variant::Runtime), Some(9)));
    // torch NEEDs libcupti, so the runtime image has it; no nvcc there.
    assert!(rt.has_cupti && !rt.has_compiler && !rt.devel_sized);
    let dev = k
        .classify(&image(
            None,
            "pytorch/pytorch",
            Some("2.5.1-cuda12.4-cudnn9-devel"),
        ))
        .unwrap();
    assert!(dev.devel_sized && dev.has_compiler);

    let ngc = k
        .classify(&image(Some("nvcr.io"), "nvidia/pytorch", Some("24.01-py3")))
        .unwrap();
    assert_eq!(ngc.family, "NGC PyTorch");
    assert!(ngc.devel_sized);
    assert_eq!(ngc.cuda, None);
    assert!(ngc.is_unknown("cuda") && ngc.is_unknown("has_cupti"));
}

#[test]
fn tag_validation_finds_tags_that_cannot_exist() {
    let k = embedded().images;
    let problems = |r: &ImageRef| k.validate_tag(r);
    assert_eq!(
        problems(&image(None, "nvidia/cuda", None)),
        vec![TagProblem::NoTag]
    );
    assert_eq!(problems(&cuda("latest")), vec![TagProblem::Latest]);
    assert_eq!(
        problems(&cuda("12.4.1-ubuntu22.04")),
        vec![TagProblem::MissingVariant]
    );
    assert_eq!(problems(&cuda("12.4.1-devel")), vec![TagProblem::MissingOs]);
    assert!(matches!(
        problems(&cuda("12.4.1-dev-ubuntu22.04"))[..],
        [TagProblem::UnknownVariant { .. }]
    ));
    assert!(matches!(
        &problems(&cuda("12.4.1-devel-ubuntu24.04"))[..],
        [TagProblem::OsNotPublished { os, published, .. }] if os == "ubuntu24.04" && published.contains(&"ubuntu22.04".to_string())
    ));
    // 12.4.1 has `cudnn-devel`, not the older `cudnn8-devel` form.
    assert!(matches!(
        &problems(&cuda("12.4.1-cudnn8-devel-ubuntu22.04"))[..],
        [TagProblem::VariantNotPublished { published, .. }] if published.contains(&"cudnn-devel".to_string())
    ));
    assert!(matches!(
        &problems(&cuda("12.7.0-devel-ubuntu22.04"))[..],
        [TagProblem::VersionNotPublished { .. }]
    ));

    // Tags that exist, or may exist (newer than the data, incomplete lists).
    for tag in [
        "12.4.1-cudnn-devel-ubuntu22.04",
        "11.8.0-cudnn8-runtime-ubuntu22.04",
        "13.0.0-base-rockylinux10",
        "13.0.2-runtime-ubuntu24.04",
        "14.1.0-devel-ubuntu26.04",
        "12.9.3-devel-ubuntu24.04",
    ] {
        assert_eq!(problems(&cuda(tag)), vec![], "{tag}");
    }
    let mut by_digest = image(None, "nvidia/cuda", None);
    by_digest.digest = Some("sha256:abc".into());
    assert_eq!(problems(&by_digest), vec![]);

    // pytorch/pytorch: version-shaped tags must have the full form; named tags are left alone.
    assert!(matches!(
        &problems(&image(
            None,
            "pytorch/pytorch",
            Some("2.5.1-cuda12.4-cudnn9")
        ))[..],
        [TagProblem::Malformed { .. }]
    ));
    assert!(matches!(
        &problems(&image(
            None,
            "pytorch/pytorch",
            Some("2.5.1-cuda12.4-cudnn9-slim")
        ))[..],
        [TagProblem::UnknownVariant { .. }]
    ));
    assert_eq!(
        problems(&image(None, "pytorch/pytorch", Some("latest"))),
        vec![]
    );
    assert_eq!(
        problems(&image(
            None,
            "pytorch/pytorch",
            Some("2.5.1-cuda12.4-cudnn9-devel")
        )),
        vec![]
    );
    assert_eq!(
        problems(&image(Some("nvcr.io"), "nvidia/pytorch", Some("latest"))),
        vec![]
    );
}

#[test]
fn eol_lookup_follows_catalogue_and_policy() {
    let k = embedded().images;
    let v = |s: &str| Version::parse(s).unwrap();
    assert_eq!(k.eol(v("13.4.2")), None);
    assert_eq!(k.eol(v("13.0.2")), None);
    // Every 12.x image set went EOL with R535 (June 2026).
    let twelve = k.eol(v("12.9.1")).unwrap();
    assert_eq!(twelve.since.as_deref(), Some("2026-06-01"));
    assert!(twelve
        .supported_alternatives
        .iter()
        .all(|a| a.major() == 13));
    assert_eq!(
        k.eol(v("14.0.0")),
        None,
        "newer than the data is unknown, not EOL"
    );

    let old = k.eol(v("11.8.0")).unwrap();
    assert_eq!(old.status, ReleaseStatus::Eol);
    assert_eq!(old.since.as_deref(), Some("2024-07-01"));
    assert_eq!(old.deletion_after_months, Some(6));
    assert!(old.source.contains("container_tags.xlsx"));

    let superseded = k.eol(v("12.9.0")).unwrap();
    assert_eq!(superseded.status, ReleaseStatus::Eol);
    assert!(superseded.supported_alternatives.contains(&v("13.4.2")));

    // Not in the catalogue, but a later point release is: EOL by policy.
    let by_policy = k.eol(v("12.8.0")).unwrap();
    assert_eq!(by_policy.status, ReleaseStatus::Eol);
    let by_policy = k.eol(v("12.1.0")).unwrap();
    assert_eq!(by_policy.status, ReleaseStatus::Eol);
    let unlisted = k.eol(v("12.9.0"));
    assert!(unlisted.is_some());
    assert!(matches!(
        k.eol(v("13.0.1")).unwrap().basis,
        EolBasis::Superseded { .. }
    ));

    assert_eq!(k.eol(v("10.2")).unwrap().status, ReleaseStatus::Removed);
    let ancient = k.eol(v("7.5")).unwrap();
    assert_eq!(
        (ancient.status, ancient.basis),
        (ReleaseStatus::Removed, EolBasis::OlderThanCatalogue)
    );
}

#[test]
fn runtime_twin_only_when_published() {
    let k = embedded().images;
    assert_eq!(
        k.runtime_twin("12.4.1-cudnn-devel-ubuntu22.04").as_deref(),
        Some("12.4.1-cudnn-runtime-ubuntu22.04")
    );
    assert_eq!(
        k.runtime_twin("12.8.1-devel-ubi9").as_deref(),
        Some("12.8.1-runtime-ubi9")
    );
    assert_eq!(
        k.runtime_twin("12.4.1-runtime-ubuntu22.04"),
        None,
        "not devel"
    );
    assert_eq!(
        k.runtime_twin("13.0.2-cudnn-devel-ubuntu24.04").as_deref(),
        Some("13.0.2-cudnn-runtime-ubuntu24.04")
    );
    // 13.4.2's tag list is incomplete: its runtime twin on 26.04 is not known to exist.
    assert_eq!(k.runtime_twin("13.4.2-devel-ubuntu26.04"), None);
    assert_eq!(
        k.runtime_twin("12.4.1-devel-ubuntu24.04"),
        None,
        "unpublished devel"
    );
    assert_eq!(k.runtime_twin("99.0.0-devel-ubuntu22.04"), None);
}

#[test]
fn devel_package_patterns() {
    let k = embedded().images;
    for devel in [
        "cuda-toolkit-12-4",
        "cuda-toolkit",
        "cuda",
        "cuda-12-4",
        "cuda-nvcc-12-4",
        "cuda-libraries-dev-12-4",
        "cuda-cudart-dev-12-4=12.4.127-1",
        "cuda-cudart-devel-12-4",
        "libcublas-dev-12-4",
        "libcudnn9-dev-cuda-12",
        "libcudnn8-dev",
        "nsight-compute-2025.3.1",
        "cuda-nsight-compute-12-4",
        "cuda-toolkit-12-4-12.4.1-1",
    ] {
        assert!(k.devel_package(devel).is_some(), "{devel}");
    }
    for runtime in [
        "cuda-compat-12-4",
        "cuda-cudart-12-4",
        "libcudnn9-cuda-12",
        "libcurl4-openssl-dev",
        "libcublas-12-4",
        "cuda-drivers",
        "libnccl2",
        "python3-dev",
    ] {
        assert!(k.devel_package(runtime).is_none(), "{runtime}");
    }
}

#[test]
fn toolkit_dir_paths() {
    let k = embedded().images;
    let dir = k.toolkit_dir.as_ref().unwrap();
    for path in [
        "/usr/local/cuda",
        "/usr/local/cuda/",
        "/usr/local/cuda-12.4",
        "/usr/local/cuda-13",
        "/usr/local/",
        "/usr/local",
    ] {
        assert!(dir.matching(path).is_some(), "{path}");
    }
    for path in [
        "/usr/local/cuda/lib64",
        "/usr/local/cuda-12.4/lib64/libcudart.so.12",
        "/usr/local/bin",
        "/usr",
    ] {
        assert!(dir.matching(path).is_none(), "{path}");
    }
    assert!(dir.size_gb > 4.0);
}

#[test]
fn user_file_adds_mirrors_families_and_releases() {
    let path = user_file(
        "corp.toml",
        r#"
[[images.mirrors]]
prefix = "registry.corp/mirror/nvidia/cuda"
upstream = "nvidia/cuda"
source = "corp registry docs"

[[images.mirrors]]
prefix = "registry.corp/dockerhub"
upstream = ""
source = "corp pull-through cache"

[[images.families]]
name = "corp base"
repositories = ["registry.corp/ml/cuda-base"]
tag = "cu{cuda}-{variant}"
variants = { rt = "runtime", dev = "devel" }
source = "corp image README"

[[images.nvidia_cuda.releases]]
version = "13.1.0"
status = "supported"
published = [{ os = ["ubuntu24.04"], tags = ["base", "runtime", "devel"] }]
source = "corp check"
"#,
    );
    let k = Knowledge::load(&[path]).unwrap().images;
    let mirrored = image(
        Some("registry.corp"),
        "mirror/nvidia/cuda",
        Some("12.4.1-devel-ubuntu22.04"),
    );
    let facts = k.classify(&mirrored).unwrap();
    assert_eq!(
        (facts.family.as_str(), facts.variant),
        ("nvidia/cuda", Some(Variant::Devel))
    );
    assert_eq!(
        k.validate_tag(&image(
            Some("registry.corp"),
            "mirror/nvidia/cuda",
            Some("latest")
        )),
        vec![TagProblem::Latest]
    );

    let cache = image(
        Some("registry.corp"),
        "dockerhub/pytorch/pytorch",
        Some("2.5.1-cuda12.4-cudnn9-runtime"),
    );
    assert_eq!(k.classify(&cache).unwrap().family, "pytorch/pytorch");

    let corp = k
        .classify(&image(
            Some("registry.corp"),
            "ml/cuda-base",
            Some("cu12.6-dev"),
        ))
        .unwrap();
    assert_eq!(corp.family, "corp base");
    assert_eq!(corp.cuda, Some(Version::parse("12.6").unwrap()));
    assert!(corp.devel_sized && corp.has_compiler);

    assert!(k.release(Version::new(13, 1, 0)).is_some());
    assert!(k.validate_tag(&cuda("13.1.0-devel-ubi9")).len() == 1);
}

#[test]
fn bad_user_files_are_located() {
    let err = Knowledge::load(&[user_file("syntax.toml", "[images\nx = 1\n")]).unwrap_err();
    assert!(err.path.ends_with("syntax.toml"));
    assert_eq!(err.line, Some(1));

    let bad_version =
        "\n[[images.nvidia_cuda.releases]]\nversion = \"12.x\"\nstatus = \"eol\"\nsource = \"s\"\n";
    let err = Knowledge::load(&[user_file("version.toml", bad_version)]).unwrap_err();
    assert_eq!(err.line, Some(3), "{err}");
    assert!(err.message.contains("12.x"), "{err}");

    let unsourced = "[[images.devel_packages]]\npattern = \"x\"\nwhat = \"y\"\n";
    let err = Knowledge::load(&[user_file("unsourced.toml", unsourced)]).unwrap_err();
    assert!(err.message.contains("source"), "{err}");

    let err = Knowledge::load(&[user_file("table.toml", "[imagez]\n")]).unwrap_err();
    assert_eq!(err.line, Some(1), "{err}");

    let bad_status = "[[images.nvidia_cuda.releases]]\nversion = \"12.4.1\"\nstatus = \"gone\"\nsource = \"s\"\n";
    let err = Knowledge::load(&[user_file("status.toml", bad_status)]).unwrap_err();
    assert!(err.message.contains("gone") && err.line.is_some(), "{err}");

    // Every area's values are located at their line, not only the images' (the other areas were
    // located at their table's first header until their reader kept spans).
    let bad_driver = "[[toolkits.releases]]\nversion = \"12.4.1\"\nlabel = \"x\"\n\ndriver = \"55x\"\nsource = \"s\"\n";
    let err = Knowledge::load(&[user_file("driver.toml", bad_driver)]).unwrap_err();
    assert_eq!((err.line, err.column), (Some(5), Some(10)), "{err}");
    assert_eq!(err.message, "invalid version `55x`", "{err}");
    let typo = "[cupti]\n[[cupti.providers]]\nmanager = \"pip\"\nname = [\"x\"]\nsource = \"s\"\n";
    let err = Knowledge::load(&[user_file("typo.toml", typo)]).unwrap_err();
    assert_eq!((err.line, err.column), (Some(4), Some(1)), "{err}");
    assert!(err.message.starts_with("unknown field `name`"), "{err}");
    // A check across entries has no one value to point at: the area's first header.
    let unsourced = "\n[[cupti.providers]]\nmanager = \"pip\"\nnames = [\"x\"]\nsource = \"\"\n";
    let err = Knowledge::load(&[user_file("unsourced-cupti.toml", unsourced)]).unwrap_err();
    assert_eq!(err.line, Some(2), "{err}");

    let err = Knowledge::load(&[PathBuf::from("/nonexistent/cudalint.toml")]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("/nonexistent/cudalint.toml: cannot read"),
        "{err}"
    );
}

#[test]
fn the_env_a_base_image_sets_for_run_scripts() {
    let k = Knowledge::embedded().expect("embedded knowledge loads");
    let env = |registry, repository, tag| k.images.image_env(&image(registry, repository, tag));
    let cuda_version = |pairs: Vec<(String, String)>| {
        pairs
            .into_iter()
            .find(|(key, _)| key == "CUDA_VERSION")
            .map(|(_, v)| v)
    };
    assert_eq!(
        cuda_version(env(None, "nvidia/cuda", Some("13.0.0-devel-rockylinux8"))).as_deref(),
        Some("13.0.0")
    );
    assert_eq!(
        cuda_version(env(
            Some("nvcr.io"),
            "nvidia/cuda",
            Some("12.4.1-runtime-ubuntu22.04")
        ))
        .as_deref(),
        Some("12.4.1")
    );
    // No version in the tag, or not an NVIDIA CUDA image: nothing known.
    assert_eq!(cuda_version(env(None, "nvidia/cuda", Some("latest"))), None);
    assert_eq!(cuda_version(env(None, "ubuntu", Some("22.04"))), None);
    // A parent_env family keeps its own ENV.
    assert!(env(
        Some("registry.access.redhat.com"),
        "ubi9/python-311",
        Some("latest")
    )
    .iter()
    .any(|(k, v)| k == "PIP_NO_CACHE_DIR" && v == "off"));
}
