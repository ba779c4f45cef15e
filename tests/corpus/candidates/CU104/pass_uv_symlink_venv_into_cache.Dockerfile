# corpus 217 (NVIDIA/NeMo-RL): `uv sync --link-mode symlink` makes the venv point into the uv cache; the cache is the install, and removing it breaks the image.
FROM nvcr.io/nvidia/cuda-dl-base:25.05-cuda12.9-devel-ubuntu24.04
COPY --from=ghcr.io/astral-sh/uv:0.7.2 /uv /bin/uv
ENV UV_PROJECT_ENVIRONMENT=/opt/venv
COPY pyproject.toml uv.lock ./
RUN uv sync --link-mode symlink --locked --no-install-project
