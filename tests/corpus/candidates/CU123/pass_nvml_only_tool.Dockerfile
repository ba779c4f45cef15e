# corpus 033 034 042 043 196 197 212 (dcgm-exporter, k8s-device-plugin, container-toolkit, dra-driver, mig-parted, gpu-feature-discovery): an NVML-only tool on an image without NVIDIA_REQUIRE_CUDA is not harmed by NVIDIA_DISABLE_REQUIRE.
FROM golang:1.24 AS build
RUN go version > /version

FROM nvcr.io/nvidia/distroless/go:v3.1.11
COPY --from=build /version /version
ENV NVIDIA_DISABLE_REQUIRE="true"
ENV NVIDIA_VISIBLE_DEVICES=all
ENV NVIDIA_DRIVER_CAPABILITIES=utility
ENTRYPOINT ["/usr/bin/nvidia-device-plugin"]
