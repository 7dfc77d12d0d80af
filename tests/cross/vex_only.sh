#!/bin/sh
# The AVX-VNNI kernels must run on CPUs without AVX-512 (Intel Alder Lake and later): the
# object built from int_dot_avxvnni.cpp may hold VEX vpdpbusd but no EVEX encoding, zmm,
# mask or ymm16-31 registers. Arguments: the engine library's object files (a CMake list, ;-separated).
set -eu
object=""
for o in $(printf "%s " "$@" | tr ";" " "); do case "$o" in *int_dot_avxvnni.cpp.o) object=$o ;; esac; done
[ -n "$object" ] || { echo "FAIL: no int_dot_avxvnni.cpp object among the engine's objects"; exit 1; }
listing=$(objdump -d --no-show-raw-insn "$object")
vex=$(printf '%s\n' "$listing" | grep -c '{vex} vpdpbusd' || true)
evex=$(printf '%s\n' "$listing" | grep -cE '%zmm|%k[0-7]|%[xy]mm(1[6-9]|2[0-9]|3[01])\b|\{evex\}' || true)
echo "$object: $vex VEX vpdpbusd, $evex AVX-512-only operands or encodings"
[ "$vex" -gt 0 ] && [ "$evex" -eq 0 ]
