"""File formats of GLM-5 checkpoints, implemented by hand (no safetensors package):
BF16 and FP8 E4M3FN numbers, safetensors files, sharded HF checkpoints, and the block-FP8
dequantisation of spec §2.4."""

from __future__ import annotations

import json
import math
import os
import struct

import numpy as np
import torch


# =====================================================================================
# Number formats
# =====================================================================================

def bf16_bits_to_float(bits: np.ndarray) -> np.ndarray:
    """BF16 is the top half of an IEEE float32: shift the 16 bits up, reinterpret."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def float_to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """Round float32 to BF16, round-to-nearest-even (finite inputs only)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def _e4m3_value(code: int) -> float:
    """Decode one E4M3FN byte: 1 sign, 4 exponent (bias 7), 3 mantissa bits.
    Exponent field 0 = subnormal (m/8 * 2^-6); no infinities; S.1111.111 is NaN."""
    sign = -1.0 if code & 0x80 else 1.0
    exponent = (code >> 3) & 0xF
    mantissa = code & 0x7
    if exponent == 0xF and mantissa == 0x7:
        return math.copysign(math.nan, sign)
    if exponent == 0:
        return sign * (mantissa / 8.0) * 2.0 ** -6
    return sign * (1.0 + mantissa / 8.0) * 2.0 ** (exponent - 7)


E4M3_TABLE = np.array([_e4m3_value(c) for c in range(256)], dtype=np.float64)
E4M3_MAX = 448.0  # code 0x7e


def e4m3_decode(codes: np.ndarray) -> np.ndarray:
    return E4M3_TABLE[codes.astype(np.int64)]


def e4m3_encode(x: np.ndarray) -> np.ndarray:
    """Encode to E4M3FN: round to nearest, ties to even mantissa, saturate to +-448, NaN->0x7f.

    Positive codes 0x00..0x7e have strictly increasing values, so encoding |x| is a search
    in that table: pick the nearer neighbour, and on an exact tie the even code (the code's
    lowest bit is the mantissa's lowest bit)."""
    x = np.asarray(x, dtype=np.float64)
    magnitude = np.abs(x)
    positive = E4M3_TABLE[:0x7F]  # values of codes 0..126
    lower = np.clip(np.searchsorted(positive, magnitude, side="right") - 1, 0, 0x7E)
    upper = np.minimum(lower + 1, 0x7E)
    d_lower = magnitude - positive[lower]
    d_upper = positive[upper] - magnitude
    take_upper = (d_upper < d_lower) | ((d_upper == d_lower) & (lower % 2 == 1))
    code = np.where(take_upper, upper, lower)
    code = np.where(magnitude >= E4M3_MAX, 0x7E, code)  # saturate
    code = code | np.where(np.signbit(x), 0x80, 0)
    code = np.where(np.isnan(x), 0x7F, code)
    return code.astype(np.uint8)


# =====================================================================================
# safetensors (by hand: 8-byte LE header length, JSON header, raw little-endian data)
# =====================================================================================

# dtype name -> numpy storage type of the raw bytes
SAFETENSORS_STORAGE = {
    "F64": np.float64,
    "F32": np.float32,
    "F16": np.float16,
    "BF16": np.uint16,  # raw bits
    "F8_E4M3": np.uint8,  # raw codes
    "I64": np.int64,
    "I32": np.int32,
}


def write_safetensors(path: str, tensors: dict, metadata: dict | None = None) -> None:
    """tensors: name -> (dtype name, numpy array holding the raw storage values)."""
    header = {"__metadata__": metadata or {"format": "pt"}}
    blobs, offset = [], 0
    for name, (dtype, array) in tensors.items():
        raw = np.ascontiguousarray(array, dtype=SAFETENSORS_STORAGE[dtype]).astype(
            np.dtype(SAFETENSORS_STORAGE[dtype]).newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # pad so the data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def read_safetensors(path: str) -> dict:
    """Returns name -> (dtype name, numpy array of raw storage values)."""
    with open(path, "rb") as f:
        data = f.read()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_len].decode("utf-8"))
    base = 8 + header_len
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = info["dtype"]
        if dtype not in SAFETENSORS_STORAGE:
            raise ValueError(f"{path}: tensor {name}: unsupported dtype {dtype}")
        start, end = info["data_offsets"]
        storage = np.dtype(SAFETENSORS_STORAGE[dtype]).newbyteorder("<")
        array = np.frombuffer(data[base + start:base + end], dtype=storage)
        out[name] = (dtype, array.reshape(info["shape"]).astype(storage.newbyteorder("=")))
    return out


def read_checkpoint_files(folder: str) -> dict:
    """All tensors of a HF checkpoint folder: single model.safetensors or an index json."""
    index_path = os.path.join(folder, "model.safetensors.index.json")
    if os.path.exists(index_path):
        with open(index_path) as f:
            weight_map = json.load(f)["weight_map"]
        tensors = {}
        for shard in sorted(set(weight_map.values())):
            for name, value in read_safetensors(os.path.join(folder, shard)).items():
                if weight_map.get(name) != shard:
                    raise ValueError(f"{shard}: tensor {name} not mapped to this shard in the index")
                tensors[name] = value
        missing = set(weight_map) - set(tensors)
        if missing:
            raise ValueError(f"{folder}: index names tensors missing from shards: {sorted(missing)[:5]}")
        return tensors
    return read_safetensors(os.path.join(folder, "model.safetensors"))


def dequantize_tensors(raw: dict, block_size=(128, 128)) -> dict:
    """Raw stored tensors -> float64 torch tensors.

    FP8 (spec §2.4): `X.weight` stored as F8_E4M3 has a float32 sibling `X.weight_scale_inv`
    of shape [ceil(out/128), ceil(in/128)]; W[r,c] = e4m3(W8[r,c]) * scale_inv[r//128, c//128].
    Despite its name the scale is a multiplier. Partial last blocks use the same scale."""
    out = {}
    for name, (dtype, array) in raw.items():
        if name.endswith("_scale_inv"):
            if name[:-len("_scale_inv")] not in raw:
                raise ValueError(f"scale {name} has no weight {name[:-len('_scale_inv')]}")
            continue
        if dtype == "F8_E4M3":
            scale_name = name + "_scale_inv"
            if scale_name not in raw:
                raise ValueError(f"FP8 tensor {name} has no {scale_name}")
            scale_dtype, scale = raw[scale_name]
            rows, cols = array.shape
            br, bc = block_size
            expected = (math.ceil(rows / br), math.ceil(cols / bc))
            if scale.shape != expected or scale_dtype != "F32":
                raise ValueError(f"{scale_name}: expected F32 {list(expected)}, "
                                 f"got {scale_dtype} {list(scale.shape)}")
            full_scale = np.repeat(np.repeat(scale.astype(np.float64), br, axis=0), bc, axis=1)
            values = e4m3_decode(array) * full_scale[:rows, :cols]
        elif dtype == "BF16":
            values = bf16_bits_to_float(array).astype(np.float64)
        elif dtype in ("F64", "F32", "F16"):
            values = array.astype(np.float64)
        else:
            raise ValueError(f"tensor {name}: dtype {dtype} is not a weight type")
        out[name] = torch.from_numpy(np.ascontiguousarray(values))
    return out
