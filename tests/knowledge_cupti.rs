//! The CUPTI and runtime-environment knowledge: the embedded data loads,
//! every entry has a source, and the questions the rules ask get the answers
//! the knowledge base (cuda-packaging.md §2–§4) gives.

use cudalint::knowledge::cupti::{glob_match, CacheFix, CuptiKnowledge, Manager, Need};
use cudalint::knowledge::Version;

fn knowledge() -> CuptiKnowledge {
    CuptiKnowledge::embedded().unwrap()
}

fn extras(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn embedded_data_loads_with_sources_everywhere() {
    let k = knowledge();
    assert_eq!(k.majors.len(), 3);
    assert!(k.locations.len() >= 7);
    assert!(k.providers.iter().all(|p| !p.source.is_empty()));
    assert!(k.consumers.iter().all(|c| !c.source.is_empty()));
    assert!(k.hygiene.managers.iter().all(|m| !m.source.is_empty()));
    assert!(!k.runtime.source.is_empty());
}

#[test]
fn whole_document_and_bare_table_both_load() {
    let doc = cudalint::from_toml::parse(cudalint::knowledge::cupti::embedded_toml()).unwrap();
    let table = cudalint::from_toml::Table::new(&doc, "document")
        .unwrap()
        .get("cupti")
        .unwrap();
    let from_doc = CuptiKnowledge::from_area(&doc).unwrap();
    let from_table = CuptiKnowledge::from_area(table).unwrap();
    assert_eq!(from_doc.majors, from_table.majors);
}

#[test]
fn an_entry_without_source_is_rejected() {
    let value = CuptiKnowledge::from_toml_text(
        r#"[[cupti.providers]]
manager = "pip"
names = ["my-cupti"]
source = ""
"#,
    );
    let error = value.unwrap_err().to_string();
    assert!(error.contains("source"), "{error}");
}

#[test]
fn unknown_fields_and_bad_enums_are_rejected() {
    let typo = CuptiKnowledge::from_toml_text(
        "[[cupti.providers]]\nmanager = \"pip\"\nname = [\"x\"]\nsource = \"s\"\n",
    );
    assert!(typo.is_err());
    let bad_manager = CuptiKnowledge::from_toml_text(
        "[[cupti.providers]]\nmanager = \"brew\"\nnames = [\"x\"]\nsource = \"s\"\n",
    );
    assert!(bad_manager.is_err());
}

#[test]
fn sonames_follow_the_cuda_major() {
    let k = knowledge();
    assert_eq!(
        k.soname(&Version::new(11, 8, 0)).unwrap(),
        "libcupti.so.11.8"
    );
    assert_eq!(
        k.soname(&Version::new(11, 7, 1)).unwrap(),
        "libcupti.so.11.7"
    );
    assert_eq!(k.soname(&Version::new(12, 4, 1)).unwrap(), "libcupti.so.12");
    assert_eq!(k.soname(&Version::new(13, 0, 2)).unwrap(), "libcupti.so.13");
    assert!(k.soname(&Version::new(10, 2, 0)).is_none());
    assert_eq!(k.major(12).unwrap().apt_package_for(4), "cuda-cupti-12-4");
    assert_eq!(k.major(13).unwrap().pip_package, "nvidia-cuda-cupti");
    assert_eq!(k.major(13).unwrap().pip_lib_dir, "nvidia/cu13/lib");
    assert_eq!(k.major(12).unwrap().pip_lib_dir, "nvidia/cuda_cupti/lib");
}

#[test]
fn apt_installed_cupti_is_in_targets_not_extras() {
    let k = knowledge();
    let apt = k
        .locations
        .iter()
        .find(|l| l.packaging == "nvidia-apt")
        .unwrap();
    assert!(apt
        .dirs
        .iter()
        .any(|d| glob_match(d, "/usr/local/cuda/targets/x86_64-linux/lib")));
    assert!(!apt.dirs.iter().any(|d| d.contains("extras")));
    let lp = &k.library_path;
    assert!(lp.is_wrong_dir("/usr/local/cuda/extras/CUPTI/lib64"));
    assert!(lp.is_wrong_dir("/usr/local/cuda-12.4/extras/CUPTI/lib64/"));
    assert!(!lp.is_wrong_dir("/usr/local/cuda/lib64"));
    assert_eq!(
        lp.replacement("/usr/local/cuda/extras/CUPTI/lib64", "x86_64-linux"),
        "/usr/local/cuda/targets/x86_64-linux/lib"
    );
    assert_eq!(
        lp.replacement("/usr/local/cuda-12.4/extras/CUPTI/lib64", "sbsa-linux"),
        "/usr/local/cuda-12.4/targets/sbsa-linux/lib"
    );
    assert_eq!(lp.apt_empty_since(), Some(Version::new(12, 0, 0)));
    assert!(lp.is_runfile("cuda_12.4.1_550.54.15_linux.run"));
    assert_eq!(k.target_arch_dir("linux/arm64"), Some("sbsa-linux"));
    assert_eq!(k.target_arch_dir("linux/amd64"), Some("x86_64-linux"));
}

#[test]
fn packages_that_bring_cupti() {
    let k = knowledge();
    assert!(k.provider(Manager::Apt, "cuda-cupti-12-4", &[]).is_some());
    assert!(k
        .provider(Manager::Apt, "cuda-command-line-tools-12-4", &[])
        .is_some());
    assert!(k.provider(Manager::Apt, "libcupti11.8", &[]).is_some());
    assert!(k
        .provider(Manager::Apt, "cuda-libraries-12-4", &[])
        .is_none());
    assert!(k.provider(Manager::Apt, "cuda-nvtx-12-4", &[]).is_none());
    assert!(k
        .provider(Manager::Pip, "nvidia_cuda_cupti_cu12", &[])
        .is_some());
    assert!(k.provider(Manager::Pip, "nvidia-cuda-cupti", &[]).is_some());
    assert!(k
        .provider(Manager::Pip, "cuda-toolkit", &extras(&["cupti", "cudart"]))
        .is_some());
    assert!(k
        .provider(Manager::Pip, "cuda-toolkit", &extras(&["cudart"]))
        .is_none());
    assert!(k
        .provider(Manager::Pip, "tensorflow", &extras(&["and-cuda"]))
        .is_some());
    assert!(k.provider(Manager::Pip, "tensorflow", &[]).is_none());
    assert!(k
        .provider(Manager::Pip, "jax", &extras(&["cuda12"]))
        .is_some());
    assert!(k.provider(Manager::Conda, "cuda-cupti", &[]).is_some());
    // The same name under another manager is another package.
    assert!(k.provider(Manager::Conda, "cuda-cupti-12-4", &[]).is_none());
}

#[test]
fn what_needs_cupti() {
    let k = knowledge();
    let plugin = k.consumer(Manager::Pip, "torch_tb_profiler", &[]).unwrap();
    assert_eq!(plugin.need, Need::Profiler);
    assert!(k
        .consumer(Manager::Pip, "tensorboard-plugin-profile", &[])
        .is_some());
    assert!(k.consumer(Manager::Pip, "xprof", &[]).is_some());
    assert!(k.consumer(Manager::Pip, "tensorflow", &[]).is_some());
    // tensorflow[and-cuda] brings its own CUPTI wheel.
    assert!(k
        .consumer(Manager::Pip, "tensorflow", &extras(&["and-cuda"]))
        .is_none());
    assert!(k
        .consumer(Manager::Pip, "jax", &extras(&["cuda12-local"]))
        .is_some());
    assert!(k
        .consumer(Manager::Pip, "jax", &extras(&["cuda12"]))
        .is_none());
    assert!(k.consumer(Manager::Pip, "numpy", &[]).is_none());
    assert!(k.torch.is_torch("torch"));
    assert!(!k.torch.is_torch("torchvision"));
    assert!(k.torch.is_cpu_build("https://download.pytorch.org/whl/cpu"));
    assert!(k.torch.is_cpu_build("torch==2.5.1+cpu"));
    assert!(!k
        .torch
        .is_cpu_build("https://download.pytorch.org/whl/cu124"));
}

#[test]
fn source_builds_copies_and_removals() {
    let k = knowledge();
    assert!(k
        .source_builds
        .is_marker("https://github.com/pytorch/pytorch"));
    assert!(k.source_builds.disables("USE_KINETO", "0"));
    assert!(k.source_builds.disables("USE_KINETO", "OFF"));
    assert!(!k.source_builds.disables("USE_KINETO", "1"));
    assert!(k
        .source_builds
        .is_wheel_source("/opt/pytorch/dist/torch-2.5.0-cp311-linux_x86_64.whl"));
    assert!(k.source_builds.is_wheel_source("/src/dist/"));
    assert!(!k.source_builds.is_wheel_source("/etc/ssl/certs"));
    assert!(k.copies.matches("/usr/local/cuda/lib64/libcupti.so.12"));
    assert!(k.copies.matches("/usr/local/cuda"));
    assert!(!k.copies.matches("/usr/local/lib/python3.11"));
    assert!(k
        .removals
        .matches("/usr/local/lib/python3.11/site-packages/nvidia/cuda_cupti"));
    assert!(k
        .removals
        .matches("/opt/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13"));
    assert!(!k
        .removals
        .matches("/usr/local/lib/python3.11/site-packages/nvidia/cudnn"));
}

#[test]
fn loader_path_facts() {
    let k = knowledge();
    let rt = &k.runtime;
    assert!(rt.is_loader_var("LD_LIBRARY_PATH"));
    assert!(!rt.is_loader_var("LIBRARY_PATH"));
    assert!(rt.is_stub_dir("/usr/local/cuda/lib64/stubs"));
    assert!(rt.is_stub_dir("/usr/local/cuda-12.4/targets/x86_64-linux/lib/stubs/"));
    assert!(!rt.is_stub_dir("/usr/local/cuda/lib64"));
    assert!(rt.is_compat_dir("/usr/local/cuda/compat"));
    assert!(rt.is_compat_dir("/usr/local/cuda-12.4/compat/"));
    assert!(!rt.is_compat_dir("/usr/local/cuda/compat/lib"));
    assert!(!rt.is_compat_dir("/opt/compat"));
    assert_eq!(rt.error("stub").unwrap().code, 34);
    assert_eq!(rt.error("compat").unwrap().code, 804);
}

#[test]
fn disable_require_uses_go_parsebool() {
    let rt = knowledge().runtime;
    for truthy in ["1", "t", "T", "TRUE", "true", "True"] {
        assert!(rt.parses_true(truthy), "{truthy}");
    }
    for other in ["yes", "on", "tRuE", "0", "false", "", " 1"] {
        assert!(!rt.parses_true(other), "{other:?}");
    }
}

#[test]
fn cache_managers() {
    let k = knowledge();
    let apt = k.cache_manager("apt").unwrap();
    assert!(apt.is_program("apt-get") && apt.is_program("apt"));
    // apt's lists are written by `apt-get update`, not by installs, which
    // only read them.
    assert!(k.hygiene.for_installs_by("apt").is_none());
    assert!(apt.also_fills.iter().any(|s| s == "update"));
    assert_eq!(apt.reused_by, vec!["apt"]);
    assert_eq!(
        k.hygiene.for_installs_by("micromamba").unwrap().name,
        "conda"
    );
    assert!(k.hygiene.for_installs_by("pipx").is_none());
    assert!(apt.is_removed_by("/var/lib/apt/lists/*"));
    // A shell glob that takes the lists directory itself.
    assert!(apt.is_removed_by("/var/lib/apt/lists*"));
    assert!(!apt.is_removed_by("/var/lib/apt/lists/partial*"));
    assert!(!apt.is_removed_by("/var/cache/apt/archives"));
    assert!(apt.is_covered_by_mount("/var/lib/apt"));
    assert!(!apt.is_covered_by_mount("/var/cache/apt"));
    assert_eq!(apt.fix, CacheFix::AppendCommand);
    let pip = k.cache_manager("pip").unwrap();
    assert!(pip.is_program("pip3.11") && pip.is_module_runner("python3"));
    assert!(pip.is_covered_by_mount("/root/.cache/pip"));
    assert!(pip.is_removed_by("~/.cache/pip"));
    // pip turns the cache off for any value strtobool accepts, `0` included.
    assert!(pip.env_disables("1") && pip.env_disables("off") && pip.env_disables("TRUE"));
    assert!(!pip.env_disables("maybe"));
    assert_eq!(pip.fix, CacheFix::InsertFlag);
    let conda = k.cache_manager("conda").unwrap();
    assert!(conda.is_program("micromamba"));
    assert!(conda.is_covered_by_mount("/opt/conda/pkgs"));
    let poetry = k.cache_manager("poetry").unwrap();
    assert!(poetry.is_removed_by("/root/.cache/pypoetry"));
    assert_eq!(poetry.cache_dir_env.as_deref(), Some("POETRY_CACHE_DIR"));
}

#[test]
fn user_entries_extend_and_replace() {
    let mut k = knowledge();
    let before = k.providers.len();
    let user = CuptiKnowledge::from_toml_text(
        r#"[[cupti.providers]]
manager = "apt"
names = ["mycorp-cupti"]
source = "internal mirror"

[[cupti.majors]]
cuda_major = 12
soname = "libcupti.so.12"
pip_package = "mycorp-cupti-cu12"
pip_lib_dir = "mycorp/lib"
apt_package = "mycorp-cupti-{major}"
source = "internal"
"#,
    )
    .unwrap();
    k.extend(user);
    assert_eq!(k.providers.len(), before + 1);
    assert!(k.provider(Manager::Apt, "mycorp-cupti", &[]).is_some());
    assert_eq!(k.majors.len(), 3);
    assert_eq!(k.major(12).unwrap().pip_package, "mycorp-cupti-cu12");
    // Tables the user file leaves out stay as they were.
    assert!(k.runtime.is_stub_dir("/usr/local/cuda/lib64/stubs"));
    assert!(k.cache_manager("pip").is_some());
}
