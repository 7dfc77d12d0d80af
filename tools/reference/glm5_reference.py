"""Float64 reference implementation of the GLM-5 (`glm_moe_dsa`) forward pass.

Written from docs/glm5-architecture.md (sections 1-4 and 7). Every step is computed in
float64 so that the only error left when the C++ engine is compared against it is the
engine's own rounding. The code is meant to be read next to the spec: section numbers
in the comments refer to it.

Conventions the spec leaves open and that this file fixes (see README.md):
  * every top-k / argmax: larger value first; on exactly equal values the lower index wins;
  * q_a_layernorm and kv_a_layernorm use eps 1e-6 (HF), every other RMSNorm rms_norm_eps;
  * MTP at position p: e = embed(t[p+1]) (never zeroed), h = final-normed main hidden at p,
    the MTP decoder layer runs at RoPE position p with its own causal cache.

The same code trains Strata's bundled tiny model (tools/train/train.py): inputs may carry a
batch dimension, weights may be float32 tensors that require grad, and TrainingTaps switch on
DeepSeek-V3.2's indexer training (README.md, "Training with the reference").

File formats (safetensors, BF16, FP8 E4M3) live in tensor_formats.py.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field

import numpy as np
import torch

from tensor_formats import dequantize_tensors, read_checkpoint_files

F64 = torch.float64

# q_a_layernorm / kv_a_layernorm epsilon (HF class default; vLLM uses 1e-5, spec §7.6).
LATENT_NORM_EPS = 1e-6
# Indexer k_norm LayerNorm epsilon (spec §2.2).
INDEXER_NORM_EPS = 1e-6


# =====================================================================================
# Configuration (spec §1)
# =====================================================================================

@dataclass
class Glm5Config:
    hidden_size: int
    num_hidden_layers: int
    vocab_size: int
    num_attention_heads: int
    q_lora_rank: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    index_n_heads: int
    index_head_dim: int
    index_topk: int
    n_routed_experts: int
    num_experts_per_tok: int
    n_shared_experts: int
    moe_intermediate_size: int
    intermediate_size: int
    n_group: int
    topk_group: int
    norm_topk_prob: bool
    routed_scaling_factor: float
    rms_norm_eps: float
    rope_theta: float
    num_nextn_predict_layers: int
    indexer_types: list = field(default_factory=list)  # per main layer: "full" / "shared"
    mlp_types: list = field(default_factory=list)  # per main layer: "dense" / "sparse"
    weight_block_size: tuple = (128, 128)

    @property
    def qk_head_dim(self) -> int:
        return self.qk_nope_head_dim + self.qk_rope_head_dim

    @property
    def mtp_layer(self) -> int:
        return self.num_hidden_layers

    def layer_has_indexer(self, i: int) -> bool:
        # The MTP layer always has its own indexer (spec §2.3).
        return i >= self.num_hidden_layers or self.indexer_types[i] == "full"

    def layer_is_moe(self, i: int) -> bool:
        return i >= self.num_hidden_layers or self.mlp_types[i] == "sparse"


def indexer_types_from_config(c: dict, n_layers: int) -> list:
    """IndexShare schedule (spec §3.8): explicit list, else F/S pattern, else the freq rule."""
    if c.get("indexer_types") is not None:
        types = list(c["indexer_types"])
    elif c.get("index_topk_pattern") is not None:
        pattern = c["index_topk_pattern"]
        # Layers past the end of the pattern count as full (what vLLM/SGLang do).
        types = [{"F": "full", "S": "shared"}[pattern[i].upper()] if i < len(pattern) else "full"
                 for i in range(n_layers)]
    else:
        freq = c.get("index_topk_freq", 1) or 1
        offset = c.get("index_skip_topk_offset", 2)
        types = ["full" if max(i - offset + 1, 0) % freq == 0 else "shared" for i in range(n_layers)]
    if len(types) < n_layers or any(t not in ("full", "shared") for t in types[:n_layers]):
        raise ValueError(f"indexer_types must list 'full'/'shared' for {n_layers} layers: {types}")
    types = types[:n_layers]
    if types[0] != "full":
        raise ValueError("layer 0 must be a 'full' indexer layer: a shared layer needs an earlier "
                         "full layer whose top-k it reuses")
    return types


def mlp_types_from_config(c: dict, n_layers: int) -> list:
    if c.get("mlp_layer_types") is not None:
        types = list(c["mlp_layer_types"])
        if len(types) != n_layers or any(t not in ("dense", "sparse") for t in types):
            raise ValueError(f"mlp_layer_types must list 'dense'/'sparse' for {n_layers} layers")
        return types
    first_dense = c.get("first_k_dense_replace", 3)
    freq = c.get("moe_layer_freq", 1) or 1
    return ["sparse" if (i >= first_dense and i % freq == 0) else "dense" for i in range(n_layers)]


def rope_theta_from_config(c: dict) -> float:
    """Only plain RoPE is supported: GLM-5 uses rope_type default (no YaRN, no mscale)."""
    params = c.get("rope_parameters")
    if params is None:
        params = dict(c.get("rope_scaling") or {})
        params.setdefault("rope_theta", c.get("rope_theta", 10000.0))
    rope_type = params.get("rope_type", params.get("type", "default"))
    if rope_type != "default":
        raise ValueError(f"rope_type {rope_type!r} is not supported (only 'default')")
    return float(params["rope_theta"])


def parse_config(c: dict) -> Glm5Config:
    if c.get("model_type") != "glm_moe_dsa":
        raise ValueError(f"model_type must be glm_moe_dsa, got {c.get('model_type')!r}")
    for key, expected in (("hidden_act", "silu"), ("scoring_func", "sigmoid"),
                          ("topk_method", "noaux_tc")):
        if c.get(key, expected) != expected:
            raise ValueError(f"{key} must be {expected!r}, got {c[key]!r}")
    if c.get("attention_bias", False):
        raise ValueError("attention_bias=true is not part of glm_moe_dsa")
    if c.get("tie_word_embeddings", False):
        raise ValueError("glm_moe_dsa has an untied lm_head")
    n = c.get("num_hidden_layers", 78)
    quant = c.get("quantization_config") or {}
    cfg = Glm5Config(
        hidden_size=c.get("hidden_size", 6144),
        num_hidden_layers=n,
        vocab_size=c.get("vocab_size", 154880),
        num_attention_heads=c.get("num_attention_heads", 64),
        q_lora_rank=c.get("q_lora_rank", 2048),
        kv_lora_rank=c.get("kv_lora_rank", 512),
        qk_nope_head_dim=c.get("qk_nope_head_dim", 192),
        qk_rope_head_dim=c.get("qk_rope_head_dim", 64),
        v_head_dim=c.get("v_head_dim", 256),
        index_n_heads=c.get("index_n_heads", 32),
        index_head_dim=c.get("index_head_dim", 128),
        index_topk=c.get("index_topk", 2048),
        n_routed_experts=c.get("n_routed_experts", 256),
        num_experts_per_tok=c.get("num_experts_per_tok", 8),
        n_shared_experts=c.get("n_shared_experts", 1),
        moe_intermediate_size=c.get("moe_intermediate_size", 2048),
        intermediate_size=c.get("intermediate_size", 12288),
        n_group=c.get("n_group", 1),
        topk_group=c.get("topk_group", 1),
        norm_topk_prob=c.get("norm_topk_prob", True),
        routed_scaling_factor=float(c.get("routed_scaling_factor", 2.5)),
        rms_norm_eps=float(c.get("rms_norm_eps", 1e-5)),
        rope_theta=rope_theta_from_config(c),
        num_nextn_predict_layers=c.get("num_nextn_predict_layers", 0),
        indexer_types=indexer_types_from_config(c, n),
        mlp_types=mlp_types_from_config(c, n),
        weight_block_size=tuple(quant.get("weight_block_size", (128, 128))),
    )
    if cfg.q_lora_rank is None:
        raise ValueError("q_lora_rank must be set (GLM-5 always has a q latent)")
    if cfg.qk_rope_head_dim % 2 or cfg.qk_rope_head_dim > cfg.index_head_dim:
        raise ValueError("qk_rope_head_dim must be even and fit in index_head_dim")
    if cfg.n_routed_experts % cfg.n_group:
        raise ValueError("n_routed_experts must be divisible by n_group")
    if cfg.n_group > 1 and cfg.n_routed_experts // cfg.n_group < 2:
        raise ValueError("group scoring sums the top-2 experts of a group: need >= 2 per group")
    return cfg


def load_config(folder: str) -> Glm5Config:
    with open(os.path.join(folder, "config.json")) as f:
        return parse_config(json.load(f))


def expected_tensor_shapes(cfg: Glm5Config) -> dict:
    """Every tensor name of the checkpoint with its [out, in] shape (spec §2.1-2.3).
    FP8 scale tensors are not listed (they are checked while dequantizing)."""
    H, nh = cfg.hidden_size, cfg.num_attention_heads
    shapes = {
        "model.embed_tokens.weight": [cfg.vocab_size, H],
        "model.norm.weight": [H],
        "lm_head.weight": [cfg.vocab_size, H],
    }
    n_layers = cfg.num_hidden_layers + (1 if cfg.num_nextn_predict_layers else 0)
    for i in range(n_layers):
        p = f"model.layers.{i}."
        shapes.update({
            p + "input_layernorm.weight": [H],
            p + "post_attention_layernorm.weight": [H],
            p + "self_attn.q_a_proj.weight": [cfg.q_lora_rank, H],
            p + "self_attn.q_a_layernorm.weight": [cfg.q_lora_rank],
            p + "self_attn.q_b_proj.weight": [nh * cfg.qk_head_dim, cfg.q_lora_rank],
            p + "self_attn.kv_a_proj_with_mqa.weight": [cfg.kv_lora_rank + cfg.qk_rope_head_dim, H],
            p + "self_attn.kv_a_layernorm.weight": [cfg.kv_lora_rank],
            p + "self_attn.kv_b_proj.weight": [nh * (cfg.qk_nope_head_dim + cfg.v_head_dim),
                                               cfg.kv_lora_rank],
            p + "self_attn.o_proj.weight": [H, nh * cfg.v_head_dim],
        })
        if cfg.layer_has_indexer(i):
            shapes.update({
                p + "self_attn.indexer.wq_b.weight": [cfg.index_n_heads * cfg.index_head_dim,
                                                      cfg.q_lora_rank],
                p + "self_attn.indexer.wk.weight": [cfg.index_head_dim, H],
                p + "self_attn.indexer.k_norm.weight": [cfg.index_head_dim],
                p + "self_attn.indexer.k_norm.bias": [cfg.index_head_dim],
                p + "self_attn.indexer.weights_proj.weight": [cfg.index_n_heads, H],
            })
        if cfg.layer_is_moe(i):
            E, Im = cfg.n_routed_experts, cfg.moe_intermediate_size
            Is = Im * cfg.n_shared_experts
            shapes[p + "mlp.gate.weight"] = [E, H]
            shapes[p + "mlp.gate.e_score_correction_bias"] = [E]
            if cfg.n_shared_experts:
                shapes.update({p + "mlp.shared_experts.gate_proj.weight": [Is, H],
                               p + "mlp.shared_experts.up_proj.weight": [Is, H],
                               p + "mlp.shared_experts.down_proj.weight": [H, Is]})
            for e in range(E):
                q = f"{p}mlp.experts.{e}."
                shapes.update({q + "gate_proj.weight": [Im, H], q + "up_proj.weight": [Im, H],
                               q + "down_proj.weight": [H, Im]})
        else:
            I = cfg.intermediate_size
            shapes.update({p + "mlp.gate_proj.weight": [I, H], p + "mlp.up_proj.weight": [I, H],
                           p + "mlp.down_proj.weight": [H, I]})
        if i == cfg.mtp_layer:
            shapes.update({p + "enorm.weight": [H], p + "hnorm.weight": [H],
                           p + "eh_proj.weight": [H, 2 * H],
                           p + "shared_head.norm.weight": [H]})
    return shapes


# =====================================================================================
# Top-k with a fixed tie rule, and a log of how close every decision was
# =====================================================================================

class SelectionLog:
    """Records, for every top-k decision, how far it is from flipping: the gap between the
    k-th and (k+1)-th candidate relative to the largest |score| among the candidates. A
    float32 engine reproduces our selections as long as its rounding noise stays well below
    these margins.

    Indexer scores have one legitimate exact tie: keys whose ReLU terms are all zero score
    exactly 0, in float32 too. When such a tie straddles the k-th place, the lower-index rule
    decides it identically in any engine, provided every tied key really scores 0 there as
    well and no other key comes near 0. The margin recorded for it is the smallest of: the
    gap from 0 to the nearest non-zero score above and below, and how far each tied key's
    ReLU inputs are below 0 (relative to the largest |ReLU input| of the query)."""

    def __init__(self):
        self.min_margin = {}  # kind -> (relative margin, where)
        self.count = {}
        self.zero_ties = {}  # kind -> number of decisions settled by an exact-zero tie

    def record(self, kind: str, values: list, order: list, k: int, where: str,
               relu_inputs: torch.Tensor | None = None) -> None:
        scale = max(abs(v) for v in values)
        kth, next_value = values[order[k - 1]], values[order[k]]
        if kth == next_value == 0.0 and relu_inputs is not None:
            margin = self._zero_tie_margin(values, relu_inputs, scale)
            self.zero_ties[kind] = self.zero_ties.get(kind, 0) + 1
        else:
            margin = (kth - next_value) / scale if scale > 0 else 0.0
        self.count[kind] = self.count.get(kind, 0) + 1
        if kind not in self.min_margin or margin < self.min_margin[kind][0]:
            self.min_margin[kind] = (margin, where)

    @staticmethod
    def _zero_tie_margin(values: list, relu_inputs: torch.Tensor, scale: float) -> float:
        nonzero = [abs(v) for v in values if v != 0.0]
        gap = min(nonzero) / scale if nonzero else 1.0  # nearest score to 0, from either side
        tied = torch.tensor([v == 0.0 for v in values])
        relu_scale = float(relu_inputs.abs().max())
        # tied keys have every ReLU input <= 0; how far below 0 is the closest one?
        closest_to_zero = float((-relu_inputs[:, tied]).min()) if relu_scale > 0 else 0.0
        return min(gap, closest_to_zero / relu_scale if relu_scale > 0 else 0.0)

    def merge(self, other: "SelectionLog", prefix: str = "") -> None:
        for kind, (margin, where) in other.min_margin.items():
            key = prefix + kind
            self.count[key] = self.count.get(key, 0) + other.count[kind]
            if key not in self.min_margin or margin < self.min_margin[key][0]:
                self.min_margin[key] = (margin, where)
        for kind, n in other.zero_ties.items():
            self.zero_ties[prefix + kind] = self.zero_ties.get(prefix + kind, 0) + n

    def overall_min(self) -> float:
        return min((m for m, _ in self.min_margin.values()), default=math.inf)


def select_topk(scores: torch.Tensor, k: int, log: SelectionLog | None = None,
                kind: str = "", where: str = "", relu_inputs: torch.Tensor | None = None) -> list:
    """Indices of the k largest scores, largest first; equal values: lower index first.
    Deliberately not torch.topk, whose order among ties is unspecified."""
    values = scores.tolist()
    order = sorted(range(len(values)), key=lambda j: (-values[j], j))
    if log is not None and k < len(values):
        log.record(kind, values, order, k, where, relu_inputs)
    return order[:k]


def stable_descending(scores: torch.Tensor):
    """(values, indices) of scores sorted along the last dim, larger first, equal values in
    index order: the select_topk rule, vectorized (torch.sort with stable=True)."""
    return torch.sort(scores, dim=-1, descending=True, stable=True)


def topk_mask(scores: torch.Tensor, visible: torch.Tensor, k: int) -> torch.Tensor:
    """[B, S, T] boolean: for each query the min(k, visible) highest-scoring visible keys
    (select_topk's rule). Invisible keys score -inf, so they are picked only when fewer
    than k keys are visible, and the final AND with visible drops them."""
    masked = scores.masked_fill(~visible, -math.inf)
    chosen = stable_descending(masked)[1][..., :min(k, scores.shape[-1])]
    allowed = torch.zeros_like(masked, dtype=torch.bool).scatter(-1, chosen, True)
    return allowed & visible


# =====================================================================================
# Building blocks
# =====================================================================================

def linear(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """HF nn.Linear layout: weight is [out, in]; no biases anywhere in the model."""
    return x @ weight.T


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return weight * (x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps))


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    """Affine LayerNorm (indexer k_norm, spec §7.3), biased variance as in torch."""
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return weight * (x - mean) / torch.sqrt(var + eps) + bias


def silu(x: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(x)


def rope_tables(positions: torch.Tensor, rope_dim: int, theta: float, dtype=F64):
    """cos/sin [T, rope_dim/2]: angle[p, i] = p * theta^(-2i/rope_dim) (spec §3.3)."""
    i = torch.arange(rope_dim // 2, dtype=dtype)
    inv_freq = theta ** (-2.0 * i / rope_dim)
    angles = positions.to(dtype)[:, None] * inv_freq[None, :]
    return torch.cos(angles), torch.sin(angles)


def apply_interleaved_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate adjacent pairs (x[2i], x[2i+1]) by angle i (GPT-J / "interleaved" style):
    y[2i] = x[2i] cos - x[2i+1] sin;  y[2i+1] = x[2i+1] cos + x[2i] sin.
    cos/sin must broadcast against x[..., 0::2]."""
    even, odd = x[..., 0::2], x[..., 1::2]
    y_even = even * cos - odd * sin
    y_odd = odd * cos + even * sin
    return torch.stack([y_even, y_odd], dim=-1).flatten(-2)


# =====================================================================================
# Caches
# =====================================================================================

class LayerCache:
    """What one decoder layer keeps per past token: the expanded attention keys/values
    (HF form, spec §3.11) and, for layers with an indexer, the roped indexer key.
    Every tensor has a leading batch dimension."""

    def __init__(self):
        self.keys = None  # [B, T, heads, qk_head_dim]
        self.values = None  # [B, T, heads, v_head_dim]
        self.index_keys = None  # [B, T, index_head_dim]

    @property
    def length(self) -> int:
        return 0 if self.keys is None else self.keys.shape[1]

    @staticmethod
    def _append(old, new):
        return new if old is None else torch.cat([old, new], dim=1)

    def append_kv(self, keys, values):
        self.keys = self._append(self.keys, keys)
        self.values = self._append(self.values, values)

    def append_index_keys(self, index_keys):
        self.index_keys = self._append(self.index_keys, index_keys)


class ModelCache:
    def __init__(self, cfg: Glm5Config):
        self.layers = [LayerCache() for _ in range(cfg.num_hidden_layers)]
        self.mtp = LayerCache()  # the MTP layer attends over MTP positions only

    @property
    def length(self) -> int:
        return self.layers[0].length


# =====================================================================================
# Training taps
# =====================================================================================

@dataclass
class TrainingTaps:
    """What a training step needs from inside the forward pass (tools/train/train.py).
    Passing one switches the forward into training behaviour (DeepSeek-V3.2 indexer training):
      * the indexer's inputs are detached: it learns only from its own KL loss, and the main
        model gets no gradient through it;
      * every layer with an indexer runs it even with dsa=False (the dense warm-up) and
        appends its KL divergence to the main attention (indexer_distillation_kl);
      * every MoE layer records which experts each token was routed to (for the
        aux-loss-free balancing of e_score_correction_bias);
      * with copy_targets, each head named in copy_heads adds copy_attention_loss
        (attention supervision of an induction head, train.py --copy-heads), and each
        (head, k) in previous_token_heads the same loss towards the key k tokens before the
        query (train.py --previous-heads); each (head, targets) in head_targets the same loss
        towards its own targets (train.py --line-heads); with copy_next_tokens, each copy
        head's own output (its slice of o_proj, the final norm, lm_head) is also scored by
        cross-entropy against the token it should copy (train.py --copy-logit-weight), so it
        learns to write what it reads, not only where to look; each indexer of index_copy_layers
        adds the same loss on its score distribution over the visible keys, and records the
        share of those queries whose TopK holds a target (train.py --indexer-copy-layers)."""
    query_mask: torch.Tensor  # [B, S] bool: real (non-padding) positions
    indexer_kl: list = field(default_factory=list)  # scalar per layer with an indexer
    expert_ids: dict = field(default_factory=dict)  # layer -> [B, S, num_experts_per_tok]
    copy_targets: torch.Tensor | None = None  # [B, S, T] bool: keys a copying head should read
    copy_heads: dict = field(default_factory=dict)  # layer -> list of head indices
    previous_token_heads: dict = field(default_factory=dict)  # layer -> [(head, k)]: read p-k
    head_targets: dict = field(default_factory=dict)  # layer -> [(head, [B, S, T] bool)]
    copy_losses: list = field(default_factory=list)  # scalar per supervised head
    index_copy_layers: set = field(default_factory=set)  # layers whose indexer learns copy_targets
    index_copy_losses: list = field(default_factory=list)  # scalar per such indexer
    index_copy_kept: list = field(default_factory=list)  # (copy queries with a target kept, all)
    copy_next_tokens: torch.Tensor | None = None  # [B, S]: the token a copy head should write
    copy_logit_losses: list = field(default_factory=list)  # scalar per copy head, with copy_next_tokens
    copy_logit_rows: torch.Tensor | None = None  # [B, S] bool: the queries scored (default: all with targets)


def indexer_distillation_kl(index_scores, attn_probs, allowed, query_mask):
    """DeepSeek-V3.2's indexer objective: per query, KL(p || softmax(I)) where p is the main
    attention distribution summed over heads (renormalised) and I the indexer scores, both
    over the allowed keys: every visible key in the dense warm-up, the selected TopK set in
    sparse training. The target is detached. Returns the mean over real queries."""
    target = attn_probs.detach().sum(1)  # [B, S, T]
    target = target / target.sum(-1, keepdim=True)
    log_q = torch.log_softmax(index_scores.masked_fill(~allowed, -math.inf), dim=-1)
    log_q = log_q.masked_fill(~allowed, 0.0)
    log_p = torch.log(target.clamp_min(1e-30))
    kl = (target * (log_p - log_q)).masked_fill(~allowed, 0.0).sum(-1)  # [B, S]
    mask = query_mask.to(kl.dtype)
    return (kl * mask).sum() / mask.sum().clamp_min(1.0)


def copy_attention_loss(head_probs, targets, query_mask):
    """Attention supervision for one head: -log of the attention mass it puts on the target
    keys, averaged over the real queries that have any target. head_probs [B, S, T]."""
    rows = targets.any(-1) & query_mask
    if not bool(rows.any()):
        return head_probs.sum() * 0.0
    mass = (head_probs * targets.to(head_probs.dtype)).sum(-1)
    return -torch.log(mass[rows].clamp_min(1e-9)).mean()


# =====================================================================================
# The model
# =====================================================================================

class Glm5Model:
    """The forward pass over a dict of weight tensors named as in the checkpoint.

    Inputs are token ids [S] (one sequence; outputs without a batch dimension, as the
    fixtures use it) or [B, S] (a right-padded batch: padding at the end of a row is never
    visible to the row's real positions). dtype float64 is the reference; float32 with
    weights that require grad is how tools/train/train.py trains this same code.

    expert_dispatch decides only the order of the routed-expert arithmetic:
      "per_token"  route and run experts token by token (the fixtures' float64 summation
                   order, kept so regenerated fixtures stay byte-identical);
      "grouped"    route all tokens at once and run each expert once on its tokens
                   (training and evaluation speed; equal to per_token up to rounding,
                   checked by selfcheck.py)."""

    def __init__(self, cfg: Glm5Config, weights: dict, dtype=F64, expert_dispatch: str = "per_token"):
        if expert_dispatch not in ("per_token", "grouped"):
            raise ValueError(f"expert_dispatch must be per_token or grouped, got {expert_dispatch!r}")
        self.cfg = cfg
        self.dtype = dtype  # float64, except the float32 replay of make_fixtures.py and training
        self.expert_dispatch = expert_dispatch
        # .to() returns the same tensor when the dtype already matches: training keeps its leaves.
        self.weights = {name: w.to(dtype) for name, w in weights.items()}
        self._check_tensor_set()

    def with_dtype(self, dtype) -> "Glm5Model":
        """The same model computing in another precision (to measure rounding effects)."""
        return Glm5Model(self.cfg, self.weights, dtype, self.expert_dispatch)

    @classmethod
    def from_folder(cls, folder: str, dtype=F64, expert_dispatch: str = "per_token") -> "Glm5Model":
        cfg = load_config(folder)
        weights = dequantize_tensors(read_checkpoint_files(folder), cfg.weight_block_size)
        return cls(cfg, weights, dtype, expert_dispatch)

    def _check_tensor_set(self) -> None:
        expected = expected_tensor_shapes(self.cfg)
        missing = sorted(set(expected) - set(self.weights))
        unexpected = sorted(set(self.weights) - set(expected))
        if missing or unexpected:
            raise ValueError(f"checkpoint tensors do not match config: missing {missing[:5]}, "
                             f"unexpected {unexpected[:5]}")
        for name, shape in expected.items():
            if list(self.weights[name].shape) != shape:
                raise ValueError(f"{name}: expected shape {shape}, got {list(self.weights[name].shape)}")

    def w(self, name: str) -> torch.Tensor:
        return self.weights[name]

    # ---------------------------------------------------------------- §3.1 top level
    def forward(self, tokens, cache: ModelCache, dsa: bool = True,
                log: SelectionLog | None = None, layer_outputs: list | None = None,
                taps: TrainingTaps | None = None, logit_rows: torch.Tensor | None = None):
        """Runs new tokens (positions continue after the cache). Returns
        (final-normed hidden [.., S, H], logits [.., S, V]). With dsa=False every query attends
        to all visible keys (the indexer runs only to train it, when taps are given). With
        logit_rows (a bool mask [B, S]), logits are [rows, V] for those positions only:
        training takes its loss on a few of them, and the head is a large part of a step."""
        cfg = self.cfg
        tokens = torch.as_tensor(tokens, dtype=torch.long)
        single = tokens.dim() == 1
        if single:
            tokens = tokens[None]
        positions = cache.length + torch.arange(tokens.shape[1])
        h = self.w("model.embed_tokens.weight")[tokens]
        if layer_outputs is not None:
            layer_outputs.append(h[0] if single else h)
        topk_mask = None  # TopK sets of the most recent full layer, threaded to shared layers
        for i in range(cfg.num_hidden_layers):
            h, topk_mask = self.decoder_layer(i, h, positions, cache.layers[i], topk_mask, dsa, log, taps)
            if layer_outputs is not None:
                layer_outputs.append(h[0] if single else h)
        normed = rms_norm(h, self.w("model.norm.weight"), cfg.rms_norm_eps)
        if logit_rows is not None:
            return normed, linear(normed[logit_rows], self.w("lm_head.weight"))
        logits = linear(normed, self.w("lm_head.weight"))
        return (normed[0], logits[0]) if single else (normed, logits)

    # ---------------------------------------------------------------- §4 MTP
    def mtp_forward(self, next_tokens, main_hidden_normed, cache: ModelCache, dsa: bool = True,
                    log: SelectionLog | None = None, taps: TrainingTaps | None = None,
                    logit_rows: torch.Tensor | None = None):
        """MTP layer at positions p = cache.mtp.length + 0..S-1.
        next_tokens[.., j] = t[p+1], main_hidden_normed[.., j] = model.norm output at p;
        returns the logits predicting t[p+2] (only at logit_rows, as in forward)."""
        cfg = self.cfg
        p = f"model.layers.{cfg.mtp_layer}."
        next_tokens = torch.as_tensor(next_tokens, dtype=torch.long)
        single = next_tokens.dim() == 1
        if single:
            next_tokens, main_hidden_normed = next_tokens[None], main_hidden_normed[None]
        positions = cache.mtp.length + torch.arange(next_tokens.shape[1])
        e = self.w("model.embed_tokens.weight")[next_tokens]  # not zeroed at position 0
        e_normed = rms_norm(e, self.w(p + "enorm.weight"), cfg.rms_norm_eps)
        h_normed = rms_norm(main_hidden_normed, self.w(p + "hnorm.weight"), cfg.rms_norm_eps)
        u = linear(torch.cat([e_normed, h_normed], dim=-1), self.w(p + "eh_proj.weight"))  # [e; h]
        z, _ = self.decoder_layer(cfg.mtp_layer, u, positions, cache.mtp, None, dsa, log, taps)
        z_normed = rms_norm(z, self.w(p + "shared_head.norm.weight"), cfg.rms_norm_eps)
        if logit_rows is not None:
            return linear(z_normed[logit_rows], self.w("lm_head.weight"))
        logits = linear(z_normed, self.w("lm_head.weight"))
        return logits[0] if single else logits

    # ---------------------------------------------------------------- decoder layer
    def decoder_layer(self, i, x, positions, cache: LayerCache, topk_mask, dsa, log, taps=None):
        """Pre-norm residual block: a = x + Attn(norm(x)); out = a + MLP(norm(a))."""
        cfg = self.cfg
        p = f"model.layers.{i}."
        attn_in = rms_norm(x, self.w(p + "input_layernorm.weight"), cfg.rms_norm_eps)
        attn_out, topk_mask = self.attention(i, attn_in, positions, cache, topk_mask, dsa, log, taps)
        a = x + attn_out
        mlp_in = rms_norm(a, self.w(p + "post_attention_layernorm.weight"), cfg.rms_norm_eps)
        if cfg.layer_is_moe(i):
            mlp_out = self.moe(i, mlp_in, positions, log, taps)
        else:
            mlp_out = self.swiglu(p + "mlp.", mlp_in)
        return a + mlp_out, topk_mask

    # ---------------------------------------------------------------- §3.4 MLA
    def attention(self, i, x, positions, cache: LayerCache, shared_topk_mask, dsa, log, taps=None):
        """MLA in the expanded form. x is [B, S, H]. Returns (output [B, S, H], allowed-key
        mask [B, S, T]) where the mask is this layer's TopK ∩ causal (passed on to following
        shared layers)."""
        cfg = self.cfg
        p = f"model.layers.{i}.self_attn."
        B, S, nh = x.shape[0], x.shape[1], cfg.num_attention_heads
        dn, dr, dv = cfg.qk_nope_head_dim, cfg.qk_rope_head_dim, cfg.v_head_dim
        cos, sin = rope_tables(positions, dr, cfg.rope_theta, self.dtype)

        # 1. q latent (also the indexer's query input)
        cq = rms_norm(linear(x, self.w(p + "q_a_proj.weight")),
                      self.w(p + "q_a_layernorm.weight"), LATENT_NORM_EPS)
        # 2. per-head queries; the rope part is the LAST dr dims of each head
        q = linear(cq, self.w(p + "q_b_proj.weight")).view(B, S, nh, cfg.qk_head_dim)
        q_nope = q[..., :dn]
        q_pe = apply_interleaved_rope(q[..., dn:], cos[:, None, :], sin[:, None, :])
        # 3. kv latent c (normed) and the single rope key shared by all heads
        f = linear(x, self.w(p + "kv_a_proj_with_mqa.weight"))
        c = rms_norm(f[..., :cfg.kv_lora_rank], self.w(p + "kv_a_layernorm.weight"), LATENT_NORM_EPS)
        k_pe = apply_interleaved_rope(f[..., cfg.kv_lora_rank:], cos, sin)
        # 4. per-head k_nope and v from the latent
        kv = linear(c, self.w(p + "kv_b_proj.weight")).view(B, S, nh, dn + dv)
        k_nope, v = kv[..., :dn], kv[..., dn:]
        # 5. full 256-style heads
        Q = torch.cat([q_nope, q_pe], dim=-1)
        K = torch.cat([k_nope, k_pe[:, :, None, :].expand(B, S, nh, dr)], dim=-1)
        cache.append_kv(K, v)

        # Which keys each query may attend to
        key_positions = torch.arange(cache.length)
        visible = key_positions[None, :] <= positions[:, None]  # causal [S, T]
        index_scores = None
        if cfg.layer_has_indexer(i) and (dsa or taps is not None):
            index_scores, topk_mask = self.indexer_topk(i, x, cq, positions, cos, sin, cache,
                                                        visible, log, taps)
        if not dsa:
            allowed = visible.expand(B, *visible.shape)
        elif cfg.layer_has_indexer(i):
            allowed = topk_mask
        else:
            allowed = shared_topk_mask  # IndexShare: reuse the previous full layer's TopK
            if allowed is None or allowed.shape[1:] != visible.shape:
                raise RuntimeError(f"layer {i} is shared but no full layer ran before it")

        # 6-7. scaled dot products, restricted softmax, weighted values
        scale = cfg.qk_head_dim ** -0.5
        logits = torch.einsum("bshd,bthd->bhst", Q, cache.keys) * scale
        logits = logits.masked_fill(~allowed[:, None, :, :], -math.inf)
        probs = torch.softmax(logits, dim=-1)
        o = torch.einsum("bhst,bthd->bshd", probs, cache.values).reshape(B, S, nh * dv)
        if taps is not None and index_scores is not None:
            taps.indexer_kl.append(indexer_distillation_kl(index_scores, probs, allowed, taps.query_mask))
        if taps is not None and taps.copy_targets is not None:
            for h in taps.copy_heads.get(i, []):
                taps.copy_losses.append(copy_attention_loss(probs[:, h], taps.copy_targets, taps.query_mask))
                if taps.copy_next_tokens is not None:
                    taps.copy_logit_losses.append(self.head_output_loss(i, h, o, taps))
            for h, k in taps.previous_token_heads.get(i, []):
                previous = (key_positions[None, :] == positions[:, None] - k).expand(B, S, cache.length)
                taps.copy_losses.append(copy_attention_loss(probs[:, h], previous, taps.query_mask))
        for h, targets in (taps.head_targets.get(i, []) if taps is not None else []):
            taps.copy_losses.append(copy_attention_loss(probs[:, h], targets, taps.query_mask))
        # 8. output projection (input index = v_head_dim * h + j)
        return linear(o, self.w(p + "o_proj.weight")), allowed

    def head_output_loss(self, i, h, o, taps):
        """Cross-entropy of head h's own contribution to the residual stream, read through the
        final norm and lm_head, against copy_next_tokens, over the queries with copy targets."""
        dv = self.cfg.v_head_dim
        rows = taps.copy_targets.any(-1) & taps.query_mask
        if taps.copy_logit_rows is not None:
            rows &= taps.copy_logit_rows
        if not bool(rows.any()):
            return o.sum() * 0.0
        w_o = self.w(f"model.layers.{i}.self_attn.o_proj.weight")[:, h * dv:(h + 1) * dv]
        contribution = linear(o[rows][:, h * dv:(h + 1) * dv], w_o)
        # The read-out is fixed: only the head (its values and o_proj slice) learns from this.
        normed = rms_norm(contribution, self.w("model.norm.weight").detach(), self.cfg.rms_norm_eps)
        logits = linear(normed, self.w("lm_head.weight").detach())
        return torch.nn.functional.cross_entropy(logits, taps.copy_next_tokens[rows])

    # ---------------------------------------------------------------- §3.6 indexer
    def indexer_topk(self, i, x, cq, positions, cos, sin, cache: LayerCache, visible, log, taps=None):
        """Lightning indexer: scores every visible key, keeps the top index_topk.
        Returns (scores [B, S, T], allowed-key mask [B, S, T])."""
        cfg = self.cfg
        p = f"model.layers.{i}.self_attn.indexer."
        B, S = x.shape[0], x.shape[1]
        Ih, Id, dr = cfg.index_n_heads, cfg.index_head_dim, cfg.qk_rope_head_dim
        if taps is not None:  # DeepSeek-V3.2: the indexer learns only from its KL loss
            x, cq = x.detach(), cq.detach()

        # 1. queries from the normed q latent; one shared key from x, LayerNorm BEFORE rope
        q_idx = linear(cq, self.w(p + "wq_b.weight")).view(B, S, Ih, Id)
        k_idx = layer_norm(linear(x, self.w(p + "wk.weight")), self.w(p + "k_norm.weight"),
                           self.w(p + "k_norm.bias"), INDEXER_NORM_EPS)
        # 2. rope on the FIRST dr dims (interleaved, same tables as MLA)
        q_idx = torch.cat([apply_interleaved_rope(q_idx[..., :dr], cos[:, None, :], sin[:, None, :]),
                           q_idx[..., dr:]], dim=-1)
        k_idx = torch.cat([apply_interleaved_rope(k_idx[..., :dr], cos, sin), k_idx[..., dr:]], dim=-1)
        cache.append_index_keys(k_idx)
        # 3. per-head gate
        gate = linear(x, self.w(p + "weights_proj.weight")) * Ih ** -0.5  # [B, S, Ih]
        # 4. I[s,t] = sum_h gate[s,h] * ReLU(q[s,h] . k[t] / sqrt(Id))
        dots = torch.einsum("bshd,btd->bsht", q_idx, cache.index_keys) * Id ** -0.5
        scores = torch.einsum("bsh,bsht->bst", gate, torch.relu(dots))
        # 5. causal top-k: k = min(index_topk, number of visible keys)
        allowed = topk_mask(scores.detach(), visible, cfg.index_topk)
        if taps is not None and taps.copy_targets is not None and i in taps.index_copy_layers:
            probs = torch.softmax(scores.masked_fill(~visible, -math.inf), dim=-1)
            taps.index_copy_losses.append(copy_attention_loss(probs, taps.copy_targets, taps.query_mask))
            rows = taps.copy_targets.any(-1) & taps.query_mask
            kept = (allowed & taps.copy_targets).any(-1)[rows]
            taps.index_copy_kept.append((int(kept.sum()), int(rows.sum())))
        if log is not None:
            self._log_indexer_selection(i, scores, dots, visible, positions, allowed, log)
        return scores, allowed

    def _log_indexer_selection(self, i, scores, dots, visible, positions, allowed, log):
        """Replays every query's selection through select_topk to record its margin (fixture
        acceptance), and checks that the vectorized selection made the same choice."""
        for b in range(scores.shape[0]):
            for s in range(scores.shape[1]):
                candidates = torch.nonzero(visible[s]).flatten()
                k = min(self.cfg.index_topk, len(candidates))
                where = f"layer {i} position {int(positions[s])}" + (f" row {b}" if b else "")
                chosen = select_topk(scores[b, s, candidates].detach(), k, log, "indexer", where,
                                     dots[b, s][:, candidates].detach())
                assert set(candidates[chosen].tolist()) == set(torch.nonzero(allowed[b, s]).flatten().tolist())

    # ---------------------------------------------------------------- §3.9 router
    def route(self, i, x, log=None, where=""):
        """noaux_tc routing of tokens x [..., H]: (expert ids [..., k], gate weights [..., k]).
        With a log (a single token, x [H]), the decisions' margins are recorded."""
        cfg = self.cfg
        p = f"model.layers.{i}.mlp.gate."
        logits = linear(x, self.w(p + "weight"))
        s = torch.sigmoid(logits)
        c = (s + self.w(p + "e_score_correction_bias")).detach()  # bias only for choosing experts
        if cfg.n_group > 1:
            per_group = cfg.n_routed_experts // cfg.n_group
            groups = c.view(*c.shape[:-1], cfg.n_group, per_group)
            top2 = stable_descending(groups)[0][..., :2]
            group_scores = top2[..., 0] + top2[..., 1]  # sum of the group's two best
            kept = stable_descending(group_scores)[1][..., :cfg.topk_group]
            in_kept_group = torch.zeros_like(group_scores, dtype=torch.bool).scatter(-1, kept, True)
            c_candidates = c.masked_fill(~in_kept_group.repeat_interleave(per_group, -1), -math.inf)
        else:
            group_scores, c_candidates = None, c
        experts = stable_descending(c_candidates)[1][..., :cfg.num_experts_per_tok]
        if log is not None:
            self._log_route(c, group_scores, experts, log, where)
        g = s.gather(-1, experts)  # gate weights from s, not c
        if cfg.norm_topk_prob:
            g = g / (g.sum(-1, keepdim=True) + 1e-20)
        return experts, g * cfg.routed_scaling_factor

    def _log_route(self, c, group_scores, experts, log, where):
        """Replays one token's routing through select_topk (group step, then experts among
        the kept groups' candidates) to record margins, and checks it agrees."""
        cfg = self.cfg
        candidates = list(range(cfg.n_routed_experts))
        if group_scores is not None:
            per_group = cfg.n_routed_experts // cfg.n_group
            kept = select_topk(group_scores, cfg.topk_group, log, "group", where)
            candidates = [g * per_group + j for g in sorted(kept) for j in range(per_group)]
        chosen = select_topk(c[candidates], cfg.num_experts_per_tok, log, "router", where)
        assert [candidates[j] for j in chosen] == experts.tolist()

    # ---------------------------------------------------------------- §3.10 MLPs
    def swiglu(self, prefix, x):
        """down(silu(gate x) * up x)."""
        gate = linear(x, self.w(prefix + "gate_proj.weight"))
        up = linear(x, self.w(prefix + "up_proj.weight"))
        return linear(silu(gate) * up, self.w(prefix + "down_proj.weight"))

    def moe(self, i, x, positions, log, taps=None):
        """Routed experts weighted by their gates, plus the shared expert(s) unweighted."""
        p = f"model.layers.{i}.mlp."
        B, S, H = x.shape
        if self.expert_dispatch == "per_token":
            out = torch.zeros_like(x)
            for b in range(B):
                for s in range(S):
                    where = f"layer {i} position {int(positions[s])}" + (f" row {b}" if b else "")
                    experts, gates = self.route(i, x[b, s], log, where)
                    for e, g in zip(experts.tolist(), gates):
                        out[b, s] += g * self.swiglu(f"{p}experts.{e}.", x[b, s])
            experts = None
        else:
            flat = x.reshape(B * S, H)
            experts, gates = self.route(i, flat)
            # Every (token, expert) pair sorted by expert, tokens in order within one, so one
            # gather and one scatter serve all experts (a pair per expert made autograd fill a
            # zero gradient of the whole batch for each). Each token still sums its experts in
            # ascending order.
            pairs = torch.sort(experts.flatten(), stable=True)
            token = pairs.indices // experts.shape[-1]
            inputs = flat.index_select(0, token)
            counts = torch.bincount(pairs.values, minlength=self.cfg.n_routed_experts).tolist()
            outputs = [self.swiglu(f"{p}experts.{e}.", rows)
                       for e, rows in enumerate(inputs.split(counts)) if counts[e]]
            y = torch.cat(outputs) * gates.flatten()[pairs.indices, None]
            out = torch.zeros_like(flat).index_add(0, token, y).view(B, S, H)
        if taps is not None:
            if experts is None:
                raise ValueError("training taps need expert_dispatch='grouped'")
            taps.expert_ids[i] = experts.view(B, S, -1)
        if self.cfg.n_shared_experts:
            out = out + self.swiglu(p + "shared_experts.", x)  # unweighted
        return out


# =====================================================================================
# Convenience drivers
# =====================================================================================

def greedy_argmax(logits_row: torch.Tensor, log: SelectionLog | None = None, where: str = "") -> int:
    return select_topk(logits_row, 1, log, "argmax", where)[0]


def teacher_forced(model: Glm5Model, tokens, dsa=True, log=None, layer_outputs=None):
    """Full-sequence forward from an empty cache: (normed hidden, logits)."""
    return model.forward(tokens, ModelCache(model.cfg), dsa=dsa, log=log, layer_outputs=layer_outputs)


def mtp_teacher_forced(model: Glm5Model, tokens, main_hidden_normed, dsa=True, log=None):
    """MTP logits for rows p = 0..len-2: from hidden at p and token p+1, predicting p+2."""
    return model.mtp_forward(tokens[1:], main_hidden_normed[:-1], ModelCache(model.cfg), dsa, log)


def greedy_generate(model: Glm5Model, prompt, n_new: int, log=None) -> list:
    """Prefill the prompt, then feed back the argmax token one at a time (with caches).
    EOS is not treated specially."""
    cache = ModelCache(model.cfg)
    _, logits = model.forward(prompt, cache, log=log)
    out = []
    for step in range(n_new):
        token = greedy_argmax(logits[-1], log, f"greedy step {step}")
        out.append(token)
        if step + 1 < n_new:
            _, logits = model.forward([token], cache, log=log)
    return out


def main():
    """Debugging aid: run the reference on a checkpoint folder and dump what an engine
    under test can be compared against layer by layer."""
    import argparse
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("folder", help="checkpoint folder (config.json + safetensors)")
    ap.add_argument("--tokens", help="comma-separated token ids (default: the folder's "
                                     "reference.json prompt)")
    ap.add_argument("--no-dsa", action="store_true", help="attend to every visible key")
    ap.add_argument("--dump-layers", metavar="OUT.f32",
                    help="write float32 [layers+1, tokens, hidden]: embeddings, then the residual "
                         "stream after each main layer")
    ap.add_argument("--dump-logits", metavar="OUT.f32", help="write float32 [tokens, vocab]")
    args = ap.parse_args()
    if args.tokens:
        tokens = [int(t) for t in args.tokens.split(",")]
    else:
        with open(os.path.join(args.folder, "reference.json")) as f:
            tokens = json.load(f)["prompt"]
    model = Glm5Model.from_folder(args.folder)
    layers = []
    _, logits = teacher_forced(model, tokens, dsa=not args.no_dsa, layer_outputs=layers)
    if args.dump_layers:
        np.ascontiguousarray(torch.stack(layers).numpy(), dtype="<f4").tofile(args.dump_layers)
    if args.dump_logits:
        np.ascontiguousarray(logits.numpy(), dtype="<f4").tofile(args.dump_logits)
    print("top1:", [greedy_argmax(row) for row in logits])
    print("max |logit|:", float(logits.abs().max()))


if __name__ == "__main__":
    main()
