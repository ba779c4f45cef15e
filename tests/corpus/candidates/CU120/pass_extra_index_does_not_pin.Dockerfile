# corpus 199 (jina-ai/clip-as-service): unpinned torch with `--extra-index-url …/cu113`: pip takes the highest version across indexes (PyPI's CUDA 12 build), so the finding must not name cu113 (judge the wheel pip installs).
FROM nvcr.io/nvidia/cuda:11.4.2-cudnn8-runtime-ubuntu20.04
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip && rm -rf /var/lib/apt/lists/*
RUN python3 -m pip install --no-cache-dir torch torchvision --extra-index-url https://download.pytorch.org/whl/cu113
