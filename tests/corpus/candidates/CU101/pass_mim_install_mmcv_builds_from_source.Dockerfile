# corpus 140 (open-mmlab/mmcv release image): `mim install mmcv` builds mmcv's CUDA ops from source when no prebuilt wheel matches torch/CUDA; that compiles, so devel is needed.
ARG PYTORCH="1.8.1"
ARG CUDA="10.2"
ARG CUDNN="7"
FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel
RUN pip install --no-cache-dir -U openmim && mim install 'mmcv>=2.0.0rc1'
