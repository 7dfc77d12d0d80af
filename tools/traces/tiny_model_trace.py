#!/usr/bin/env python3
"""Records a routing trace (format: engine/src/tier/routing_trace.h) of a small GLM-5-shaped
model answering chats, with the PyTorch reference model, for `strata-cli bench cache`.

    tiny_model_trace.py --out FILE [--model resources/models/strata-tiny]
                        [--chats DIR/eval.jsonl] [--per-task 8] [--max-new 64]

Each chat (a row of the held-out task set: {"task", "messages", ...}) is rendered with the
GLM template, prefilled in one forward step, then answered greedily one token per step until
an eos id or --max-new tokens. Every forward step writes one line per MoE layer with the union
of the experts its tokens were routed to. The chats run one after another with the step
counter continuing, as they would through one loaded engine. The MTP layer is not recorded.
Needs Debian's python3-torch (as tools/train/).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
from openblas_env import set_defaults  # noqa: E402

set_defaults(OMP_WAIT_POLICY="PASSIVE")

import argparse  # noqa: E402
import json

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools", "train"))
import glm5_reference as ref  # noqa: E402
from chat_render import ChatRenderer  # noqa: E402
from tokenizer_util import TinyTokenizer  # noqa: E402


class RoutingRecorder:
    """Wraps the model's router: collects, per forward step, each MoE layer's experts."""

    def __init__(self, model: ref.Glm5Model):
        self.step_experts = {}
        route = model.route

        def recording_route(i, x, log=None, where=""):
            experts, gates = route(i, x, log, where)
            if i < model.cfg.num_hidden_layers:  # not the MTP layer
                self.step_experts.setdefault(i, set()).update(experts.flatten().tolist())
            return experts, gates

        model.route = recording_route

    def take(self) -> dict:
        taken, self.step_experts = self.step_experts, {}
        return taken


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--model", default=os.path.join(ROOT, "resources", "models", "strata-tiny"))
    ap.add_argument("--chats", help="JSONL rows with \"messages\" (default: MODEL/eval.jsonl)")
    ap.add_argument("--per-task", type=int, default=8, help="chats taken from each task")
    ap.add_argument("--max-new", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    model = ref.Glm5Model.from_folder(args.model, dtype=torch.float32, expert_dispatch="grouped")
    cfg = model.cfg
    tokenizer = TinyTokenizer(os.path.join(args.model, "tokenizer.json"))
    with open(os.path.join(args.model, "config.json")) as f:
        eos = json.load(f).get("eos_token_id")
    eos = set(eos if isinstance(eos, list) else [eos])
    with open(args.chats or os.path.join(args.model, "eval.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    taken, chats = {}, []
    for row in rows:
        task = row.get("task", "")
        taken[task] = taken.get(task, 0) + 1
        if taken[task] <= args.per_task:
            chats.append(row)

    moe_layers = [i for i in range(cfg.num_hidden_layers) if cfg.layer_is_moe(i)]
    expert_bytes = 3 * cfg.hidden_size * cfg.moe_intermediate_size * 2  # BF16 gate, up, down
    header = {"format": "strata-routing-trace", "version": 1,
              "model": os.path.basename(os.path.normpath(args.model)), "layers": moe_layers,
              "experts_per_layer": cfg.n_routed_experts, "expert_bytes": expert_bytes}
    recorder = RoutingRecorder(model)
    renderer = ChatRenderer()
    step = 0
    with open(args.out, "w", encoding="utf-8") as out, torch.no_grad():
        out.write(json.dumps(header, separators=(",", ":")) + "\n")

        def forward(tokens, cache):
            nonlocal step
            _, logits = model.forward(tokens, cache)
            for layer, experts in sorted(recorder.take().items()):
                out.write(json.dumps({"step": step, "layer": layer, "experts": sorted(experts)},
                                     separators=(",", ":")) + "\n")
            step += 1
            return logits

        for n, row in enumerate(chats):
            cache = ref.ModelCache(cfg)
            logits = forward(tokenizer.encode(renderer.prompt(row["messages"])), cache)
            for _ in range(args.max_new):
                token = ref.greedy_argmax(logits[-1])
                if token in eos:
                    break
                logits = forward([token], cache)
            print(f"chat {n + 1}/{len(chats)}: {step} steps so far", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
