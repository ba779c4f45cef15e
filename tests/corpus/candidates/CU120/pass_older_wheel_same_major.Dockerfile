# corpus 009 010 110 (lmdeploy, gpu-jupyter): a cu126/cu128 torch on a 12.8/12.9 base is harmless within CUDA 12, and that torch release has no wheel for the base's exact minor.
FROM nvidia/cuda:12.9.1-cudnn-runtime-ubuntu24.04
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir --break-system-packages torch==2.9.1 torchvision==0.24.1 --index-url https://download.pytorch.org/whl/cu128
