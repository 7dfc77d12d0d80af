#!/usr/bin/env python3
"""An independent byte-level BPE encoder for Hugging Face tokenizer.json files.

Written from the semantics of Hugging Face `tokenizers` (added tokens -> normalizer ->
pre-tokenizer -> BPE), not from Strata's C++: it uses the `regex` module (not PCRE2),
`unicodedata` (not utf8proc) and the textbook BPE loop (merge the lowest-ranked adjacent
pair, leftmost first, until none is left) instead of a heap. Strata's tests compare their
ids with the ids this script writes.

    bpe_reference.py encode TOKENIZER.json TEXTS.jsonl > IDS.jsonl
    bpe_reference.py regex-splits TOKENIZER.json TEXTS.jsonl > SPLITS.json

TEXTS.jsonl holds one JSON string per line; IDS.jsonl gets one JSON array of ids per line.
regex-splits writes how the tokenizer's first Split regex cuts each text (matches only).
Needs only Debian's python3-regex.
"""
import json
import sys
import unicodedata

import regex

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# Rust regex's \w and \s (Unicode TR18), which tokenizers uses around added tokens.
WORD_CHARACTER = regex.compile(r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]")
WHITE_SPACE = regex.compile(r"\p{White_Space}")


def byte_alphabet():
    """GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other
    68 bytes get U+0100, U+0101, ... in byte order."""
    printable = set(range(ord("!"), ord("~") + 1)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(0x100 + extra)
            extra += 1
    return table


BYTE_CHAR = byte_alphabet()


def find_all(pattern, text):
    """Non-overlapping matches as Oniguruma's find_iter (used by tokenizers) reports them:
    an empty match right where the previous match ended is dropped."""
    spans, pos, last_end = [], 0, None
    while pos <= len(text):
        m = pattern.search(text, pos)
        if m is None:
            break
        start, end = m.span()
        if start == end:
            if end != last_end:
                spans.append((start, end))
            last_end = end
            pos = end + 1
            continue
        spans.append((start, end))
        last_end = pos = end
    return spans


def split_text(text, spans, behavior, invert):
    """tokenizers' NormalizedString::split: cut `text` at the matches, then group by behavior."""
    runs, prev = [], 0
    for start, end in spans:
        if prev != start:
            runs.append([prev, start, invert])
        runs.append([start, end, not invert])
        prev = end
    if prev != len(text) or not runs:
        runs.append([prev, len(text), invert])

    out = []
    if behavior == "Isolated":
        out = [r[:2] for r in runs]
    elif behavior == "Removed":
        out = [r[:2] for r in runs if not r[2]]
    elif behavior == "Contiguous":
        for r in runs:
            if out and r[2] == out[-1][2]:
                out[-1][1] = r[1]
            else:
                out.append(list(r))
    elif behavior == "MergedWithPrevious":
        previous_match = False
        for r in runs:
            if r[2] and not previous_match and out:
                out[-1][1] = r[1]
            else:
                out.append(list(r))
            previous_match = r[2]
    elif behavior == "MergedWithNext":
        previous_match = False
        for r in reversed(runs):
            if r[2] and not previous_match and out:
                out[-1][0] = r[0]
            else:
                out.append(list(r))
            previous_match = r[2]
        out.reverse()
    else:
        raise ValueError(f"unknown behavior {behavior}")
    return [text[a:b] for a, b, *_ in out if b > a]


class PreTokenizer:
    def __init__(self, node):
        self.steps = []
        self._flatten(node)
        self.byte_level = any(s[0] == "ByteLevel" for s in self.steps)

    def _flatten(self, node):
        if node is None:
            return
        kind = node["type"]
        if kind == "Sequence":
            for child in node["pretokenizers"]:
                self._flatten(child)
        elif kind == "Split":
            pattern = node["pattern"]
            source = pattern["Regex"] if "Regex" in pattern else regex.escape(pattern["String"])
            self.steps.append(("Split", regex.compile(source), node["behavior"], node.get("invert", False)))
        elif kind == "ByteLevel":
            use_regex = node.get("use_regex", True)
            self.steps.append(("ByteLevel", node.get("add_prefix_space", True),
                               regex.compile(GPT2_PATTERN) if use_regex else None))
        elif kind == "Digits":
            self.steps.append(("Digits", node.get("individual_digits", False)))
        else:
            raise ValueError(f"unsupported pre-tokenizer {kind}")

    def __call__(self, text):
        pieces = [text] if text else []
        for step in self.steps:
            out = []
            for piece in pieces:
                out.extend(self._apply(step, piece))
            pieces = out
        return pieces

    @staticmethod
    def _apply(step, piece):
        if step[0] == "Split":
            _, pattern, behavior, invert = step
            return split_text(piece, find_all(pattern, piece), behavior, invert)
        if step[0] == "Digits":
            spans = [(i, i + 1) for i, c in enumerate(piece) if unicodedata.category(c) in ("Nd", "Nl", "No")]
            return split_text(piece, spans, "Isolated" if step[1] else "Contiguous", False)
        _, prefix, pattern = step
        if prefix and not piece.startswith(" "):
            piece = " " + piece
        parts = split_text(piece, find_all(pattern, piece), "Isolated", False) if pattern else [piece]
        return ["".join(BYTE_CHAR[b] for b in part.encode("utf-8")) for part in parts]


def normalize_forms(node):
    if node is None:
        return []
    if node["type"] == "Sequence":
        return [form for child in node["normalizers"] for form in normalize_forms(child)]
    if node["type"] in ("NFC", "NFD", "NFKC", "NFKD"):
        return [node["type"]]
    raise ValueError(f"unsupported normalizer {node['type']}")


class Tokenizer:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        model = spec["model"]
        assert model.get("type", "BPE") == "BPE"
        self.vocab = model["vocab"]
        self.ranks = {}
        merges = [m for m in model["merges"] if not (isinstance(m, str) and m.startswith("#version"))]
        for rank, m in enumerate(merges):
            left, right = m.split(" ") if isinstance(m, str) else m
            self.ranks[(left, right)] = rank  # a repeated pair keeps its last rank
        self.ignore_merges = model.get("ignore_merges", False)
        self.forms = normalize_forms(spec.get("normalizer"))
        self.pre_tokenizer = PreTokenizer(spec.get("pre_tokenizer"))
        self.added = spec.get("added_tokens") or []
        self.cache = {}

    def normalize(self, text):
        for form in self.forms:
            text = unicodedata.normalize(form, text)
        return text

    def _added_patterns(self, normalized):
        specials = [t for t in self.added if t.get("special", False)]
        others = [t for t in self.added if not t.get("special", False)]
        patterns = {}
        for t in specials + others:
            if t.get("normalized", True) != normalized:
                continue
            pattern = self.normalize(t["content"]) if normalized else t["content"]
            patterns.setdefault(pattern, t)
        return patterns

    def _split_added(self, text, normalized):
        """[(text, id or None)] around the added tokens, leftmost-longest first."""
        patterns = self._added_patterns(normalized)
        parts, done, pos = [], 0, 0
        while pos < len(text):
            best = max((p for p in patterns if text.startswith(p, pos)), key=len, default=None)
            if best is None:
                pos += 1
                continue
            token = patterns[best]
            start, stop = pos, pos + len(best)
            pos = stop
            if token.get("single_word", False):
                before = start > 0 and WORD_CHARACTER.fullmatch(text[start - 1])
                after = stop < len(text) and WORD_CHARACTER.fullmatch(text[stop])
                if before or after:
                    continue
            if token.get("lstrip", False):
                while start > done and WHITE_SPACE.fullmatch(text[start - 1]):
                    start -= 1
            if token.get("rstrip", False):
                while stop < len(text) and WHITE_SPACE.fullmatch(text[stop]):
                    stop += 1
            if done < start:
                parts.append((text[done:start], None))
            parts.append((text[start:stop], token["id"]))
            done = stop
        if done < len(text):
            parts.append((text[done:], None))
        return parts

    def bpe(self, word):
        if self.ignore_merges and word in self.vocab:
            return [self.vocab[word]]
        if word in self.cache:
            return self.cache[word]
        for ch in word:
            if ch not in self.vocab:  # unk_token and byte_fallback are not modelled here
                raise ValueError(f"character {ch!r} is not in the vocab")
        symbols = list(word)
        while len(symbols) > 1:
            best = None
            for i in range(len(symbols) - 1):
                rank = self.ranks.get((symbols[i], symbols[i + 1]))
                if rank is not None and (best is None or rank < best[0]):
                    best = (rank, i)
            if best is None:
                break
            i = best[1]
            symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
        ids = [self.vocab[s] for s in symbols]
        self.cache[word] = ids
        return ids

    def encode(self, text):
        ids = []
        for raw, token_id in self._split_added(text, normalized=False):
            if token_id is not None:
                ids.append(token_id)
                continue
            for part, part_id in self._split_added(self.normalize(raw), normalized=True):
                if part_id is not None:
                    ids.append(part_id)
                    continue
                for piece in self.pre_tokenizer(part):
                    ids.extend(self.bpe(piece))
        return ids

    def first_split_pattern(self):
        for step in self.pre_tokenizer.steps:
            if step[0] == "Split":
                return step[1]
        raise ValueError("the tokenizer has no Split pre-tokenizer")


def read_texts(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main(argv):
    if len(argv) != 4 or argv[1] not in ("encode", "regex-splits"):
        sys.exit(__doc__)
    tokenizer = Tokenizer(argv[2])
    texts = read_texts(argv[3])
    out = sys.stdout
    if argv[1] == "encode":
        for text in texts:
            out.write(json.dumps(tokenizer.encode(text)) + "\n")
        return
    pattern = tokenizer.first_split_pattern()
    cases = [{"text": t, "pieces": [t[a:b] for a, b in find_all(pattern, t)]} for t in texts]
    json.dump({"pattern": pattern.pattern, "cases": cases}, out, ensure_ascii=False, indent=1)
    out.write("\n")


if __name__ == "__main__":
    main(sys.argv)
