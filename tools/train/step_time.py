#!/usr/bin/env python3
"""Median wall time of one training step (forward, losses, backward; no optimizer), for
comparing changes to the trainer or the reference model on the same batches.

    step_time.py --corpus DIR --tokenizer tokenizer.json [--tools TREE] [--steps N] [--dense]

--tools names the checkout whose tools/train and tools/reference are timed (default: this
one), so an older tree (`git archive REV tools | tar -x -C DIR`) can be timed against this
one in alternating runs. Random weights (seed 1), sparse attention unless --dense, 3,072-token
batches of the corpus as train.py makes them (seed 7); the first two steps are not counted.
The tokenized corpus is cached in the corpus folder (step_time_tokens.npz) and shared by every
tree timed on it: run this tree first, since tokenizing needs the chat template from the
checkout's shared/ folder, which a bare `git archive` of tools/ lacks.
Prints one JSON line: median and mean seconds per step, tokens per step.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", required=True, help="make_corpus.py output folder")
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--tools", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."),
                        help="checkout root whose tools/ are timed")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--dense", action="store_true", help="time the dense-attention warm-up phase")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    sys.path.insert(0, os.path.join(args.tools, "tools", "reference"))
    sys.path.insert(0, os.path.join(args.tools, "tools", "train"))
    import numpy as np  # noqa: E402
    import torch  # noqa: E402
    import train  # noqa: E402  (sets the OpenBLAS defaults before torch loads)

    torch.set_num_threads(args.threads)
    tokenizer = train.TinyTokenizer(args.tokenizer)
    cfg = train.ref.parse_config(train.model_config(tokenizer))
    weights = train.init_weights(cfg, 1)
    model = train.ref.Glm5Model(cfg, weights, torch.float32, expert_dispatch="grouped")
    cache = os.path.join(args.corpus, "step_time_tokens.npz")
    examples = train.load_examples(args.corpus, tokenizer, cache)
    batches = train.epoch_batches(np.array([len(ids) for ids, _ in examples]), 0, 7, 3072)
    if len(batches) < args.steps + 2:
        sys.exit(f"step_time.py: the corpus has {len(batches)} batches, fewer than --steps + 2")

    times, tokens = [], []
    for k in range(args.steps + 2):
        batch = train.collate([examples[i] for i in batches[k]], tokenizer.eos_ids[0])
        start = time.perf_counter()
        loss = train.train_step(model, batch, args.dense)[0]
        loss.backward()
        for w in weights.values():
            w.grad = None
        if k >= 2:
            times.append(time.perf_counter() - start)
            tokens.append(int(batch[1].sum()))
    print(json.dumps({"median_s": statistics.median(times), "mean_s": statistics.mean(times),
                      "steps": args.steps, "tokens_per_step": statistics.mean(tokens),
                      "dense": args.dense, "tools": os.path.abspath(args.tools)}))


if __name__ == "__main__":
    main()
