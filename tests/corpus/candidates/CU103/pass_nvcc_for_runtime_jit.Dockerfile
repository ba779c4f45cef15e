# corpus 068 (bmaltais/kohya_ss): a slim base gets only cuda-nvcc, on purpose (the file says so), for kernels the training stack JIT-compiles at run time; no devel base is used. Quiet or info with the reason.
FROM python:3.11-slim-bookworm
ADD https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb /tmp/cuda-keyring.deb
RUN dpkg -i /tmp/cuda-keyring.deb && apt-get update && \
    apt-get install -y --no-install-recommends cuda-nvcc-12-8 && rm -rf /var/lib/apt/lists/*
ENV CUDA_HOME=/usr/local/cuda
CMD ["python3", "train.py"]
