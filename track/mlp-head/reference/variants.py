"""An independent, configurable formulation of the classification head, and the
catalogue of classic mistakes expressed as configurations of it.

With the default `Variant()` this is a second, independently written correct
implementation (sequence by sequence: the row is read, normalised with the
variance's own method and projected on its own), used to cross-check
reference/solution.py. Each entry of MISTAKES switches exactly one convention
to the classic wrong choice; the grader's diagnosis compares a submission's
outputs with these, and the tolerance evidence shows each one is caught.

`evaluate` has the calling convention of the entry point plus two keywords: `v`,
the configuration, and `arithmetic`, a function of the dtype giving the NumPy-like
namespace to compute in (default NumPy itself, float64 or float32 as a learner's
program computes; the grader passes portable_arithmetic's fixed-order arithmetic to
store the mistakes' outputs as the same bytes on every CPU). Only `asarray`, `sqrt`,
`exp` and `stack` are used from the namespace; everything else is the arrays' own
indexing, `mean`, `var`, `max`, `sum`, `@` and operators.

One mistake returns an array of another shape: `batch_dimension_lost` classifies
only sequence 0 and returns (C,) instead of (B, C). `mean_of_patch_rows` has no
patch rows to average when T = 1 and returns NaN there, as NumPy's mean of an
empty slice does.

This file is part of the judge bundle only: it is excluded from the practice
archive and unreadable to submissions, because Variant() is a correct solution.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

import numpy as np

NUMPY = SimpleNamespace(asarray=np.asarray, sqrt=np.sqrt, exp=np.exp, stack=np.stack)


@dataclass(frozen=True)
class Variant:
    # cls (row 0) | mean_all (mean over every token) | last (row T-1) | mean_patches (rows 1:)
    read: str = "cls"
    # feature (LN over D, before the head) | none | after (LN of the logits) | token_axis (LN over T)
    norm: str = "feature"
    ddof: int = 0  # 0: population variance | 1: sample variance
    eps: float = 1e-6
    eps_inside_sqrt: bool = True
    output: str = "logits"  # logits | softmax
    batch: str = "every"  # every | first_only (sequence 0 alone, shape (C,))
    dtype: str = "float64"  # float64 | float32


def _normalise(t: Any, v: Variant, xp: Any, axis: int = -1) -> Any:
    """LayerNorm of `t` along `axis` under the variant's variance, eps and its place."""
    var = t.var(axis=axis, keepdims=True, ddof=v.ddof)
    centred = t - t.mean(axis=axis, keepdims=True)
    if v.eps_inside_sqrt:
        return centred / xp.sqrt(var + v.eps)
    return centred / (xp.sqrt(var) + v.eps)


def _read(z: Any, v: Variant) -> Any:
    """(T, D) -> (D,): the row the head reads."""
    if v.read == "mean_all":
        return z.mean(axis=0)
    if v.read == "last":
        return z[z.shape[0] - 1]
    if v.read == "mean_patches":
        return z[1:].mean(axis=0)
    return z[0]


def _sequence(z: Any, W: Any, v: Variant, xp: Any) -> Any:
    """(T, D) -> (C,): one sequence's logits (or probabilities) under the variant."""
    if v.norm == "token_axis":
        z = _normalise(z, v, xp, axis=0)
    row = _read(z, v).reshape(1, -1)
    if v.norm == "feature":
        row = _normalise(row, v, xp)
    logits = row @ W
    if v.norm == "after":
        logits = _normalise(logits, v, xp)
    if v.output == "softmax":
        e = xp.exp(logits - logits.max(axis=-1, keepdims=True))
        logits = e / e.sum(axis=-1, keepdims=True)
    return logits[0]


def evaluate(
    encoder_output: Any,
    W_head: Any,
    v: Variant = Variant(),
    arithmetic: Callable[[type], Any] | None = None,
) -> np.ndarray:
    """The logits under variant `v`, as float64: (B, C), or (C,) when the batch is lost."""
    dt = np.float32 if v.dtype == "float32" else np.float64
    xp = NUMPY if arithmetic is None else arithmetic(dt)
    z, W = xp.asarray(encoder_output, dtype=dt), xp.asarray(W_head, dtype=dt)
    B, T = z.shape[0], z.shape[1]
    C = W.shape[1]
    if v.read == "mean_patches" and T == 1:
        shape = (C,) if v.batch == "first_only" else (B, C)
        return np.full(shape, np.nan)
    if v.batch == "first_only":
        out = _sequence(z[0], W, v, xp)
    else:
        out = xp.stack([_sequence(z[b], W, v, xp) for b in range(B)], axis=0)
    values = out if isinstance(out, np.ndarray) else out.to_numpy()
    return np.asarray(values, dtype=np.float64)


CORRECT = Variant()

# id -> the one convention that id gets wrong. Ids name files in submissions/wrong_answer/
# and entries of the catalogue in problem.py.
MISTAKES: dict[str, Variant] = {
    "mean_pooled_tokens": replace(CORRECT, read="mean_all"),
    "last_row_read": replace(CORRECT, read="last"),
    "mean_of_patch_rows": replace(CORRECT, read="mean_patches"),
    "layernorm_skipped": replace(CORRECT, norm="none"),
    "layernorm_after_head": replace(CORRECT, norm="after"),
    "layernorm_over_tokens": replace(CORRECT, norm="token_axis"),
    "sample_variance": replace(CORRECT, ddof=1),
    "eps_outside_sqrt": replace(CORRECT, eps_inside_sqrt=False),
    "teaching_script_eps": replace(CORRECT, eps=1e-5),
    "softmax_applied": replace(CORRECT, output="softmax"),
    "batch_dimension_lost": replace(CORRECT, batch="first_only"),
    "float32_arithmetic": replace(CORRECT, dtype="float32"),
}
