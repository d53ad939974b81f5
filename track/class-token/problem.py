"""The problem module of the "Class Token" bundle: what cannot be data.

The grader loads this file by path (trusted, judge side) and reads the names below
(docs/bundle.md, "The problem module"):

- cases: SAMPLES (the statement's examples, inputs verbatim), RECIPES (one tuple of
  recipes per hidden group of problem.yaml), PRACTICE_RECIPES, expected_output,
  case_work and extra_case_problems;
- feedback: PARTS, PART_SECTIONS, CATALOGUE (one entry per reference/variants.py
  MISTAKES id, pointing into statement.md), AXES and the rules that read the group pattern.

A recipe's `make(rng)` returns the inputs keyed by parameter name. Values are rounded
to three decimals: short JSON numbers keep the files small, and the rounded values
are still generic (a class token unlike every patch, never all zeros). cls_token is
always (1, D) (statement.md, "Shapes and notation"); the output only copies values, so
the expected outputs are the same bytes on every machine.
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


def _class_token(rng: np.random.Generator, D: int, scale: float = 1.0, offset: float = 0.5) -> np.ndarray:
    """(1, D), offset from the patches' mean so that position 0 stands out; never all zeros."""
    while True:
        token = _q(rng.standard_normal((1, D)) * scale + offset * scale)
        if np.any(token):
            return token


def _case(rng: np.random.Generator, B: int, N: int, D: int) -> Inputs:
    return {"patches": _q(rng.standard_normal((B, N, D))), "embed_dim": D, "cls_token": _class_token(rng, D)}


def _shape(B: int, N: int, D: int) -> Callable[[np.random.Generator], Inputs]:
    return lambda rng: _case(rng, B, N, D)


def _magnitude_limit(B: int, N: int, D: int) -> Callable[[np.random.Generator], Inputs]:
    """Patches and class token spread up to the magnitude limit 1e6 (some at exactly +-1e6)."""

    def make(rng: np.random.Generator) -> Inputs:
        patches = _q(rng.uniform(-1e6, 1e6, (B, N, D)))
        patches.flat[0], patches.flat[-1] = 1e6, -1e6
        return {"patches": patches, "embed_dim": D, "cls_token": _q(rng.uniform(-1e6, 1e6, (1, D)))}

    return make


def _far_token(B: int, N: int, D: int) -> Callable[[np.random.Generator], Inputs]:
    """Small patches (the teaching script's 0.02 scale) and a class token near 1e5."""

    def make(rng: np.random.Generator) -> Inputs:
        patches = _q(rng.standard_normal((B, N, D)) * 0.02, 4)
        return {"patches": patches, "embed_dim": D, "cls_token": _class_token(rng, D, scale=1e5, offset=1.0)}

    return make


def _random_shape(rng: np.random.Generator) -> Inputs:
    B, N, D = int(rng.integers(1, 13)), int(rng.integers(2, 41)), int(rng.integers(1, 49))
    return _case(rng, B, N, D)


# --- the sample group: the statement's three examples, verbatim ----------------------

SAMPLES: tuple[Sample, ...] = (
    Sample(
        "01-one-sequence",
        "Example 1: one sequence of two patch tokens of width 3.",
        "The class token becomes token 0 and the two patches move to positions 1 and 2: the sequence "
        "grows from N = 2 to N + 1 = 3 tokens. Appending it would put it last, and adding it to the "
        "patches would keep 2 tokens.",
        {"patches": [[[1, 2, 3], [4, 5, 6]]], "embed_dim": 3, "cls_token": [[0.5, -0.5, 0]]},
    ),
    Sample(
        "02-batch",
        "Example 2: a batch of two sequences of two tokens of width 2.",
        "The same class token starts every sequence of the batch: sequence 1 gets it as well as "
        "sequence 0. The output has shape (2, 3, 2).",
        {"patches": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]], "embed_dim": 2, "cls_token": [[9, -9]]},
    ),
    Sample(
        "03-width-one",
        "Example 3: one sequence of three tokens of width D = 1.",
        "The class token is a new row, concatenated along the token axis (axis 1): the output has shape "
        "(1, 4, 1). Concatenating along the feature axis would give tokens of width 2 instead.",
        {"patches": [[[1], [2], [3]]], "embed_dim": 1, "cls_token": [[0.25]]},
    ),
)


