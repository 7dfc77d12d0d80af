#!/bin/sh
# Regenerates tests/data/{tiny-dsa,tiny-indexshare,tiny-fp8} from fixed seeds.
# Needs Debian's python3-torch and python3-numpy. Deterministic: same files every run.
set -eu
cd "$(dirname "$0")"
export PYTHONDONTWRITEBYTECODE=1
PYTHON=${PYTHON:-/usr/bin/python3}
# OpenBLAS misdetects some CPUs and falls back to a ~20x slower kernel, so the core type is
# named (one the CPU can run: openblas_env.py reads its flags); one thread is plenty for these
# tiny matrices and keeps results independent of the machine's cores.
core=$("$PYTHON" openblas_env.py)
if [ -n "$core" ]; then export OPENBLAS_CORETYPE="$core"; fi
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
"$PYTHON" selfcheck.py
"$PYTHON" make_fixtures.py "$@"
