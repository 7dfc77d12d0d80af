#!/bin/sh
# The README's speculative decoding table: bench spec on the bundled tiny model, in RAM and
# streamed, printed as Markdown. Usage: tools/bench/spec_table.sh [build dir] [repeats]
set -eu
build=${1:-build}
repeats=${2:-5}
"$build/engine/cli/strata-cli" bench spec --model resources/models/strata-tiny --repeats "$repeats" --json 2>/dev/null |
  grep '^{' |
  python3 -c '
import json, sys
print("| drafter | mode | first-token acceptance | tokens per pass | speed-up | tok/s | plain tok/s | draft | verify | ceiling |")
print("|---|---|---|---|---|---|---|---|---|---|")
for line in sys.stdin:
    r = json.loads(line)
    print("| %s | %s | %.0f %% | %.2f | %.2fx | %.0f | %.0f | %.2f | %.2f | %.2fx |" % (r["drafter"], r["mode"],
          100 * r["acceptance"], r["tokens_per_forward"], r["speedup"], r["tok_s"], r["plain_tok_s"],
          r["draft_cost"], r["verify_cost"], r["ceiling"]))
'
