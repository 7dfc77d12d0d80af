#!/usr/bin/env python3
"""Trains a GLM-5-style byte-level BPE tokenizer and writes a Hugging Face tokenizer.json.

    train_bpe.py --corpus A.txt [B.txt ...] --vocab-size N --out tokenizer.json

The file has GLM-5's layout (spec §5): pre-tokenizer Sequence[Split(GLM regex, Isolated),
ByteLevel(add_prefix_space=false, use_regex=false)], ByteLevel decoder, no normalizer,
merges written as pairs, and GLM's special tokens as added tokens after the BPE vocab.
--vocab-size counts every id, special tokens included: ids 0..255 are the 256 byte
characters in byte order, then one token per merge, then the special tokens. Training stops
early (with a warning, and a smaller vocab) when no pair occurs --min-frequency times.

Deterministic: the same corpus and arguments give the same file, byte for byte (ties
between equally frequent pairs go to the pair with the smaller ids). Merge counting is
incremental (only the words containing the merged pair are revisited), so a few thousand
merges on ~5 MB of text take about a minute. Needs only Debian's python3-regex.
"""
import argparse
import collections
import heapq
import json
import sys

import regex

GLM_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
               r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

# GLM-5's special tokens that the chat template uses, in their relative order in GLM-5's
# tokenizer (154820, 154822, 154824, 154826-154829, 154841-154850).
GLM_SPECIAL_TOKENS = [
    "<|endoftext|>", "[gMASK]", "<sop>", "<|system|>", "<|user|>", "<|assistant|>",
    "<|observation|>", "<think>", "</think>", "<tool_call>", "</tool_call>",
    "<tool_response>", "</tool_response>", "<arg_key>", "</arg_key>", "<arg_value>",
    "</arg_value>",
]


def byte_alphabet():
    """GPT-2's bytes_to_unicode, as a list indexed by byte value."""
    printable = set(range(ord("!"), ord("~") + 1)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    chars, extra = [], 0
    for b in range(256):
        if b in printable:
            chars.append(chr(b))
        else:
            chars.append(chr(0x100 + extra))
            extra += 1
    return chars


def count_words(texts, pre_tokenize, special_tokens=()):
    """How often each pre-token occurs, as {tuple of byte values: count}. Special tokens in
    the corpus are cut out first so that no merge learns them."""
    counts = collections.Counter()
    cutter = regex.compile("|".join(regex.escape(t) for t in special_tokens)) if special_tokens else None
    for text in texts:
        for chunk in (cutter.split(text) if cutter else [text]):
            counts.update(pre_tokenize(chunk))
    return {tuple(piece.encode("utf-8")): n for piece, n in counts.items()}


def learn_merges(word_counts, token_count, min_frequency=2):
    """Learns merges until there are `token_count` tokens. Returns (tokens, merges): tokens[i]
    is the byte string of id i (0..255 the bytes, then the merge results); merges are
    (left id, right id) pairs. A merge whose result already exists (abc from ab+c after
    a+bc) reuses that token's id, as Hugging Face's trainer does."""
    tokens = [bytes([b]) for b in range(256)]
    words = [list(w) for w in sorted(word_counts)]  # sorted: a fixed order, for determinism
    freqs = [word_counts[tuple(w)] for w in words]
    pair_counts = collections.Counter()
    pair_words = collections.defaultdict(set)
    for index, (word, freq) in enumerate(zip(words, freqs)):
        for pair in zip(word, word[1:]):
            pair_counts[pair] += freq
            pair_words[pair].add(index)
    heap = [(-count, pair) for pair, count in pair_counts.items()]
    heapq.heapify(heap)

    merges = []
    ids = {t: i for i, t in enumerate(tokens)}
    while len(tokens) < token_count:
        while heap and pair_counts.get(heap[0][1], 0) != -heap[0][0]:
            heapq.heappop(heap)  # stale: the pair's count changed since it was pushed
        if not heap or -heap[0][0] < min_frequency:
            break
        _, pair = heapq.heappop(heap)
        merged_bytes = tokens[pair[0]] + tokens[pair[1]]
        new_id = ids.get(merged_bytes)
        if new_id is None:
            new_id = ids[merged_bytes] = len(tokens)
            tokens.append(merged_bytes)
        merges.append(pair)
        changed = set()
        for index in sorted(pair_words.pop(pair)):
            word, freq = words[index], freqs[index]
            if not any(p == pair for p in zip(word, word[1:])):
                continue  # the pair was merged away in this word by an earlier merge
            for p in zip(word, word[1:]):
                pair_counts[p] -= freq
                changed.add(p)
            merged, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
                    merged.append(new_id)
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            words[index] = merged
            for p in zip(merged, merged[1:]):
                pair_counts[p] += freq
                pair_words[p].add(index)
                changed.add(p)
        pair_counts.pop(pair, None)
        for p in changed:
            count = pair_counts.get(p, 0)
            if count > 0:
                heapq.heappush(heap, (-count, p))
            else:
                pair_counts.pop(p, None)
    return tokens, merges


def glm_pre_tokenize(text):
    return regex.findall(GLM_PATTERN, text)


def glm_tokenizer_json(tokens, merges, special_tokens=GLM_SPECIAL_TOKENS):
    alphabet = byte_alphabet()
    names = ["".join(alphabet[b] for b in t) for t in tokens]
    added = [{"id": len(names) + i, "content": t, "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True}
             for i, t in enumerate(special_tokens)]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": GLM_PATTERN}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
        ]},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                           "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False,
                  "vocab": {name: i for i, name in enumerate(names)},
                  "merges": [[names[a], names[b]] for a, b in merges]},
    }


