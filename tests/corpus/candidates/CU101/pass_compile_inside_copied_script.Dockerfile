# corpus 088 (h2oai/h2ogpt): the RUN executes a copied build script that builds CUDA packages from source (CUDA_HOME set); the linter cannot see inside it, so it must not claim "builds nothing" (quiet or info).
FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu20.04
ENV CUDA_HOME=/usr/local/cuda-12.1
COPY docker_build_script_ubuntu.sh /workspace/
RUN cd /workspace && ./docker_build_script_ubuntu.sh
ENTRYPOINT ["python3.10"]
