# corpus 184 (kvcache-ai/ktransformers): the lists are written by `RUN apt update -y` (line 3); the install on line 4 only reuses them. CU104 must point at line 3 (today it points at line 4), and its fix must not remove the lists a later install reads.
FROM pytorch/pytorch:2.5.1-cuda12.1-cudnn9-devel
RUN apt update -y
RUN apt install -y --no-install-recommends libaio-dev
