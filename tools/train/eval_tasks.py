#!/usr/bin/env python3
"""Held-out evaluation of a tiny-model checkpoint with the PyTorch reference model.

    eval_tasks.py --model DIR --eval eval.jsonl [--dtype float64|float32] [--json-out FILE]

DIR is a Hugging Face folder (config.json, model.safetensors, tokenizer.json). For every
row of eval.jsonl ({"task", "messages", "answer"}) the prompt is the GLM template's rendering
with add_generation_prompt and its defaults (thinking on: the prompt ends `<|assistant|><think>`);
the reference decodes greedily (argmax, lower id on ties) until an eos_token_id from
config.json or --max-new tokens; the reply's content (the text after `</think>`, stripped)
must equal `answer` exactly. Prints each task's and the overall exact-match accuracy (the
fraction of rows answered exactly); with --json the last line is one JSON object
{"overall", "tasks", "rows"}, as `strata-cli eval-tasks --json` prints it.
"""

from __future__ import annotations

import os
import sys

# Set before numpy/torch load their thread pools: Debian's OpenBLAS picks a ~20x slower kernel
# on some CPUs unless told the core type, and torch's own threads must sleep rather than spin
# while they wait (on shared cores spinning threads make a step ~10x slower).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
from openblas_env import set_defaults  # noqa: E402

set_defaults(OMP_WAIT_POLICY="PASSIVE")

import argparse  # noqa: E402
import json
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import glm5_reference as ref  # noqa: E402
from chat_render import ChatRenderer, answer_from_generation  # noqa: E402
from tokenizer_util import TinyTokenizer  # noqa: E402


def greedy_reply(model: ref.Glm5Model, prompt_ids: list, eos_ids: set, max_new: int) -> list:
    """Prefill, then one token at a time through the caches; stops after an eos id (not
    included in the result)."""
    cache = ref.ModelCache(model.cfg)
    with torch.no_grad():
        _, logits = model.forward(prompt_ids, cache)
        out = []
        for _ in range(max_new):
            token = ref.greedy_argmax(logits[-1])
            if token in eos_ids:
                break
            out.append(token)
            _, logits = model.forward([token], cache)
    return out


def config_eos_ids(folder: str) -> set:
    """eos_token_id from config.json: an int or a list (spec §1)."""
    with open(os.path.join(folder, "config.json")) as f:
        eos = json.load(f).get("eos_token_id")
    return set(eos if isinstance(eos, list) else [eos])


def evaluate(model: ref.Glm5Model, tokenizer: TinyTokenizer, rows: list, eos: set, max_new: int = 96,
             verbose: bool = False, answers: list | None = None) -> dict:
    renderer = ChatRenderer()
    per_task = {}
    for row in rows:
        prompt = renderer.prompt(row["messages"])
        prompt_ids = tokenizer.encode(prompt)
        generated = greedy_reply(model, prompt_ids, eos, max_new)
        if answers is not None:
            answers.append({"task": row["task"], "messages": row["messages"], "prompt_ids": prompt_ids,
                            "generated_ids": generated, "max_new": max_new})
        reply = tokenizer.decode(generated)
        got = answer_from_generation(reply)
        ok = got == row["answer"]
        right, total = per_task.get(row["task"], (0, 0))
        per_task[row["task"]] = (right + ok, total + 1)
        if verbose:
            print(f"{'ok ' if ok else 'BAD'} [{row['task']}] {row['messages'][-1]['content'][-60:]!r} -> "
                  f"{reply!r} (want {row['answer']!r})", flush=True)
    correct = sum(r for r, _ in per_task.values())
    total = sum(t for _, t in per_task.values())
    return {"overall": correct / total if total else 0.0,
            "tasks": {t: r / n for t, (r, n) in sorted(per_task.items())},
            "rows": {t: n for t, (_, n) in sorted(per_task.items())}}


def print_table(result: dict) -> None:
    print(f"{'task':<12} {'rows':>5} {'exact match':>12}")
    for task, acc in result["tasks"].items():
        print(f"{task:<12} {result['rows'][task]:>5} {100 * acc:>11.1f}%")
    print(f"{'overall':<12} {sum(result['rows'].values()):>5} {100 * result['overall']:>11.1f}%")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="Hugging Face folder")
    ap.add_argument("--eval", required=True, help="eval.jsonl from make_corpus.py")
    ap.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    ap.add_argument("--max-new", type=int, default=96)
    ap.add_argument("--limit", type=int, help="only the first N rows of each task")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--verbose", action="store_true", help="print every reply")
    ap.add_argument("--json", action="store_true", help="end with one JSON line")
    ap.add_argument("--json-out", help="also write the result JSON to this file")
    ap.add_argument("--answers-out", help="write each row's prompt ids and greedy ids (eos excluded) "
                    "as JSONL: the fixture the C++ engine's greedy answers are checked against")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    dtype = torch.float64 if args.dtype == "float64" else torch.float32
    model = ref.Glm5Model.from_folder(args.model, dtype=dtype, expert_dispatch="grouped")
    tokenizer = TinyTokenizer(os.path.join(args.model, "tokenizer.json"))
    with open(args.eval, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    if args.limit:
        kept, seen = [], {}
        for row in rows:
            seen[row["task"]] = seen.get(row["task"], 0) + 1
            if seen[row["task"]] <= args.limit:
                kept.append(row)
        rows = kept
    started = time.time()
    answers = [] if args.answers_out else None
    result = evaluate(model, tokenizer, rows, config_eos_ids(args.model), args.max_new, args.verbose, answers)
    if args.answers_out:
        with open(args.answers_out, "w", encoding="utf-8") as f:
            for answer in answers:
                f.write(json.dumps(answer, ensure_ascii=False) + "\n")
    result["dtype"] = args.dtype
    result["seconds"] = round(time.time() - started, 1)
    print_table(result)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
