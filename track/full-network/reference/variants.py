"""An independent, configurable formulation of the ViT forward pass, and the catalogue
of classic mistakes expressed as configurations of it.

With the default `Variant()` this is a second, independently written correct
implementation (one image at a time: patches cut by slicing the image, attention as a
loop over heads with column slices), used to cross-check reference/solution.py. Each
entry of MISTAKES switches exactly one convention to the classic wrong choice, and each
convention belongs to one step of the track (the catalogue in problem.py says which step
to revisit); the grader's diagnosis compares a submission's outputs with these, and the
tolerance evidence shows each one is caught.

`evaluate` has the calling convention of the entry point plus two keywords: `v`, the
configuration, and `arithmetic`, a function of the dtype giving the NumPy-like namespace
to compute in (default NumPy itself, float64 or float32 as a learner's program computes;
the grader passes portable_arithmetic's fixed-order arithmetic to store the mistakes'
outputs as the same bytes on every CPU). Only `asarray`, `stack`, `concatenate`, `sqrt`,
`exp`, `tanh` and `erf` are used from the namespace; everything else is the arrays' own
indexing, reshape, reductions and arithmetic. Every mistake keeps the output's shape
(B, num_classes).

This file is part of the judge bundle only: it is excluded from the practice archive and
unreadable to submissions, because Variant() is a correct solution.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

import numpy as np



def _numpy_erf(t: np.ndarray) -> np.ndarray:
    # NumPy has no erf ufunc: math.erf elementwise, as the root's variants compute it.
    return np.vectorize(math.erf, otypes=[t.dtype])(t)


NUMPY = SimpleNamespace(
    asarray=np.asarray,
    stack=np.stack,
    concatenate=np.concatenate,
    sqrt=np.sqrt,
    exp=np.exp,
    tanh=np.tanh,
    erf=_numpy_erf,
)
KEYS = ("Wq", "Wk", "Wv", "Wo", "W1", "W2")


@dataclass(frozen=True)
class Variant:
    patches: str = "squares"  # step 1: squares | strips (reshape to (N, p*p*C) without the transpose)
    bias: str = "before"  # step 1: before (the class token) | skipped | after (to every token, class token too)
    cls_position: str = "first"  # step 2: first | last (appended after the patches)
    position_table: bool = True  # step 3: False, pos_embed never added
    # step 3, which table row token t gets: all (row t) | skip_class (row t, none for the
    # class token t = 0), as track/position-embedding's variants
    position_rows: str = "all"
    norm: str = "pre"  # step 4: pre | post (LayerNorm after each residual sum)
    blocks: str = "forward"  # step 4: forward | reverse (the last block first) | first_only
    gelu: str = "tanh"  # step 4: tanh (the statement's form) | erf (the exact GELU)
    scale: str = "head"  # step 4: head, scores * 1/sqrt(d_h) | model, scores * 1/sqrt(D)
    ddof: int = 0  # steps 4 and 5: 0, population variance in every LayerNorm | 1, sample variance
    pool: str = "cls"  # step 5: cls (row 0) | mean (mean over the tokens) | last (the last row)
    final_norm: bool = True  # step 5: False, the final LayerNorm skipped
    dtype: str = "float64"  # float64 | float32


def _layer_norm(t: Any, v: Variant, xp: Any) -> Any:
    mu = t.mean(axis=-1, keepdims=True)
    d = t - mu
    if v.ddof:
        var = (d * d).sum(axis=-1, keepdims=True) / (t.shape[-1] - v.ddof)
    else:
        var = (d * d).mean(axis=-1, keepdims=True)
    return d / xp.sqrt(var + 1e-6)


def _gelu(t: Any, v: Variant, xp: Any) -> Any:
    if v.gelu == "erf":
        return 0.5 * t * (1.0 + xp.erf(t / math.sqrt(2.0)))
    return 0.5 * t * (1.0 + xp.tanh(math.sqrt(2.0 / math.pi) * (t + 0.044715 * (t * t * t))))


def _attention(z: Any, heads: int, w: dict[str, Any], v: Variant, xp: Any) -> Any:
    """Multi-head self-attention of one sequence (T, D)."""
    D = z.shape[-1]
    dh = D // heads
    scale = 1.0 / math.sqrt(D if v.scale == "model" else dh)
    q, k, val = z @ w["Wq"], z @ w["Wk"], z @ w["Wv"]
    outs = []
    for i in range(heads):
        cols = slice(i * dh, (i + 1) * dh)
        s = (q[:, cols] @ k[:, cols].T) * scale
        e = xp.exp(s - s.max(axis=-1, keepdims=True))
        outs.append((e / e.sum(axis=-1, keepdims=True)) @ val[:, cols])
    return xp.concatenate(outs, axis=-1) @ w["Wo"]


def _block(z: Any, heads: int, w: dict[str, Any], v: Variant, xp: Any) -> Any:
    if v.norm == "post":
        y = _layer_norm(z + _attention(z, heads, w, v, xp), v, xp)
        return _layer_norm(y + _gelu(y @ w["W1"], v, xp) @ w["W2"], v, xp)
    y = z + _attention(_layer_norm(z, v, xp), heads, w, v, xp)
    return y + _gelu(_layer_norm(y, v, xp) @ w["W1"], v, xp) @ w["W2"]


def _patches(img: Any, p: int, v: Variant, xp: Any) -> Any:
    """One image (H, W, C) -> (N, p*p*C)."""
    H, W, C = img.shape
    if v.patches == "strips":
        return img.reshape((H // p) * (W // p), p * p * C)
    rows = [img[i : i + p, j : j + p, :].reshape(1, p * p * C) for i in range(0, H, p) for j in range(0, W, p)]
    return xp.concatenate(rows, axis=0)


def _image(img: Any, p: int, heads: int, prm: dict[str, Any], blocks: list[dict[str, Any]], v: Variant, xp: Any) -> Any:
    """The logits (1, num_classes) of one image under the variant."""
    tokens = _patches(img, p, v, xp) @ prm["W_patch"]
    if v.bias == "before":
        tokens = tokens + prm["patch_bias"]
    parts = [prm["cls_token"], tokens] if v.cls_position == "first" else [tokens, prm["cls_token"]]
    z = xp.concatenate(parts, axis=0)
    if v.bias == "after":
        z = z + prm["patch_bias"]
    if v.position_table and v.position_rows == "skip_class":
        z = xp.concatenate([z[0:1], z[1:] + prm["pos_embed"][1:]], axis=0)
    elif v.position_table:
        z = z + prm["pos_embed"]
    order = {"forward": blocks, "reverse": blocks[::-1], "first_only": blocks[:1]}[v.blocks]
    for w in order:
        z = _block(z, heads, w, v, xp)
    if v.pool == "cls":
        row = z[0:1]
    elif v.pool == "last":
        row = z[z.shape[0] - 1 :]
    else:
        row = z.mean(axis=0, keepdims=True)
    return (_layer_norm(row, v, xp) if v.final_norm else row) @ prm["W_head"]


def evaluate(
    image: Any,
    patch_size: Any,
    num_heads: Any,
    W_patch: Any,
    patch_bias: Any,
    cls_token: Any,
    pos_embed: Any,
    encoder_weights: Any,
    W_head: Any,
    v: Variant = Variant(),
    arithmetic: Callable[[type], Any] | None = None,
) -> np.ndarray:
    """The logits (B, num_classes) under variant `v`, as float64."""
    dt = np.float32 if v.dtype == "float32" else np.float64
    xp = NUMPY if arithmetic is None else arithmetic(dt)
    names = ("W_patch", "patch_bias", "cls_token", "pos_embed", "W_head")
    prm = {n: xp.asarray(a, dtype=dt) for n, a in zip(names, (W_patch, patch_bias, cls_token, pos_embed, W_head))}
    blocks = [{k: xp.asarray(w[k], dtype=dt) for k in KEYS} for w in encoder_weights]
    images = xp.asarray(image, dtype=dt)
    p, heads = int(patch_size), int(num_heads)
    with np.errstate(over="ignore", invalid="ignore"):
        rows = [_image(images[b], p, heads, prm, blocks, v, xp) for b in range(images.shape[0])]
        out = rows[0] if len(rows) == 1 else xp.concatenate(rows, axis=0)
    values = out if isinstance(out, np.ndarray) else out.to_numpy()
    return np.asarray(values, dtype=np.float64)


CORRECT = Variant()

# id -> the one convention that id gets wrong. Ids name files in submissions/wrong_answer/
# and entries of the catalogue in problem.py.
MISTAKES: dict[str, Variant] = {
    "patches_as_strips": replace(CORRECT, patches="strips"),
    "patch_bias_skipped": replace(CORRECT, bias="skipped"),
    "patch_bias_after_class_token": replace(CORRECT, bias="after"),
    "class_token_appended": replace(CORRECT, cls_position="last"),
    "position_table_skipped": replace(CORRECT, position_table=False),
    "class_token_row_skipped": replace(CORRECT, position_rows="skip_class"),
    "post_norm_blocks": replace(CORRECT, norm="post"),
    "blocks_in_reverse_order": replace(CORRECT, blocks="reverse"),
    "first_block_only": replace(CORRECT, blocks="first_only"),
    "erf_gelu": replace(CORRECT, gelu="erf"),
    "scale_by_sqrt_d_model": replace(CORRECT, scale="model"),
    "sample_variance": replace(CORRECT, ddof=1),
    "head_reads_mean_pool": replace(CORRECT, pool="mean"),
    "head_reads_last_row": replace(CORRECT, pool="last"),
    "final_norm_skipped": replace(CORRECT, final_norm=False),
    "float32_arithmetic": replace(CORRECT, dtype="float32"),
}
