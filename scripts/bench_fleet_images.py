#!/usr/bin/env python3
"""Writes N OCI image layouts that share every layer of a base layout and add one small layer of
their own (an application: a Python package and a data file, different in each), as a fleet of
images built FROM one base looks in a registry. Blobs of the base are hard-linked, not copied.

    bench_fleet_images.py BASE_LAYOUT OUT_DIR N

OUT_DIR/app-<i>/ (i = 1..N) is an OCI layout with one manifest tagged `latest`. Used by
scripts/bench-registry; deterministic (same inputs, same digests), so a re-run pushes nothing new.
"""
import hashlib
import io
import json
import os
import random
import sys
import tarfile


def blob_path(layout, digest):
    algorithm, hexdigest = digest.split(":", 1)
    return os.path.join(layout, "blobs", algorithm, hexdigest)


def write_blob(layout, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    path = blob_path(layout, digest)
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(data)
    return digest, len(data)


def app_layer(index):
    """An uncompressed tar: /app/app_<i>/__init__.py, a 1 MiB data file, a requirements file."""
    rng = random.Random(index)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        def add(name, data, mode=0o644):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), mode, 0
            tar.addfile(info, io.BytesIO(data))

        for directory in ("app", f"app/app_{index}"):
            info = tarfile.TarInfo(directory)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
            tar.addfile(info)
        add(f"app/app_{index}/__init__.py", f"import torch\nAPP = {index}\n".encode())
        add(f"app/app_{index}/weights.bin", rng.randbytes(1 << 20))
        add("app/requirements.txt", b"torch\n")
    return out.getvalue()


def main():
    base, out, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    index = json.load(open(os.path.join(base, "index.json")))
    manifest_digest = index["manifests"][0]["digest"]
    manifest = json.load(open(blob_path(base, manifest_digest)))
    config = json.load(open(blob_path(base, manifest["config"]["digest"])))
    for i in range(1, count + 1):
        layout = os.path.join(out, f"app-{i}")
        os.makedirs(os.path.join(layout, "blobs", "sha256"), exist_ok=True)
        with open(os.path.join(layout, "oci-layout"), "w") as f:
            json.dump({"imageLayoutVersion": "1.0.0"}, f)
        for layer in manifest["layers"]:
            target = blob_path(layout, layer["digest"])
            if not os.path.exists(target):
                os.link(blob_path(base, layer["digest"]), target)
        layer = app_layer(i)
        layer_digest, layer_size = write_blob(layout, layer)
        own = dict(config)
        own["rootfs"] = {"type": "layers", "diff_ids": config["rootfs"]["diff_ids"] + [layer_digest]}
        own["history"] = list(config.get("history", [])) + [{"created_by": f"COPY app_{i} /app/"}]
        config_digest, config_size = write_blob(layout, json.dumps(own, sort_keys=True).encode())
        own_manifest = dict(manifest)
        own_manifest["config"] = dict(manifest["config"], digest=config_digest, size=config_size)
        own_manifest["layers"] = manifest["layers"] + [
            {"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer_digest, "size": layer_size}
        ]
        digest, size = write_blob(layout, json.dumps(own_manifest, sort_keys=True).encode())
        with open(os.path.join(layout, "index.json"), "w") as f:
            json.dump({"schemaVersion": 2, "manifests": [{
                "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": digest, "size": size,
                "annotations": {"org.opencontainers.image.ref.name": "latest"}}]}, f)


if __name__ == "__main__":
    main()
