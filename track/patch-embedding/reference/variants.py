"""An independent, configurable formulation of the patch embedding, and the
catalogue of classic mistakes expressed as configurations of it.

With the default `Variant()` this is a second, independently written correct
implementation (an explicit loop over the patch grid, one patch at a time), used
to cross-check reference/solution.py. Each entry of MISTAKES switches exactly one
convention to the classic wrong choice; the grader's diagnosis compares a
submission's outputs with these, and the tolerance evidence shows each one is
caught.

`evaluate` has the calling convention of the entry point plus two keywords: `v`,
the configuration, and `arithmetic`, a function of the dtype giving the NumPy-like
namespace to compute in (default NumPy itself, float64 or float32 as a learner's
program computes; the grader passes portable_arithmetic's fixed-order arithmetic to
store the mistakes' outputs as the same bytes on every CPU). Only `asarray` and
`stack` are used from the namespace; everything else is the arrays' own reshape,
transpose, slicing and `@`.

Some mistakes cannot always run, or return the wrong shape, and `evaluate` does
what the learner's program does:

- `transposed_projection` multiplies by W_proj.T, which has the right shape only
  when W_proj is square (p*p*C == embed_dim). Elsewhere a learner's program
  raises (a run-time error), and so does `evaluate` (ValueError).
- `channels_first_shape` reads the (B, H, W, C) image as (B, C, H, W): its cut
  runs only when C is a multiple of p, its product only when H == C. Elsewhere
  it raises ValueError, as the learner's reshape or `@` does (most tests).
- `no_projection` returns the flattened patches, (B, N, p*p*C): the right shape
  only when p*p*C == embed_dim; elsewhere the grader's shape check rejects it.

The problem module's run_variant turns "raised" and "wrong shape" into an all-NaN
output: no output to compare, as for the learner.

This file is part of the judge bundle only: it is excluded from the practice
archive and unreadable to submissions, because Variant() is a correct solution.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

import numpy as np

NUMPY = SimpleNamespace(asarray=np.asarray, stack=np.stack)


@dataclass(frozen=True)
class Variant:
    read_as_channels_first: bool = False  # the (B, H, W, C) image read as (B, C, H, W), then patchified channels last
    cut: str = "squares"  # squares | strips (reshape without the transpose) | channels_first
    grid: str = "row_major"  # row_major | column_major (the order of the patches)
    inside: str = "pixel_channel"  # pixel_channel (correct) | channel_pixel | column_pixels
    project: bool = True  # False: the flattened patches returned, no @ W_proj
    transpose_w: bool = False  # patches @ W_proj.T
    bias: float = 0.0  # added to every output value (the statement: no bias)
    pixel_divisor: float = 1.0  # image divided by this first (255: "pixels to [0, 1]")
    dtype: str = "float64"  # float64 | float32


def _grid_order(rows: int, cols: int, grid: str) -> list[tuple[int, int]]:
    if grid == "column_major":
        return [(i, j) for j in range(cols) for i in range(rows)]
    return [(i, j) for i in range(rows) for j in range(cols)]


def _patches(image: Any, p: int, v: Variant, xp: Any) -> Any:
    """(B, H, W, C) -> (B, N, p*p*C) under the variant's conventions."""
    B, H, W, C = image.shape
    if H % p or W % p:  # only after read_as_channels_first: a learner's reshape raises here
        raise ValueError(f"cannot reshape: the image's axes 1 and 2 ({H}, {W}) are not multiples of p = {p}")
    rows, cols = H // p, W // p
    if v.cut == "strips":  # demo 5 of the teaching script: the right shape, strips of rows
        return image.reshape(B, rows * cols, p * p * C)
    if v.cut == "channels_first":  # the (B, C, H, W) patchify applied to a channels-last array
        cut = image.reshape(B, C, rows, p, cols, p).transpose(0, 2, 4, 1, 3, 5)
        return cut.reshape(B, rows * cols, C * p * p)
    out = []
    for i, j in _grid_order(rows, cols, v.grid):
        patch = image[:, i * p : (i + 1) * p, j * p : (j + 1) * p, :]  # (B, p, p, C)
        if v.inside == "channel_pixel":
            patch = patch.transpose(0, 3, 1, 2)  # (B, C, p, p)
        elif v.inside == "column_pixels":
            patch = patch.transpose(0, 2, 1, 3)  # (B, p_col, p_row, C)
        out.append(patch.reshape(B, p * p * C))
    return xp.stack(out, axis=1)


def evaluate(
    image: Any,
    patch_size: Any,
    embed_dim: Any,
    W_proj: Any,
    v: Variant = Variant(),
    arithmetic: Callable[[type], Any] | None = None,
) -> np.ndarray:
    """The patch embedding under variant `v`, as float64: (B, N, embed_dim), except
    `project=False`, which returns the flattened patches (B, N, p*p*C) as the
    learner's program does.

    Raises ValueError where the learner's program raises: the variant's projection
    does not fit the patches (`transpose_w` with a non-square W_proj), or the image
    read as channels-first cannot be cut or projected.
    """
    dt = np.float32 if v.dtype == "float32" else np.float64
    xp = NUMPY if arithmetic is None else arithmetic(dt)
    if v.read_as_channels_first:  # B, C, H, W = image.shape, or image.transpose(0, 2, 3, 1) "to channels last"
        image = np.asarray(image, dtype=np.float64).transpose(0, 2, 3, 1)
    image, W = xp.asarray(image, dtype=dt), xp.asarray(W_proj, dtype=dt)
    if v.pixel_divisor != 1.0:
        image = image / v.pixel_divisor
    patches = _patches(image, int(patch_size), v, xp)
    if v.transpose_w:
        W = W.T
    if v.project and patches.shape[-1] != W.shape[0]:
        raise ValueError(
            f"matmul: the patches have {patches.shape[-1]} values but the projection has {W.shape[0]} rows"
        )
    out = patches @ W if v.project else patches
    if v.bias != 0.0:
        out = out + v.bias
    values = out if isinstance(out, np.ndarray) else out.to_numpy()
    return np.asarray(values, dtype=np.float64)


CORRECT = Variant()

# id -> the one convention that id gets wrong. Ids name files in submissions/wrong_answer/
# and entries of the catalogue in problem.py.
MISTAKES: dict[str, Variant] = {
    "reshape_without_transpose": replace(CORRECT, cut="strips"),
    "channels_first_cut": replace(CORRECT, cut="channels_first"),
    "channels_first_shape": replace(CORRECT, read_as_channels_first=True),
    "column_major_patch_order": replace(CORRECT, grid="column_major"),
    "channel_before_pixel": replace(CORRECT, inside="channel_pixel"),
    "column_major_pixels": replace(CORRECT, inside="column_pixels"),
    "no_projection": replace(CORRECT, project=False),
    "ones_bias": replace(CORRECT, bias=1.0),
    "transposed_projection": replace(CORRECT, transpose_w=True),
    "rescaled_pixels": replace(CORRECT, pixel_divisor=255.0),
    "float32_arithmetic": replace(CORRECT, dtype="float32"),
}
