# cudalint's container image: one static binary and a CA bundle on an empty base, run as a non-root user.
#
#   docker build -t cudalint --build-arg VERSION=0.1.0 .     compile from source (the build stage)
#   docker run --rm -i cudalint - < Dockerfile                lint standard input
#   docker run --rm -v "$PWD:/work:ro" cudalint .             lint a checkout's Dockerfiles
#   docker run --rm -v "$PWD/img.tar:/img.tar:ro" cudalint image docker-archive:/img.tar
#
# scripts/release builds the same final stage from the binary it has already built and checked
# (--build-arg ARTIFACTS=prebuilt, the root filesystem laid out in the build context), so the image
# holds the very bytes the release tarballs and wheels ship. Needs BuildKit (it skips the unused stage).

ARG ARTIFACTS=build

FROM rust:1.95-alpine3.22 AS build
# Alpine's Rust targets musl and links statically; mimalloc and zstd are C (gcc, musl-dev).
RUN apk add --no-cache ca-certificates gcc musl-dev
WORKDIR /src
COPY . .
RUN CARGO_PROFILE_RELEASE_STRIP=true cargo build --release --locked \
    && mkdir -p /rootfs/usr/local/bin /rootfs/etc/ssl/certs /rootfs/tmp /rootfs/work \
    && cp target/release/cudalint /rootfs/usr/local/bin/cudalint \
    && cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/ \
    && chmod 1777 /rootfs/tmp

# The same tree, prepared outside (scripts/release): usr/local/bin/cudalint,
# etc/ssl/certs/ca-certificates.crt, tmp (mode 1777), work.
FROM scratch AS prebuilt
COPY rootfs /rootfs

FROM ${ARTIFACTS} AS artifacts

FROM scratch
ARG VERSION=unknown
LABEL org.opencontainers.image.title="cudalint" \
      org.opencontainers.image.description="Lints CUDA packaging in Dockerfiles and container images" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.documentation="https://github.com/cudalint/cudalint#readme"
COPY --from=artifacts /rootfs/ /
# No /etc/passwd in an empty image: a numeric user, and the layer cache in the
# world-writable /tmp (mount a volume there to keep it between runs).
ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    XDG_CACHE_HOME=/tmp/cache
USER 65532:65532
WORKDIR /work
ENTRYPOINT ["/usr/local/bin/cudalint"]
