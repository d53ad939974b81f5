"""An independent, configurable formulation of prepending the class token, and the
catalogue of classic mistakes expressed as configurations of it.

With the default `Variant()` this is a second, independently written correct
implementation (one token row at a time, sequence by sequence, stacked), used to
cross-check reference/solution.py. Each entry of MISTAKES switches exactly one
convention to the classic wrong choice; the grader's diagnosis compares a
submission's outputs with these, and the tolerance evidence shows each one is
caught.

`evaluate` has the calling convention of the entry point plus two keywords: `v`,
the configuration, and `arithmetic`, a function of the dtype giving the NumPy-like
namespace to compute in (default NumPy itself, float64 or float32 as a learner's
program computes; the grader passes portable_arithmetic's fixed-order arithmetic to
store the mistakes' outputs as the same bytes on every CPU). Only `asarray`, `stack`
and `concatenate` are used from the namespace; everything else is the arrays' own
indexing, reshape and `+`.

Most of the classic mistakes return an array of the wrong shape, and `evaluate`
returns what the learner's program returns:

- `added_to_every_patch` (patches + cls_token), `added_to_first_patch` (row 0 of
  the patches plus cls_token) and `first_row_overwritten` (row 0 replaced by it)
  keep the patches' shape (B, N, D): one token short;
- `batch_dimension_lost` returns one sequence, (N+1, D);
- `feature_axis_concatenation` puts the token beside every patch, (B, N, 2D);
- `class_token_per_patch` prepends N copies, (B, 2N, D): the right shape, and
  the right values, only when N = 1.

The diagnosis compares a learner's array of a wrong shape with the mistakes of
that same shape.

This file is part of the judge bundle only: it is excluded from the practice
archive and unreadable to submissions, because Variant() is a correct solution.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

import numpy as np

NUMPY = SimpleNamespace(asarray=np.asarray, stack=np.stack, concatenate=np.concatenate)


@dataclass(frozen=True)
class Variant:
    # concatenate (correct) | add_every (patches + cls) | add_first (row 0 + cls, no new row) |
    # overwrite_first (row 0 replaced, no new row) | feature_axis (beside each patch, (B, N, 2D)) |
    # per_patch (N copies prepended, (B, 2N, D)) | no_batch (only sequence 0, (N+1, D))
    combine: str = "concatenate"
    position: str = "first"  # first | last (appended after the patches)
    token: str = "cls"  # cls | zeros (a zero vector in its place)
    batch: str = "every"  # every | first_only (sequence 0 gets the token, the others a zero row)
    dtype: str = "float64"  # float64 | float32


def _sequence(patches: Any, cls: Any, b: int, v: Variant, xp: Any) -> Any:
    """Sequence b of the output under the variant, as a list of (D,) rows."""
    N = patches.shape[1]
    rows = [patches[b, k] for k in range(N)]
    token = cls if (v.batch == "every" or b == 0) else cls * 0.0
    if v.combine == "per_patch":
        extra = [token] * N
    else:
        extra = [token]
    return rows + extra if v.position == "last" else extra + rows


def evaluate(
    patches: Any,
    embed_dim: Any,
    cls_token: Any,
    v: Variant = Variant(),
    arithmetic: Callable[[type], Any] | None = None,
) -> np.ndarray:
    """The token sequences under variant `v`, as float64: (B, N+1, D) for the correct
    combination, otherwise the shape the learner's program returns (see the module's doc)."""
    dt = np.float32 if v.dtype == "float32" else np.float64
    xp = NUMPY if arithmetic is None else arithmetic(dt)
    x, c = xp.asarray(patches, dtype=dt), xp.asarray(cls_token, dtype=dt)
    B, N, D = x.shape
    cls = c[0] * 0.0 if v.token == "zeros" else c[0]  # (D,)
    if v.combine == "add_every":
        out = x + cls
    elif v.combine in ("add_first", "overwrite_first"):
        first = x[:, 0] + cls if v.combine == "add_first" else xp.stack([cls] * B, axis=0)
        rest = [x[:, k] for k in range(1, N)]
        out = xp.stack([first, *rest], axis=1)
    elif v.combine == "feature_axis":
        out = xp.concatenate([xp.stack([xp.stack([cls] * N, axis=0)] * B, axis=0), x], axis=2)
    elif v.combine == "no_batch":
        out = xp.stack(_sequence(x, cls, 0, v, xp), axis=0)
    else:
        out = xp.stack([xp.stack(_sequence(x, cls, b, v, xp), axis=0) for b in range(B)], axis=0)
    values = out if isinstance(out, np.ndarray) else out.to_numpy()
    return np.asarray(values, dtype=np.float64)


CORRECT = Variant()

# id -> the one convention that id gets wrong. Ids name files in submissions/wrong_answer/
# and entries of the catalogue in problem.py.
MISTAKES: dict[str, Variant] = {
    "appended_at_end": replace(CORRECT, position="last"),
    "added_to_every_patch": replace(CORRECT, combine="add_every"),
    "added_to_first_patch": replace(CORRECT, combine="add_first"),
    "first_row_overwritten": replace(CORRECT, combine="overwrite_first"),
    "first_sequence_only": replace(CORRECT, batch="first_only"),
    "batch_dimension_lost": replace(CORRECT, combine="no_batch"),
    "class_token_per_patch": replace(CORRECT, combine="per_patch"),
    "zeros_instead_of_token": replace(CORRECT, token="zeros"),
    "feature_axis_concatenation": replace(CORRECT, combine="feature_axis"),
    "float32_arithmetic": replace(CORRECT, dtype="float32"),
}
