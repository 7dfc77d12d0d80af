#!/bin/sh
# Regenerates tests/data/tokenizer/ from fixture_corpus.txt and fixture_texts.py.
# Needs only Debian's python3 and python3-regex. Deterministic: same files every run.
set -eu
cd "$(dirname "$0")"
export PYTHONDONTWRITEBYTECODE=1
PYTHON=${PYTHON:-/usr/bin/python3}
out=../../tests/data/tokenizer
mkdir -p "$out"
"$PYTHON" train_bpe.py --corpus fixture_corpus.txt --vocab-size 3000 --out "$out/glm_tokenizer.json"
"$PYTHON" make_feature_tokenizer.py --corpus fixture_corpus.txt --out "$out/features_tokenizer.json"
"$PYTHON" fixture_texts.py > "$out/texts.jsonl"
"$PYTHON" bpe_reference.py encode "$out/glm_tokenizer.json" "$out/texts.jsonl" > "$out/glm_ids.jsonl"
"$PYTHON" bpe_reference.py encode "$out/features_tokenizer.json" "$out/texts.jsonl" \
  > "$out/features_ids.jsonl"
"$PYTHON" bpe_reference.py regex-splits "$out/glm_tokenizer.json" "$out/texts.jsonl" \
  > "$out/glm_regex_splits.json"
