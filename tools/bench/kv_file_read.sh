#!/bin/sh
# The KV file read times in docs/kv-file-format.md: builds tools/bench/kv_file_read.cpp against
# the engine library of a Release build and runs it (the file lives in the page cache).
#
#   tools/bench/kv_file_read.sh [BUILD_DIR] [WORK_DIR]   (defaults: build, /tmp)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
work=${2:-/tmp}
ninja -C "$build" strata_engine
g++ -std=c++20 -O2 -I "$root/engine/src" -I "$root/engine/include" \
  "$root/tools/bench/kv_file_read.cpp" "$build/engine/libstrata_engine.a" -lxxhash -fopenmp \
  -o "$build/kv_file_read_bench"
for precision in f32 bf16; do
  for run in 1 2 3; do "$build/kv_file_read_bench" "$work" "$precision"; done
done
