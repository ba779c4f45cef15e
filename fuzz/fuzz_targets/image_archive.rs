//! The image archive reader on arbitrary bytes: as a layer blob (plain, gzip or zstd tar) streamed and
//! applied to a merged filesystem whose every path is then resolved, then completed by the second pass;
//! as a layer blob in a file read by offset (the seeking walk and its hashing thread); and as a whole
//! docker-archive/OCI archive on disk. Nothing may panic or hang; errors are fine.
#![no_main]

use cudalint::image::facts::FsView;
use cudalint::image::fs::MergedFs;
use cudalint::image::layer::{complete_unread, read_layer, read_layer_at, ExpectedDigests};
use cudalint::image::source::{ImageSource, LoadOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut layer) = read_layer(data, &ExpectedDigests::default()) {
        let _ = complete_unread(data, &mut layer);
        let mut fs = MergedFs::new();
        fs.apply(0, &layer.entries);
        fs.apply(1, &layer.entries);
        let paths: Vec<String> = fs.walk().map(|(path, _)| path.to_string()).collect();
        for path in paths {
            let _ = fs.canonicalize(&path);
            let _ = fs.read_dir(&path);
        }
    }
    let path = std::env::temp_dir().join(format!("cudalint-fuzz-{}.tar", std::process::id()));
    if std::fs::write(&path, data).is_ok() {
        if let Ok(file) = std::fs::File::open(&path) {
            let _ = read_layer_at(&file, 0, data.len() as u64, &ExpectedDigests::default());
        }
        let reference = format!("docker-archive:{}", path.display());
        if let Ok(source) = ImageSource::parse(&reference) {
            let _ = source.load(&LoadOptions::default());
        }
        let _ = std::fs::remove_file(&path);
    }
});
