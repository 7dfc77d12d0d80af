"""Random tiny `glm_moe_dsa` checkpoints in Hugging Face layout.

    python3 make_checkpoint.py OUT_DIR [--seed 1] [--format bf16|f32|fp8] [--shards N] [--config-json '{"index_topk": 4}']

Tensor names and [out, in] layouts follow docs/glm5-architecture.md §2; the MTP layer lives
at model.layers.{num_hidden_layers}. Weights are scaled so activations stay O(1) through
every layer: N(0, 1/fan_in) projections, norm weights 1 + 0.1 N, a correction bias of
0.1 N (large enough to change which experts are picked).

Storage formats:
  bf16  every weight BF16 (round-to-nearest-even), e_score_correction_bias F32
  f32   every weight F32
  fp8   spec §2.4: attention projections, indexer wq_b / wk, dense MLPs, shared and routed
        experts as F8_E4M3 with a per-128x128-block F32 `weight_scale_inv`; all else BF16,
        the correction bias F32.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re

import numpy as np

from tensor_formats import E4M3_MAX, e4m3_encode, float_to_bf16_bits, write_safetensors


def base_config(**overrides) -> dict:
    """A tiny config with every field GLM-5's config.json carries (spec §1)."""
    c = {
        "architectures": ["GlmMoeDsaForCausalLM"],
        "model_type": "glm_moe_dsa",
        "hidden_size": 64,
        "num_hidden_layers": 4,
        "first_k_dense_replace": 1,
        "moe_layer_freq": 1,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "q_lora_rank": 32,
        "kv_lora_rank": 32,
        "qk_nope_head_dim": 16,
        "qk_rope_head_dim": 8,
        "v_head_dim": 16,
        "head_dim": 192,  # meaningless in glm_moe_dsa (spec §7.7); deliberately wrong here
        "index_head_dim": 16,
        "index_n_heads": 4,
        "index_topk": 6,
        "rope_interleave": True,
        "indexer_rope_interleave": True,
        "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"},
        "max_position_embeddings": 4096,
        "n_routed_experts": 16,
        "num_experts_per_tok": 4,
        "n_shared_experts": 1,
        "moe_intermediate_size": 32,
        "intermediate_size": 96,
        "routed_scaling_factor": 2.5,
        "scoring_func": "sigmoid",
        "topk_method": "noaux_tc",
        "n_group": 4,
        "topk_group": 2,
        "norm_topk_prob": True,
        "rms_norm_eps": 1e-5,
        "hidden_act": "silu",
        "attention_bias": False,
        "attention_dropout": 0.0,
        "initializer_range": 0.02,
        "vocab_size": 256,
        "tie_word_embeddings": False,
        "num_nextn_predict_layers": 1,
        "eos_token_id": [255],
        "pad_token_id": 255,
        "use_cache": True,
        "dtype": "bfloat16",
    }
    c.update(overrides)
    return c


# --------------------------------------------------------------------------- layer plan

def _indexer_full(c: dict, i: int) -> bool:
    """Same schedule as the reference (spec §3.8), written out again on purpose: the
    reference checks the tensor set this produces against its own rule."""
    n = c["num_hidden_layers"]
    if i >= n:
        return True  # MTP layer
    if c.get("indexer_types") is not None:
        return c["indexer_types"][i] == "full"
    if c.get("index_topk_pattern") is not None:
        pattern = c["index_topk_pattern"]
        return i >= len(pattern) or pattern[i].upper() == "F"
    freq, offset = c.get("index_topk_freq", 1), c.get("index_skip_topk_offset", 2)
    return max(i - offset + 1, 0) % freq == 0


def _mlp_sparse(c: dict, i: int) -> bool:
    if i >= c["num_hidden_layers"]:
        return True
    if c.get("mlp_layer_types") is not None:
        return c["mlp_layer_types"][i] == "sparse"
    return i >= c["first_k_dense_replace"] and i % c.get("moe_layer_freq", 1) == 0


