//! The image archive reader on arbitrary bytes: as a layer blob (plain, gzip or zstd tar) applied to a
//! merged filesystem whose every path is then resolved, and as a whole docker-archive/OCI archive on
//! disk. Nothing may panic or hang; errors are fine.
#![no_main]

use cudalint::image::facts::FsView;
use cudalint::image::fs::MergedFs;
use cudalint::image::layer::{read_layer, ExpectedDigests};
use cudalint::image::source::{ImageSource, LoadOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(layer) = read_layer(data, &ExpectedDigests::default()) {
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
        let reference = format!("docker-archive:{}", path.display());
        if let Ok(source) = ImageSource::parse(&reference) {
            let _ = source.load(&LoadOptions::default());
        }
        let _ = std::fs::remove_file(&path);
    }
});
