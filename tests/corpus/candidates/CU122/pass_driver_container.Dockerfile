# corpus 037 039 (NVIDIA/gpu-driver-container, 5 findings): a driver container exists to ship the driver.
ARG DRIVER_VERSION=580.95.05
FROM nvcr.io/nvidia/cuda:12.6.2-base-ubi8
ARG DRIVER_VERSION
RUN dnf install -y nvidia-driver-cuda-${DRIVER_VERSION} nvidia-driver-libs-${DRIVER_VERSION} nvidia-driver-NVML-${DRIVER_VERSION} && dnf clean all
ENTRYPOINT ["nvidia-driver", "init"]
