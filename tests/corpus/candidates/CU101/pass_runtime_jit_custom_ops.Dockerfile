# corpus 050 051 (NVlabs stylegan2-ada-pytorch, stylegan3): the project compiles its custom CUDA ops at run time (torch.utils.cpp_extension.load), so the final stage needs nvcc.
FROM nvcr.io/nvidia/pytorch:21.08-py3
ENV PYTHONDONTWRITEBYTECODE 1
RUN pip install --no-cache-dir imageio imageio-ffmpeg==0.4.4 pyspng==0.1.0
WORKDIR /workspace
RUN (printf '#!/bin/bash\nexec \"$@\"\n' >> /entry.sh) && chmod a+x /entry.sh
ENTRYPOINT ["/entry.sh"]
