//! Image archives the image tests write themselves: the files of a `docker save` archive (legacy
//! layout) or of an OCI layout, named by their sha256 as the formats require, written into a tar
//! file or a directory. Each test keeps its own config document and layers.

#![allow(dead_code)]

use std::path::Path;

use sha2::{Digest, Sha256};

/// Files of an archive, in the order they are written: (name, bytes).
pub type Files = Vec<(String, Vec<u8>)>;

/// `sha256:` and the lowercase hex digest of `bytes`.
pub fn sha(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// A legacy `docker save` archive: the config as `<hex>.json`, each layer tar as
/// `layer<N>/layer.tar`, and a `manifest.json` tagging it `tag`.
pub fn legacy_docker_archive(config: &[u8], layers: &[Vec<u8>], tag: &str) -> Files {
    let config_name = format!("{}.json", &sha(config)[7..]);
    let mut files = vec![(config_name.clone(), config.to_vec())];
    let mut names = Vec::new();
    for (index, tar) in layers.iter().enumerate() {
        let name = format!("layer{index}/layer.tar");
        files.push((name.clone(), tar.clone()));
        names.push(name);
    }
    let manifest = serde_json::json!([{"Config": config_name, "RepoTags": [tag], "Layers": names}]);
    files.push((
        "manifest.json".into(),
        serde_json::to_vec(&manifest).unwrap(),
    ));
    files
}

/// An OCI image layout: the config and each layer blob (compressed or not, as given) under
/// `blobs/sha256/`, described with `layer_media_type`; a manifest; an index naming it `v1`; and
/// `oci-layout`.
pub fn oci_layout(config: &[u8], blobs: &[Vec<u8>], layer_media_type: &str) -> Files {
    let mut files = vec![(
        format!("blobs/sha256/{}", &sha(config)[7..]),
        config.to_vec(),
    )];
    let mut descriptors = Vec::new();
    for blob in blobs {
        let digest = sha(blob);
        descriptors.push(serde_json::json!({
            "mediaType": layer_media_type, "digest": digest, "size": blob.len()}));
        files.push((format!("blobs/sha256/{}", &digest[7..]), blob.clone()));
    }
    let manifest = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": sha(config), "size": config.len()},
        "layers": descriptors,
    }))
    .unwrap();
    let manifest_digest = sha(&manifest);
    files.push((
        format!("blobs/sha256/{}", &manifest_digest[7..]),
        manifest.clone(),
    ));
    let index = serde_json::json!({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifest_digest,
            "size": manifest.len(), "annotations": {"org.opencontainers.image.ref.name": "v1"}}],
    });
    files.push(("index.json".into(), serde_json::to_vec(&index).unwrap()));
    files.push((
        "oci-layout".into(),
        br#"{"imageLayoutVersion":"1.0.0"}"#.to_vec(),
    ));
    files
}

/// `files` as a tar file at `path` (mode 0644 each).
pub fn write_tar(path: &Path, files: &[(String, Vec<u8>)]) {
    let mut builder = tar::Builder::new(std::fs::File::create(path).unwrap());
    for (name, bytes) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        builder.append_data(&mut header, name, &bytes[..]).unwrap();
    }
    builder.finish().unwrap();
}

/// `files` under directory `root`.
pub fn write_dir(root: &Path, files: &[(String, Vec<u8>)]) {
    for (name, bytes) in files {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}
