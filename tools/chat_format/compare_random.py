#!/usr/bin/env python3
"""Differential check of `strata-cli chat-format` against the upstream template on random inputs.

Generates random conversations (every role; content as strings, part lists or null; reasoning
given or embedded as <think>; tool calls with random nested arguments, random doubles and JSON
string arguments; tool results in every shape; tools; options; text full of Unicode whitespace,
control characters and GLM tags), renders each with the jinja template exactly as
render_fixtures.py does, and compares strata-cli's output byte for byte. Not part of ctest (it
needs Python and jinja2); run it after touching engine/src/chat/:

  python3 tools/chat_format/compare_random.py --cli build/engine/cli/strata-cli --seed 1 --cases 500
"""
import argparse
import json
import pathlib
import random
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import render_fixtures as rf  # noqa: E402

PIECES = ["a", " ", "\n", "\t", "\r", "x y", "é", "😀", "\\", "\"", "\x01", "\x1c", "\x85",
          "\u00a0", "\u2028", "\u3000", "\u200b", "<think>", "</think>", "<tool_call>"]


class Generator:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def text(self):
        return "".join(self.r.choice(PIECES) for _ in range(self.r.randint(0, 8)))

    def number(self):
        r = self.r
        kind = r.randint(0, 5)
        if kind == 0:
            return r.randint(-10**6, 10**6)
        if kind == 1:
            return r.randint(0, 2**63)
        if kind == 2:  # any finite double, from random bits
            while True:
                f = struct.unpack("<d", struct.pack("<Q", r.getrandbits(64)))[0]
                if f == f and abs(f) != float("inf"):
                    return f
        if kind == 3:
            return r.choice([0.0, -0.0, 1e16, 1e15, 1e-4, 1e-5, 0.1, 123.456, 1e22, 5e-324])
        if kind == 4:
            return 10.0 ** r.randint(-30, 30) * r.random()
        return r.uniform(-1e5, 1e5)

    def value(self, depth=0):
        kind = self.r.randint(0, 5 if depth < 3 else 2)
        if kind == 0:
            return self.text()
        if kind == 1:
            return self.number()
        if kind == 2:
            return self.r.choice([True, False, None])
        if kind == 3:
            return self.number()
        if kind == 4:
            return [self.value(depth + 1) for _ in range(self.r.randint(0, 3))]
        return {self.text() or "k": self.value(depth + 1) for _ in range(self.r.randint(0, 3))}

    def content(self):
        kind = self.r.randint(0, 3)
        if kind == 1:
            parts = [{"type": "text", "text": self.text()}, self.text(),
                     {"type": "image_url", "image_url": {"url": "http://example.com/i.png"}}]
            return [self.r.choice(parts) for _ in range(self.r.randint(0, 3))]
        return None if kind == 2 else self.text()

    def tool_content(self):
        kind = self.r.randint(0, 3)
        if kind == 0:
            return [{"type": "text", "text": self.text()} for _ in range(self.r.randint(1, 2))]
        if kind == 1:
            return [self.r.choice([self.text(), {"output": self.text()}])
                    for _ in range(self.r.randint(0, 3))]
        return None if kind == 2 else self.text()

    def tool_call(self):
        args = {self.text() or "k": self.value() for _ in range(self.r.randint(0, 3))}
        if self.r.random() < 0.3:
            args = json.dumps(args, ensure_ascii=self.r.random() < 0.5)
        return {"type": "function", "function": {"name": self.text() or "f", "arguments": args}}

    def message(self):
        r = self.r
        role = r.choice(["system", "user", "assistant", "assistant", "tool", "tool"])
        m = {"role": role}
        if r.random() < 0.9:
            m["content"] = self.tool_content() if role == "tool" else self.content()
        if role == "assistant":
            if r.random() < 0.5:
                m["reasoning_content"] = r.choice([self.text(), None, ""])
            if r.random() < 0.5:
                m["tool_calls"] = [self.tool_call() for _ in range(r.randint(0, 2))]
        return m

    def case(self):
        r = self.r
        case = {"messages": [self.message() for _ in range(r.randint(0, 7))]}
        if r.random() < 0.4:
            case["tools"] = [{"type": "function", "function": {"name": self.text(),
                                                               "parameters": self.value()}}
                             for _ in range(r.randint(1, 2))]
        case["options"] = {k: r.random() < 0.5
                           for k in ("add_generation_prompt", "enable_thinking", "clear_thinking")
                           if r.random() < 0.5}
        return case


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=300)
    args = parser.parse_args()
    generator = Generator(args.seed)
    template = rf.compile_template(rf.TEMPLATE.read_text(encoding="utf-8"))
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "case.json"
        for i in range(args.cases):
            case = generator.case()
            expected = rf.render(template, case).encode("utf-8")
            path.write_text(json.dumps(case, ensure_ascii=False), encoding="utf-8")
            command = [args.cli, "chat-format", "--messages", str(path)]
            if "tools" in case:
                command += ["--tools", str(path)]
            options = case["options"]
            if options.get("add_generation_prompt"):
                command.append("--add-generation-prompt")
            for key in ("enable_thinking", "clear_thinking"):
                if key in options:
                    command += ["--" + key.replace("_", "-"), str(int(options[key]))]
            run = subprocess.run(command, capture_output=True)
            if run.returncode != 0 or run.stdout != expected:
                bad += 1
                if bad <= 3:
                    print(f"case {i} differs: {run.stderr.decode()[:300]}")
                    print("  input:   ", json.dumps(case, ensure_ascii=False)[:2000])
                    print("  expected:", repr(expected.decode()[:1000]))
                    print("  got:     ", repr(run.stdout.decode(errors="replace")[:1000]))
    print(f"{bad} of {args.cases} cases differ (seed {args.seed})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
