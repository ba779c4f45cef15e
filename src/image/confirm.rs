//! Checks a Dockerfile finding's [`Prediction`] against what the built image holds (its
//! [`Inventory`]: torch's `version.py`, pip dist-info, the CUDA libraries and their SONAMEs, dpkg's
//! installed per-CUDA builds), for
//! `cudalint build` and `cudalint image --dockerfile`. [`judge`] decides; [`annotate`] words the
//! verdict into the finding: a confirmed prediction keeps its severity and gains the evidence, a
//! cleared one drops to `info` and says what the image holds instead. A prediction the image cannot
//! speak to (no torch in it at all) is left as the Dockerfile rule wrote it.

use super::inventory::{cuda_major_in_name, CudaLibrary, Inventory, LibraryFamily, PythonPackage};
use crate::diagnostic::{Diagnostic, Severity};
use crate::knowledge::Version;
use crate::prediction::Prediction;

/// What the image says about a prediction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The image holds what was predicted; the evidence says what.
    Confirmed(String),
    /// The image holds something else; the evidence says what.
    Cleared(String),
}

/// The image's answer to `prediction`, or `None` when it holds nothing that bears on it.
pub fn judge(prediction: &Prediction, inventory: &Inventory) -> Option<Verdict> {
    match prediction {
        Prediction::WheelCuda { package, cuda } => wheel_cuda(package, *cuda, inventory),
        Prediction::SonameMissing { soname, .. } => Some(soname_missing(soname, inventory)),
        Prediction::DistroCudaLibraries { .. } => Some(distro_libraries(inventory)),
        Prediction::AptCudaBuild {
            package,
            cuda_major,
        } => apt_cuda_build(package, *cuda_major, inventory),
    }
}

fn apt_cuda_build(package: &str, cuda_major: u32, inventory: &Inventory) -> Option<Verdict> {
    let deb = inventory.cuda_debs.iter().find(|deb| deb.name == package)?;
    let built_for = deb.cuda()?;
    let evidence = format!("{} {} (the CUDA {built_for} build)", deb.name, deb.version);
    Some(if built_for.major() == cuda_major {
        Verdict::Confirmed(evidence)
    } else {
        Verdict::Cleared(format!("it holds {evidence}"))
    })
}

/// Adds the image's verdict to a finding that carries a prediction, as its first note (`image`
/// names the image); whether the image had one.
pub fn annotate(finding: &mut Diagnostic, inventory: &Inventory, image: &str) -> bool {
    let Some(prediction) = &finding.prediction else {
        return false;
    };
    match judge(prediction, inventory) {
        Some(Verdict::Confirmed(evidence)) => {
            finding
                .notes
                .insert(0, format!("confirmed by the image {image}: {evidence}"));
            true
        }
        Some(Verdict::Cleared(evidence)) => {
            finding
                .notes
                .insert(0, format!("cleared by the image {image}: {evidence}"));
            finding.severity = Severity::Info;
            true
        }
        None => false,
    }
}

/// `cu132` / `cuda = '13.2'` as a CUDA version to the precision predicted.
fn same_cuda(predicted: Version, held: Version) -> bool {
    if predicted.written >= 2 {
        predicted.major_minor() == held.major_minor()
    } else {
        predicted.major() == held.major()
    }
}

fn wheel_cuda(package: &str, cuda: Version, inventory: &Inventory) -> Option<Verdict> {
    if package == "torch" {
        // A CPU build has `cuda = None`; an image with several torch copies is judged by all of
        // them: confirmed if any carries the predicted CUDA.
        let builds: Vec<String> = inventory
            .torch
            .iter()
            .map(|torch| {
                let version = torch.version.as_deref().unwrap_or("(unknown version)");
                match &torch.cuda {
                    Some(held) => format!("torch {version} (CUDA {held})"),
                    None => format!("torch {version} (a CPU build)"),
                }
            })
            .collect();
        if builds.is_empty() {
            return None;
        }
        let hit = inventory.torch.iter().any(|torch| {
            torch
                .cuda
                .as_deref()
                .and_then(Version::parse)
                .is_some_and(|held| same_cuda(cuda, held))
        });
        let evidence = builds.join(", ");
        return Some(if hit {
            Verdict::Confirmed(evidence)
        } else {
            Verdict::Cleared(format!("it holds {evidence}"))
        });
    }
    // Other packages say their CUDA in a `+cuNNN` local version, when they do, or install a
    // build named for its CUDA major (`tensorrt` → `tensorrt-cu13`, `jax[cuda]` →
    // `jax-cuda12-plugin`).
    let normalized = |name: &str| name.to_ascii_lowercase().replace('_', "-");
    let Some(held) = inventory
        .cuda_python_packages
        .iter()
        .find(|p| normalized(&p.name) == package)
        .filter(|p| p.version.contains("+cu"))
    else {
        return named_build(package, cuda, inventory);
    };
    let local = held.version.split_once("+cu")?.1;
    let held_cuda = local_cuda(local)?;
    let evidence = format!("{} {}", held.name, held.version);
    Some(if same_cuda(cuda, held_cuda) {
        Verdict::Confirmed(evidence)
    } else {
        Verdict::Cleared(format!("it holds {evidence}"))
    })
}

