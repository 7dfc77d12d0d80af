#!/usr/bin/env python3
"""Writes a trained tiny model as the Hugging Face folder Strata bundles.

    export.py --run RUN_DIR --tokenizer tokenizer.json --out DIR [--eval-results eval.json]
              [--weights final|checkpoint]

From RUN_DIR (train.py's output: config.json, final.pt or checkpoint.pt, train_log.txt) it
writes into DIR:
  config.json              the model's config (model_type glm_moe_dsa, every field of spec §1)
  generation_config.json   eos ids (<|endoftext|>, <|user|>, <|observation|>) and sampling defaults
  model.safetensors        BF16 weights (e_score_correction_bias F32, spec §2.4), names of spec
                           §2.2, the MTP layer at index num_hidden_layers (§2.3)
  tokenizer.json, tokenizer_config.json, chat_template.jinja
  train_log.txt            the training log
  eval.jsonl               (--eval-set) the held-out evaluation set, for `strata-cli eval-tasks`
  README.md                what the model is, how it was trained, its held-out accuracy
                           (--eval-results: eval_tasks.py --json-out of this folder)
The folder is read back through the reference's loader and must hold exactly the expected
tensors. With --readme-only just README.md is rewritten (after evaluating the export).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
sys.path.insert(0, HERE)
import glm5_reference as ref  # noqa: E402
import tensor_formats as fmt  # noqa: E402
from chat_render import TEMPLATE_PATH  # noqa: E402

GENERATION = {"do_sample": True, "temperature": 0.3, "top_p": 0.9, "max_new_tokens": 256}


def bf16_tensors(weights: dict, cfg: ref.Glm5Config) -> dict:
    """name -> (dtype, raw array) in checkpoint order."""
    out = {}
    for name in ref.expected_tensor_shapes(cfg):
        values = weights[name].detach().float().numpy()
        if name.endswith("e_score_correction_bias"):
            out[name] = ("F32", values.astype(np.float32))
        else:
            out[name] = ("BF16", fmt.float_to_bf16_bits(values))
    return out


def last_log_metrics(log_path: str) -> dict:
    """key/value pairs of the last `step ...` line of train_log.txt."""
    last = None
    with open(log_path) as f:
        for line in f:
            if line.startswith("step "):
                last = line.split()
    if not last:
        return {}
    return {last[k]: last[k + 1] for k in range(0, len(last) - 1, 2)}


def readme(config: dict, state: dict, metrics: dict, eval_result: dict | None, n_params: int,
           size_bytes: int) -> str:
    c = config
    full = [i for i, t in enumerate(c["indexer_types"]) if t == "full"]
    shared = [i for i, t in enumerate(c["indexer_types"]) if t == "shared"]
    if eval_result:
        rows = "\n".join(f"| {task} | {eval_result['rows'][task]} | {100 * acc:.1f} % |"
                         for task, acc in eval_result["tasks"].items())
        total = sum(eval_result["rows"].values())
        evaluation = (f"Exact match on the held-out set (`eval.jsonl`, never seen in training), greedy, "
                      f"by the PyTorch reference in {eval_result.get('dtype', 'float64')} "
                      f"(`tools/train/eval_tasks.py`):\n\n| task | rows | exact match |\n|---|---|---|\n"
                      f"{rows}\n| **overall** | {total} | **{100 * eval_result['overall']:.1f} %** |\n")
    else:
        evaluation = "Not evaluated yet (run `tools/train/eval_tasks.py`).\n"
    hours = state.get("train_seconds", 0) / 3600
    return f"""# Strata Tiny

A {n_params / 1e6:.1f}M-parameter chat model with the exact GLM-5 architecture (`glm_moe_dsa`),
trained from scratch for Strata so that a new user can chat before downloading a real GLM-5
checkpoint. It knows only what its synthetic training set teaches: small arithmetic (+ − ×),
counting items and letters (answers in digits or words), the capitals of 50 countries, looking
up a value in a list given in the prompt, small JSON objects, greetings and who it is. It
thinks briefly (`<think>…</think>`) before arithmetic and counting answers.

