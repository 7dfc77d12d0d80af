#!/bin/sh
# The expert-cache policy table of tools/traces/README.md: for each routing trace and each
# capacity (10%, 20%, 40% of all experts), every policy's hit rate and its ratio to Belady's,
# then Belady's and the best fixed set's (with its ratio to Belady's).
#
#   tools/traces/cache_table.sh [--cli PATH] TRACE.jsonl...
#
# PATH defaults to build/engine/cli/strata-cli. Prints Markdown table rows.
set -eu
cli=build/engine/cli/strata-cli
if [ "${1:-}" = "--cli" ]; then cli=$2; shift 2; fi
[ $# -gt 0 ] || { echo "usage: $0 [--cli PATH] TRACE.jsonl..." >&2; exit 2; }
"$cli" bench cache --trace "$1" --json --capacity 1 |
  python3 -c '
import json, sys
names = [json.loads(line)["policy"] for line in sys.stdin]
print("| trace | capacity | experts | " + " | ".join(names) + " | belady | static |")
print("|---" * (len(names) + 5) + "|")'
for trace in "$@"; do
  for fraction in 0.1 0.2 0.4; do
    "$cli" bench cache --trace "$trace" --capacity-fraction "$fraction" --json |
      python3 -c '
import json, sys
rows = [json.loads(line) for line in sys.stdin]
cells = " | ".join("%.1f%% (%.2f)%s" % (100 * r["hit_rate"], r["ratio"], " *" if r["default"] else "")
                   for r in rows)
best, fixed = rows[0]["belady_hit_rate"], rows[0]["static_hit_rate"]
print("| %s | %s | %d | %s | %.1f%% | %.1f%% (%.2f) |" % (
    sys.argv[1], sys.argv[2], rows[0]["capacity"], cells, 100 * best, 100 * fixed,
    fixed / best if best else 1.0))
' "$(basename "$trace" .jsonl)" "$fraction"
  done
done
