//! The CUDA inventory (`image::inventory`) of an in-memory image holding gcc-built libraries named
//! and SONAMEd as NVIDIA's are, toolkit and Python version files, and NVIDIA config entries.

mod image_elf_support;

use std::collections::BTreeMap;

use cudalint::image::inventory::{inventory, render_text, LibraryFamily};
use image_elf_support::{scratch, shared_lib, MemFs};

#[test]
fn lists_runtimes_libraries_packages_torch_and_nvidia_config() {
    let dir = scratch("inventory");
    let cudart = shared_lib(&dir, "libcudart.so.12.4.127", "libcudart.so.12", &[], &[]);
    let cupti = shared_lib(&dir, "libcupti.so.12", "libcupti.so.12", &[], &[]);
    let site = "/usr/local/lib/python3.10/dist-packages";
    let mut fs = MemFs::default();
    fs.file(
        "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12.4.127",
        cudart,
    );
    fs.symlink(
        "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12",
        "libcudart.so.12.4.127",
    );
    fs.file(
        &format!("{site}/nvidia/cuda_cupti/lib/libcupti.so.12"),
        cupti,
    );
    fs.text(
        "/usr/local/cuda-12.4/version.json",
        r#"{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}"#,
    );
    fs.text(
        &format!("{site}/nvidia_cuda_cupti_cu12-12.4.127.dist-info/METADATA"),
        "Metadata-Version: 2.1\nName: nvidia-cuda-cupti-cu12\nVersion: 12.4.127\n\nLong description\nName: not-this\n",
    );
    fs.text(
        &format!("{site}/torch-2.5.1+cu124.dist-info/METADATA"),
        "Name: torch\nVersion: 2.5.1+cu124\n",
    );
    fs.text(
        &format!("{site}/requests-2.0.dist-info/METADATA"),
        "Name: requests\nVersion: 2.0\n",
    );
    fs.text(
        &format!("{site}/torch/version.py"),
        "from typing import Optional\n__version__ = '2.5.1+cu124'\ndebug = False\ncuda: Optional[str] = '12.4'\nhip: Optional[str] = None\n",
    );
    let env = vec![
        "PATH=/usr/bin".to_string(),
        "NVIDIA_REQUIRE_CUDA=cuda>=12.4".into(),
        "CUDA_VERSION=12.4.1".into(),
    ];
    let labels = BTreeMap::from([
        ("com.nvidia.cudnn.version".to_string(), "9.1.0".to_string()),
        ("maintainer".into(), "x".into()),
    ]);
    let found = inventory(&fs, &env, &labels);

    let runtimes: Vec<_> = found.cuda_runtimes().collect();
    assert_eq!(runtimes.len(), 1, "the symlink is not a second copy");
    assert_eq!(runtimes[0].soname.as_deref(), Some("libcudart.so.12"));
    assert_eq!(runtimes[0].version.as_deref(), Some("12.4.127"));
    assert!(!runtimes[0].pip);
    let cupti = found
        .libraries
        .iter()
        .find(|l| l.family == LibraryFamily::Cupti)
        .unwrap();
    assert!(cupti.pip);
    assert_eq!(cupti.soname.as_deref(), Some("libcupti.so.12"));
    assert_eq!(found.toolkits[0].version.as_deref(), Some("12.4.1"));
    assert_eq!(found.nvidia_packages.len(), 1);
    assert_eq!(found.nvidia_packages[0].version, "12.4.127");
    assert_eq!(
        found
            .cuda_python_packages
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>(),
        ["torch"]
    );
    assert_eq!(found.torch[0].cuda.as_deref(), Some("12.4"));
    assert_eq!(found.torch[0].version.as_deref(), Some("2.5.1+cu124"));
    assert_eq!(
        found.nvidia_env.keys().collect::<Vec<_>>(),
        ["CUDA_VERSION", "NVIDIA_REQUIRE_CUDA"]
    );
    assert_eq!(found.nvidia_labels.len(), 1);

    let text = render_text(&found);
    assert!(text.contains("CUDA runtime  12.4.127"), "{text}");
    assert!(
        text.contains("torch 2.5.1+cu124 built for CUDA 12.4"),
        "{text}"
    );
    let json = serde_json::to_value(&found).unwrap();
    assert_eq!(json["libraries"].as_array().unwrap().len(), 2);
}

#[test]
fn cpu_torch_and_empty_image() {
    let mut fs = MemFs::default();
    fs.text(
        "/usr/lib/python3/site-packages/torch/version.py",
        "__version__ = '2.5.1+cpu'\ncuda = None\n",
    );
    let found = inventory(&fs, &[], &BTreeMap::new());
    assert_eq!(found.torch[0].cuda, None);
    assert!(render_text(&found).contains("none (CPU)"));
    assert_eq!(
        render_text(&inventory(&MemFs::default(), &[], &BTreeMap::new())),
        "No CUDA content found.\n"
    );
}
