# corpus 217 (NVIDIA/NeMo-RL): nsight-systems-cli is installed on purpose to profile runs; it is a tool, not a devel package that needs something to compile.
FROM nvcr.io/nvidia/cuda-dl-base:25.05-cuda12.9-devel-ubuntu24.04
RUN apt-get update && apt-get install -y --no-install-recommends nsight-systems-cli && rm -rf /var/lib/apt/lists/*
CMD ["nsys", "--version"]
