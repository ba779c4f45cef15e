# corpus 019 020 164 177 (Megatron-LM CI, wenet tritonserver-sdk, peft TE example): NGC framework images have no runtime variant; "switch to a runtime base" cannot be followed.
FROM nvcr.io/nvidia/pytorch:26.01-py3
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
CMD ["python", "train.py"]
