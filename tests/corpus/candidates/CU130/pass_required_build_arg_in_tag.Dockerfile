# corpus 039 (NVIDIA/gpu-driver-container rhel8): `ARG CUDA_DIST=''` is a build arg the project always passes; an empty default is no invalid tag.
ARG CUDA_DIST=''
FROM nvcr.io/nvidia/cuda:12.6.2-base-${CUDA_DIST}
CMD ["bash"]
