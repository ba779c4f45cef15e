# corpus 093 094 095 096 (horovod, 10 findings): `ldconfig <stubs> && build && ldconfig` registers the stubs only while the RUN runs; the closing plain ldconfig rebuilds the cache without them.
FROM nvidia/cuda:12.2.2-cudnn8-devel-ubuntu22.04
RUN ldconfig /usr/local/cuda/targets/x86_64-linux/lib/stubs && \
    python3 -c "print('build against libcuda stub')" && \
    ldconfig
CMD ["bash"]