def tensor_plan(c: dict) -> list:
    """[(name, shape, init)] in checkpoint order; init is ("normal", std) / ("norm",) /
    ("bias", std)."""
    H, nh = c["hidden_size"], c["num_attention_heads"]
    dn, dr, dv = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    ql, kvl = c["q_lora_rank"], c["kv_lora_rank"]
    Ih, Id = c["index_n_heads"], c["index_head_dim"]
    E, Im, I = c["n_routed_experts"], c["moe_intermediate_size"], c["intermediate_size"]
    Is = Im * c["n_shared_experts"]
    n = c["num_hidden_layers"]

    def lin(out_dim, in_dim, gain=1.0):
        return [out_dim, in_dim], ("normal", gain / math.sqrt(in_dim))

    plan = [("model.embed_tokens.weight", [c["vocab_size"], H], ("normal", 1.0))]
    for i in range(n + c["num_nextn_predict_layers"]):
        p = f"model.layers.{i}."
        rows = []
        if i == n:  # MTP extras (no embed_tokens / shared_head.head: shared with the main model)
            rows += [(p + "enorm.weight", [H], ("norm",)), (p + "hnorm.weight", [H], ("norm",)),
                     (p + "eh_proj.weight", *lin(H, 2 * H)),
                     (p + "shared_head.norm.weight", [H], ("norm",))]
        rows += [
            (p + "input_layernorm.weight", [H], ("norm",)),
            (p + "self_attn.q_a_proj.weight", *lin(ql, H)),
            (p + "self_attn.q_a_layernorm.weight", [ql], ("norm",)),
            (p + "self_attn.q_b_proj.weight", *lin(nh * (dn + dr), ql)),
            (p + "self_attn.kv_a_proj_with_mqa.weight", *lin(kvl + dr, H)),
            (p + "self_attn.kv_a_layernorm.weight", [kvl], ("norm",)),
            (p + "self_attn.kv_b_proj.weight", *lin(nh * (dn + dv), kvl)),
            # Attention averages values, so its output is small; a gain > 1 keeps it visible.
            (p + "self_attn.o_proj.weight", *lin(H, nh * dv, gain=2.0)),
        ]
        if _indexer_full(c, i):
            rows += [
                (p + "self_attn.indexer.wq_b.weight", *lin(Ih * Id, ql)),
                (p + "self_attn.indexer.wk.weight", *lin(Id, H)),
                (p + "self_attn.indexer.k_norm.weight", [Id], ("norm",)),
                (p + "self_attn.indexer.k_norm.bias", [Id], ("bias", 0.1)),
                (p + "self_attn.indexer.weights_proj.weight", *lin(Ih, H)),
            ]
        rows.append((p + "post_attention_layernorm.weight", [H], ("norm",)))
        if _mlp_sparse(c, i):
            rows += [(p + "mlp.gate.weight", *lin(E, H)),
                     (p + "mlp.gate.e_score_correction_bias", [E], ("bias", 0.1))]
            for e in range(E):
                q = f"{p}mlp.experts.{e}."
                rows += [(q + "gate_proj.weight", *lin(Im, H)), (q + "up_proj.weight", *lin(Im, H)),
                         (q + "down_proj.weight", *lin(H, Im, gain=0.5))]
            if c["n_shared_experts"]:
                q = p + "mlp.shared_experts."
                rows += [(q + "gate_proj.weight", *lin(Is, H)), (q + "up_proj.weight", *lin(Is, H)),
                         (q + "down_proj.weight", *lin(H, Is, gain=0.5))]
        else:
            rows += [(p + "mlp.gate_proj.weight", *lin(I, H)), (p + "mlp.up_proj.weight", *lin(I, H)),
                     (p + "mlp.down_proj.weight", *lin(H, I, gain=0.5))]
        plan += rows
    plan += [("model.norm.weight", [H], ("norm",)),
             ("lm_head.weight", *lin(c["vocab_size"], H, gain=2.0))]
    return plan


# Spec §2.4: which weights an FP8 checkpoint stores as F8_E4M3 (the rest BF16).
FP8_WEIGHT = re.compile(
    r"\.self_attn\.(q_a_proj|q_b_proj|kv_a_proj_with_mqa|kv_b_proj|o_proj|indexer\.wq_b|indexer\.wk)\.weight$"
    r"|\.mlp\.(gate_proj|up_proj|down_proj)\.weight$"
    r"|\.mlp\.shared_experts\.(gate_proj|up_proj|down_proj)\.weight$"
    r"|\.mlp\.experts\.\d+\.(gate_proj|up_proj|down_proj)\.weight$")


SHARED_DIRECTION_SCALE = 0.2
INDEXER_GATE_LEAN = 2.5


def quantize_fp8_blocks(w: np.ndarray, block=(128, 128)):
    """Per-block scale = amax / 448 (float32), codes = e4m3(w / scale). Returns (codes, scale)."""
    rows, cols = w.shape
    br, bc = block
    scale = np.zeros((math.ceil(rows / br), math.ceil(cols / bc)), dtype=np.float32)
    for bi in range(scale.shape[0]):
        for bj in range(scale.shape[1]):
            amax = np.abs(w[bi * br:(bi + 1) * br, bj * bc:(bj + 1) * bc]).max()
            scale[bi, bj] = np.float32(max(amax, 1e-12) / E4M3_MAX)
    full = np.repeat(np.repeat(scale.astype(np.float64), br, 0), bc, 1)[:rows, :cols]
    return e4m3_encode(w / full), scale


