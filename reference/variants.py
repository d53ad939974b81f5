"""An independent, configurable formulation of the block, and the catalogue of
classic mistakes expressed as configurations of it.

With the default `Variant()` this is a second, independently written correct
implementation (an explicit loop over heads with einsum), used to cross-check
reference/solution.py. Each entry of MISTAKES switches exactly one convention
to the classic wrong choice; the grader's diagnosis compares a submission's
outputs with these (grader/feedback/diagnose.py), and the tolerance evidence
(docs/tolerance.md) shows each one is caught.

`block` is written against a NumPy-like namespace: by default NumPy itself
(float64 or float32, as a learner's program computes; math.erf elementwise),
or one the caller passes per dtype, such as grader/problem/portable_arithmetic's
fixed-order arithmetic, which makes the stored mistake outputs the same bytes
on every CPU.

This file is part of the judge bundle only: it is excluded from the practice
archive and unreadable to submissions, because Variant() is a correct solution.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any, Callable

import numpy as np


def _numpy_erf(t: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[t.dtype])(t)


NUMPY = SimpleNamespace(asarray=np.asarray, sqrt=np.sqrt, exp=np.exp, tanh=np.tanh, erf=_numpy_erf,
                        maximum=np.maximum, stack=np.stack, concatenate=np.concatenate, pi=np.pi)


@dataclass(frozen=True)
class Variant:
    gelu: str = "tanh"            # tanh | erf | sigmoid | relu | none | tanh_rounded
    eps: float = 1e-6
    eps_inside_sqrt: bool = True
    ddof: int = 0
    scale: str = "head"           # head: 1/sqrt(d_h) | model: 1/sqrt(D) | none
    softmax_axis: int = -1        # -1: over keys (correct) | -2: over queries
    stable_softmax: bool = True
    split: str = "contiguous"     # contiguous | no_transpose | interleaved
    merge_transpose: bool = True
    pre_norm: bool = True
    attention_residual: bool = True
    mlp_residual: bool = True
    mlp_input: str = "y"          # y (correct) | x
    use_heads: bool = True
    transpose_wq: bool = False
    dtype: str = "float64"        # float64 | float32
    # Continuous constants a learner can get wrong (None: the statement's value). The
    # diagnosis fits them (grader/feedback/combined.py).
    gelu_constant: float | None = None   # c in tanh(c*(u + 0.044715 u^3)); sqrt(2/pi) when None
    temperature: float = 1.0             # scores divided by temperature * sqrt(d_h) (with scale="head")


def _layer_norm(t: Any, v: Variant, xp: Any = NUMPY) -> Any:
    mu = t.mean(axis=-1, keepdims=True)
    var = t.var(axis=-1, keepdims=True, ddof=v.ddof)
    if v.eps_inside_sqrt:
        return (t - mu) / xp.sqrt(var + v.eps)
    return (t - mu) / (xp.sqrt(var) + v.eps)


def _gelu(t: Any, kind: str, constant: float | None = None, xp: Any = NUMPY) -> Any:
    if kind in ("tanh", "tanh_rounded"):
        c = 0.7979 if kind == "tanh_rounded" else math.sqrt(2.0 / math.pi)
        c = c if constant is None else constant
        return 0.5 * t * (1.0 + xp.tanh(c * (t + 0.044715 * (t * t * t))))
    if kind == "erf":
        return 0.5 * t * (1.0 + xp.erf(t / math.sqrt(2.0)))
    if kind == "sigmoid":
        return t / (1.0 + xp.exp(-1.702 * t))
    if kind == "relu":
        return xp.maximum(t, 0.0)
    if kind == "none":
        return t
    raise ValueError(f"unknown GELU kind {kind!r}")


def _softmax(s: Any, v: Variant, xp: Any = NUMPY) -> Any:
    axis = v.softmax_axis
    if v.stable_softmax:
        s = s - s.max(axis=axis, keepdims=True)
    with np.errstate(over="ignore", invalid="ignore"):
        e = xp.exp(s)
        return e / e.sum(axis=axis, keepdims=True)


def _head_columns(D: int, H: int, h: int, split: str) -> np.ndarray:
    dh = D // H
    if split == "interleaved":
        return np.arange(h, D, H)
    return np.arange(h * dh, (h + 1) * dh)


def _attention(h_in: Any, H: int, Wq, Wk, Wv, Wo, v: Variant, xp: Any = NUMPY) -> Any:
    B, N, D = h_in.shape
    if not v.use_heads:
        H = 1
    dh = D // H
    q = h_in @ (Wq.T if v.transpose_wq else Wq)
    k = h_in @ Wk
    val = h_in @ Wv
    if v.split == "no_transpose":
        # (B, N, D) reinterpreted as (B, H, N, d_h) without moving the head axis.
        qs, ks, vs = (t.reshape(B, H, N, dh) for t in (q, k, val))
        heads = [(qs[:, i], ks[:, i], vs[:, i]) for i in range(H)]
    else:
        heads = []
        for i in range(H):
            cols = _head_columns(D, H, i, v.split)
            heads.append((q[..., cols], k[..., cols], val[..., cols]))
    scale = {"head": 1.0 / math.sqrt(dh), "model": 1.0 / math.sqrt(D), "none": 1.0}[v.scale] / v.temperature
    outs = []
    for qh, kh, vh in heads:
        scores = (qh @ kh.swapaxes(-1, -2)) * scale
        outs.append(_softmax(scores, v, xp) @ vh)
    stacked = xp.stack(outs, axis=1)                      # (B, H, N, d_h)
    if v.merge_transpose:
        merged = xp.concatenate(outs, axis=-1)            # head-major columns
        if v.split == "interleaved":
            merged = stacked.transpose(0, 2, 3, 1).reshape(B, N, D)
    else:
        merged = stacked.reshape(B, N, D)
    return merged @ Wo


def block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2, v: Variant = Variant(),
          arithmetic: Callable[[type], Any] | None = None) -> np.ndarray:
    """Evaluate the block under variant `v`; the result is float64 (B, N, D).

    `arithmetic(dtype)` gives the namespace to compute in (default: NUMPY); its
    arrays must offer `to_numpy()` when they are not NumPy arrays.
    """
    dt = np.float32 if v.dtype == "float32" else np.float64
    xp = NUMPY if arithmetic is None else arithmetic(dt)
    x, Wq, Wk, Wv, Wo, W1, W2 = (xp.asarray(a, dtype=dt) for a in (x, Wq, Wk, Wv, Wo, W1, W2))
    H = int(num_heads)
    with np.errstate(over="ignore", invalid="ignore"):
        if v.pre_norm:
            attn = _attention(_layer_norm(x, v, xp), H, Wq, Wk, Wv, Wo, v, xp)
            y = x + attn if v.attention_residual else attn
            mlp_src = y if v.mlp_input == "y" else x
            mlp = _gelu(_layer_norm(mlp_src, v, xp) @ W1, v.gelu, v.gelu_constant, xp) @ W2
            z = y + mlp if v.mlp_residual else mlp
        else:  # post-norm: LN after each residual sum, as in the 2017 Transformer
            attn = _attention(x, H, Wq, Wk, Wv, Wo, v, xp)
            y = _layer_norm(x + attn if v.attention_residual else attn, v, xp)
            mlp = _gelu((y if v.mlp_input == "y" else x) @ W1, v.gelu, v.gelu_constant, xp) @ W2
            z = _layer_norm(y + mlp if v.mlp_residual else mlp, v, xp)
    values = z if isinstance(z, np.ndarray) else z.to_numpy()
    return np.asarray(values, dtype=np.float64)


CORRECT = Variant()

# id -> the one convention that id gets wrong. Ids name files in
# submissions/wrong_answer/ and entries of grader/feedback/mistakes.py.
MISTAKES: dict[str, Variant] = {
    "erf_gelu": replace(CORRECT, gelu="erf"),
    "eps_1e5": replace(CORRECT, eps=1e-5),
    "eps_outside_sqrt": replace(CORRECT, eps_inside_sqrt=False),
    "sample_variance": replace(CORRECT, ddof=1),
    "no_scaling": replace(CORRECT, scale="none"),
    "scale_by_sqrt_d_model": replace(CORRECT, scale="model"),
    "softmax_wrong_axis": replace(CORRECT, softmax_axis=-2),
    "naive_softmax": replace(CORRECT, stable_softmax=False),
    "split_heads_without_transpose": replace(CORRECT, split="no_transpose"),
    "interleaved_heads": replace(CORRECT, split="interleaved"),
    "merge_heads_without_transpose": replace(CORRECT, merge_transpose=False),
    "post_norm": replace(CORRECT, pre_norm=False),
    "missing_attention_residual": replace(CORRECT, attention_residual=False),
    "missing_mlp_residual": replace(CORRECT, mlp_residual=False),
    "mlp_from_x": replace(CORRECT, mlp_input="x"),
    "relu_activation": replace(CORRECT, gelu="relu"),
    "no_activation": replace(CORRECT, gelu="none"),
    "sigmoid_gelu": replace(CORRECT, gelu="sigmoid"),
    "rounded_gelu_constant": replace(CORRECT, gelu="tanh_rounded"),
    "ignore_num_heads": replace(CORRECT, use_heads=False),
    "transposed_wq": replace(CORRECT, transpose_wq=True),
    "float32_arithmetic": replace(CORRECT, dtype="float32"),
}
