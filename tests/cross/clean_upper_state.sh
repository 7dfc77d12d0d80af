#!/bin/sh
# Every function of the engine that writes ymm0-15 or zmm0-15 must return with vzeroupper: a
# dirty upper state makes each later SSE instruction (libm's expf, scalar float code) pay a
# transition penalty on Intel CPUs. GCC 12's target_clones("avx512f") clone of a function
# returning a float ended `vmovaps %zmm16, %zmm0; ret`, and in-memory decode of the synthetic
# medium model spent ~15 % of its time in the SwiGLU's expf as a result (AVX-512 Xeon).
# Arguments: the engine library's object files (a CMake list, ;-separated).
set -eu
status=0
count=0
for o in $(printf "%s " "$@" | tr ";" " "); do
  count=$((count + 1))
  found=$(objdump -d --no-show-raw-insn "$o" | awk '
    /^[0-9a-f]+ <.*>:$/ { name = $2; dirty = 0; cleaned = 0 }
    /%[yz]mm([0-9]|1[0-5])([^0-9]|$)/ { dirty = 1 }
    /vzeroupper/ { cleaned = 1 }
    /\tret/ { if (dirty && !cleaned) print name }' | sort -u)
  if [ -n "$found" ]; then
    echo "FAIL: $o returns with a dirty upper vector state from: $found"
    status=1
  fi
done
[ "$count" -gt 0 ] || { echo "FAIL: no object files given"; exit 1; }
echo "$count objects checked"
exit $status
