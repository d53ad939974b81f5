"""The problem module of the "Position Embedding" bundle: what cannot be data.

The grader loads this file by path (trusted, judge side) and reads the names below
(docs/bundle.md, "The problem module"):

- cases: SAMPLES (the statement's examples, inputs verbatim), RECIPES (one tuple of
  recipes per hidden group of problem.yaml), PRACTICE_RECIPES, expected_output,
  case_work and extra_case_problems;
- feedback: PARTS, PART_SECTIONS, CATALOGUE (one entry per reference/variants.py
  MISTAKES id, pointing into statement.md), AXES and the rules that read the group pattern.

A recipe's `make(rng)` returns the inputs keyed by parameter name. Values are rounded
to three decimals: short JSON numbers keep the files small, and the rounded values
are still generic (no table row all zeros, no two rows alike, so that every mistake
about which row goes where shows). pos_embed is always (N+1, D) (statement.md, "Shapes
and notation"); the output is one float64 addition per value, correctly rounded, so the
expected outputs are the same bytes on every machine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from types import ModuleType
from typing import Any

import numpy as np

from grader.authoring import Axis, GroupRule, Mistake, OnlyGroup, Recipe, Sample, SampleRule

Inputs = dict[str, Any]


# --- building blocks ------------------------------------------------------------------


def _q(a: np.ndarray, decimals: int = 3) -> np.ndarray:
    return np.round(a, decimals) + 0.0  # + 0.0 turns -0.0 into 0.0


def _table_problems(table: np.ndarray) -> list[str]:
    """Why a table would hide a mistake: a row of zeros hides a token that gets no row, two
    equal rows hide a token that gets the wrong one."""
    out = []
    if table.size and not np.all(np.any(table != 0, axis=-1)):
        out.append("pos_embed has a row of zeros (it would hide a token that gets no row)")
    if table.ndim == 2 and len(np.unique(table, axis=0)) < len(table):
        out.append("pos_embed has two equal rows (they would hide a token that gets the wrong row)")
    return out


def _table(rng: np.random.Generator, T: int, D: int, scale: float = 1.0, uniform: bool = False) -> np.ndarray:
    """(N+1, D), a generic table (normal, or uniform in [-scale, scale]): drawn again until no row
    is zero, no two rows are equal and every value is within the magnitude limit 1e6."""
    while True:
        draw = rng.uniform(-1.0, 1.0, (T, D)) if uniform else rng.standard_normal((T, D))
        table = _q(draw * scale)
        if not _table_problems(table) and np.abs(table).max() <= 1e6:
            return table


def _case(rng: np.random.Generator, B: int, N: int, D: int) -> Inputs:
    tokens = _q(rng.standard_normal((B, N + 1, D)))
    return {"patches": tokens, "num_patches": N, "embed_dim": D, "pos_embed": _table(rng, N + 1, D)}


def _shape(B: int, N: int, D: int) -> Callable[[np.random.Generator], Inputs]:
    return lambda rng: _case(rng, B, N, D)


def _magnitude_limit(B: int, N: int, D: int) -> Callable[[np.random.Generator], Inputs]:
    """Tokens and table spread up to the magnitude limit 1e6 (some tokens at exactly +-1e6)."""

    def make(rng: np.random.Generator) -> Inputs:
        tokens = _q(rng.uniform(-1e6, 1e6, (B, N + 1, D)))
        tokens.flat[0], tokens.flat[-1] = 1e6, -1e6
        table = _table(rng, N + 1, D, 1e6, uniform=True)
        return {"patches": tokens, "num_patches": N, "embed_dim": D, "pos_embed": table}

    return make


def _far_table(B: int, N: int, D: int) -> Callable[[np.random.Generator], Inputs]:
    """Small tokens (the teaching script's 0.02 scale) and a table near 1e5."""

    def make(rng: np.random.Generator) -> Inputs:
        tokens = _q(rng.standard_normal((B, N + 1, D)) * 0.02, 4)
        return {"patches": tokens, "num_patches": N, "embed_dim": D, "pos_embed": _table(rng, N + 1, D, 1e5)}

    return make


def _random_shape(rng: np.random.Generator) -> Inputs:
    B, N, D = int(rng.integers(1, 13)), int(rng.integers(2, 41)), int(rng.integers(1, 49))
    return _case(rng, B, N, D)


# --- the sample group: the statement's three examples, verbatim ----------------------

SAMPLES: tuple[Sample, ...] = (
    Sample(
        "01-one-sequence",
        "Example 1: one sequence, the class token and two patches, of width 2.",
        "Row t of the table is added to token t: the class token (token 0) gets row 0 and patch k "
        "(token k) gets row k. The shape stays (1, 3, 2): the table is added, not concatenated.",
        {
            "patches": [[[0.5, -0.5], [1, 2], [3, 4]]],
            "num_patches": 2,
            "embed_dim": 2,
            "pos_embed": [[0.25, 0.25], [1, 0], [0, 1]],
        },
    ),
    Sample(
        "02-batch",
        "Example 2: a batch of two sequences of two tokens of width 2.",
        "The same table is added to every sequence of the batch: sequence 1 gets it as well as "
        "sequence 0. The output has shape (2, 2, 2).",
        {
            "patches": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]],
            "num_patches": 1,
            "embed_dim": 2,
            "pos_embed": [[10, -10], [0.5, 0.5]],
        },
    ),
    Sample(
        "03-width-one",
        "Example 3: one sequence of four tokens of width D = 1.",
        "Every token has its own row, from the class token's row 0 to the last patch's row N = 3; "
        "the output keeps the shape (1, 4, 1).",
        {
            "patches": [[[0], [1], [2], [3]]],
            "num_patches": 3,
            "embed_dim": 1,
            "pos_embed": [[0.5], [0.25], [-0.25], [-0.5]],
        },
    ),
)


