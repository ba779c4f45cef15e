# corpus 153 (tensorflow/serving Dockerfile.devel-gpu): /usr/local/cuda/lib64, where apt's CUPTI is found, is on the same LD_LIBRARY_PATH.
FROM nvidia/cuda:12.5.1-base-ubuntu22.04
RUN apt-get update && apt-get install -y --no-install-recommends cuda-cupti-12-5 && rm -rf /var/lib/apt/lists/*
ENV LD_LIBRARY_PATH /usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
CMD ["bash"]
