# corpus 125 (microsoft/LightGBM): `8.0-cudnn5-devel` (no OS) was a real published alias, now deleted: CU131, not CU130.
FROM nvidia/cuda:8.0-cudnn5-devel
CMD ["bash"]