/// The builds of `package` the image holds under a name that carries their CUDA major
/// (`tensorrt-cu13`, `jax-cuda12-plugin`): confirmed if one is of the predicted major, cleared if
/// all are of another, nothing to say without one.
fn named_build(package: &str, cuda: Version, inventory: &Inventory) -> Option<Verdict> {
    let prefix = format!("{package}-");
    let builds: Vec<(&PythonPackage, u32)> = inventory
        .cuda_python_packages
        .iter()
        .filter_map(|p| {
            let name = p.name.to_ascii_lowercase().replace('_', "-");
            let major = name.strip_prefix(&prefix).and_then(cuda_major_in_name)?;
            Some((p, major))
        })
        .collect();
    let evidence = builds
        .iter()
        .map(|(p, _)| format!("{} {}", p.name, p.version))
        .collect::<Vec<_>>()
        .join(", ");
    if builds.is_empty() {
        None
    } else if builds.iter().any(|(_, major)| *major == cuda.major()) {
        Some(Verdict::Confirmed(evidence))
    } else {
        Some(Verdict::Cleared(format!("it holds {evidence}")))
    }
}

/// `132` → 13.2, `118` → 11.8 (the last digit is the minor).
fn local_cuda(digits: &str) -> Option<Version> {
    let digits: String = digits.chars().take_while(char::is_ascii_digit).collect();
    if digits.len() < 2 {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Version::parse(&format!("{major}.{minor}"))
}

/// A library file that answers to `soname`: by its ELF SONAME, else by its file name
/// (`libcudnn.so.8.9.7` answers to `libcudnn.so.8`).
fn answers_to(library: &CudaLibrary, soname: &str) -> bool {
    if let Some(own) = &library.soname {
        return own == soname;
    }
    let name = library.path.rsplit('/').next().unwrap_or(&library.path);
    name == soname || name.starts_with(&format!("{soname}."))
}

fn soname_missing(soname: &str, inventory: &Inventory) -> Verdict {
    if let Some(found) = inventory
        .libraries
        .iter()
        .find(|library| answers_to(library, soname))
    {
        return Verdict::Cleared(format!("it holds {soname} at {}", found.path));
    }
    let stem = soname.split(".so").next().unwrap_or(soname);
    let others: Vec<String> = inventory
        .libraries
        .iter()
        .filter(|library| {
            library
                .path
                .rsplit('/')
                .next()
                .unwrap_or("")
                .starts_with(stem)
        })
        .filter_map(|library| library.soname.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    Verdict::Confirmed(if others.is_empty() {
        format!("no {soname}, and no other {stem} either")
    } else {
        format!("no {soname}; it holds {}", others.join(", "))
    })
}

/// The distribution's multiarch library directories, where Debian and Ubuntu put their CUDA
/// packages' libraries (NVIDIA's go under /usr/local/cuda or into pip wheels).
fn in_distribution_dir(path: &str) -> bool {
    path.strip_prefix("/usr/lib/")
        .and_then(|rest| rest.split_once('/'))
        .is_some_and(|(dir, file)| dir.ends_with("-linux-gnu") && !file.contains('/'))
}

fn distro_libraries(inventory: &Inventory) -> Verdict {
    let found: Vec<String> = inventory
        .libraries
        .iter()
        .filter(|library| {
            matches!(
                library.family,
                LibraryFamily::CudaRuntime | LibraryFamily::Cupti | LibraryFamily::Cublas
            ) && !library.pip
                && in_distribution_dir(&library.path)
        })
        .map(|library| library.path.clone())
        .collect();
    if found.is_empty() {
        Verdict::Cleared(
            "it holds no CUDA runtime, CUPTI or cuBLAS in the distribution's library directories"
                .into(),
        )
    } else {
        Verdict::Confirmed(format!(
            "the distribution's CUDA libraries are in it: {}",
            found.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::inventory::{PythonPackage, TorchBuild};
    use crate::rule_meta::{Category, Doc, FixAvailability, RuleMeta};

    fn library(family: LibraryFamily, path: &str, soname: &str) -> CudaLibrary {
        CudaLibrary {
            family,
            path: path.into(),
            soname: Some(soname.into()),
            version: None,
            pip: path.contains("-packages/nvidia/"),
            release: None,
            size: 1,
        }
    }

    fn torch(version: &str, cuda: Option<&str>) -> Inventory {
        Inventory {
            torch: vec![TorchBuild {
                path: "/usr/local/lib/python3.12/site-packages/torch/version.py".into(),
                version: Some(version.into()),
                cuda: cuda.map(str::to_owned),
            }],
            ..Inventory::default()
        }
    }

    fn wheel(package: &str, cuda: &str) -> Prediction {
        Prediction::WheelCuda {
            package: package.into(),
            cuda: Version::parse(cuda).unwrap(),
        }
    }

    #[test]
    fn torch_confirms_or_clears_the_predicted_cuda() {
        let prediction = wheel("torch", "13.2");
        assert_eq!(
            judge(&prediction, &torch("2.15.0+cu132", Some("13.2"))),
            Some(Verdict::Confirmed("torch 2.15.0+cu132 (CUDA 13.2)".into()))
        );
        assert_eq!(
            judge(&prediction, &torch("2.4.1+cu118", Some("11.8"))),
            Some(Verdict::Cleared(
                "it holds torch 2.4.1+cu118 (CUDA 11.8)".into()
            ))
        );
        assert!(matches!(
            judge(&prediction, &torch("2.4.1+cpu", None)),
            Some(Verdict::Cleared(_))
        ));
        // A major-only prediction matches any minor of it.
        assert!(matches!(
            judge(&wheel("torch", "12"), &torch("2.5.1", Some("12.4"))),
            Some(Verdict::Confirmed(_))
        ));
        // No torch in the image: nothing to say.
        assert_eq!(judge(&prediction, &Inventory::default()), None);
    }

    #[test]
    fn other_packages_are_judged_by_their_local_version() {
        let inventory = Inventory {
            cuda_python_packages: vec![PythonPackage {
                name: "torchvision".into(),
                version: "0.19.1+cu118".into(),
                path: "/x/torchvision-0.19.1+cu118.dist-info".into(),
            }],
            ..Inventory::default()
        };
        assert!(matches!(
            judge(&wheel("torchvision", "11.8"), &inventory),
            Some(Verdict::Confirmed(_))
        ));
        assert!(matches!(
            judge(&wheel("torchvision", "12.4"), &inventory),
            Some(Verdict::Cleared(_))
        ));
        assert_eq!(judge(&wheel("onnxruntime-gpu", "12"), &inventory), None);
    }

    #[test]
    fn a_build_named_for_its_cuda_confirms_or_clears() {
        let held = |name: &str, version: &str| PythonPackage {
            name: name.into(),
            version: version.into(),
            path: format!("/x/{name}-{version}.dist-info"),
        };
        let inventory = Inventory {
            cuda_python_packages: vec![
                held("tensorrt_cu13", "11.4.0.106"),
                held("tensorrt_cu13_libs", "11.4.0.106"),
                held("jax-cuda12-plugin", "0.6.2"),
            ],
            ..Inventory::default()
        };
        assert_eq!(
            judge(&wheel("tensorrt", "13"), &inventory),
            Some(Verdict::Confirmed(
                "tensorrt_cu13 11.4.0.106, tensorrt_cu13_libs 11.4.0.106".into()
            ))
        );
        assert!(matches!(
            judge(&wheel("tensorrt", "12"), &inventory),
            Some(Verdict::Cleared(_))
        ));
        assert!(matches!(
            judge(&wheel("jax", "12"), &inventory),
            Some(Verdict::Confirmed(_))
        ));
        assert_eq!(judge(&wheel("cupy", "12"), &inventory), None);
        assert_eq!(cuda_major_in_name("cupy-cuda118"), Some(11));
        assert_eq!(cuda_major_in_name("cupy-cuda12x"), Some(12));
        assert_eq!(cuda_major_in_name("cuda-python"), None);
    }

    #[test]
    fn a_missing_soname_is_confirmed_unless_a_library_answers_to_it() {
        let prediction = Prediction::SonameMissing {
            package: "tensorflow".into(),
            soname: "libcudnn.so.8".into(),
        };
        let cudnn9 = Inventory {
            libraries: vec![library(
                LibraryFamily::Cudnn,
                "/usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.0",
                "libcudnn.so.9",
            )],
            ..Inventory::default()
        };
        assert_eq!(
            judge(&prediction, &cudnn9),
            Some(Verdict::Confirmed(
                "no libcudnn.so.8; it holds libcudnn.so.9".into()
            ))
        );
        let cudnn8 = Inventory {
            libraries: vec![library(
                LibraryFamily::Cudnn,
                "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7",
                "libcudnn.so.8",
            )],
            ..Inventory::default()
        };
        assert!(matches!(
            judge(&prediction, &cudnn8),
            Some(Verdict::Cleared(_))
        ));
    }

    #[test]
    fn distribution_libraries_are_found_only_in_the_multiarch_directories() {
        let prediction = Prediction::DistroCudaLibraries {
            packages: vec!["libcupti-dev".into()],
        };
        let nvidia_only = Inventory {
            libraries: vec![library(
                LibraryFamily::Cupti,
                "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcupti.so.12.4.127",
                "libcupti.so.12",
            )],
            ..Inventory::default()
        };
        assert!(matches!(
            judge(&prediction, &nvidia_only),
            Some(Verdict::Cleared(_))
        ));
        let mut both = nvidia_only.clone();
        both.libraries.push(library(
            LibraryFamily::Cupti,
            "/usr/lib/x86_64-linux-gnu/libcupti.so.11.5",
            "libcupti.so.11.5",
        ));
        assert_eq!(
            judge(&prediction, &both),
            Some(Verdict::Confirmed(
                "the distribution's CUDA libraries are in it: /usr/lib/x86_64-linux-gnu/libcupti.so.11.5"
                    .into()
            ))
        );
    }

    #[test]
    fn an_apt_build_is_judged_by_the_installed_version() {
        let inventory = Inventory {
            cuda_debs: vec![crate::image::inventory::CudaDeb {
                name: "libnccl2".into(),
                version: "2.27.7-1+cuda13.0".into(),
            }],
            ..Inventory::default()
        };
        let predicted = |major| Prediction::AptCudaBuild {
            package: "libnccl2".into(),
            cuda_major: major,
        };
        assert_eq!(
            judge(&predicted(13), &inventory),
            Some(Verdict::Confirmed(
                "libnccl2 2.27.7-1+cuda13.0 (the CUDA 13.0 build)".into()
            ))
        );
        assert!(matches!(
            judge(&predicted(12), &inventory),
            Some(Verdict::Cleared(_))
        ));
        let other = Prediction::AptCudaBuild {
            package: "libnccl-dev".into(),
            cuda_major: 13,
        };
        assert_eq!(judge(&other, &inventory), None);
    }

    #[test]
    fn annotate_words_the_verdict_and_lowers_a_cleared_finding() {
        static META: RuleMeta = RuleMeta {
            code: "CU999",
            name: "test-prediction",
            category: Category::Compatibility,
            default_severity: Severity::Warning,
            fix: FixAvailability::None,
            summary: "",
            doc: Doc::Text(""),
        };
        let meta = &META;
        let mut finding = Diagnostic::at(meta, Default::default(), "m")
            .with_note("first")
            .with_prediction(wheel("torch", "13.2"));
        assert!(annotate(
            &mut finding,
            &torch("2.4.1+cu118", Some("11.8")),
            "img:1"
        ));
        assert_eq!(
            finding.notes[0],
            "cleared by the image img:1: it holds torch 2.4.1+cu118 (CUDA 11.8)"
        );
        assert_eq!(finding.severity, Severity::Info);
        let mut confirmed =
            Diagnostic::at(meta, Default::default(), "m").with_prediction(wheel("torch", "13.2"));
        assert!(annotate(
            &mut confirmed,
            &torch("2.15.0+cu132", Some("13.2")),
            "img:1"
        ));
        assert_eq!(confirmed.severity, meta.default_severity);
        assert!(confirmed.notes[0].starts_with("confirmed by the image img:1: torch 2.15.0"));
        let mut plain = Diagnostic::at(meta, Default::default(), "m");
        assert!(!annotate(&mut plain, &Inventory::default(), "img:1"));
        assert!(plain.notes.is_empty());
    }
}
