#!/usr/bin/env python3
"""Trains Strata's bundled tiny `glm_moe_dsa` model with the reference forward pass.

    train.py --corpus DIR --tokenizer tokenizer.json --out RUN_DIR [--steps N] [--resume]

The model is tools/reference/glm5_reference.py itself, run in float32 on right-padded
batches with autograd (one implementation for training and for checking). Recipe:

  * loss: next-token cross-entropy on the assistant completion only (chat_render.py), plus
    MTP_WEIGHT x the MTP layer's cross-entropy (row p predicts token p+2, spec §4);
  * DSA as DeepSeek-V3.2 trains it: for the first --dense-steps the main attention is dense
    and each indexer learns by KL divergence to its layer's attention distribution (summed
    over heads); afterwards attention uses the indexer's TopK mask and the indexer keeps a
    KL loss on the selected keys. The indexer's inputs are detached, so it learns only from
    the KL and the main model only from the language-model losses (glm5_reference.TrainingTaps);
  * routing is sigmoid noaux_tc; e_score_correction_bias is not trained by gradients but
    moved by the aux-loss-free rule after every step: bias += γ * sign(mean load - load)
    (γ = --bias-rate);
  * AdamW (decay on matrices), linear warm-up then cosine decay to 10 %, gradient clipping
    (main model and indexers separately), a fixed seed, deterministic batches.

RUN_DIR receives config.json (the model's HF config), train_log.txt (one line per logging
interval), checkpoint.pt (every --checkpoint-minutes, on SIGINT/SIGTERM and at the end) and,
when all steps are done, final.pt. --resume continues from checkpoint.pt exactly: the batch
order is a pure function of (seed, epoch) and the checkpoint holds weights, optimizer
state and the position in the data.
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
import math
import signal
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import glm5_reference as ref  # noqa: E402
from make_checkpoint import base_config  # noqa: E402
from chat_render import ChatRenderer  # noqa: E402
from tokenizer_util import TinyTokenizer  # noqa: E402

MTP_WEIGHT = 0.3

# The tiny model: every glm_moe_dsa feature on (MLA, DSA with a small index_topk, IndexShare,
# 32 routed experts top-4 + a shared expert, a dense first layer, an MTP layer).
TINY_DIMS = {
    "hidden_size": 256,
    "num_hidden_layers": 5,
    "first_k_dense_replace": 1,
    "mlp_layer_types": ["dense", "sparse", "sparse", "sparse", "sparse"],
    "num_attention_heads": 8,
    "num_key_value_heads": 8,
    "q_lora_rank": 128,
    "kv_lora_rank": 64,
    "qk_nope_head_dim": 32,
    "qk_rope_head_dim": 16,
    "v_head_dim": 32,
    "head_dim": 16,  # meaningless in glm_moe_dsa (spec §7.7); HF sets it to qk_rope_head_dim
    "index_n_heads": 8,
    "index_head_dim": 32,
    "index_topk": 32,
    # IndexShare: layers 0, 2, 4 run their indexer, 1 and 3 reuse the previous TopK
    "index_topk_freq": 2,
    "index_skip_topk_offset": 1,
    "indexer_types": ["full", "shared", "full", "shared", "full"],
    "n_routed_experts": 32,
    "num_experts_per_tok": 4,
    "n_shared_experts": 1,
    "moe_intermediate_size": 48,
    "intermediate_size": 640,
    "n_group": 1,
    "topk_group": 1,
    "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
    "max_position_embeddings": 1024,
}


def model_config(tokenizer: TinyTokenizer) -> dict:
    eos = tokenizer.eos_ids
    return base_config(**TINY_DIMS, vocab_size=tokenizer.vocab_size, eos_token_id=eos,
                       pad_token_id=eos[0], dtype="bfloat16")


# ------------------------------------------------------------------------------ weights

def init_weights(cfg: ref.Glm5Config, seed: int) -> dict:
    """GPT-2 style: N(0, 0.02) matrices, output projections scaled by 1/sqrt(2 * layers),
    norm weights 1, LayerNorm bias 0, correction bias 0 (it is never a gradient leaf)."""
    gen = torch.Generator().manual_seed(seed)
    n_blocks = cfg.num_hidden_layers + 1
    weights = {}
    for name, shape in ref.expected_tensor_shapes(cfg).items():
        if name.endswith("e_score_correction_bias"):
            weights[name] = torch.zeros(shape)
            continue
        if len(shape) == 1:
            t = torch.zeros(shape) if name.endswith(".bias") else torch.ones(shape)
        else:
            std = 0.02
            if name.endswith(("o_proj.weight", "down_proj.weight")):
                std /= math.sqrt(2 * n_blocks)
            t = torch.randn(shape, generator=gen) * std
        weights[name] = t.requires_grad_(True)
    return weights


def param_groups(weights: dict, weight_decay: float) -> list:
    main_decay, main_plain, indexer = [], [], []
    for name, t in weights.items():
        if not t.requires_grad:
            continue
        if ".indexer." in name:
            indexer.append(t)
        elif t.dim() == 2:
            main_decay.append(t)
        else:
            main_plain.append(t)
    return [{"params": main_decay, "weight_decay": weight_decay, "name": "main"},
            {"params": main_plain, "weight_decay": 0.0, "name": "main"},
            {"params": indexer, "weight_decay": 0.0, "name": "indexer"}]


# ------------------------------------------------------------------------------ data

def load_examples(corpus_dir: str, tokenizer: TinyTokenizer, cache_path: str):
    """[(ids int32 array, prompt length)] for every training conversation, cached."""
    if os.path.exists(cache_path):
        data = np.load(cache_path)
        ids, offsets, prompt_lens = data["ids"], data["offsets"], data["prompt_lens"]
    else:
        renderer = ChatRenderer()
        chunks, prompt_lens = [], []
        with open(os.path.join(corpus_dir, "train.jsonl"), encoding="utf-8") as f:
            for n, line in enumerate(f):
                row = json.loads(line)
                prompt, completion = renderer.training_pair(row["messages"], row["enable_thinking"])
                # Both pieces meet at a special token, so encoding them apart equals encoding
                # the whole text, as the engine sees it; checked on every 500th row.
                p, c = tokenizer.encode(prompt), tokenizer.encode(completion)
                if n % 500 == 0 and tokenizer.encode(prompt + completion) != p + c:
                    raise SystemExit(f"train.py: row {n}: prompt and completion do not tokenize apart")
                chunks.append(np.array(p + c, dtype=np.int32))
                prompt_lens.append(len(p))
        offsets = np.cumsum([0] + [len(c) for c in chunks])
        ids, prompt_lens = np.concatenate(chunks), np.array(prompt_lens, dtype=np.int32)
        np.savez(cache_path + ".tmp.npz", ids=ids, offsets=offsets, prompt_lens=prompt_lens)
        os.replace(cache_path + ".tmp.npz", cache_path)
    return [(ids[offsets[k]:offsets[k + 1]], int(prompt_lens[k])) for k in range(len(prompt_lens))]


def epoch_batches(lengths: np.ndarray, epoch: int, seed: int, max_tokens: int) -> list:
    """Batches of example indices for one epoch: shuffled, bucketed by length inside chunks
    of 512 so that padding stays small, at most max_tokens padded tokens each, batch order
    shuffled. A pure function of (seed, epoch)."""
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(len(lengths))
    batches = []
    for start in range(0, len(order), 512):
        chunk = sorted(order[start:start + 512], key=lambda k: (lengths[k], k))
        batch, longest = [], 0
        for k in chunk:
            longest_if_added = max(longest, lengths[k])
            if batch and longest_if_added * (len(batch) + 1) > max_tokens:
                batches.append(batch)
                batch, longest_if_added = [], lengths[k]
            batch.append(int(k))
            longest = longest_if_added
        if batch:
            batches.append(batch)
    rng.shuffle(batches)
    return batches


def collate(examples, pad_id: int):
    """tokens [B, S], valid [B, S], and loss masks: next[b, p] when token p+1 is a completion
    token, skip[b, p] when token p+2 is (the MTP target)."""
    S = max(len(ids) for ids, _ in examples)
    tokens = np.full((len(examples), S), pad_id, dtype=np.int64)
    valid = np.zeros((len(examples), S), dtype=bool)
    completion = np.zeros((len(examples), S), dtype=bool)
    for b, (ids, prompt_len) in enumerate(examples):
        tokens[b, :len(ids)] = ids
        valid[b, :len(ids)] = True
        completion[b, prompt_len:len(ids)] = True
    next_mask = np.zeros_like(completion)
    next_mask[:, :-1] = completion[:, 1:]
    skip_mask = np.zeros_like(completion)
    skip_mask[:, :-2] = completion[:, 2:]
    return (torch.from_numpy(tokens), torch.from_numpy(valid), torch.from_numpy(next_mask),
            torch.from_numpy(skip_mask))


def match_classes(tokenizer_path: str, vocab_size: int) -> torch.Tensor:
    """[vocab] id of each token's text without its leading space ('Ġ') where that text is a
    token too, else its own id: a name written after a space in the question and after a
    quote in the answer (' L' 'e' 'ah' / 'L' 'e' 'ah') then counts as the same context."""
    with open(tokenizer_path, encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    classes = torch.arange(vocab_size)
    for text, i in vocab.items():
        if text.startswith("\u0120") and text[1:] in vocab and i < vocab_size:
            classes[i] = vocab[text[1:]]
    return classes


def copy_targets(tokens: torch.Tensor, next_mask: torch.Tensor, classes: torch.Tensor,
                 max_match: int = 8, with_keyed: bool = False):
    """Where an induction head should look: [B, S, T] bool, for each completion query p the
    earlier keys j holding the token that comes next (token j == token p+1) whose preceding
    tokens match the tokens ending at p the longest (at least one token: j-1 matches p;
    tokens match when their match_classes do). The target of prompt-lookup decoding, learned
    as an attention pattern: every copy in the corpus (a looked-up value, a repeated list, a
    name from the question) has one. With with_keyed, also [B, S] bool: the queries with
    targets whose last two tokens also precede some other token earlier (the value after
    `pini: ` among a list's lines): copies that only a longer context, the key, decides."""
    B, S = tokens.shape
    context = classes[tokens]
    nxt = torch.full_like(tokens, -1)
    nxt[:, :-1] = tokens[:, 1:]
    pos = torch.arange(S)
    earlier = (pos[:, None] >= pos[None, :]) & (pos[None, :] >= 1)
    cand = tokens[:, None, :] == nxt[:, :, None]
    cand &= earlier
    cand &= next_mask[:, :, None]
    alive = torch.ones_like(cand)
    length = torch.zeros(cand.shape, dtype=torch.int16)
    for k in range(max_match):
        current = torch.full_like(tokens, -2)  # token p-k
        current[:, k:] = context[:, :S - k]
        before = torch.full_like(tokens, -3)  # token j-1-k
        before[:, k + 1:] = context[:, :S - k - 1]
        alive &= current[:, :, None] == before[:, None, :]
        length += alive
    others = ((length >= 2) & earlier & ~cand).any(-1) & next_mask
    length = length * cand
    best = length.amax(-1, keepdim=True)
    targets = cand & (length == best) & (best >= 1)
    return (targets, others & targets.any(-1)) if with_keyed else targets


def line_breaks(tokenizer_path: str, vocab_size: int) -> torch.Tensor:
    """[vocab] bool: tokens that end a line (their text holds a newline, 'Ċ') and the special
    tokens (a role or <think> starts a new line of its own)."""
    with open(tokenizer_path, encoding="utf-8") as f:
        spec = json.load(f)
    breaks = torch.zeros(vocab_size, dtype=torch.bool)
    for text, i in spec["model"]["vocab"].items():
        if "\u010a" in text and i < vocab_size:
            breaks[i] = True
    for token in spec["added_tokens"]:
        if token["id"] < vocab_size:
            breaks[token["id"]] = True
    return breaks


def line_targets(tokens: torch.Tensor, breaks: torch.Tensor, n: int) -> torch.Tensor:
    """[B, S, T] bool: for each position the n-th token (1 = first) of its line, when that is
    not after the position: what a head must read to carry a line's key (`pini` of
    `pini: 91`) to every later token of the line."""
    B, S = tokens.shape
    pos = torch.arange(S).expand(B, S)
    last_break = torch.cummax(torch.where(breaks[tokens], pos, torch.full_like(pos, -1)), dim=1).values
    target = last_break + n
    ok = target <= pos
    return F.one_hot(target.clamp(0, S - 1), S).bool() & ok[:, :, None]


# ------------------------------------------------------------------------------ one step

def train_step(model: ref.Glm5Model, batch, dense: bool, copy_heads: dict | None = None,
               previous_heads: dict | None = None, copy_weight: float = 0.0,
               classes: torch.Tensor | None = None, line_heads: dict | None = None,
               breaks: torch.Tensor | None = None, index_copy_layers: set | None = None,
               index_copy_weight: float = 0.0, copy_logit_weight: float = 0.0,
               copy_logit_keyed: bool = False):
    """Forward + losses. Returns (total loss, metrics, routed expert ids per MoE layer, the
    real-token mask of each of those layers)."""
    tokens, valid, next_mask, skip_mask = batch
    cfg = model.cfg
    taps = ref.TrainingTaps(query_mask=valid)
    if copy_heads:
        keyed_only = copy_logit_weight > 0 and copy_logit_keyed
        found = copy_targets(tokens, next_mask, classes, with_keyed=keyed_only)
        taps.copy_targets, keyed = found if keyed_only else (found, None)
        taps.copy_heads = copy_heads
        taps.previous_token_heads = previous_heads or {}
        taps.index_copy_layers = index_copy_layers or set()
        if copy_logit_weight > 0:
            taps.copy_next_tokens = torch.cat([tokens[:, 1:], tokens[:, -1:]], dim=1)
            taps.copy_logit_rows = keyed
        for layer, heads in (line_heads or {}).items():
            taps.head_targets[layer] = [(h, line_targets(tokens, breaks, n)) for h, n in heads]
    # Logits only where a loss is taken (next_mask is False in the last column, so these are
    # the rows of logits[:, :-1][next_mask[:, :-1]], in the same order).
    hidden, picked = model.forward(tokens, ref.ModelCache(cfg), dsa=not dense, taps=taps,
                                   logit_rows=next_mask)
    targets = tokens[:, 1:][next_mask[:, :-1]]
    lm_loss = F.cross_entropy(picked, targets)

    mtp_taps = ref.TrainingTaps(query_mask=valid[:, 1:])
    mtp_rows = skip_mask[:, :-1]  # the last row has no token p+2: skip_mask is False there
    # Row p: the hidden state at p and token p+1 predict token p+2.
    mtp_picked = model.mtp_forward(tokens[:, 1:], hidden[:, :-1], ref.ModelCache(cfg), dsa=not dense,
                                   taps=mtp_taps, logit_rows=mtp_rows)
    mtp_targets = tokens[:, 2:][skip_mask[:, :-2]]
    mtp_loss = F.cross_entropy(mtp_picked, mtp_targets)
    indexer_kl = torch.stack(taps.indexer_kl + mtp_taps.indexer_kl).sum()
    total = lm_loss + MTP_WEIGHT * mtp_loss + indexer_kl
    with torch.no_grad():
        accuracy = (picked.argmax(-1) == targets).float().mean()
        mtp_accuracy = (mtp_picked.argmax(-1) == mtp_targets).float().mean()
    metrics = {"loss": float(lm_loss), "acc": float(accuracy), "mtp_loss": float(mtp_loss),
               "mtp_acc": float(mtp_accuracy), "indexer_kl": float(indexer_kl)}
    if copy_heads:
        copy_loss = torch.stack(taps.copy_losses).mean()
        total = total + copy_weight * copy_loss
        with torch.no_grad():  # next-token accuracy where the next token is a copy
            copies = taps.copy_targets.any(-1)[:, :-1][next_mask[:, :-1]]
            hits = (picked.argmax(-1) == targets)[copies]
        metrics["copy_loss"] = float(copy_loss)
        metrics["copy_acc"] = float(hits.float().mean()) if hits.numel() else 0.0
    if taps.copy_logit_losses:
        copy_logit_loss = torch.stack(taps.copy_logit_losses).mean()
        total = total + copy_logit_weight * copy_logit_loss
        metrics["copy_logit_loss"] = float(copy_logit_loss)
    if taps.index_copy_losses:
        index_copy_loss = torch.stack(taps.index_copy_losses).mean()
        total = total + index_copy_weight * index_copy_loss
        metrics["index_copy_loss"] = float(index_copy_loss)
        metrics["index_kept"] = float(sum(k for k, _ in taps.index_copy_kept))
        metrics["index_queries"] = float(sum(n for _, n in taps.index_copy_kept))
    expert_ids = dict(taps.expert_ids)
    expert_ids.update(mtp_taps.expert_ids)
    masks = {i: (valid if i < cfg.num_hidden_layers else valid[:, 1:]) for i in expert_ids}
    return total, metrics, expert_ids, masks


def balance_router_biases(model: ref.Glm5Model, expert_ids: dict, masks: dict, rate: float) -> dict:
    """Aux-loss-free balancing (DeepSeek-V3): move each expert's selection bias towards the
    mean load of this step. Returns the loads {layer: tokens per expert}."""
    loads = {}
    with torch.no_grad():
        for i, ids in expert_ids.items():
            routed = ids[masks[i]].flatten()
            load = torch.bincount(routed, minlength=model.cfg.n_routed_experts).float()
            bias = model.w(f"model.layers.{i}.mlp.gate.e_score_correction_bias")
            bias += rate * torch.sign(load.mean() - load)
            loads[i] = load
    return loads


def learning_rate(step: int, args) -> float:
    if step < args.warmup_steps:
        return args.lr * (step + 1) / args.warmup_steps
    progress = (step - args.warmup_steps) / max(1, args.steps - args.warmup_steps)
    return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


# ------------------------------------------------------------------------------ checkpoints

def save_checkpoint(path: str, model, optimizer, state: dict, args) -> None:
    payload = {"weights": {n: t.detach().clone() for n, t in model.weights.items()},
               "optimizer": optimizer.state_dict(), "state": state, "args": vars(args)}
    torch.save(payload, path + ".tmp")
    os.replace(path + ".tmp", path)


class StopFlag:
    """SIGINT/SIGTERM end the run after the current step, with a checkpoint."""

    def __init__(self):
        self.signal = None
        signal.signal(signal.SIGINT, self._set)
        signal.signal(signal.SIGTERM, self._set)

    def _set(self, signum, _frame):
        self.signal = signum


# ------------------------------------------------------------------------------ main

RESUMABLE_ARGS = ("seed", "steps", "lr", "warmup_steps", "dense_steps", "batch_tokens", "weight_decay",
                  "clip", "bias_rate", "copy_heads", "previous_heads", "copy_weight", "line_heads",
                  "indexer_copy_layers", "indexer_copy_weight", "copy_logit_weight",
                  "copy_logit_keyed")


def parse_heads(option: str, text: str | None, cfg: ref.Glm5Config, offsets: bool = False) -> dict:
    """'2.0,3.1' -> {2: [0], 3: [1]} (main-model layer.head); with offsets, 'L.H@K' (K tokens
    back, default 1) -> {L: [(H, K)]}."""
    heads = {}
    for item in (text or "").split(","):
        if not item:
            continue
        try:
            head_text, _, back_text = item.partition("@")
            if back_text and not offsets:
                raise ValueError
            layer, head = (int(v) for v in head_text.split("."))
            back = int(back_text or 1)
        except ValueError:
            sys.exit(f"train.py: {option}: '{item}' is not LAYER.HEAD" + ("[@K]" if offsets else ""))
        if not (0 <= layer < cfg.num_hidden_layers and 0 <= head < cfg.num_attention_heads) or back < 1:
            sys.exit(f"train.py: {option}: no head {item} in this model")
        heads.setdefault(layer, []).append((head, back) if offsets else head)
    return heads


def parse_layers(option: str, text: str | None, cfg: ref.Glm5Config) -> set:
    """'2,4' -> {2, 4}: main-model layers that run their own indexer."""
    layers = set()
    for item in (text or "").split(","):
        if not item:
            continue
        if not item.isdigit() or not cfg.layer_has_indexer(int(item)) or int(item) >= cfg.num_hidden_layers:
            sys.exit(f"train.py: {option}: '{item}' is not a layer with its own indexer")
        layers.add(int(item))
    return layers


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, help="make_corpus.py output folder")
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--out", required=True, help="run folder")
    ap.add_argument("--steps", type=int, default=4000)
    ap.add_argument("--dense-steps", type=int, default=400, help="indexer warm-up with dense attention")
    ap.add_argument("--warmup-steps", type=int, default=100)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--bias-rate", type=float, default=1e-3,
                    help="γ of the aux-loss-free router balancing (DeepSeek-V3: 1e-3)")
    ap.add_argument("--batch-tokens", type=int, default=3072, help="padded tokens per step")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--checkpoint-minutes", type=float, default=10.0)
    ap.add_argument("--stop-after-steps", type=int, default=None,
                    help="end this invocation (with a checkpoint) after this many steps; for testing --resume")
    ap.add_argument("--copy-heads", default=None, metavar="L.H,...",
                    help="supervise these attention heads as induction heads (copy_targets): a "
                    "dense signal for the copying the lookup task needs")
    ap.add_argument("--previous-heads", default=None, metavar="L.H[@K],...",
                    help="with --copy-heads: teach these heads to read the token K (default 1) "
                    "before the query (the previous-token heads an induction head composes with; "
                    "several K give the copy heads a longer context to match)")
    ap.add_argument("--line-heads", default=None, metavar="L.H[@N],...",
                    help="with --copy-heads: teach these heads to read the N-th (default first) "
                    "token of the current line, so a line's later tokens carry its key")
    ap.add_argument("--copy-weight", type=float, default=0.5, help="weight of those attention losses")
    ap.add_argument("--indexer-copy-layers", default=None, metavar="L,...",
                    help="with --copy-heads: teach these layers' indexers to rank the copy targets "
                    "first too, so the DSA TopK keeps what the copy heads read (it learns from "
                    "its KL otherwise, where one head's targets weigh 1/8 of the sum)")
    ap.add_argument("--copy-logit-weight", type=float, default=0.0,
                    help="with --copy-heads: weight of a cross-entropy on each copy head's own "
                    "output (through o_proj, the final norm and lm_head) against the token it "
                    "should copy: attention supervision teaches where to look, this what to write")
    ap.add_argument("--copy-logit-keyed", action="store_true",
                    help="score only the copies the last two tokens do not decide (a list "
                    "line's value): averaged over every copy, the easy ones swamp them")
    ap.add_argument("--indexer-copy-weight", type=float, default=1.0,
                    help="weight of the indexers' copy loss")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--init-from", help="start from an exported model folder (same config and "
                    "tokenizer, e.g. resources/models/strata-tiny) instead of random weights: "
                    "a new schedule that continues an earlier run's training")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    ckpt_path = os.path.join(args.out, "checkpoint.pt")
    log_path = os.path.join(args.out, "train_log.txt")
    tokenizer = TinyTokenizer(args.tokenizer)

    resumed = None
    if args.resume:
        if not os.path.exists(ckpt_path):
            sys.exit(f"train.py: --resume but {ckpt_path} does not exist")
        resumed = torch.load(ckpt_path)
        for key in RESUMABLE_ARGS:  # the run's schedule and data order come from the checkpoint
            setattr(args, key, resumed["args"].get(key, getattr(args, key)))

    config = model_config(tokenizer)
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    cfg = ref.parse_config(config)
    copy_heads = parse_heads("--copy-heads", args.copy_heads, cfg)
    previous_heads = parse_heads("--previous-heads", args.previous_heads, cfg, offsets=True)
    line_heads = parse_heads("--line-heads", args.line_heads, cfg, offsets=True)
    index_copy_layers = parse_layers("--indexer-copy-layers", args.indexer_copy_layers, cfg)
    if index_copy_layers and not copy_heads:
        sys.exit("train.py: --indexer-copy-layers needs --copy-heads (they share the copy targets)")
    classes = match_classes(args.tokenizer, cfg.vocab_size)
    breaks = line_breaks(args.tokenizer, cfg.vocab_size)
    weights = init_weights(cfg, args.seed)
    if args.init_from and not resumed:
        start = ref.dequantize_tensors(ref.read_checkpoint_files(args.init_from), cfg.weight_block_size)
        with torch.no_grad():
            for name, t in weights.items():
                if name not in start or list(start[name].shape) != list(t.shape):
                    sys.exit(f"train.py: --init-from {args.init_from}: tensor {name} is missing or "
                             f"has another shape (the model config must match this run's)")
                t.copy_(start[name].to(t.dtype))
    if resumed:
        with torch.no_grad():
            for name, t in weights.items():
                t.copy_(resumed["weights"][name])
    model = ref.Glm5Model(cfg, weights, torch.float32, expert_dispatch="grouped")
    optimizer = torch.optim.AdamW(param_groups(weights, args.weight_decay), lr=args.lr,
                                  betas=(0.9, 0.95), eps=1e-8)
    if resumed:
        optimizer.load_state_dict(resumed["optimizer"])
    state = dict(resumed["state"]) if resumed else {"step": 0, "epoch": 0, "batch_in_epoch": 0,
                                                      "train_seconds": 0.0, "tokens": 0}

    examples = load_examples(args.corpus, tokenizer, os.path.join(args.out, "tokens.npz"))
    lengths = np.array([len(ids) for ids, _ in examples])
    n_params = sum(t.numel() for t in weights.values())
    log = open(log_path, "a", buffering=1)

    def emit(line: str) -> None:
        print(line, flush=True)
        log.write(line + "\n")

    emit(f"# {'resume' if resumed else 'start'} {time.strftime('%Y-%m-%d %H:%M:%S')}: {n_params} parameters, "
         f"{len(examples)} conversations, {int(lengths.sum())} tokens per epoch, args {json.dumps(vars(args))}")

    stop = StopFlag()
    batches = epoch_batches(lengths, state["epoch"], args.seed, args.batch_tokens)
    last_checkpoint = time.time()
    window = {"time": 0.0, "tokens": 0, "padded": 0, "n": 0}
    sums = {}
    window_loads = {}  # MoE layer -> tokens per expert over the logging window
    steps_this_run = 0
    while state["step"] < args.steps:
        if state["batch_in_epoch"] >= len(batches):
            state["epoch"] += 1
            state["batch_in_epoch"] = 0
            batches = epoch_batches(lengths, state["epoch"], args.seed, args.batch_tokens)
        batch_rows = [examples[k] for k in batches[state["batch_in_epoch"]]]
        batch = collate(batch_rows, config["pad_token_id"])
        step = state["step"]
        dense = step < args.dense_steps
        lr = learning_rate(step, args)
        for group in optimizer.param_groups:
            group["lr"] = lr

        started = time.time()
        total, metrics, expert_ids, masks = train_step(model, batch, dense, copy_heads, previous_heads,
                                                       args.copy_weight, classes, line_heads, breaks,
                                                       index_copy_layers, args.indexer_copy_weight,
                                                       args.copy_logit_weight, args.copy_logit_keyed)
        optimizer.zero_grad(set_to_none=True)
        total.backward()
        for name in ("main", "indexer"):
            params = [p for g in optimizer.param_groups if g["name"] == name for p in g["params"]]
            metrics[f"gnorm_{name}"] = float(torch.nn.utils.clip_grad_norm_(params, args.clip))
        optimizer.step()
        for i, load in balance_router_biases(model, expert_ids, masks, args.bias_rate).items():
            window_loads[i] = window_loads.get(i, 0) + load
        elapsed = time.time() - started

        real_tokens = int(batch[1].sum())
        state["step"] += 1
        state["batch_in_epoch"] += 1
        state["train_seconds"] += elapsed
        state["tokens"] += real_tokens
        steps_this_run += 1
        window["time"] += elapsed
        window["tokens"] += real_tokens
        window["padded"] += batch[0].numel()
        window["n"] += 1
        for k, v in metrics.items():
            sums[k] = sums.get(k, 0.0) + v

        if state["step"] % args.log_every == 0 or state["step"] == args.steps:
            n = window["n"]
            avg = {k: v / n for k, v in sums.items()}
            # expert balance over the window (single batches are bucketed by length, so often
            # one task): the worst layer's busiest expert relative to the mean
            load_max = max(float(load.max() / load.mean()) for load in window_loads.values())
            emit(f"step {state['step']} phase {'dense' if dense else 'sparse'} lr {lr:.2e} "
                 f"loss {avg['loss']:.4f} acc {avg['acc']:.4f} mtp_loss {avg['mtp_loss']:.4f} "
                 f"mtp_acc {avg['mtp_acc']:.4f} indexer_kl {avg['indexer_kl']:.4f} "
                 f"gnorm {avg['gnorm_main']:.2f}/{avg['gnorm_indexer']:.2f} load_max {load_max:.2f} "
                 + (f"copy_loss {avg['copy_loss']:.4f} copy_acc {avg['copy_acc']:.4f} " if copy_heads else "")
                 + (f"copy_logit_loss {avg['copy_logit_loss']:.4f} " if args.copy_logit_weight > 0 else "")
                 + (f"index_copy_loss {avg['index_copy_loss']:.4f} index_kept "
                    f"{sums['index_kept'] / max(sums['index_queries'], 1):.3f} " if index_copy_layers else "") +
                 f"tok/s {window['tokens'] / window['time']:.0f} padded_tok/s {window['padded'] / window['time']:.0f} "
                 f"epoch {state['epoch']} train_time {state['train_seconds'] / 60:.1f}min")
            window = {"time": 0.0, "tokens": 0, "padded": 0, "n": 0}
            sums = {}
            window_loads = {}

        finished = state["step"] >= args.steps
        interrupted = stop.signal is not None or (args.stop_after_steps and steps_this_run >= args.stop_after_steps)
        if finished or interrupted or time.time() - last_checkpoint > args.checkpoint_minutes * 60:
            save_checkpoint(ckpt_path, model, optimizer, state, args)
            last_checkpoint = time.time()
            if interrupted and not finished:
                emit(f"# stopped at step {state['step']} ({'signal ' + str(stop.signal) if stop.signal else '--stop-after-steps'}); "
                     f"continue with --resume")
                sys.exit(3)

    torch.save({"weights": {n: t.detach().clone() for n, t in model.weights.items()}, "config": config,
                "state": state}, os.path.join(args.out, "final.pt"))
    emit(f"# done {time.strftime('%Y-%m-%d %H:%M:%S')}: {state['step']} steps, {state['tokens']} tokens, "
         f"{state['train_seconds'] / 60:.1f} min of training")


if __name__ == "__main__":
    main()