def dump_tokenizer(spec, path):
    """Writes JSON with one vocab entry and one merge per line: small and diff-friendly."""
    model = dict(spec["model"])
    vocab, merges = model.pop("vocab"), model.pop("merges")
    head = {k: v for k, v in spec.items() if k != "model"}
    dumps = lambda v: json.dumps(v, ensure_ascii=False)
    lines = ["{"]
    for key, value in head.items():
        if isinstance(value, list) and value:
            items = ",\n".join(f"    {dumps(v)}" for v in value)
            lines.append(f"  {dumps(key)}: [\n{items}\n  ],")
        else:
            lines.append(f"  {dumps(key)}: {dumps(value)},")
    lines.append('  "model": {')
    for key, value in model.items():
        lines.append(f"    {dumps(key)}: {dumps(value)},")
    lines.append('    "vocab": {')
    lines.append(",\n".join(f"      {dumps(t)}: {i}" for t, i in vocab.items()))
    lines.append("    },")
    lines.append('    "merges": [')
    lines.append(",\n".join(f"      {dumps(m)}" for m in merges))
    lines.append("    ]")
    lines.append("  }")
    lines.append("}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", nargs="+", required=True, help="UTF-8 text files")
    parser.add_argument("--vocab-size", type=int, required=True, help="every id, special tokens included")
    parser.add_argument("--out", required=True)
    parser.add_argument("--min-frequency", type=int, default=2)
    args = parser.parse_args()

    token_count = args.vocab_size - len(GLM_SPECIAL_TOKENS)
    if token_count < 256:
        sys.exit(f"--vocab-size must be at least {256 + len(GLM_SPECIAL_TOKENS)}")
    texts = []
    for path in args.corpus:
        with open(path, encoding="utf-8") as f:
            texts.append(f.read())
    words = count_words(texts, glm_pre_tokenize, GLM_SPECIAL_TOKENS)
    tokens, merges = learn_merges(words, token_count, args.min_frequency)
    if len(tokens) < token_count:
        print(f"train_bpe: only {len(merges)} pairs occur {args.min_frequency}+ times; the vocab has "
              f"{len(tokens) + len(GLM_SPECIAL_TOKENS)} ids, not {args.vocab_size}", file=sys.stderr)
    dump_tokenizer(glm_tokenizer_json(tokens, merges), args.out)


if __name__ == "__main__":
    main()
