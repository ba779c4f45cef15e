# corpus 108 (TGI Dockerfile_trtllm), 117 (icefall, /opt/conda/lib/stubs): the shipped stage puts a stubs dir on LD_LIBRARY_PATH; silent today. Info at least: the runtime base has no stubs yet, it breaks the day the base (or a later install) adds them.
FROM nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04
ENV LD_LIBRARY_PATH="/usr/local/tensorrt/lib:/usr/local/cuda/lib64/stubs:$LD_LIBRARY_PATH"
CMD ["bash"]
