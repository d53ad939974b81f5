"""An independent, configurable formulation of adding the position table, and the
catalogue of classic mistakes expressed as configurations of it.

With the default `Variant()` this is a second, independently written correct
implementation (one token row at a time, sequence by sequence, each row given its
table row by an explicit index, stacked), used to cross-check reference/solution.py.
Each entry of MISTAKES switches exactly one convention to the classic wrong choice;
the grader's diagnosis compares a submission's outputs with these, and the tolerance
evidence shows each one is caught.

`evaluate` has the calling convention of the entry point plus two keywords: `v`,
the configuration, and `arithmetic`, a function of the dtype giving the NumPy-like
namespace to compute in (default NumPy itself, float64 or float32 as a learner's
program computes; the grader passes portable_arithmetic's fixed-order arithmetic to
store the mistakes' outputs as the same bytes on every CPU). Only `asarray`, `stack`
and `concatenate` are used from the namespace; everything else is the arrays' own
indexing, `+` and `*`.

Two of the classic mistakes return an array of the wrong shape, and `evaluate`
returns what the learner's program returns: `table_concatenated` puts the table
beside every token, (B, N+1, 2D); `batch_dimension_lost` returns one sequence,
(N+1, D). The diagnosis compares a learner's array of a wrong shape with the
mistakes of that same shape.

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
    # add (correct) | skip (no table: the tokens returned) | multiply (token * row) |
    # twice (the row added two times) | concat (the table beside each token, (B, N+1, 2D))
    combine: str = "add"
    # which table row token t gets: all (row t) | skip_class (row t, none for the class token t = 0) |
    # offset (row t - 1 for t >= 1, none for t = 0) | skip_last (row t, none for the last token N) |
    # first_row (row 0 for every token)
    rows: str = "all"
    batch: str = "every"  # every | first_only (sequence 0 only) | lost (only sequence 0 returned, (N+1, D))
    dtype: str = "float64"  # float64 | float32


def _table_row(t: int, last: int, rows: str) -> int | None:
    """The index of the table row token t gets under `rows` (None: no row); `last` is N."""
    if rows == "first_row":
        return 0
    if rows in ("skip_class", "offset") and t == 0:
        return None
    if rows == "skip_last" and t == last:
        return None
    return t - 1 if rows == "offset" else t


def _sequence(x: Any, table: Any, b: int, v: Variant, xp: Any) -> Any:
    """Sequence b of the output under the variant, (N+1, D), one token row at a time."""
    T = x.shape[1]
    out = []
    for t in range(T):
        row = x[b, t]
        k = _table_row(t, T - 1, v.rows)
        if v.combine == "skip" or k is None or (v.batch == "first_only" and b > 0):
            out.append(row)
        elif v.combine == "multiply":
            out.append(row * table[k])
        elif v.combine == "twice":
            out.append((row + table[k]) + table[k])
        else:
            out.append(row + table[k])
    return xp.stack(out, axis=0)


def evaluate(
    patches: Any,
    num_patches: Any,
    embed_dim: Any,
    pos_embed: Any,
    v: Variant = Variant(),
    arithmetic: Callable[[type], Any] | None = None,
) -> np.ndarray:
    """The token sequences under variant `v`, as float64: (B, N+1, D) but for the two
    wrong-shape mistakes (see the module's doc)."""
    dt = np.float32 if v.dtype == "float32" else np.float64
    xp = NUMPY if arithmetic is None else arithmetic(dt)
    x, table = xp.asarray(patches, dtype=dt), xp.asarray(pos_embed, dtype=dt)
    B = x.shape[0]
    if v.combine == "concat":
        out = xp.concatenate([x, xp.stack([table] * B, axis=0)], axis=2)
    elif v.batch == "lost":
        out = _sequence(x, table, 0, v, xp)
    else:
        out = xp.stack([_sequence(x, table, b, v, xp) for b in range(B)], axis=0)
    values = out if isinstance(out, np.ndarray) else out.to_numpy()
    return np.asarray(values, dtype=np.float64)


CORRECT = Variant()

# id -> the one convention that id gets wrong. Ids name files in submissions/wrong_answer/
# and entries of the catalogue in problem.py.
MISTAKES: dict[str, Variant] = {
    "positions_skipped": replace(CORRECT, combine="skip"),
    "class_token_row_skipped": replace(CORRECT, rows="skip_class"),
    "table_offset_by_one": replace(CORRECT, rows="offset"),
    "last_token_skipped": replace(CORRECT, rows="skip_last"),
    "first_row_broadcast": replace(CORRECT, rows="first_row"),
    "first_sequence_only": replace(CORRECT, batch="first_only"),
    "batch_dimension_lost": replace(CORRECT, batch="lost"),
    "multiplied_instead_of_added": replace(CORRECT, combine="multiply"),
    "added_twice": replace(CORRECT, combine="twice"),
    "table_concatenated": replace(CORRECT, combine="concat"),
    "float32_arithmetic": replace(CORRECT, dtype="float32"),
}