# --- hidden groups -------------------------------------------------------------------
# Shapes are (B, N, D): B sequences of N + 1 tokens (the class token and N patches) of width D.

RECIPES: dict[str, tuple[Recipe, ...]] = {
    "batch_of_one": (
        Recipe("01-n4-d3", "B=1, N=4, D=3", _shape(1, 4, 3)),
        Recipe("02-n9-d8", "B=1, N=9 (a 3 x 3 grid), D=8", _shape(1, 9, 8)),
        Recipe("03-n16-d5", "B=1, N=16, D=5", _shape(1, 16, 5)),
    ),
    "one_patch": (
        Recipe("01-b1-d4", "N=1, B=1, D=4", _shape(1, 1, 4)),
        Recipe("02-b3-d6", "N=1, B=3, D=6", _shape(3, 1, 6)),
        Recipe("03-b2-d1", "N=1, B=2, D=1", _shape(2, 1, 1)),
    ),
    "large_batch": (
        Recipe("01-b8", "B=8, N=3, D=4", _shape(8, 3, 4)),
        Recipe("02-b16", "B=16, N=5, D=2", _shape(16, 5, 2)),
        Recipe("03-b32", "B=32, N=4, D=6", _shape(32, 4, 6)),
    ),
    "width_1": (
        Recipe("01-b1-n5", "D=1, B=1, N=5", _shape(1, 5, 1)),
        Recipe("02-b4-n3", "D=1, B=4, N=3", _shape(4, 3, 1)),
        Recipe("03-b2-n12", "D=1, B=2, N=12", _shape(2, 12, 1)),
    ),
    "large_values": (
        Recipe(
            "01-magnitude-limit",
            "tokens and table up to 1e6 in magnitude, B=2, N=4, D=6",
            _magnitude_limit(2, 4, 6),
        ),
        Recipe("02-far-table", "tokens near 0.02, table near 1e5, B=3, N=3, D=4", _far_table(3, 3, 4)),
    ),
    "random": tuple(Recipe(f"{i:02d}-random-shape", "random B, N and D", _random_shape) for i in range(1, 7)),
    "realistic": (
        Recipe(
            "01-vit-base",
            "ViT-Base: B=1, the class token and N=196 patch tokens (224 x 224 at p=16), D=768",
            _shape(1, 196, 768),
        ),
    ),
}

# The practice set: the hidden groups' recipes from the public practice seed; the realistic
# case at ViT-Tiny's width and p = 32 (still large enough that float32 arithmetic fails).
PRACTICE_RECIPES: dict[str, tuple[Recipe, ...]] = {
    **RECIPES,
    "realistic": (Recipe("01-vit-tiny-p32", "ViT-Tiny at p=32: B=1, N=49 patch tokens, D=192", _shape(1, 49, 192)),),
}


def expected_output(reference: ModuleType, inputs: Mapping[str, Any], xp: Any) -> Any:
    """The reference's token sequences in the arithmetic of namespace `xp`."""
    return reference.add(inputs["patches"], inputs["pos_embed"], xp=xp)


def case_work(dims: Mapping[str, int]) -> int:
    """Values added: B * (N + 1) * D."""
    return dims["B"] * (dims["num_patches"] + 1) * dims["embed_dim"]


def extra_case_problems(case: Any) -> list[str]:
    """Rules that cannot be data: no row of the table is all zeros and no two rows are equal,
    since either hides a mistake about which row goes to which token. Not part of the Kattis
    input validator."""
    return _table_problems(np.asarray(case.inputs["pos_embed"]))


