#!/bin/sh
# The expert-streaming numbers in README.md: writes the synthetic medium model, then runs
# bench decode with the cache at 20 % of the expert bytes (each I/O backend) and with
# everything in memory, records a 200-token routing trace and replays it under bench cache.
#
#   tools/bench/streaming.sh [--work DIR]     (default build/bench: needs ~4 GB free)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$root/build/bench
if [ "${1:-}" = "--work" ]; then work=$2; fi
cli=$root/build/engine/cli/strata-cli
model=$work/synth-medium
mkdir -p "$work"
[ -f "$model/strata-container.json" ] || "$cli" synth --preset medium --out "$model"
for io in direct uring buffered; do
  echo "== expert fraction 0.2, $io"
  "$cli" bench decode --model "$model" --expert-fraction 0.2 --io "$io" --tokens 48 --json
done
echo "== everything in memory"
"$cli" bench decode --model "$model" --expert-fraction 1 --io direct --tokens 48 --json
echo "== routing trace"
"$cli" bench decode --model "$model" --expert-fraction 0.2 --io direct --tokens 200 --json \
  --record-trace "$work/medium.trace"
"$cli" bench cache --trace "$work/medium.trace"
