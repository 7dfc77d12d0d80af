#!/usr/bin/env python3
"""Prints the fixed texts of the tokenizer fixtures as JSON lines (one JSON string a line).

Chosen to hit the edges of the GLM split regex (contractions in any case, letter runs after
one non-letter, digit groups of three, punctuation runs with trailing newlines, whitespace
before newlines and before words), multi-byte text (CJK, emoji with ZWJ and modifiers,
combining marks, RTL scripts), special tokens inside and next to text, near-misses of special
tokens, and the features of the second test tokenizer (NFKC, lstrip/rstrip/single_word).
"""
import json
import sys

TEXTS = [
    "",
    " ",
    "\n",
    "Hello world",
    "Hello, world! How are you today?",
    "I'm sure you'll like it; they've said it's what we'd want.",
    "I'M SURE YOU'LL LIKE IT; THEY'VE SAID IT'S WHAT WE'D WANT.",
    "don't DON'T Don'T o'clock 'twas rock'n'roll",
    "  leading spaces and trailing spaces   ",
    "tabs\tand\t\tmore\ttabs",
    "line one\nline two\n\nline four\r\nwindows line\r\n",
    "text ending with a newline\n",
    "spaces before newline   \n   indented next line",
    "a\n\n\n\nb",
    "   \n\t \n  ",
    "1234567890 12 123 1234 12345 3.14159 1,000,000 2026-05-09",
    "$100.00!!! ... ??? --- *** ### @@@",
    "foo_bar(baz) -> qux[0] == {'key': \"value\"};",
    "def tokenize(text):\n    return [t for t in text.split() if t]\n",
    "int main(int argc, char** argv) {\n\treturn argc > 1 ? 0 : 1;\n}\n",
    "if (x <= 10 && y >= 20 || z != 30) { std::cout << x; }",
    "https://example.com/path?query=1&other=two#fragment",
    "user@example.org sent 3 emails at 09:45:00.",
    "人工智能正在改变我们的生活方式。",
    "今天天气很好，我们一起去公园散步吧！",
    "東京は日本の首都です。ひらがなとカタカナ。",
    "안녕하세요! 오늘은 날씨가 정말 좋네요.",
    "Привет, мир! Москва — столица России.",
    "Καλημέρα κόσμε!",
    "مرحبا بالعالم! شكرا جزيلا.",
    "שלום עולם!",
    "नमस्ते दुनिया!",
    "สวัสดีครับ",
    "Le café est très chaud; à bientôt, Müller! ¿Dónde está la niña?",
    "Tiếng Việt: người, được, những, trường học.",
    "e\u0301 n\u0303 a\u030a decomposed vs \u00e9 \u00f1 \u00e5 composed",
    "z\u0337\u0322a\u0338l\u0334g\u0335o\u0336",
    "emoji 😀😃😄 😂🤣 ❤️ 👍 👍🏽 🎉 🚀",
    "family 👨‍👩‍👧‍👦 couple 👩‍❤️‍👨 flags 🇫🇷🇯🇵 rainbow 🏳️‍🌈 keycap 1️⃣",
    "Mixed: GLM-5 模型 supports 中文 and English; 価格は¥1,980です",
    "∑ᵢ xᵢ² ≤ ∞, α + β = γ, √2 ≈ 1.414, ½ + ¼ = ¾",
    "“quotes” ‘single’ «guillemets» — em – en … • © ® ™",
    "\u00a0non-breaking\u00a0space and\u3000ideographic space\u2003em space",
    "zero\u200bwidth\u200cjoiner\u200dtest\ufeffbom",
    "[gMASK]<sop><|system|>You are a helpful assistant.<|user|>Hello!<|assistant|><think>",
    "<|user|>What is 2+2?<|assistant|></think>4<|endoftext|>",
    "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
    "<|observation|><tool_response>{\"temp\": 21}</tool_response>",
    "text<|endoftext|>text<|endoftext|><|endoftext|>",
    "near misses: <|user| <|user <think <think/> </think <|endoftext| [gMASK <sop",
    "<<|user|>> <<think>> [[gMASK]] <sop><sop>",
    " <|user|> spaced <|assistant|> ",
    "ＡＣＭＥ　Ｃｏｒｐ：ｆｕｌｌｗｉｄｔｈ１２３",
    "ligatures ﬁ ﬂ ﬀ circled ① ② Ⓐ roman Ⅻ superscript x² H₂O",
    "the ACME rocket, ACME. xACME ACMEx _ACME ACME_ ＡＣＭＥ!",
    "a <mask> b",
    "a    <mask>    b",
    "<mask>start and end<mask>",
    "x<sep>   y <sep>z",
    "x   <cls>y x<cls>",
    "<tag> a<tag> <tag>b <tag>, (<tag>)",
    "the tokenizer Strata uses 日本語 and internationalization",
    "tokenizer tokenizers Strata's",
    "phone: 555-0123, id: 00042, year 1999",
    "hello-world foo--bar a,b.c;d:e!f?g",
    "The quick brown fox jumps over the lazy dog. " * 3,
    "GNU General Public License, version 3; see <https://www.gnu.org/licenses/>.",
    "Licensed under the Apache License, Version 2.0 (the \"License\");",
    "    def fill(text, width=70, **kwargs):\n        return TextWrapper(width=width, **kwargs).fill(text)\n",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "                                                                                ",
    "a" * 3 + " " * 5 + "b" * 3 + "\n" * 3 + "c",
]


def main():
    for text in TEXTS:
        sys.stdout.write(json.dumps(text, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