# --- feedback ----------------------------------------------------------------------------

PARTS: dict[str, str] = {
    "rows": "which row of the table goes to which token (row t to token t, the class token's row 0 included)",
    "combination": "how the table joins the tokens (added once, elementwise)",
    "batch": "the batch (the same table is added to every sequence)",
    "precision": "floating-point precision (float64 throughout)",
}
_SHAPES, _ROWS, _ADDED, _BATCH, _RET = (
    "Shapes and notation",
    "Row t goes to token t",
    "Added, once",
    "Every sequence of the batch",
    "What to return",
)
# Where statement.md specifies each part.
PART_SECTIONS: dict[str, str] = {
    "rows": _ROWS,
    "combination": _ADDED,
    "batch": _BATCH,
    "precision": _RET,
}

CATALOGUE: dict[str, Mistake] = {
    m.id: m
    for m in (
        Mistake(
            "positions_skipped",
            "Position table not added (the tokens returned unchanged)",
            "The step is the addition itself: returning patches (or a copy of it) leaves every token "
            "without its position, and attention cannot tell where a patch was.",
            "combination",
            _ADDED,
            "added to every token",
            "Return patches + pos_embed.",
        ),
        Mistake(
            "class_token_row_skipped",
            "The class token's row 0 left out",
            "The table has N + 1 rows because the class token has a position too: adding pos_embed[1:] "
            "to the patch tokens only (tokens 1 to N) leaves token 0 without row 0.",
            "rows",
            _ROWS,
            "the class token's row 0 included",
            "Add the whole table, all N + 1 rows, to all N + 1 tokens: patches + pos_embed.",
        ),
        Mistake(
            "table_offset_by_one",
            "Table shifted by one token (row t - 1 to token t)",
            "Row t of the table belongs to token t, the class token's row 0 to token 0. Indexing the "
            "table by patch number (pos_embed[:N] added to tokens 1 to N) gives every patch the row of "
            "the token before it, and the class token none.",
            "rows",
            _ROWS,
            "Row $t$ of `pos_embed` is added to token $t$",
            "Add row t to token t: patches + pos_embed, no slicing.",
        ),
        Mistake(
            "last_token_skipped",
            "The last token left without its row",
            "There are N + 1 tokens and N + 1 rows: a loop over range(num_patches) stops one short and "
            "leaves the last patch token N without row N.",
            "rows",
            _ROWS,
            "the last patch's row $N$",
            "Loop over range(num_patches + 1), or add the whole table at once: patches + pos_embed.",
        ),
        Mistake(
            "first_row_broadcast",
            "Row 0 of the table added to every token",
            "Code written for a (1, N+1, D) table takes pos_embed[0] to drop its leading axis; on the "
            "(N+1, D) table given here, pos_embed[0] is row 0 alone, broadcast to every token.",
            "rows",
            _ROWS,
            "not `pos_embed[0]`",
            "Add pos_embed itself (or pos_embed.reshape(1, N + 1, D)), never pos_embed[0].",
        ),
        Mistake(
            "first_sequence_only",
            "Only the first sequence of the batch gets the table",
            "The same table is added to every sequence: writing into out[0] (the first sequence) instead "
            "of broadcasting over the batch leaves the other sequences without positions.",
            "batch",
            _BATCH,
            "added to **every** sequence",
            "Add the table to the whole batch: patches + pos_embed broadcasts it to (B, N+1, D).",
        ),
        Mistake(
            "batch_dimension_lost",
            "Batch axis lost: one (N+1, D) sequence returned",
            "Adding the table to patches[0] (the teaching script's single-image forward, z + self.pos) "
            "returns one sequence, (N+1, D), without the batch axis; the other sequences are dropped.",
            "batch",
            _BATCH,
            "keeps its batch axis",
            "Keep the batch: add the table to patches, not to patches[0].",
        ),
        Mistake(
            "multiplied_instead_of_added",
            "Table multiplied with the tokens",
            "The position embedding is added to the tokens (equation 1: z0 = [...] + E_pos); an "
            "elementwise product patches * pos_embed scales each token instead.",
            "combination",
            _ADDED,
            "added to every token",
            "Use +, not *: patches + pos_embed.",
        ),
        Mistake(
            "added_twice",
            "Table added twice",
            "Adding the table in place (patches += pos_embed) and then returning patches + pos_embed adds "
            "it two times; it is added exactly once.",
            "combination",
            _ADDED,
            "exactly once",
            "Add the table once, to a new array: return patches + pos_embed.",
        ),
        Mistake(
            "table_concatenated",
            "Table concatenated along the feature axis (B, N+1, 2D)",
            "The table is added to the tokens, not joined to them: concatenating it along the last axis "
            "puts it beside every token, (B, N+1, 2D), tokens twice as wide.",
            "combination",
            _ADDED,
            "not concatenated",
            "Add the table: patches + pos_embed keeps the shape (B, N+1, D).",
        ),
        Mistake(
            "float32_arithmetic",
            "Computed in float32",
            "float32 keeps about 7 significant digits: converting the tokens or the table to float32 "
            "rounds every value by about 1e-8 of its size, far above the tolerance. Keep every array "
            "float64.",
            "precision",
            _RET,
            "Converting to `float32` fails",
            "Keep every array float64: no .astype(np.float32), no float32 buffers.",
            match="rounding",
            dtype="float32",
        ),
    )
}

