# corpus 031 (TransformerEngine wheel builder, 3 findings): the image's job is to compile; its CMD runs the wheel build, so the devel packages are used.
FROM quay.io/pypa/manylinux_2_28_x86_64
RUN dnf -y install cuda-compiler-12-3 cuda-libraries-devel-12-3 libnccl-devel && dnf clean all
ENV PATH="/usr/local/cuda/bin:${PATH}"
CMD ["/bin/bash", "-c", "bash /src/build_tools/build_wheels.sh"]
