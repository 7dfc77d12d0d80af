"""The tiny model's tokenizer from Python: encoding through tools/tokenizer/bpe_reference.py
(the independent encoder of tokenizer.json files), decoding, and the GLM special-token ids."""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tokenizer"))
from bpe_reference import Tokenizer, byte_alphabet  # noqa: E402

# GLM's stop tokens (spec §5): eos_token_id = [<|endoftext|>, <|user|>, <|observation|>].
EOS_TOKENS = ["<|endoftext|>", "<|user|>", "<|observation|>"]


class TinyTokenizer:
    def __init__(self, path: str):
        self.path = path
        self.encoder = Tokenizer(path)
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        self.special = {t["content"]: t["id"] for t in spec["added_tokens"]}
        self.pieces = {i: s for s, i in spec["model"]["vocab"].items()}
        self.pieces.update({i: s for s, i in self.special.items()})
        self.vocab_size = max(self.pieces) + 1
        self.byte_of = {ch: b for b, ch in byte_alphabet().items()}  # GPT-2 byte -> character table
        missing = [t for t in EOS_TOKENS + ["[gMASK]", "<sop>", "<|assistant|>", "<think>", "</think>"]
                   if t not in self.special]
        if missing:
            raise ValueError(f"{path}: special tokens {missing} are missing")

    def encode(self, text: str) -> list:
        return self.encoder.encode(text)

    @property
    def eos_ids(self) -> list:
        return [self.special[t] for t in EOS_TOKENS]

    def decode(self, ids) -> str:
        """Byte-level decoding; special tokens come out as their text."""
        out, pending = [], bytearray()
        for i in ids:
            piece = self.pieces[int(i)]
            if int(i) in self.special.values():
                out.append(pending.decode("utf-8", errors="replace"))
                pending = bytearray()
                out.append(piece)
            else:
                pending.extend(self.byte_of[ch] for ch in piece)
        out.append(pending.decode("utf-8", errors="replace"))
        return "".join(out)
