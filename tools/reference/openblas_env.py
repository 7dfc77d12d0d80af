#!/usr/bin/env python3
"""OpenBLAS settings for the PyTorch tools, chosen from the CPU instead of fixed.

Debian's OpenBLAS misdetects some CPUs and falls back to a ~20x slower generic kernel unless
OPENBLAS_CORETYPE names the core, but naming one the CPU cannot run (SKYLAKEX without AVX-512,
as on AMD Zen 2/3) kills the process with an illegal instruction. So the core type comes from
the CPU's flags: SKYLAKEX with AVX-512, HASWELL with AVX2 and FMA, otherwise OpenBLAS's own
detection. Run as a script, it prints the type (nothing where there is none) for shell scripts.
"""

from __future__ import annotations

import os


def core_type(cpuinfo: str = "/proc/cpuinfo") -> str | None:
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            flags = next((set(line.split(":", 1)[1].split()) for line in f if line.startswith("flags")), set())
    except OSError:
        return None
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        return "SKYLAKEX"
    if {"avx2", "fma"} <= flags:
        return "HASWELL"
    return None


def set_defaults(**extra: str) -> None:
    """Before numpy or torch loads: the core type, one OpenBLAS thread (the matrices are small;
    torch's own threads do the parallel work) and any `extra` variables, each only where the
    caller's environment does not set it already."""
    core = core_type()
    if core:
        os.environ.setdefault("OPENBLAS_CORETYPE", core)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    for key, value in extra.items():
        os.environ.setdefault(key, value)


if __name__ == "__main__":
    print(core_type() or "")
