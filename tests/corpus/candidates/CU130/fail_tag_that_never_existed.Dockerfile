# corpus 093 (horovod Dockerfile.test.gpu default): `10.0-devel-ubuntu20.04` never existed (Ubuntu 20.04 came after CUDA 10.0): CU130 must fire; today only CU131 says "deleted".
FROM nvidia/cuda:10.0-devel-ubuntu20.04
CMD ["bash"]
