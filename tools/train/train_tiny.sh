#!/bin/sh
# Trains Strata's bundled tiny GLM-5 model from nothing, on the CPU:
#   corpus -> tokenizer -> training -> export -> held-out evaluation -> README.
#
#   tools/train/train_tiny.sh [--work DIR] [--out DIR] [--steps N] [--train-rows N] [--resume]
#
#   --work DIR   scratch folder (corpus, tokenizer, run with checkpoints); default build/strata-tiny-train
#   --out DIR    the Hugging Face folder to write; default resources/models/strata-tiny
#   --steps N    training steps (default 4000: about 2 hours on 2 idle cores)
#   --train-rows N  training conversations to generate (default 150000; small values for a smoke test)
#   --resume     continue an interrupted run from its last checkpoint (corpus and tokenizer are
#                reused; Ctrl-C or SIGTERM during training saves a checkpoint first)
#   --init-from DIR  start from an exported model (e.g. the committed strata-tiny, copied out of
#                --out first) instead of random weights: more training for an earlier run
#
# Needs Debian's python3-torch, python3-numpy, python3-jinja2 and python3-regex. Deterministic:
# fixed seeds throughout; an interrupted and resumed run ends with the same weights.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$root/build/strata-tiny-train
out=$root/resources/models/strata-tiny
steps=4000
rows=150000
resume=0
init=""
while [ $# -gt 0 ]; do
  case "$1" in
    --work) work=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --train-rows) rows=$2; shift 2 ;;
    --resume) resume=1; shift ;;
    --init-from) init=$2; shift 2 ;;
    *) echo "usage: $0 [--work DIR] [--out DIR] [--steps N] [--train-rows N] [--resume] [--init-from DIR]" >&2; exit 2 ;;
  esac
done

PYTHON=${PYTHON:-/usr/bin/python3}
export PYTHONDONTWRITEBYTECODE=1
# The OpenBLAS core type (from the CPU's flags) and torch's passive waiting are set by the
# Python scripts themselves (tools/reference/openblas_env.py).
train=$root/tools/train
mkdir -p "$work"

if [ "$resume" -eq 0 ] || [ ! -f "$work/corpus/train.jsonl" ]; then
  echo "== corpus"
  "$PYTHON" "$train/make_corpus.py" --out "$work/corpus" --train "$rows" --seed 1234
fi
if [ "$resume" -eq 0 ] || [ ! -f "$work/tokenizer.json" ]; then
  echo "== tokenizer"
  "$PYTHON" "$root/tools/tokenizer/train_bpe.py" --corpus "$work/corpus/tokenizer.txt" \
    --vocab-size 3072 --out "$work/tokenizer.json"
fi

echo "== training ($steps steps; log in $work/run/train_log.txt)"
if [ "$resume" -eq 1 ] && [ -f "$work/run/checkpoint.pt" ]; then
  "$PYTHON" "$train/train.py" --corpus "$work/corpus" --tokenizer "$work/tokenizer.json" \
    --out "$work/run" --resume
else
  rm -rf "$work/run"
  if [ -n "$init" ]; then
    # The indexers are trained already: no dense warm-up.
    "$PYTHON" "$train/train.py" --corpus "$work/corpus" --tokenizer "$work/tokenizer.json" \
      --out "$work/run" --steps "$steps" --dense-steps 0 --init-from "$init"
  else
    "$PYTHON" "$train/train.py" --corpus "$work/corpus" --tokenizer "$work/tokenizer.json" \
      --out "$work/run" --steps "$steps" --dense-steps $((steps / 10))
  fi
fi

echo "== export to $out"
"$PYTHON" "$train/export.py" --run "$work/run" --tokenizer "$work/tokenizer.json" --out "$out" \
  --eval-set "$work/corpus/eval.jsonl"
echo "== held-out evaluation (PyTorch reference, float64)"
"$PYTHON" "$train/eval_tasks.py" --model "$out" --eval "$out/eval.jsonl" --json-out "$work/eval.json"
"$PYTHON" "$train/export.py" --run "$work/run" --tokenizer "$work/tokenizer.json" --out "$out" \
  --eval-results "$work/eval.json" --readme-only
