#!/usr/bin/env bash
# Aggregate decode rate of strata-cli serve with 1 and 2 slots: two concurrent 1000-token
# completions (ignore_eos, so every run generates the same count) on the bundled tiny model,
# one OpenMP thread per slot. Prints one JSON line per run; report the median.
#   tools/bench/serve_slots.sh [BUILD_DIR] [PORT]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cli="${1:-$root/build}/engine/cli/strata-cli"
port="${2:-18440}"
request='{"model":"strata-tiny","prompt":"a a a a a","temperature":0,"max_tokens":1000,"ignore_eos":true}'
for slots in 1 2; do
  "$cli" serve --model "$root/resources/models/strata-tiny" --port "$port" --threads 1 --slots "$slots" >/dev/null &
  server=$!
  until curl -s "http://127.0.0.1:$port/health" >/dev/null; do sleep 0.2; done
  for run in 1 2 3; do
    start=$(date +%s.%N)
    curl -s "http://127.0.0.1:$port/v1/completions" -d "$request" >/dev/null & first=$!
    curl -s "http://127.0.0.1:$port/v1/completions" -d "$request" >/dev/null & second=$!
    wait "$first" "$second"
    end=$(date +%s.%N)
    python3 -c "print('{\"slots\": $slots, \"run\": $run, \"tok_s\": %.0f}' % (2000 / ($end - $start)))"
  done
  kill "$server"
  wait "$server" || true
done
