# corpus 168 169 170 171 172 173 (anibali/docker-pytorch): `FROM base-${TARGETARCH}` uses BuildKit's automatic platform ARG; base-amd64 (and base through it) ships on amd64, base-arm64 on arm64.
FROM nvidia/cuda:12.8.1-runtime-ubuntu22.04 AS base
RUN echo common > /etc/common

FROM base AS base-amd64
ENV NV_ARCH=x86_64

FROM base AS base-arm64
ENV NV_ARCH=sbsa

FROM base-${TARGETARCH}
CMD ["bash"]
