# corpus 009 010 133 136 148 216: a stage chosen by an ARG in FROM (`FROM ${CUDA_VERSION}`, `FROM cuda${CUDA_VERSION}`, `${BUILD_TYPE}-image`, `source_${V:+no_}copy`) is used whenever the ARG can name it.
ARG CUDA_VERSION=cu128
FROM nvidia/cuda:13.0.3-devel-ubuntu24.04 AS cu130
ENV PYTORCH_CUDA_VERSION=cu130

FROM nvidia/cuda:12.8.1-devel-ubuntu24.04 AS cu128
ENV PYTORCH_CUDA_VERSION=cu126

FROM ${CUDA_VERSION}
CMD ["bash"]