def build_checkpoint(c: dict, seed: int, fmt: str) -> dict:
    """name -> (safetensors dtype, raw storage array), in checkpoint order."""
    if fmt not in ("bf16", "f32", "fp8"):
        raise ValueError(f"unknown format {fmt}")
    rng = np.random.default_rng(seed)
    block = tuple(c.get("quantization_config", {}).get("weight_block_size", (128, 128)))
    shared_direction = SHARED_DIRECTION_SCALE * rng.standard_normal(c["hidden_size"])
    tensors = {}
    for name, shape, init in tensor_plan(c):
        if init[0] == "norm":
            values = 1.0 + 0.1 * rng.standard_normal(shape)
        else:
            values = init[1] * rng.standard_normal(shape)
        if name == "model.embed_tokens.weight":
            # A direction shared by every token (real LMs have such "massive" directions).
            values = values + shared_direction
        if name == "lm_head.weight" or name.endswith("mlp.gate.weight"):
            # ...but keep it out of the logits and the router, or it would hand a few tokens
            # and experts the same lead at every position.
            unit = shared_direction / np.linalg.norm(shared_direction)
            values = values - np.outer(values @ unit, unit)
        if name.endswith("indexer.weights_proj.weight"):
            # Lean the indexer's head gates positive along the shared direction. With purely
            # random gates 1/16 of the queries (4 heads) have only negative gates, so their
            # best keys are exactly the all-ReLU-zero ones and top-k becomes an exact tie.
            values = values + INDEXER_GATE_LEAN * shared_direction / np.linalg.norm(shared_direction)
        if name.endswith("e_score_correction_bias"):
            tensors[name] = ("F32", values.astype(np.float32))  # always fp32 (spec §2.4)
        elif fmt == "f32":
            tensors[name] = ("F32", values.astype(np.float32))
        elif fmt == "fp8" and FP8_WEIGHT.search(name):
            codes, scale = quantize_fp8_blocks(values, block)
            tensors[name] = ("F8_E4M3", codes)
            tensors[name + "_scale_inv"] = ("F32", scale)
        else:
            tensors[name] = ("BF16", float_to_bf16_bits(values.astype(np.float32)))
    return tensors


def write_checkpoint(folder: str, config: dict, tensors: dict, shards: int = 1) -> None:
    """config.json + model.safetensors, or N shards + model.safetensors.index.json."""
    os.makedirs(folder, exist_ok=True)
    for old in os.listdir(folder):
        if old.endswith(".safetensors") or old == "model.safetensors.index.json":
            os.remove(os.path.join(folder, old))
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    if shards == 1:
        write_safetensors(os.path.join(folder, "model.safetensors"), tensors)
        return
    # Split in checkpoint order into shards of roughly equal byte size.
    sizes = {name: array.nbytes for name, (_, array) in tensors.items()}
    total = sum(sizes.values())
    groups, current, acc = [], {}, 0
    for name, value in tensors.items():
        current[name] = value
        acc += sizes[name]
        if acc >= total * (len(groups) + 1) / shards and len(groups) < shards - 1:
            groups.append(current)
            current = {}
    groups.append(current)
    weight_map = {}
    for k, group in enumerate(groups):
        file = f"model-{k + 1:05d}-of-{len(groups):05d}.safetensors"
        write_safetensors(os.path.join(folder, file), group)
        weight_map.update({name: file for name in group})
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump(index, f, indent=2)
        f.write("\n")


def fp8_config_fields() -> dict:
    return {"quantization_config": {
        "quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
        "weight_block_size": [128, 128],
        # As in the real GLM-5 FP8 config this names `indexers_proj`, a module that does not
        # exist; engines must decide FP8-ness from the stored dtype, not from this list.
        "modules_to_not_convert": ["lm_head", "model.embed_tokens", "mlp.gate",
                                   "self_attn.indexers_proj", "eh_proj"]}}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--format", default="bf16", choices=["bf16", "f32", "fp8"])
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--config-json", help="JSON object of config overrides")
    args = ap.parse_args()
    overrides = json.loads(args.config_json) if args.config_json else {}
    if args.format == "fp8":
        overrides = {**fp8_config_fields(), **overrides}
    config = base_config(**overrides)
    write_checkpoint(args.out, config, build_checkpoint(config, args.seed, args.format), args.shards)


if __name__ == "__main__":
    main()