Files: `config.json`, `generation_config.json`, `model.safetensors` (BF16, {size_bytes / 1e6:.1f} MB),
`tokenizer.json` (byte-level BPE, {c['vocab_size']} ids incl. GLM's special tokens),
`tokenizer_config.json`, `chat_template.jinja` (GLM-4.7/GLM-5 template), `train_log.txt`,
`eval.jsonl` (the held-out evaluation set: `task`, `messages`, exact `answer`).

## Architecture

Every `glm_moe_dsa` feature is on; only the sizes are small.

| | |
|---|---|
| layers | {c['num_hidden_layers']} + 1 MTP layer (`model.layers.{c['num_hidden_layers']}`) |
| hidden | {c['hidden_size']}, vocab {c['vocab_size']}, untied `lm_head` |
| MLA | {c['num_attention_heads']} heads, q_lora {c['q_lora_rank']}, kv_lora {c['kv_lora_rank']}, qk {c['qk_nope_head_dim']} nope + {c['qk_rope_head_dim']} rope, v {c['v_head_dim']}, RoPE θ {c['rope_parameters']['rope_theta']:g} (interleaved) |
| DSA indexer | {c['index_n_heads']} heads × {c['index_head_dim']}, `index_topk` {c['index_topk']} (prompts of 20–300 tokens are pruned) |
| IndexShare | full layers {full} (+ MTP), shared layers {shared} |
| MLP | layer 0 dense SwiGLU {c['intermediate_size']}; layers 1–{c['num_hidden_layers'] - 1} and MTP: {c['n_routed_experts']} routed experts (top-{c['num_experts_per_tok']}, sigmoid noaux_tc, width {c['moe_intermediate_size']}) + {c['n_shared_experts']} shared expert |
| stop tokens | `eos_token_id` {c['eos_token_id']} = `<|endoftext|>`, `<|user|>`, `<|observation|>` |

## Training

Reproduce with `tools/train/train_tiny.sh` (corpus → tokenizer → training → export → eval; CPU only).

- **Data**: `tools/train/make_corpus.py` writes synthetic conversations in OpenAI message form,
  rendered with the upstream GLM chat template (jinja2); loss only on the assistant's completion
  after `<|assistant|><think>` / `<|assistant|></think>`, ending with `<|user|>` (GLM has no
  end-of-turn token; `<|user|>` is an eos id).
- **Tokenizer**: `tools/tokenizer/train_bpe.py` (byte-level BPE, GLM pre-tokenizer regex).
- **Model code**: the float64 PyTorch reference `tools/reference/glm5_reference.py`, run in
  float32 with autograd on padded batches — the same code that produces the engine's test fixtures.
- **Recipe**: next-token loss + 0.3 × MTP loss; DSA indexer trained as in DeepSeek-V3.2 (dense
  warm-up with KL to the heads-summed attention distribution, then sparse attention through the
  indexer's top-{c['index_topk']} with a KL loss on the selected keys, indexer inputs detached);
  router bias by aux-loss-free balancing (bias += γ·sign(mean load − load), not by gradients);
  AdamW, warm-up + cosine, gradient clipping, fixed seed.
- **This run**: {state.get('step', '?')} steps, {state.get('tokens', 0) / 1e6:.1f}M tokens, {hours:.2f} h of
  training on 2 CPU cores; final training loss {metrics.get('loss', '?')}, completion-token accuracy
  {metrics.get('acc', '?')} (`train_log.txt`).

## Evaluation

{evaluation}
## Limits

A toy: it answers the tasks above and little else, in English, for prompts of a few hundred
tokens. Outside them it produces fluent-looking nonsense.
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True, help="train.py output folder")
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--weights", default="final", choices=["final", "checkpoint"])
    ap.add_argument("--eval-set", help="eval.jsonl to ship in the folder (strata-cli eval-tasks reads it)")
    ap.add_argument("--eval-results", help="eval_tasks.py --json-out file for the README")
    ap.add_argument("--readme-only", action="store_true")
    args = ap.parse_args()

    with open(os.path.join(args.run, "config.json")) as f:
        config = json.load(f)
    cfg = ref.parse_config(config)
    payload = torch.load(os.path.join(args.run, f"{args.weights}.pt"))
    weights, state = payload["weights"], payload["state"]
    n_params = sum(t.numel() for t in weights.values())
    eval_result = None
    if args.eval_results:
        with open(args.eval_results) as f:
            eval_result = json.load(f)
    os.makedirs(args.out, exist_ok=True)
    log_path = os.path.join(args.run, "train_log.txt")

    if not args.readme_only:
        with open(os.path.join(args.out, "config.json"), "w") as f:
            json.dump(config, f, indent=2)
            f.write("\n")
        generation = {"_from_model_config": False, "eos_token_id": config["eos_token_id"],
                      "pad_token_id": config["pad_token_id"], **GENERATION}
        with open(os.path.join(args.out, "generation_config.json"), "w") as f:
            json.dump(generation, f, indent=2)
            f.write("\n")
        shutil.copyfile(args.tokenizer, os.path.join(args.out, "tokenizer.json"))
        shutil.copyfile(TEMPLATE_PATH, os.path.join(args.out, "chat_template.jinja"))
        tokenizer_config = {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|endoftext|>",
                            "pad_token": "<|endoftext|>", "clean_up_tokenization_spaces": False,
                            "model_max_length": config["max_position_embeddings"]}
        with open(os.path.join(args.out, "tokenizer_config.json"), "w") as f:
            json.dump(tokenizer_config, f, indent=2)
            f.write("\n")
        shutil.copyfile(log_path, os.path.join(args.out, "train_log.txt"))
        if args.eval_set:
            shutil.copyfile(args.eval_set, os.path.join(args.out, "eval.jsonl"))
        tensors = bf16_tensors(weights, cfg)
        fmt.write_safetensors(os.path.join(args.out, "model.safetensors"), tensors)

        # Read back: the reference's loader checks names and shapes; values are the BF16
        # rounding of the trained float32 weights.
        back = ref.Glm5Model.from_folder(args.out)
        for name, (dtype, raw) in tensors.items():
            stored = back.w(name)
            expected = (torch.from_numpy(raw.astype(np.float64)) if dtype == "F32" else
                        torch.from_numpy(fmt.bf16_bits_to_float(raw).astype(np.float64)))
            if not torch.equal(stored, expected):
                raise SystemExit(f"export: {name} differs after reading the file back")

    size = os.path.getsize(os.path.join(args.out, "model.safetensors"))
    with open(os.path.join(args.out, "README.md"), "w") as f:
        f.write(readme(config, state, last_log_metrics(log_path), eval_result, n_params, size))
    total = sum(os.path.getsize(os.path.join(args.out, n)) for n in os.listdir(args.out))
    print(f"export: {n_params} parameters, model.safetensors {size / 1e6:.2f} MB, folder {total / 1e6:.2f} MB "
          f"-> {args.out}")


if __name__ == "__main__":
    main()
