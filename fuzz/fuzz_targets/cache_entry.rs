//! Layer cache entries on disk are input too (another program, a full disk, a flipped bit may have
//! written them). Arbitrary bytes go to `LayerCache::get` twice: as an entry's payload behind a right
//! header and checksum (so the decoder, not the checksum, meets them; the payload starts with the
//! entry's own diff ID, so the fuzzer works on what follows it), and as a whole entry file. `get`
//! must never panic nor allocate without bound, and a layer it returns must apply to a merged
//! filesystem whose every path then resolves.
#![no_main]

use cudalint::image::cache::{BlobInfo, LayerCache, FORMAT_VERSION, MAGIC};
use cudalint::image::facts::FsView;
use cudalint::image::fs::MergedFs;
use cudalint::image::layer::Compression;
use libfuzzer_sys::fuzz_target;
use sha2::{Digest, Sha256};

const DIFF_ID: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

fn lookup(cache: &LayerCache) {
    let blob = BlobInfo {
        digest: DIFF_ID.into(),
        size: 0,
        compression: Compression::Gzip,
    };
    if let Some(layer) = cache.get(DIFF_ID, blob) {
        let mut fs = MergedFs::new();
        fs.apply(0, &layer.entries);
        fs.apply(1, &layer.entries);
        let paths: Vec<String> = fs.walk().map(|(path, _)| path.to_string()).collect();
        for path in paths {
            let _ = fs.canonicalize(&path);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let root = std::env::temp_dir().join(format!("cudalint-fuzz-cache-{}", std::process::id()));
    let cache = LayerCache::open(&root, 1 << 30);
    let path = cache.entry_path(DIFF_ID).unwrap();
    std::fs::create_dir_all(cache.dir()).unwrap();

    let mut payload = vec![DIFF_ID.len() as u8];
    payload.extend_from_slice(DIFF_ID.as_bytes());
    payload.extend_from_slice(data);
    let mut entry = MAGIC.to_vec();
    entry.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    entry.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    entry.extend_from_slice(&Sha256::digest(&payload));
    entry.extend_from_slice(&payload);
    std::fs::write(&path, &entry).unwrap();
    lookup(&cache);

    std::fs::write(&path, data).unwrap();
    lookup(&cache);
    let _ = std::fs::remove_file(&path);
});
