# corpus 093 180 (horovod, mosaicml/composer): a tag that never existed (10.0-devel-ubuntu20.04, 11.3.1-cudnn8-devel-ubuntu22.04) is CU130's; CU131 calling it EOL or "due for deletion" misleads.
FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu22.04
CMD ["bash"]
