# corpus 034 035 042 071 104 106 108 146 211 217: a leaf stage is a `--target` the project builds (grpc/sagemaker/ci/devel images); "unused" is wrong and removing it breaks that build.
FROM nvidia/cuda:12.9.1-devel-ubuntu24.04 AS builder
RUN echo build > /artifact

FROM nvidia/cuda:12.9.1-runtime-ubuntu24.04 AS base
COPY --from=builder /artifact /usr/local/bin/artifact

FROM base AS grpc
CMD ["artifact", "--grpc"]

FROM base
CMD ["artifact"]
