//! The loader model (`image::ldso`) on real ELFs compiled with gcc at test time, placed in an
//! in-memory merged filesystem: glibc's search order (RPATH of the chain, LD_LIBRARY_PATH, RUNPATH of
//! the requester only, the ld cache from ld.so.conf includes, default directories), `$ORIGIN`,
//! class mismatches and the driver libraries the host injects.

mod image_elf_support;

use std::path::{Path, PathBuf};

use cudalint::image::ldso::{LoadTree, Loader, LoaderEnv, Resolution, Step};
use cudalint::knowledge::host_libraries::HostLibraries;
use image_elf_support::{gcc_link_after, scratch, shared_lib, MemFs};

const LIBC: &str = "/usr/lib/x86_64-linux-gnu/libc.so.6";
const LD_SO: &str = "/usr/lib64/ld-linux-x86-64.so.2";

/// A Debian-like root with the host's real libc and loader in the multiarch directory.
fn debian_root() -> MemFs {
    let mut fs = MemFs::default();
    fs.file(LIBC, std::fs::read(LIBC).expect("host libc"));
    fs.file(
        "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
        std::fs::read(LD_SO).expect("host ld.so"),
    );
    fs.symlink("/lib", "usr/lib");
    fs
}

fn bytes(dir: &Path, file: &str) -> Vec<u8> {
    std::fs::read(dir.join(file)).unwrap()
}

fn env(vars: &[&str]) -> LoaderEnv {
    let vars: Vec<String> = vars.iter().map(|v| v.to_string()).collect();
    LoaderEnv::from_config(&vars, None, HostLibraries::embedded())
}

fn resolution<'t>(tree: &'t LoadTree, object: &str, name: &str) -> &'t Resolution {
    let object = tree
        .objects
        .iter()
        .find(|o| o.path == object)
        .unwrap_or_else(|| panic!("{object} loaded: {tree:#?}"));
    &object
        .needed
        .iter()
        .find(|n| n.name == name)
        .unwrap_or_else(|| panic!("{name} needed"))
        .resolution
}

fn found(resolution: &Resolution) -> (&str, &Step) {
    match resolution {
        Resolution::Found { path, step, .. } => (path, step),
        other => panic!("not found: {other:?}"),
    }
}

/// Two libdep.so.1 builds (same SONAME) and the consumers under test.
fn build(test: &str) -> PathBuf {
    let dir = scratch(test);
    shared_lib(&dir, "libdep.so.1", "libdep.so.1", &[], &[]);
    shared_lib(&dir, "libcupti.so.12", "libcupti.so.12", &[], &[]);
    shared_lib(&dir, "libcuda.so.1", "libcuda.so.1", &[], &[]);
    shared_lib(
        &dir,
        "libtorch_cpu.so",
        "libtorch_cpu.so",
        &["libcupti.so.12"],
        &[
            "-Wl,--disable-new-dtags",
            "-Wl,-rpath,$ORIGIN/../../nvidia/cuda_cupti/lib",
        ],
    );
    shared_lib(
        &dir,
        "librpath.so",
        "librpath.so",
        &["libdep.so.1"],
        &["-Wl,--disable-new-dtags", "-Wl,-rpath,/r"],
    );
    shared_lib(
        &dir,
        "librunpath.so",
        "librunpath.so",
        &["libdep.so.1"],
        &["-Wl,--enable-new-dtags", "-Wl,-rpath,/r"],
    );
    shared_lib(&dir, "libmid.so", "libmid.so", &["libdep.so.1"], &[]);
    shared_lib(&dir, "libgpu.so", "libgpu.so", &["libcuda.so.1"], &[]);
    gcc_link_after(
        &dir,
        "exe_runpath",
        "int main(void) { return 0; }\n",
        &[
            "-Wl,--no-as-needed",
            "-L.",
            "-Wl,-rpath-link,.",
            "-l:libmid.so",
            "-Wl,--enable-new-dtags",
            "-Wl,-rpath,/r",
        ],
    );
    gcc_link_after(
        &dir,
        "exe_rpath",
        "int main(void) { return 0; }\n",
        &[
            "-Wl,--no-as-needed",
            "-L.",
            "-Wl,-rpath-link,.",
            "-l:libmid.so",
            "-Wl,--disable-new-dtags",
            "-Wl,-rpath,/r",
        ],
    );
    dir
}

