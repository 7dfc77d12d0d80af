#!/bin/sh
# Regenerates tests/data/{tiny-dsa,tiny-indexshare,tiny-fp8} from fixed seeds.
# Needs Debian's python3-torch and python3-numpy. Deterministic: same files every run.
set -eu
cd "$(dirname "$0")"
# OpenBLAS misdetects some CPUs and falls back to a ~20x slower kernel; one thread is
# plenty for these tiny matrices and keeps results independent of the machine's cores.
export OPENBLAS_CORETYPE=SKYLAKEX OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
export PYTHONDONTWRITEBYTECODE=1
PYTHON=${PYTHON:-/usr/bin/python3}
"$PYTHON" selfcheck.py
"$PYTHON" make_fixtures.py "$@"
