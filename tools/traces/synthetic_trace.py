#!/usr/bin/env python3
"""Writes a synthetic routing trace (format: engine/src/tier/routing_trace.h) for
`strata-cli bench cache`, standard library only, the same file for the same arguments.

    synthetic_trace.py --out FILE [--layers 10] [--experts 128] [--top-k 8] [--steps 500]
                       [--skew 1.0] [--locality 0.3] [--seed 1]

The model of routing: each MoE layer ranks its experts in its own random order, and expert
of rank r is chosen with probability proportional to 1 / r**skew (Zipf). Each step is one
decoded token: every layer picks top-k distinct experts; each pick, with probability
`locality`, repeats one of the experts that layer used for the previous token (temporal
locality: consecutive tokens of a text route alike), otherwise it is drawn from the Zipf
distribution. Layers are visited in order every step, which is the loop that defeats LRU.
"""

import argparse
import bisect
import itertools
import json
import random


def zipf_cumulative(n: int, skew: float) -> list:
    return list(itertools.accumulate(1.0 / (rank + 1) ** skew for rank in range(n)))


def pick_experts(rng, ranking, cumulative, previous, top_k, locality):
    chosen = []
    while len(chosen) < top_k:
        repeat = [e for e in previous if e not in chosen]
        if repeat and rng.random() < locality:
            chosen.append(rng.choice(repeat))
            continue
        rank = bisect.bisect_left(cumulative, rng.random() * cumulative[-1])
        expert = ranking[min(rank, len(ranking) - 1)]
        if expert not in chosen:
            chosen.append(expert)
    return sorted(chosen)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=10)
    ap.add_argument("--experts", type=int, default=128)
    ap.add_argument("--top-k", type=int, default=8)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--skew", type=float, default=1.0)
    ap.add_argument("--locality", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--expert-bytes", type=int, default=19 * 2**20,
                    help="bytes of one expert (default: a GLM-5 int4 expert, ~19 MiB)")
    args = ap.parse_args()
    if not 0 < args.top_k <= args.experts:
        ap.error("--top-k must be in [1, --experts]")

    rng = random.Random(args.seed)
    cumulative = zipf_cumulative(args.experts, args.skew)
    rankings = []
    for _ in range(args.layers):
        ranking = list(range(args.experts))
        rng.shuffle(ranking)
        rankings.append(ranking)
    header = {"format": "strata-routing-trace", "version": 1,
              "model": f"synthetic zipf s={args.skew} locality={args.locality} seed={args.seed}",
              "layers": list(range(args.layers)), "experts_per_layer": args.experts,
              "expert_bytes": args.expert_bytes}
    previous = [[] for _ in range(args.layers)]
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(header, separators=(",", ":")) + "\n")
        for step in range(args.steps):
            for layer in range(args.layers):
                experts = pick_experts(rng, rankings[layer], cumulative, previous[layer],
                                       args.top_k, args.locality)
                previous[layer] = experts
                f.write(json.dumps({"step": step, "layer": layer, "experts": experts},
                                   separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