#[test]
fn torch_finds_pip_cupti_through_origin_rpath_and_fails_without_it() {
    let dir = build("torch_finds_pip_cupti_through_origin_rpath_and_fails_without_it");
    let site = "/usr/local/lib/python3.11/site-packages";
    let torch = format!("{site}/torch/lib/libtorch_cpu.so");
    let mut fs = debian_root();
    fs.file(&torch, bytes(&dir, "libtorch_cpu.so"));
    let host = HostLibraries::embedded();
    {
        let loader = Loader::new(&fs, env(&[]), host);
        let tree = loader.load_tree(&torch).unwrap();
        assert_eq!(
            resolution(&tree, &torch, "libcupti.so.12"),
            &Resolution::Unresolved
        );
        assert_eq!(tree.unresolved().count(), 1);
        // libc resolves through the ld cache (the multiarch directory is a trusted one).
        assert_eq!(
            found(resolution(&tree, &torch, "libc.so.6")).1,
            &Step::LdCache
        );
    }
    fs.file(
        &format!("{site}/nvidia/cuda_cupti/lib/libcupti.so.12"),
        bytes(&dir, "libcupti.so.12"),
    );
    let loader = Loader::new(&fs, env(&[]), host);
    let tree = loader.load_tree(&torch).unwrap();
    let (path, step) = found(resolution(&tree, &torch, "libcupti.so.12"));
    assert_eq!(path, format!("{site}/nvidia/cuda_cupti/lib/libcupti.so.12"));
    assert_eq!(
        step,
        &Step::Rpath {
            owner: torch.clone()
        }
    );
    assert_eq!(tree.unresolved().count(), 0, "{tree:#?}");
}

#[test]
fn rpath_beats_ld_library_path_which_beats_runpath() {
    let dir = build("rpath_beats_ld_library_path_which_beats_runpath");
    let mut fs = debian_root();
    fs.file("/r/libdep.so.1", bytes(&dir, "libdep.so.1"));
    fs.file("/l/libdep.so.1", bytes(&dir, "libdep.so.1"));
    fs.file("/opt/librpath.so", bytes(&dir, "librpath.so"));
    fs.file("/opt/librunpath.so", bytes(&dir, "librunpath.so"));
    let host = HostLibraries::embedded();
    let loader = Loader::new(&fs, env(&["LD_LIBRARY_PATH=/l"]), host);
    let tree = loader.load_tree("/opt/librpath.so").unwrap();
    assert_eq!(
        found(resolution(&tree, "/opt/librpath.so", "libdep.so.1")).0,
        "/r/libdep.so.1"
    );
    let tree = loader.load_tree("/opt/librunpath.so").unwrap();
    let (path, step) = found(resolution(&tree, "/opt/librunpath.so", "libdep.so.1"));
    assert_eq!((path, step), ("/l/libdep.so.1", &Step::LdLibraryPath));
    // Without LD_LIBRARY_PATH, RUNPATH finds it.
    let loader = Loader::new(&fs, env(&[]), host);
    let tree = loader.load_tree("/opt/librunpath.so").unwrap();
    assert_eq!(
        found(resolution(&tree, "/opt/librunpath.so", "libdep.so.1")),
        ("/r/libdep.so.1", &Step::Runpath)
    );
}

#[test]
fn runpath_serves_direct_needs_only_and_rpath_is_inherited() {
    let dir = build("runpath_serves_direct_needs_only_and_rpath_is_inherited");
    let mut fs = debian_root();
    fs.file("/r/libmid.so", bytes(&dir, "libmid.so"));
    fs.file("/r/libdep.so.1", bytes(&dir, "libdep.so.1"));
    fs.file("/app/exe_runpath", bytes(&dir, "exe_runpath"));
    fs.file("/app/exe_rpath", bytes(&dir, "exe_rpath"));
    let loader = Loader::new(&fs, env(&[]), HostLibraries::embedded());
    let tree = loader.load_tree("/app/exe_runpath").unwrap();
    assert_eq!(
        found(resolution(&tree, "/app/exe_runpath", "libmid.so")),
        ("/r/libmid.so", &Step::Runpath)
    );
    assert_eq!(
        resolution(&tree, "/r/libmid.so", "libdep.so.1"),
        &Resolution::Unresolved
    );
    let tree = loader.load_tree("/app/exe_rpath").unwrap();
    let (path, step) = found(resolution(&tree, "/r/libmid.so", "libdep.so.1"));
    assert_eq!(path, "/r/libdep.so.1");
    assert_eq!(
        step,
        &Step::Rpath {
            owner: "/app/exe_rpath".into()
        }
    );
}