# Where a wrong answer's values may be confined: the output is (B, N+1, D).
AXES: tuple[Axis, ...] = (
    Axis("batches", "B"),
    Axis("tokens", 1, letter="N+1", within="batches"),
    Axis("features", "embed_dim", letter="D"),
)
AXES_PHRASES = {"everywhere": "some tokens, features or batches", "spread": "every batch, token and feature"}
SUBJECT = "the token sequences"
# The inputs whose sizes order the evidence, small cases first.
SIZE_INPUTS = ("patches", "pos_embed")


def run_variant(
    variants: ModuleType, inputs: Mapping[str, Any], variant: Any, arithmetic: Callable[..., Any] | None = None
) -> Any:
    """reference/variants.evaluate on one case's inputs under one configuration, in the shape
    the configuration returns: two of the classic mistakes return an array of the wrong shape,
    which the diagnosis compares with a learner's array of that same shape."""
    args = [inputs[k] for k in ("patches", "num_patches", "embed_dim", "pos_embed")]
    return variants.evaluate(*args, v=variant, arithmetic=arithmetic)


def canonical_variant(variant: Any) -> Any:
    """One configuration per distinct function: a concatenated table ignores which rows go
    where and the batch; without the table (`skip`) the rows and the batch's first sequence
    no longer matter."""
    if variant.combine == "concat":
        return replace(variant, rows="all", batch="every")
    if variant.combine == "skip":
        return replace(variant, rows="all", batch="lost" if variant.batch == "lost" else "every")
    return variant


# --- how the group pattern reads (the grader applies the first rule that fits) ---------------

# "Only this group fails", in the order they are tried.
ONLY_GROUP: tuple[OnlyGroup, ...] = (
    OnlyGroup(
        "large_batch",
        ("batch",),
        "Only the large batches fail: look for a batch size written into the code, or a loop that stops early.",
    ),
    OnlyGroup(
        "one_patch",
        ("rows",),
        "Only the one-patch tests (N = 1) fail: look for an assumption that there are several patches.",
    ),
    OnlyGroup(
        "width_1",
        ("combination",),
        "Only the D = 1 tests fail: look for a squeezed feature axis or a scale that depends on D.",
    ),
    OnlyGroup(
        "large_values",
        ("precision",),
        "Only the large values fail: look for lost precision (float32, or an integer conversion).",
    ),
    OnlyGroup(
        "realistic",
        ("precision",),
        "Only the large ViT-Base-sized test fails: look for a size-dependent assumption.",
    ),
    OnlyGroup("random", (), "Only random shapes fail: look at edge sizes (B = 1, N = 1, D = 1)."),
)
# They mix every feature, so they may fail along with the one group.
MIXED_GROUPS = ("random", "realistic")

# What the groups where a convention cannot show say together; the first rule that fits applies.
GROUP_RULES: tuple[GroupRule, ...] = (
    GroupRule(
        ("batch_of_one",),
        ("large_batch",),
        ("batch",),
        "batch_of_one passes but large_batch fails: a single sequence is right, so look at the batch: the "
        "same table must be added to every sequence (patches + pos_embed, not out[0] + pos_embed).",
    ),
    GroupRule(
        ("sample",),
        ("batch_of_one", "one_patch", "width_1"),
        ("precision",),
        "The samples pass and every hidden group fails, even the smallest: look at float64 precision.",
    ),
)

# When only the samples ran: exactly these failing ("{more}": how to learn more).
SAMPLE_RULES: tuple[SampleRule, ...] = (
    SampleRule(
        ("sample/02-batch",),
        ("batch",),
        "Only example 2, the one with two sequences, fails: the table must be added to every sequence "
        "of the batch; {more}.",
    ),
)

# When the only group not passing is too slow.
TOO_SLOW = {
    "realistic": "Only the large ViT-Base-sized test is too slow: add the table with one broadcast "
    "patches + pos_embed instead of Python loops over the values.",
}
