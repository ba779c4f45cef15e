# corpus 120 (kserve huggingface_server): TORCH_CUDA_ARCH_LIST names 7.0 under CUDA 13, but the stage only installs wheels; nothing is compiled for the default build.
FROM nvidia/cuda:13.0.2-devel-ubuntu24.04 AS build
ENV TORCH_CUDA_ARCH_LIST='7.0 7.5 8.0 8.6 8.9 9.0+PTX'
RUN apt-get update && apt-get install -y --no-install-recommends python3-venv && rm -rf /var/lib/apt/lists/* && \
    python3 -m venv /venv && /venv/bin/pip install --no-cache-dir vllm==0.11.0

FROM nvidia/cuda:13.0.2-runtime-ubuntu24.04
COPY --from=build /venv /venv
CMD ["/venv/bin/vllm", "serve"]
