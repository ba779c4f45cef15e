#!/usr/bin/env python3
"""Dockerfiles for the LSP and scaling benchmarks (scripts/bench-lsp).

  generate.py scale BLOCKS   2 + 5*BLOCKS instructions: one CUDA stage whose
                             blocks each hold an `apt-get install`, a
                             `pip install`, an ENV, a COPY and a RUN (BLOCKS=2000:
                             10,002 instructions, 2,000 of each install).
"""
import sys


def scale(blocks: int) -> str:
    out = ["ARG CUDA=12.4.1", "FROM nvidia/cuda:${CUDA}-devel-ubuntu22.04 AS build"]
    for n in range(blocks):
        out.append(
            "RUN apt-get update && apt-get install -y --no-install-recommends "
            f"libpkg{n}-dev tool{n} && rm -rf /var/lib/apt/lists/*"
        )
        out.append(f"RUN pip install --no-cache-dir package{n}==1.{n % 50}.0 helper{n}")
        out.append(f"ENV STEP_{n}=/opt/step{n}")
        out.append(f"COPY src/part{n} /opt/step{n}/")
        out.append(f"RUN make -C /opt/step{n} -j2 && echo done {n}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    kind, count = sys.argv[1], int(sys.argv[2])
    if kind != "scale":
        sys.exit(f"unknown kind {kind}")
    sys.stdout.write(scale(count))