# --- hidden groups -------------------------------------------------------------------
# Shapes are (B, N, D).

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
            "patches and class token up to 1e6 in magnitude, B=2, N=4, D=6",
            _magnitude_limit(2, 4, 6),
        ),
        Recipe("02-far-token", "patches near 0.02, class token near 1e5, B=3, N=3, D=4", _far_token(3, 3, 4)),
    ),
    "random": tuple(Recipe(f"{i:02d}-random-shape", "random B, N and D", _random_shape) for i in range(1, 7)),
    "realistic": (
        Recipe(
            "01-vit-base",
            "ViT-Base: B=1, N=196 patch tokens (224 x 224 at p=16), D=768",
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
    return reference.prepend(inputs["patches"], inputs["cls_token"], xp=xp)


def case_work(dims: Mapping[str, int]) -> int:
    """Values copied: B * (N + 1) * D."""
    return dims["B"] * (dims["N"] + 1) * dims["embed_dim"]


def extra_case_problems(case: Any) -> list[str]:
    """A rule that cannot be data: the class token of a case is never all zeros, since a zero
    token hides "zeros in place of cls_token". Not part of the Kattis input validator."""
    token = np.asarray(case.inputs["cls_token"])
    if token.size and not np.any(token):
        return ["cls_token is all zeros (it would hide a zero vector used in its place)"]
    return []


# --- feedback ----------------------------------------------------------------------------

PARTS: dict[str, str] = {
    "position": "where the class token goes (position 0, before the patches)",
    "combination": "how it joins the patches (a new token, concatenated along the token axis)",
    "batch": "the batch (the same class token starts every sequence)",
    "token": "the class token's values (cls_token itself)",
    "precision": "floating-point precision (float64 throughout)",
}
_SHAPES, _WHERE, _NEW, _BATCH, _RET = (
    "Shapes and notation",
    "Where the class token goes",
    "A new token, not a sum",
    "Every sequence of the batch",
    "What to return",
)
# Where statement.md specifies each part.
PART_SECTIONS: dict[str, str] = {
    "position": _WHERE,
    "combination": _NEW,
    "batch": _BATCH,
    "token": _SHAPES,
    "precision": _RET,
}

CATALOGUE: dict[str, Mistake] = {
    m.id: m
    for m in (
        Mistake(
            "appended_at_end",
            "Class token appended after the patches",
            "The class token is token 0 of every sequence, the row the classification head reads at the "
            "end (z[:, 0]). Concatenating it after the patches, [patches, cls], has the right shape but "
            "puts it at position N, and moves every patch one place forward.",
            "position",
            _WHERE,
            "**position 0**",
            "Put the class token first: np.concatenate([cls, patches], axis=1).",
        ),
        Mistake(
            "added_to_every_patch",
            "Class token added to every patch (patches + cls_token)",
            "The class token is a new token, not a vector added to the patches: patches + cls_token "
            "broadcasts over the tokens and returns N tokens, (B, N, D), one fewer than the (B, N+1, D) "
            "expected. Adding is what the position embedding does, at the next step.",
            "combination",
            _NEW,
            "not added to them",
            "Concatenate instead of adding: np.concatenate([cls, patches], axis=1) with cls of shape (B, 1, D).",
        ),
        Mistake(
            "added_to_first_patch",
            "Class token added to the first patch",
            "Adding cls_token to patch 0 (patches[:, 0] += cls_token) keeps N tokens, (B, N, D), and mixes "
            "the class token into the first patch; it also modifies the input array. The class token is a "
            "token of its own, in front of patch 0.",
            "combination",
            _NEW,
            "not added to them",
            "Make room for a new token: concatenate, so that patch 0 moves to position 1 unchanged.",
        ),
        Mistake(
            "first_row_overwritten",
            "Row 0 overwritten with the class token",
            "Writing the class token over row 0 of the patches (patches[:, 0] = cls_token) loses patch 0 and "
            "keeps N tokens, (B, N, D). The output has N + 1 tokens: every patch is kept, one place later.",
            "combination",
            _NEW,
            "every patch is kept",
            "Allocate (B, N+1, D), write the class token into row 0 and the patches into rows 1 to N.",
        ),
        Mistake(
            "first_sequence_only",
            "Only the first sequence of the batch gets the class token",
            "Every sequence of the batch starts with the same class token. Writing it at out[0, 0] (the "
            "first sequence) instead of out[:, 0] (every sequence) leaves a zero row in front of the "
            "other sequences; only B = 1 hides it.",
            "batch",
            _BATCH,
            "same class token starts **every** sequence",
            "Write the class token into out[:, 0], or broadcast it to (B, 1, D) before concatenating.",
        ),
        Mistake(
            "batch_dimension_lost",
            "Batch axis lost: one (N+1, D) sequence returned",
            "Concatenating cls_token with patches[0] (the teaching script's single-image forward, "
            "np.concatenate([cls, tokens], axis=0)) returns one sequence, (N+1, D), without the batch "
            "axis; the other sequences are dropped.",
            "batch",
            _BATCH,
            "keeps its batch axis",
            "Keep the batch: broadcast cls_token to (B, 1, D) and concatenate along axis 1.",
        ),
        Mistake(
            "class_token_per_patch",
            "One class token per patch",
            "There is one class token per sequence, not one per patch: tiling it to (B, N, D) before "
            "concatenating gives 2N tokens, (B, 2N, D), right only when N = 1.",
            "combination",
            _NEW,
            "exactly one class token",
            "Broadcast the class token to (B, 1, D), not (B, N, D).",
        ),
        Mistake(
            "zeros_instead_of_token",
            "A zero vector in place of cls_token",
            "The class token is the given cls_token, learned in a real network; a zero row (np.zeros((B, 1, D)) "
            "as a placeholder) has the right shape but the wrong values at position 0.",
            "token",
            _SHAPES,
            "its values are used as given",
            "Prepend cls_token itself, not np.zeros.",
        ),
        Mistake(
            "feature_axis_concatenation",
            "Concatenated along the feature axis (B, N, 2D)",
            "The class token is a new token, so the concatenation is along the token axis (axis 1). "
            "Concatenating along the last axis puts the token beside every patch: N tokens of width 2D, "
            "(B, N, 2D).",
            "combination",
            _NEW,
            "along the token axis (axis 1)",
            "Concatenate along axis 1: np.concatenate([cls, patches], axis=1).",
        ),
        Mistake(
            "float32_arithmetic",
            "Computed in float32",
            "float32 keeps about 7 significant digits: converting the patches or the class token to "
            "float32 and back changes values by about 1e-8 of their size, far above the tolerance. Keep "
            "every array float64.",
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
SIZE_INPUTS = ("patches", "cls_token")

# The combinations after which the output's shape is never (B, N+1, D): position, token and
# batch no longer matter.
_WRONG_SHAPE_ALWAYS = ("add_every", "add_first", "overwrite_first", "feature_axis", "no_batch")


def run_variant(
    variants: ModuleType, inputs: Mapping[str, Any], variant: Any, arithmetic: Callable[..., Any] | None = None
) -> Any:
    """reference/variants.evaluate on one case's inputs under one configuration, in the shape
    the configuration returns: most of the classic mistakes return an array of the wrong shape,
    which the diagnosis compares with a learner's array of that same shape."""
    args = [inputs[k] for k in ("patches", "embed_dim", "cls_token")]
    return variants.evaluate(*args, v=variant, arithmetic=arithmetic)


def canonical_variant(variant: Any) -> Any:
    """One configuration per distinct function: a combination that never has the output's
    shape leaves nothing for the position, the token or the batch to change."""
    if variant.combine in _WRONG_SHAPE_ALWAYS:
        return replace(variant, position="first", token="cls", batch="every")
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
        ("combination",),
        "Only the one-patch tests (N = 1) fail: look for an assumption that there are several patches.",
    ),
    OnlyGroup(
        "width_1",
        ("combination",),
        "Only the D = 1 tests fail: look for a squeezed feature axis or a concatenation along the wrong axis.",
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
        "same class token must start every sequence (out[:, 0], not out[0, 0]).",
    ),
    GroupRule(
        ("one_patch",),
        ("batch_of_one", "large_batch"),
        ("combination",),
        "one_patch passes but longer sequences fail: look at how many class tokens you add: one per "
        "sequence, not one per patch.",
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
        "Only example 2, the one with two sequences, fails: the class token must start every sequence "
        "of the batch; {more}.",
    ),
)

# When the only group not passing is too slow.
TOO_SLOW = {
    "realistic": "Only the large ViT-Base-sized test is too slow: prepend the class token with one "
    "np.concatenate instead of Python loops over the values.",
}
