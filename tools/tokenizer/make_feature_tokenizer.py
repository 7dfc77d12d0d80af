#!/usr/bin/env python3
"""Writes the second test tokenizer: a small byte-level BPE that exercises the tokenizer.json
features the GLM-style one does not use.

    make_feature_tokenizer.py --corpus fixture_corpus.txt --out features_tokenizer.json

- normalizer: Sequence[NFD, NFKC] (so fullwidth ＡＢＣ and the ligature ﬁ become ABC, fi);
- pre-tokenizer: Sequence[Split(String " ", MergedWithNext),
  Split(Regex \\p{P}, MergedWithPrevious, invert), Digits(individual), ByteLevel(no regex)];
- merges in the legacy string form "a b", and ignore_merges with whole-word tokens that no
  merge produces (so only ignore_merges can give them);
- added tokens with lstrip/rstrip (<mask>, <sep>, <cls>), single_word (<tag> raw,
  ACME normalized) and a normalized non-special token.
The merges are learned (train_bpe.learn_merges) from the corpus as this pre-tokenizer cuts it.
"""
import argparse

import bpe_reference
import train_bpe

MERGES = 400

NORMALIZER = {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "NFKC"}]}
PRE_TOKENIZER = {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithNext", "invert": False},
    {"type": "Split", "pattern": {"Regex": r"\p{P}"}, "behavior": "MergedWithPrevious", "invert": True},
    {"type": "Digits", "individual_digits": True},
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
]}
# Whole words in the vocab without the merges that would build them.
DIRECT_WORDS = [" tokenizer", " Strata", " 日本語", " internationalization"]
ADDED = [  # content, special, normalized, lstrip, rstrip, single_word
    ("<|endoftext|>", True, False, False, False, False),
    ("<mask>", True, False, True, True, False),
    ("<sep>", True, False, False, True, False),
    ("<cls>", True, False, True, False, False),
    ("<tag>", True, False, False, False, True),
    ("ACME", False, True, False, False, True),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    with open(args.corpus, encoding="utf-8") as f:
        text = f.read()
    forms = bpe_reference.normalize_forms(NORMALIZER)
    pre_tokenizer = bpe_reference.PreTokenizer(PRE_TOKENIZER)
    alphabet = train_bpe.byte_alphabet()
    to_bytes = {c: b for b, c in enumerate(alphabet)}

    def pieces(chunk):  # the byte-level pre-tokens, back as text for count_words
        for form in forms:
            chunk = bpe_reference.unicodedata.normalize(form, chunk)
        return [bytes(to_bytes[c] for c in p).decode("utf-8") for p in pre_tokenizer(chunk)]

    words = train_bpe.count_words([text], pieces, [a[0] for a in ADDED])
    tokens, merges = train_bpe.learn_merges(words, 256 + MERGES)
    names = ["".join(alphabet[b] for b in t) for t in tokens]
    for word in DIRECT_WORDS:
        name = "".join(alphabet[b] for b in word.encode("utf-8"))
        if name not in names:
            names.append(name)
    added = [{"id": len(names) + i, "content": c, "single_word": w, "lstrip": l, "rstrip": r,
              "normalized": n, "special": s} for i, (c, s, n, l, r, w) in enumerate(ADDED)]
    spec = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": NORMALIZER,
        "pre_tokenizer": PRE_TOKENIZER,
        "post_processor": None,
        "decoder": {"type": "Sequence", "decoders": [{"type": "ByteLevel", "add_prefix_space": False,
                                                      "trim_offsets": True, "use_regex": False}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": True,
                  "vocab": {name: i for i, name in enumerate(names)},
                  "merges": [f"{names[a]} {names[b]}" for a, b in merges]},
    }
    train_bpe.dump_tokenizer(spec, args.out)


if __name__ == "__main__":
    main()
