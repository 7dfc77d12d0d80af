"""Self-checks of the float64 reference (run by make_fixtures.sh before it writes fixtures).

Each check compares against something computed a different way: hand-worked numbers,
an algebraically equivalent formulation, or an invariant the spec states.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
import traceback

import numpy as np
import torch

import glm5_reference as ref
import tensor_formats as fmt
from make_checkpoint import (base_config, build_checkpoint, fp8_config_fields, quantize_fp8_blocks,
                             write_checkpoint)


def tiny_model(seed=7, storage="bf16", **overrides) -> ref.Glm5Model:
    config = base_config(**overrides)
    cfg = ref.parse_config(config)
    return ref.Glm5Model(cfg, fmt.dequantize_tensors(build_checkpoint(config, seed, storage)))


def prompt_tokens(n, vocab=256, seed=11):
    return np.random.default_rng(seed).integers(0, vocab, n).tolist()


# ------------------------------------------------------------------------ number formats

def check_e4m3_codec():
    # Every code decodes and re-encodes to itself (NaN codes: decode to NaN).
    for code in range(256):
        value = fmt.E4M3_TABLE[code]
        if code & 0x7F == 0x7F:
            assert math.isnan(value), f"code {code:#x} must be NaN"
            continue
        back = int(fmt.e4m3_encode(np.array([value]))[0])
        assert back == code, f"code {code:#x} -> {value} -> {back:#x}"
    # Spot values worked by hand: bias 7, 3 mantissa bits, subnormal step 2^-9.
    expected = {0x00: 0.0, 0x01: 2.0 ** -9, 0x07: 7 * 2.0 ** -9, 0x08: 2.0 ** -6, 0x38: 1.0,
                0x39: 1.125, 0x40: 2.0, 0x7E: 448.0, 0xB8: -1.0, 0xFE: -448.0}
    for code, value in expected.items():
        assert fmt.E4M3_TABLE[code] == value, f"{code:#x} decodes to {fmt.E4M3_TABLE[code]}, not {value}"
    enc = lambda v: int(fmt.e4m3_encode(np.array([v]))[0])
    assert enc(1.0625) == 0x38  # halfway 1 / 1.125 -> even mantissa (1.0)
    assert enc(1.1875) == 0x3A  # halfway 1.125 / 1.25 -> even mantissa (1.25)
    assert enc(2.0 ** -10) == 0x00  # halfway 0 / 2^-9 -> even (0)
    assert enc(3 * 2.0 ** -10) == 0x02  # halfway 2^-9 / 2^-8 -> even
    assert enc(1.07) == 0x39 and enc(1.05) == 0x38
    assert enc(460.0) == 0x7E and enc(1e6) == 0x7E and enc(-1e6) == 0xFE  # saturate, no NaN
    assert enc(float("nan")) & 0x7F == 0x7F


def check_bf16():
    bits = lambda v: int(fmt.float_to_bf16_bits(np.array([v], dtype=np.float32))[0])
    assert bits(1.0) == 0x3F80 and bits(-2.0) == 0xC000
    assert bits(1.0 + 2.0 ** -8) == 0x3F80  # tie -> even (1.0)
    assert bits(1.0 + 3 * 2.0 ** -8) == 0x3F82  # tie -> even (1 + 2^-6)
    assert bits(1.0 + 2.0 ** -8 + 2.0 ** -20) == 0x3F81  # above the tie -> up
    all_bits = np.arange(0, 0x10000, dtype=np.uint32).astype(np.uint16)
    values = fmt.bf16_bits_to_float(all_bits)
    finite = np.isfinite(values)
    assert np.array_equal(fmt.float_to_bf16_bits(values[finite]), all_bits[finite])


def check_safetensors_roundtrip():
    rng = np.random.default_rng(0)
    tensors = {
        "a.f32": ("F32", rng.standard_normal((3, 5)).astype(np.float32)),
        "b.bf16": ("BF16", fmt.float_to_bf16_bits(rng.standard_normal(7).astype(np.float32))),
        "c.fp8": ("F8_E4M3", rng.integers(0, 256, (2, 3)).astype(np.uint8)),
        "d.f64": ("F64", rng.standard_normal((1, 2, 3))),
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "x.safetensors")
        fmt.write_safetensors(path, tensors)
        with open(path, "rb") as f:
            header_len = int.from_bytes(f.read(8), "little")
        assert header_len % 8 == 0, "header must be padded to a multiple of 8"
        back = fmt.read_safetensors(path)
        assert back.keys() == tensors.keys()
        for name, (dtype, array) in tensors.items():
            assert back[name][0] == dtype and np.array_equal(back[name][1], array), name


def check_fp8_blocks():
    # [200, 160]: both dims partial, scale [2, 2]; element (150, 140) uses scale[1, 1].
    rng = np.random.default_rng(1)
    w = rng.standard_normal((200, 160)) * np.linspace(0.1, 3.0, 160)[None, :]
    codes, scale = quantize_fp8_blocks(w)
    assert scale.shape == (2, 2) and scale.dtype == np.float32
    deq = fmt.dequantize_tensors({"x.weight": ("F8_E4M3", codes),
                                  "x.weight_scale_inv": ("F32", scale)})["x.weight"].numpy()
    assert deq[150, 140] == fmt.E4M3_TABLE[codes[150, 140]] * np.float64(scale[1, 1])
    assert deq[10, 20] == fmt.E4M3_TABLE[codes[10, 20]] * np.float64(scale[0, 0])
    # 3 mantissa bits: relative error <= 2^-4 (normal range) plus half the subnormal step.
    full = np.repeat(np.repeat(scale.astype(np.float64), 128, 0), 128, 1)[:200, :160]
    assert np.all(np.abs(deq - w) <= 2.0 ** -4 * np.abs(w) + 2.0 ** -10 * full)
    # The scale multiplies: the largest |w| of each block maps to 448 exactly.
    assert (codes[:128, :128] & 0x7F).max() == 0x7E
    # Missing scale / wrong scale shape are rejected.
    for bad in ({"x.weight": ("F8_E4M3", codes)},
                {"x.weight": ("F8_E4M3", codes), "x.weight_scale_inv": ("F32", scale[:1])}):
        try:
            fmt.dequantize_tensors(bad)
        except ValueError:
            continue
        raise AssertionError("bad FP8 scale accepted")


def check_fp8_checkpoint_files():
    """FP8 exactly on the spec §2.4 tensors, scales with ceil-division, and a sharded
    write/read round trip reproduces the tensors."""
    config = base_config(**fp8_config_fields(), hidden_size=160, intermediate_size=200,
                         num_hidden_layers=2, n_routed_experts=4, num_experts_per_tok=2,
                         n_group=1, topk_group=1)
    raw = build_checkpoint(config, 3, "fp8")
    fp8 = {n for n, (d, _) in raw.items() if d == "F8_E4M3"}
    for name in fp8:
        assert name + "_scale_inv" in raw, name
    L = config["num_hidden_layers"]
    must_fp8 = ["model.layers.0.self_attn.kv_a_proj_with_mqa.weight", "model.layers.0.mlp.down_proj.weight",
                "model.layers.1.self_attn.indexer.wq_b.weight", "model.layers.1.self_attn.indexer.wk.weight",
                f"model.layers.{L}.mlp.experts.3.up_proj.weight", f"model.layers.{L}.mlp.shared_experts.down_proj.weight",
                f"model.layers.{L}.self_attn.o_proj.weight"]
    must_bf16 = ["model.embed_tokens.weight", "lm_head.weight", "model.layers.1.mlp.gate.weight",
                 "model.layers.1.self_attn.indexer.weights_proj.weight",
                 "model.layers.1.self_attn.indexer.k_norm.weight", "model.layers.1.self_attn.indexer.k_norm.bias",
                 f"model.layers.{L}.eh_proj.weight", f"model.layers.{L}.enorm.weight",
                 "model.layers.0.input_layernorm.weight", "model.layers.0.self_attn.kv_a_layernorm.weight"]
    for name in must_fp8:
        assert name in fp8, f"{name} should be FP8"
    for name in must_bf16:
        assert raw[name][0] == "BF16", f"{name} should be BF16"
    assert raw["model.layers.1.mlp.gate.e_score_correction_bias"][0] == "F32"
    assert raw["model.layers.0.self_attn.kv_a_proj_with_mqa.weight_scale_inv"][1].shape == (1, 2)
    assert raw["model.layers.0.mlp.gate_proj.weight_scale_inv"][1].shape == (2, 2)
    with tempfile.TemporaryDirectory() as tmp:
        write_checkpoint(tmp, config, raw, shards=3)
        assert len([f for f in os.listdir(tmp) if f.endswith(".safetensors")]) == 3
        back = fmt.read_checkpoint_files(tmp)
        assert back.keys() == raw.keys()
        for name, (dtype, array) in raw.items():
            assert back[name][0] == dtype and np.array_equal(back[name][1], array), name
        ref.Glm5Model.from_folder(tmp)  # tensor set and shapes match the config


# ------------------------------------------------------------------------ config rules

def check_indexshare_schedule():
    glm52 = ref.indexer_types_from_config({"index_topk_freq": 4, "index_skip_topk_offset": 3}, 78)
    full = [i for i, t in enumerate(glm52) if t == "full"]
    assert full == [0, 1, 2] + list(range(6, 78, 4)) and len(full) == 21, full
    assert ref.indexer_types_from_config({}, 78) == ["full"] * 78  # GLM-5 / 5.1 defaults
    assert ref.indexer_types_from_config({"index_topk_freq": 2, "index_skip_topk_offset": 1}, 5) == \
        ["full", "shared", "full", "shared", "full"]
    assert ref.indexer_types_from_config({"index_topk_pattern": "FSSF"}, 4) == \
        ["full", "shared", "shared", "full"]
    assert ref.indexer_types_from_config({"indexer_types": ["full", "shared"], "index_topk_freq": 1}, 2) == \
        ["full", "shared"]
    for bad in ({"indexer_types": ["shared", "full"]}, {"index_topk_pattern": "SF"}):
        try:
            ref.indexer_types_from_config(bad, 2)
        except ValueError:
            continue
        raise AssertionError(f"accepted a shared layer 0: {bad}")
    assert ref.mlp_types_from_config({"first_k_dense_replace": 3}, 5) == ["dense"] * 3 + ["sparse"] * 2
    assert ref.mlp_types_from_config({"first_k_dense_replace": 1, "mlp_layer_types":
                                      ["dense", "sparse", "dense"]}, 3) == ["dense", "sparse", "dense"]
    try:
        ref.parse_config(base_config(rope_parameters={"rope_theta": 1e6, "rope_type": "yarn", "factor": 4}))
    except ValueError:
        pass
    else:
        raise AssertionError("YaRN accepted")


def check_tie_rule():
    assert ref.select_topk(torch.tensor([1.0, 3.0, 3.0, 2.0]), 2) == [1, 2]
    assert ref.select_topk(torch.tensor([0.0, 0.0, 0.0]), 2) == [0, 1]
    assert ref.select_topk(torch.tensor([-1.0, 5.0, -1.0, 5.0]), 3) == [1, 3, 0]
    log = ref.SelectionLog()
    ref.select_topk(torch.tensor([4.0, 1.0, 3.0]), 1, log, "x", "here")
    assert log.min_margin["x"] == (0.25, "here")  # (4 - 3) / max |score|


# ------------------------------------------------------------------------ building blocks

def check_rope_by_hand():
    # dim 4, theta 10000: inv_freq = [1, 10000^-0.5 = 0.01]; position 1 rotates pair (x0, x1)
    # by 1 rad and pair (x2, x3) by 0.01 rad.
    cos, sin = ref.rope_tables(torch.tensor([0, 1]), 4, 10000.0)
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0]] * 2, dtype=torch.float64)
    y = ref.apply_interleaved_rope(x, cos, sin)
    c1, s1, c2, s2 = math.cos(1.0), math.sin(1.0), math.cos(0.01), math.sin(0.01)
    expected = [1 * c1 - 2 * s1, 2 * c1 + 1 * s1, 3 * c2 - 4 * s2, 4 * c2 + 3 * s2]
    assert torch.equal(y[0], x[0]), "position 0 must be the identity"
    assert max(abs(a - b) for a, b in zip(y[1].tolist(), expected)) < 1e-15, (y[1], expected)


def check_router_by_hand():
    """4 experts in 2 groups, keep 1 group, pick 2. Gate weight = identity so the router
    logits are x itself."""
    model = ref.Glm5Model.__new__(ref.Glm5Model)
    model.cfg = ref.parse_config(base_config(hidden_size=4, n_routed_experts=4, num_experts_per_tok=2,
                                             n_group=2, topk_group=1))
    model.weights = {"model.layers.1.mlp.gate.weight": torch.eye(4, dtype=torch.float64),
                     "model.layers.1.mlp.gate.e_score_correction_bias":
                         torch.tensor([0.5, 0.0, 0.0, 0.0], dtype=torch.float64)}
    x = torch.tensor([0.0, 1.0, 2.0, -1.0], dtype=torch.float64)
    s = [1 / (1 + math.exp(-v)) for v in x.tolist()]
    # c = [1.0, .731, .881, .269]; group sums [1.731, 1.150] -> group 0 -> experts 0, 1
    experts, gates = model.route(1, x)
    assert experts.tolist() == [0, 1], experts
    total = s[0] + s[1]
    want = [s[0] / total * 2.5, s[1] / total * 2.5]  # weights from s, not from c
    assert max(abs(a - b) for a, b in zip(gates.tolist(), want)) < 1e-15
    # Without groups the bias alone decides: c top-2 = experts 0 (1.0) and 2 (0.881).
    model.cfg.n_group, model.cfg.norm_topk_prob = 1, False
    experts, gates = model.route(1, x)
    assert experts.tolist() == [0, 2] and abs(gates[1].item() - s[2] * 2.5) < 1e-15


def check_norms():
    x = torch.randn(3, 16, dtype=torch.float64)
    w, b = torch.randn(16, dtype=torch.float64), torch.randn(16, dtype=torch.float64)
    ln = torch.nn.functional.layer_norm(x, (16,), w, b, eps=1e-6)
    assert (ref.layer_norm(x, w, b, 1e-6) - ln).abs().max() < 1e-13
    rms = ref.rms_norm(x, w, 1e-5)
    assert (rms - w * x / (x.pow(2).sum(-1, keepdim=True) / 16 + 1e-5).sqrt()).abs().max() < 1e-14


# ------------------------------------------------------------------------ whole-model invariants

def check_dsa_equals_dense_when_topk_covers_everything():
    model = tiny_model(index_topk=64)
    tokens = prompt_tokens(40)
    _, sparse = ref.teacher_forced(model, tokens, dsa=True)
    _, dense = ref.teacher_forced(model, tokens, dsa=False)
    assert torch.equal(sparse, dense), "index_topk >= sequence must be exactly dense attention"
    small = tiny_model(index_topk=4)
    _, sparse = ref.teacher_forced(small, tokens, dsa=True)
    _, dense = ref.teacher_forced(small, tokens, dsa=False)
    assert torch.equal(sparse[:4], dense[:4]), "positions < index_topk see every key either way"
    assert (sparse - dense).abs().max() > 1e-3, "with a small index_topk DSA must change logits"


def check_incremental_equals_full():
    # A shared layer in the middle, so threading TopK through the cache path is covered too.
    model = tiny_model(index_topk=4, index_topk_pattern="FFSF")
    tokens = prompt_tokens(24)
    hidden, logits = ref.teacher_forced(model, tokens)
    mtp = ref.mtp_teacher_forced(model, tokens, hidden)
    cache = ref.ModelCache(model.cfg)
    pieces, mtp_pieces, chunks = [], [], [7, 1, 1, 1, 5, 1, 8]
    start = 0
    for n in chunks:
        h, lg = model.forward(tokens[start:start + n], cache)
        pieces.append(lg)
        # MTP at positions start..start+n-1 needs token p+1; the last row of the sequence has none.
        m = min(n, len(tokens) - 1 - start)
        if m > 0:
            mtp_pieces.append(model.mtp_forward(tokens[start + 1:start + 1 + m], h[:m], cache))
        start += n
    assert start == len(tokens)
    assert (torch.cat(pieces) - logits).abs().max() < 1e-10
    assert (torch.cat(mtp_pieces) - mtp).abs().max() < 1e-10


def check_shared_layers_skip_the_indexer():
    model = tiny_model(index_topk=4, index_topk_pattern="FSFS")
    calls, masks = [], {}
    original_indexer, original_attention = model.indexer_topk, model.attention

    def attention(i, *args):
        out, allowed = original_attention(i, *args)
        masks[i] = allowed
        return out, allowed

    model.indexer_topk = lambda i, *a: calls.append(i) or original_indexer(i, *a)
    model.attention = attention
    hidden, _ = ref.teacher_forced(model, prompt_tokens(12))
    ref.mtp_teacher_forced(model, prompt_tokens(12), hidden)
    assert calls == [0, 2, 4], calls  # 4 = the MTP layer, always full
    # A shared layer attends over exactly the previous full layer's TopK sets.
    assert torch.equal(masks[1], masks[0]) and torch.equal(masks[3], masks[2])
    assert not torch.equal(masks[2], masks[0]), "full layers pick their own sets"
    assert int(masks[1].sum(-1).max()) == 4, "TopK sets hold index_topk keys"
    assert "model.layers.1.self_attn.indexer.wk.weight" not in model.weights


def check_absorbed_mla_equals_expanded():
    """Spec §3.5: caching only c and k_pe and absorbing W_UK / W_UV gives the same output."""
    model = tiny_model()
    cfg, p = model.cfg, "model.layers.0.self_attn."
    x = torch.randn(10, cfg.hidden_size, dtype=torch.float64)
    positions = torch.arange(10)
    expanded, _ = model.attention(0, x[None], positions, ref.LayerCache(), None, False, None)
    expanded = expanded[0]

    nh, dn, dr, dv = cfg.num_attention_heads, cfg.qk_nope_head_dim, cfg.qk_rope_head_dim, cfg.v_head_dim
    cos, sin = ref.rope_tables(positions, dr, cfg.rope_theta)
    cq = ref.rms_norm(x @ model.w(p + "q_a_proj.weight").T, model.w(p + "q_a_layernorm.weight"), 1e-6)
    q = (cq @ model.w(p + "q_b_proj.weight").T).view(10, nh, dn + dr)
    q_pe = ref.apply_interleaved_rope(q[..., dn:], cos[:, None], sin[:, None])
    f = x @ model.w(p + "kv_a_proj_with_mqa.weight").T
    c = ref.rms_norm(f[:, :cfg.kv_lora_rank], model.w(p + "kv_a_layernorm.weight"), 1e-6)
    k_pe = ref.apply_interleaved_rope(f[:, cfg.kv_lora_rank:], cos, sin)
    w_kvb = model.w(p + "kv_b_proj.weight").view(nh, dn + dv, cfg.kv_lora_rank)
    w_uk, w_uv = w_kvb[:, :dn], w_kvb[:, dn:]
    q_tilde = torch.einsum("shd,hdc->shc", q[..., :dn], w_uk)  # W_UK^T q_nope
    logits = (torch.einsum("shc,tc->hst", q_tilde, c) + torch.einsum("shd,td->hst", q_pe, k_pe))
    logits = logits * (dn + dr) ** -0.5
    logits = logits.masked_fill(~(positions[None, :] <= positions[:, None])[None], -math.inf)
    o_latent = torch.einsum("hst,tc->shc", torch.softmax(logits, -1), c)
    o = torch.einsum("shc,hvc->shv", o_latent, w_uv).reshape(10, nh * dv)
    absorbed = o @ model.w(p + "o_proj.weight").T
    assert (absorbed - expanded).abs().max() < 1e-12


def check_batched_grouped_equals_reference():
    """The training/eval form (a right-padded batch, experts run grouped) gives each row what
    the one-sequence per-token reference gives, main and MTP."""
    model = tiny_model(index_topk=4, index_topk_pattern="FSFF")
    grouped = ref.Glm5Model(model.cfg, model.weights, expert_dispatch="grouped")
    rows = [prompt_tokens(19, seed=1), prompt_tokens(12, seed=2)]
    batch = torch.zeros(2, 19, dtype=torch.long)
    for b, r in enumerate(rows):
        batch[b, :len(r)] = torch.tensor(r)
    hidden, logits = grouped.forward(batch, ref.ModelCache(model.cfg))
    mtp = grouped.mtp_forward(batch[:, 1:], hidden[:, :-1], ref.ModelCache(model.cfg))
    for b, r in enumerate(rows):
        h1, l1 = ref.teacher_forced(model, r)
        m1 = ref.mtp_teacher_forced(model, r, h1)
        n = len(r)
        assert (logits[b, :n] - l1).abs().max() < 1e-12, "batched/grouped logits differ"
        assert (mtp[b, :n - 1] - m1).abs().max() < 1e-12, "batched/grouped MTP logits differ"
    # Training's form: logits of some rows only, in row-major order.
    rows_mask = torch.zeros(2, 19, dtype=torch.bool)
    rows_mask[0, [3, 7, 18]], rows_mask[1, [0, 11]] = True, True
    _, picked = grouped.forward(batch, ref.ModelCache(model.cfg), logit_rows=rows_mask)
    mtp_picked = grouped.mtp_forward(batch[:, 1:], hidden[:, :-1], ref.ModelCache(model.cfg),
                                     logit_rows=rows_mask[:, 1:])
    assert picked.shape == (5, model.cfg.vocab_size) and mtp_picked.shape == (4, model.cfg.vocab_size)
    assert (picked - logits[rows_mask]).abs().max() < 1e-12, "logit_rows picked other rows"
    assert (mtp_picked - mtp[rows_mask[:, 1:]]).abs().max() < 1e-12, "MTP logit_rows picked other rows"


def check_vectorized_topk_rule():
    """topk_mask / route's vectorized selection follow select_topk's tie rule."""
    scores = torch.tensor([[[1.0, 3.0, 3.0, 2.0, 0.0, 0.0]]])
    visible = torch.tensor([[True] * 6])
    assert ref.topk_mask(scores, visible, 2)[0, 0].tolist() == [False, True, True, False, False, False]
    assert ref.topk_mask(scores, visible, 5)[0, 0].tolist() == [True, True, True, True, True, False]
    short = torch.tensor([[True, True, False, False, False, False]])
    assert ref.topk_mask(scores, short, 4)[0, 0].tolist() == [True, True, False, False, False, False]
    ties = torch.tensor([[[-0.0, 0.0, 0.0, -1.0]]])
    assert ref.topk_mask(ties, torch.tensor([[True] * 4]), 2)[0, 0].tolist() == [True, True, False, False]


def check_training_taps():
    """With TrainingTaps the indexer learns only from its KL loss (inputs detached) and the
    main model only from the LM loss; the dense warm-up (dsa=False) still trains every
    indexer; routed expert ids are recorded per MoE layer."""
    base = tiny_model(index_topk=4, index_topk_pattern="FSFF")
    weights = {n: w.float().requires_grad_(True) for n, w in base.weights.items()}
    model = ref.Glm5Model(base.cfg, weights, torch.float32, "grouped")
    tokens = torch.tensor([prompt_tokens(16)])
    for dsa in (False, True):
        taps = ref.TrainingTaps(query_mask=torch.ones(1, 16, dtype=torch.bool))
        hidden, logits = model.forward(tokens, ref.ModelCache(model.cfg), dsa=dsa, taps=taps)
        mtp_taps = ref.TrainingTaps(query_mask=torch.ones(1, 15, dtype=torch.bool))
        mtp = model.mtp_forward(tokens[:, 1:], hidden[:, :-1], ref.ModelCache(model.cfg), dsa, taps=mtp_taps)
        assert len(taps.indexer_kl) == 3 and len(mtp_taps.indexer_kl) == 1  # layers 0, 2, 3 + MTP
        assert sorted(taps.expert_ids) == [1, 2, 3] and sorted(mtp_taps.expert_ids) == [4]
        assert taps.expert_ids[1].shape == (1, 16, base.cfg.num_experts_per_tok)
        kl = sum(taps.indexer_kl) + sum(mtp_taps.indexer_kl)
        assert float(kl) > 0
        lm = torch.nn.functional.cross_entropy(logits[0], tokens[0]) + mtp.square().mean()
        main_grads = torch.autograd.grad(lm, list(weights.values()), allow_unused=True)
        kl_grads = torch.autograd.grad(kl, list(weights.values()), allow_unused=True)
        for (name, _), g_main, g_kl in zip(weights.items(), main_grads, kl_grads):
            is_indexer = ".indexer." in name
            main_zero = g_main is None or float(g_main.abs().max()) == 0.0
            kl_zero = g_kl is None or float(g_kl.abs().max()) == 0.0
            if name.endswith("e_score_correction_bias"):  # selection only: never a gradient
                assert main_zero and kl_zero, name
                continue
            if ".mlp.experts." in name:  # an expert no token was routed to has no gradient
                assert kl_zero, name
                continue
            assert main_zero == is_indexer, f"LM loss gradient on {name}: {not main_zero}"
            assert kl_zero != is_indexer, f"KL gradient on {name}: {not kl_zero}"


def check_copy_attention_supervision():
    """A supervised head's loss is -log of its attention mass on the targets: 0 when every
    visible key is a target; the same number for copy targets "the key before the query" as
    for the same head taught as a previous-token head (k = 1), and for two back (k = 2), also
    given as explicit head_targets; dense and no target -> no loss."""
    base = tiny_model(index_topk=64)
    model = ref.Glm5Model(base.cfg, base.weights, expert_dispatch="grouped")
    tokens = torch.tensor([prompt_tokens(12)])
    S = tokens.shape[1]
    everything = torch.ones(1, S, S, dtype=torch.bool).tril()
    lower = torch.ones(1, S, S, dtype=torch.bool)
    previous, two_back = lower.tril(-1) & ~lower.tril(-2), lower.tril(-2) & ~lower.tril(-3)
    valid = torch.ones(1, S, dtype=torch.bool)
    taps = ref.TrainingTaps(query_mask=valid, copy_targets=everything, copy_heads={2: [1]})
    model.forward(tokens, ref.ModelCache(model.cfg), dsa=False, taps=taps)
    assert len(taps.copy_losses) == 1 and abs(float(taps.copy_losses[0])) < 1e-9
    taps = ref.TrainingTaps(query_mask=valid, copy_targets=previous, copy_heads={2: [1]},
                            previous_token_heads={2: [(1, 1)], 3: [(0, 1)]})
    model.forward(tokens, ref.ModelCache(model.cfg), dsa=False, taps=taps)
    assert len(taps.copy_losses) == 3
    as_copy, as_previous, other = (float(v) for v in taps.copy_losses)
    assert as_copy > 0.1 and abs(as_copy - as_previous) < 1e-12 and abs(other - as_copy) > 1e-6
    taps = ref.TrainingTaps(query_mask=valid, copy_targets=two_back, copy_heads={3: [2]},
                            previous_token_heads={3: [(2, 2), (2, 1)]}, head_targets={3: [(2, two_back)]})
    model.forward(tokens, ref.ModelCache(model.cfg), dsa=False, taps=taps)
    as_copy, as_two_back, as_previous, as_targets = (float(v) for v in taps.copy_losses)
    assert abs(as_copy - as_two_back) < 1e-12 and abs(as_previous - as_copy) > 1e-6
    assert abs(as_targets - as_copy) < 1e-12
    taps = ref.TrainingTaps(query_mask=valid, copy_targets=torch.zeros(1, S, S, dtype=torch.bool),
                            copy_heads={2: [1]})
    model.forward(tokens, ref.ModelCache(model.cfg), dsa=False, taps=taps)
    assert float(taps.copy_losses[0]) == 0.0


def check_indexer_copy_supervision():
    """An indexer taught copy targets (train.py --indexer-copy-layers) adds -log of its score
    distribution's mass on them over the visible keys: ~0 when every visible key is a target,
    larger for one target than for a superset of it; only the named full layers add one, its
    gradient reaches only their indexer's weights, and every query whose TopK covers all its
    visible keys counts as kept."""
    base = tiny_model(index_topk=4, index_topk_pattern="FSFF")
    weights = {n: w.float().requires_grad_(True) for n, w in base.weights.items()}
    model = ref.Glm5Model(base.cfg, weights, torch.float32, "grouped")
    tokens = torch.tensor([prompt_tokens(12)])
    S = tokens.shape[1]
    valid = torch.ones(1, S, dtype=torch.bool)
    everything = torch.ones(1, S, S, dtype=torch.bool).tril()
    first = torch.zeros(1, S, S, dtype=torch.bool)
    first[0, :, 0] = True
    first_two = first.clone()
    first_two[0, 1:, 1] = True
    losses = {}
    for name, targets in (("everything", everything), ("first", first), ("first_two", first_two)):
        taps = ref.TrainingTaps(query_mask=valid, copy_targets=targets, index_copy_layers={2})
        model.forward(tokens, ref.ModelCache(model.cfg), dsa=True, taps=taps)
        assert len(taps.index_copy_losses) == 1 and len(taps.index_copy_kept) == 1
        losses[name] = taps.index_copy_losses[0]
        kept, queries = taps.index_copy_kept[0]
        assert queries == S
        if name == "everything":
            assert kept == S
        else:  # the first four queries see at most four keys: all kept
            assert 4 <= kept <= S
    assert abs(float(losses["everything"])) < 1e-6
    assert float(losses["first"]) > float(losses["first_two"]) > 0.01
    grads = torch.autograd.grad(losses["first"], list(weights.values()), allow_unused=True)
    for name, g in zip(weights, grads):
        nonzero = g is not None and float(g.abs().max()) > 0.0
        assert nonzero == name.startswith("model.layers.2.self_attn.indexer."), name


def check_copy_head_output_supervision():
    """With copy_next_tokens each copy head's output is scored through the fixed read-out: the
    loss teaches the head's own values and o_proj slice (and what feeds them), never the final
    norm or lm_head; another head's o_proj columns get nothing."""
    base = tiny_model(index_topk=64)
    weights = {n: w.float().requires_grad_(True) for n, w in base.weights.items()}
    model = ref.Glm5Model(base.cfg, weights, torch.float32, "grouped")
    tokens = torch.tensor([prompt_tokens(12)])
    S = tokens.shape[1]
    targets = torch.ones(1, S, S, dtype=torch.bool).tril()
    taps = ref.TrainingTaps(query_mask=torch.ones(1, S, dtype=torch.bool), copy_targets=targets,
                            copy_heads={2: [1]}, copy_next_tokens=tokens.roll(-1, dims=1))
    model.forward(tokens, ref.ModelCache(model.cfg), dsa=False, taps=taps)
    assert len(taps.copy_logit_losses) == 1
    loss = taps.copy_logit_losses[0]
    assert float(loss) > 1.0  # random heads do not write the next token
    names = ["lm_head.weight", "model.norm.weight", "model.layers.2.self_attn.o_proj.weight",
             "model.layers.2.self_attn.kv_b_proj.weight", "model.layers.3.self_attn.o_proj.weight"]
    grads = dict(zip(names, torch.autograd.grad(loss, [weights[n] for n in names], allow_unused=True)))
    assert all(grads[n] is None for n in names[:2])
    dv = model.cfg.v_head_dim
    o_grad = grads[names[2]]
    assert float(o_grad[:, dv:2 * dv].abs().max()) > 0
    assert float(o_grad[:, :dv].abs().max()) == 0 and float(o_grad[:, 2 * dv:].abs().max()) == 0
    assert float(grads[names[3]].abs().max()) > 0 and grads[names[4]] is None