#[test]
fn ld_cache_from_conf_includes_and_symlinked_dirs() {
    let dir = build("ld_cache_from_conf_includes_and_symlinked_dirs");
    let mut fs = debian_root();
    fs.text(
        "/etc/ld.so.conf",
        "# comment\ninclude /etc/ld.so.conf.d/*.conf\n",
    );
    fs.text("/etc/ld.so.conf.d/000-cuda.conf", "/usr/local/cuda/lib64\n");
    fs.text("/etc/ld.so.conf.d/README", "/not/a/conf/dir\n");
    fs.file(
        "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libdep.so.1.2.3",
        bytes(&dir, "libdep.so.1"),
    );
    fs.symlink(
        "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libdep.so.1",
        "libdep.so.1.2.3",
    );
    fs.symlink("/usr/local/cuda-12.4/lib64", "targets/x86_64-linux/lib");
    fs.symlink("/usr/local/cuda", "/usr/local/cuda-12.4");
    fs.file("/opt/libmid.so", bytes(&dir, "libmid.so"));
    let loader = Loader::new(&fs, env(&[]), HostLibraries::embedded());
    assert_eq!(loader.cache_dirs[0], "/usr/local/cuda/lib64");
    assert!(!loader.cache_dirs.contains(&"/not/a/conf/dir".to_string()));
    let tree = loader.load_tree("/opt/libmid.so").unwrap();
    match resolution(&tree, "/opt/libmid.so", "libdep.so.1") {
        Resolution::Found {
            path,
            real_path,
            step,
        } => {
            assert_eq!(path, "/usr/local/cuda/lib64/libdep.so.1");
            assert_eq!(
                real_path,
                "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libdep.so.1.2.3"
            );
            assert_eq!(step, &Step::LdCache);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn another_machine_is_skipped_like_ld_so_does() {
    let dir = build("another_machine_is_skipped_like_ld_so_does");
    let mut fs = debian_root();
    let mut foreign = bytes(&dir, "libdep.so.1");
    foreign[18] = 183; // e_machine = AArch64, little-endian u16 at 0x12
    foreign[19] = 0;
    fs.file("/r/libdep.so.1", foreign);
    fs.file("/l/libdep.so.1", bytes(&dir, "libdep.so.1"));
    fs.file("/opt/librpath.so", bytes(&dir, "librpath.so"));
    let loader = Loader::new(&fs, env(&["LD_LIBRARY_PATH=/l"]), HostLibraries::embedded());
    let tree = loader.load_tree("/opt/librpath.so").unwrap();
    let needed = tree.objects[0]
        .needed
        .iter()
        .find(|n| n.name == "libdep.so.1")
        .unwrap();
    assert_eq!(found(&needed.resolution).0, "/l/libdep.so.1");
    assert_eq!(needed.skipped, ["/r/libdep.so.1"]);
}

#[test]
fn driver_libraries_come_from_the_host_for_the_right_capabilities() {
    let dir = build("driver_libraries_come_from_the_host_for_the_right_capabilities");
    let mut fs = debian_root();
    fs.file("/opt/libgpu.so", bytes(&dir, "libgpu.so"));
    let host = HostLibraries::embedded();
    let tree = Loader::new(&fs, env(&[]), host)
        .load_tree("/opt/libgpu.so")
        .unwrap();
    assert_eq!(
        resolution(&tree, "/opt/libgpu.so", "libcuda.so.1"),
        &Resolution::Host {
            capability: "compute".into()
        }
    );
    let tree = Loader::new(&fs, env(&["NVIDIA_DRIVER_CAPABILITIES=utility"]), host)
        .load_tree("/opt/libgpu.so")
        .unwrap();
    assert_eq!(
        resolution(&tree, "/opt/libgpu.so", "libcuda.so.1"),
        &Resolution::Unresolved
    );
    let tree = Loader::new(&fs, env(&["NVIDIA_DRIVER_CAPABILITIES=all"]), host)
        .load_tree("/opt/libgpu.so")
        .unwrap();
    assert!(matches!(
        resolution(&tree, "/opt/libgpu.so", "libcuda.so.1"),
        Resolution::Host { .. }
    ));
}

#[test]
fn host_library_knowledge_has_sources_and_matches_sonames() {
    let host = HostLibraries::embedded();
    for group in &host.libraries {
        assert!(
            group.source.contains("NVIDIA/libnvidia-container@"),
            "{group:?}"
        );
    }
    assert!(host.group_of("libnvidia-ml.so.1").is_some());
    assert!(host.group_of("libcuda.so.550.54.15").is_some());
    assert!(host.group_of("libcudart.so.12").is_none());
    assert!(host.group_of("libcudaX.so.1").is_none());
    assert_eq!(host.machine(62).unwrap().triplet, "x86_64-linux-gnu");
}