def check_missing_tensor_rejected():
    config = base_config()
    raw = build_checkpoint(config, 1, "bf16")
    weights = fmt.dequantize_tensors(raw)
    del weights["model.layers.2.self_attn.indexer.k_norm.bias"]
    try:
        ref.Glm5Model(ref.parse_config(config), weights)
    except ValueError:
        return
    raise AssertionError("missing tensor accepted")


CHECKS = [check_e4m3_codec, check_bf16, check_safetensors_roundtrip, check_fp8_blocks,
          check_fp8_checkpoint_files, check_indexshare_schedule, check_tie_rule, check_rope_by_hand,
          check_router_by_hand, check_norms, check_dsa_equals_dense_when_topk_covers_everything,
          check_incremental_equals_full, check_shared_layers_skip_the_indexer,
          check_absorbed_mla_equals_expanded, check_batched_grouped_equals_reference,
          check_vectorized_topk_rule, check_training_taps, check_copy_attention_supervision,
          check_indexer_copy_supervision, check_copy_head_output_supervision,
          check_missing_tensor_rejected]


def main() -> int:
    torch.manual_seed(0)
    failed = 0
    for check in CHECKS:
        try:
            check()
            print(f"ok    {check.__name__}")
        except Exception:  # report every failing check, not just the first
            failed += 1
            print(f"FAIL  {check.__name__}")
            traceback.print_exc()
    print(f"{len(CHECKS) - failed}/{len(CHECKS)} self-checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
