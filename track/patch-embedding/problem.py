"""The problem module of the "Patch Embedding" bundle: what cannot be data.

The grader loads this file by path (trusted, judge side) and reads the names below
(docs/bundle.md, "The problem module"):

- cases: SAMPLES (the statement's examples, inputs verbatim), RECIPES (one tuple of
  recipes per hidden group of problem.yaml), PRACTICE_RECIPES, expected_output and
  case_work;
- feedback: PARTS, PART_SECTIONS, CATALOGUE (one entry per reference/variants.py
  MISTAKES id, pointing into statement.md), CONSTANTS (a bias a fit may find) and AXES.

A recipe's `make(rng)` returns the inputs keyed by parameter name. Values are rounded
to three decimals: short JSON numbers keep the files small, and the rounded values
are still generic (no symmetry, no ties). Square projections (p*p*C == embed_dim) are
never symmetric, so that "used W_proj.T" is seen wherever it can run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from types import ModuleType
from typing import Any

import numpy as np

from grader.authoring import Axis, Constant, GroupRule, Mistake, OnlyGroup, Recipe, Sample, SampleRule

Inputs = dict[str, Any]


# --- building blocks ------------------------------------------------------------------


def _q(a: np.ndarray, decimals: int = 3) -> np.ndarray:
    return np.round(a, decimals) + 0.0  # + 0.0 turns -0.0 into 0.0


def _projection(rng: np.random.Generator, rows: int, cols: int, scale: float = 1.0) -> np.ndarray:
    """Gaussian weights with the usual 1/sqrt(fan_in) scale; a square one is never symmetric."""
    while True:
        w = _q(rng.standard_normal((rows, cols)) * scale / np.sqrt(rows))
        if rows != cols or rows == 1 or not np.array_equal(w, w.T):
            return w


def _image(rng: np.random.Generator, B: int, H: int, W: int, C: int) -> np.ndarray:
    """Pixels with a per-channel offset, so the channels of a pixel are told apart."""
    return _q(rng.standard_normal((B, H, W, C)) + rng.normal(0.0, 1.0, (1, 1, 1, C)))


def _case(rng: np.random.Generator, B: int, H: int, W: int, C: int, p: int, D: int) -> Inputs:
    return {
        "image": _image(rng, B, H, W, C),
        "patch_size": p,
        "embed_dim": D,
        "W_proj": _projection(rng, p * p * C, D),
    }


def _shape(B: int, H: int, W: int, C: int, p: int, D: int) -> Callable[[np.random.Generator], Inputs]:
    return lambda rng: _case(rng, B, H, W, C, p, D)


def _toy_image(rng: np.random.Generator) -> Inputs:
    """The teaching script's toy image (32 x 32 RGB): red ramps left to right, green top to
    bottom, blue a checkerboard of 8 x 8 squares, so every patch can be seen; p = 8."""
    y, x = np.mgrid[0:32, 0:32]
    image = np.stack([x / 31, y / 31, ((y // 8 + x // 8) % 2).astype(float)], axis=-1)
    return {"image": _q(image[None]), "patch_size": 8, "embed_dim": 64, "W_proj": _projection(rng, 192, 64)}


def _raw_pixels(B: int, H: int, W: int, C: int, p: int, D: int) -> Callable[[np.random.Generator], Inputs]:
    """Raw 8-bit pixel values 0..255, as an image file holds them, not scaled to [0, 1]."""

    def make(rng: np.random.Generator) -> Inputs:
        image = rng.integers(0, 256, (B, H, W, C)).astype(np.float64)
        return {"image": image, "patch_size": p, "embed_dim": D, "W_proj": _projection(rng, p * p * C, D)}

    return make


def _magnitude_limit(B: int, H: int, W: int, C: int, p: int, D: int) -> Callable[[np.random.Generator], Inputs]:
    """Image and weights spread up to the magnitude limit 1000 (some at exactly +-1000)."""

    def make(rng: np.random.Generator) -> Inputs:
        image = _q(rng.uniform(-1000.0, 1000.0, (B, H, W, C)))
        image.flat[0], image.flat[-1] = 1000.0, -1000.0
        w = _q(np.clip(rng.standard_normal((p * p * C, D)) * 400.0, -1000.0, 1000.0))
        return {"image": image, "patch_size": p, "embed_dim": D, "W_proj": w}

    return make


def _random_shape(rng: np.random.Generator) -> Inputs:
    p = int(rng.integers(1, 7))
    H, W = p * int(rng.integers(1, 6)), p * int(rng.integers(1, 6))
    C = int(rng.integers(1, 7))
    return _case(rng, int(rng.integers(1, 4)), H, W, C, p, int(rng.integers(1, 41)))


# --- the sample group: the statement's three examples, verbatim ----------------------


def _identity(n: int) -> list[list[int]]:
    return [[int(i == j) for j in range(n)] for i in range(n)]


SAMPLES: tuple[Sample, ...] = (
    Sample(
        "01-grey-grid",
        "Example 1: a 4 x 4 grey image, 2 x 2 patches, the identity as W_proj.",
        "With the identity as W_proj the output rows are the flattened patches themselves. Patch 0 is "
        "the top-left 2 x 2 square [1,2,5,6] read row by row, patch 1 the top-right square, then the "
        "second row of the grid. Reshaping without the transpose would give the strips [1,2,3,4], "
        "[5,6,7,8], ... instead.",
        {
            "image": [[[[1], [2], [3], [4]], [[5], [6], [7], [8]], [[9], [10], [11], [12]], [[13], [14], [15], [16]]]],
            "patch_size": 2,
            "embed_dim": 4,
            "W_proj": _identity(4),
        },
    ),
    Sample(
        "02-channels-last",
        "Example 2: a 2 x 4 image with two channels, 2 x 2 patches, the identity as W_proj.",
        "A flattened patch lists the pixels row by row with the channels of each pixel together: "
        "[1,10] is the top-left pixel, [2,20] its right neighbour. Channel by channel patch 0 would be "
        "[1,2,3,4,10,20,30,40], and column by column [1,10,3,30,2,20,4,40].",
        {
            "image": [[[[1, 10], [2, 20], [5, 50], [6, 60]], [[3, 30], [4, 40], [7, 70], [8, 80]]]],
            "patch_size": 2,
            "embed_dim": 8,
            "W_proj": _identity(8),
        },
    ),
    Sample(
        "03-batch-projection",
        "Example 3: a batch of two 2 x 4 grey images and a projection that is not symmetric.",
        "Row k of W_proj multiplies value k of the flattened patch, so its columns give each patch's "
        "mean, half the difference between its top and bottom rows, half the difference between its "
        "left and right columns, and its top-left pixel. Each image of the batch is embedded on its own.",
        {
            "image": [
                [[[1], [2], [3], [4]], [[5], [6], [7], [8]]],
                [[[0], [0], [8], [8]], [[8], [8], [0], [0]]],
            ],
            "patch_size": 2,
            "embed_dim": 4,
            "W_proj": [
                [0.25, 0.5, 0.5, 1],
                [0.25, 0.5, -0.5, 0],
                [0.25, -0.5, 0.5, 0],
                [0.25, -0.5, -0.5, 0],
            ],
        },
    ),
)


# --- hidden groups -------------------------------------------------------------------
# Shapes are (B, H, W, C, p, embed_dim).

RECIPES: dict[str, tuple[Recipe, ...]] = {
    "non_square": (
        Recipe("01-grey-2x3-grid", "B=1, 4 x 6 grey, p=2 (a 2 x 3 grid), embed_dim=5", _shape(1, 4, 6, 1, 2, 5)),
        Recipe("02-rgb-3x5-grid", "B=2, 6 x 10 RGB, p=2 (a 3 x 5 grid), embed_dim=8", _shape(2, 6, 10, 3, 2, 8)),
        Recipe("03-tall-3x2-grid", "B=1, 12 x 8, C=2, p=4 (a 3 x 2 grid), embed_dim=6", _shape(1, 12, 8, 2, 4, 6)),
    ),
    "one_patch": (
        Recipe("01-rgb-2x2", "p = H = W = 2, RGB, embed_dim=4", _shape(1, 2, 2, 3, 2, 4)),
        Recipe("02-two-channels-b2", "p = H = W = 5, C=2, B=2, embed_dim=7", _shape(2, 5, 5, 2, 5, 7)),
        Recipe("03-square-projection", "p = H = W = 4, RGB, embed_dim = 48 = p*p*C", _shape(1, 4, 4, 3, 4, 48)),
    ),
    "one_row_or_column": (
        Recipe("01-one-row", "p = H = 3 < W = 12 (one row of 4 patches), RGB", _shape(1, 3, 12, 3, 3, 10)),
        Recipe("02-one-column", "p = W = 2 < H = 8 (one column of 4 patches), C=2, B=2", _shape(2, 8, 2, 2, 2, 5)),
        Recipe("03-one-row-square", "p = H = 4 < W = 16, grey, embed_dim = 16 = p*p*C", _shape(1, 4, 16, 1, 4, 16)),
    ),
    "patch_size_1": (
        Recipe("01-rgb-3x4", "p = 1: every pixel a patch; 3 x 4 RGB, embed_dim=4", _shape(1, 3, 4, 3, 1, 4)),
        Recipe("02-b2", "p = 1, B=2, 2 x 5, C=2, embed_dim=3", _shape(2, 2, 5, 2, 1, 3)),
        Recipe("03-square-projection", "p = 1, 4 x 4 RGB, embed_dim = 3 = C", _shape(1, 4, 4, 3, 1, 3)),
    ),
    "single_channel": (
        Recipe("01-square-projection", "C = 1, 6 x 6, p=3, embed_dim = 9 = p*p", _shape(1, 6, 6, 1, 3, 9)),
        Recipe("02-b2", "C = 1, B=2, 8 x 4, p=2, embed_dim=6", _shape(2, 8, 4, 1, 2, 6)),
        Recipe("03-p5", "C = 1, 10 x 15, p=5, embed_dim=12", _shape(1, 10, 15, 1, 5, 12)),
    ),
    "rgb": (
        Recipe("01-square-projection", "RGB, 8 x 8, p=4, embed_dim = 48 = p*p*C", _shape(1, 8, 8, 3, 4, 48)),
        Recipe("02-b2-p3", "RGB, B=2, 6 x 9, p=3, embed_dim=16", _shape(2, 6, 9, 3, 3, 16)),
        Recipe("03-toy-image", "the teaching script's toy image: 32 x 32 RGB ramps and checkerboard, p=8", _toy_image),
    ),
    "many_channels": (
        Recipe("01-c5", "C=5, 4 x 4, p=2, embed_dim=8", _shape(1, 4, 4, 5, 2, 8)),
        Recipe("02-c8-b2", "C=8, B=2, 4 x 6, p=2, embed_dim=12", _shape(2, 4, 6, 8, 2, 12)),
        Recipe("03-c16-p3", "C=16, 6 x 6, p=3, embed_dim=20", _shape(1, 6, 6, 16, 3, 20)),
        Recipe("04-c16-square-projection", "C=16, 4 x 4, p=1, embed_dim = 16 = C", _shape(1, 4, 4, 16, 1, 16)),
    ),
    "large_values": (
        Recipe(
            "01-raw-pixels", "pixel values 0..255, B=2, 8 x 8 RGB, p=4, embed_dim=24", _raw_pixels(2, 8, 8, 3, 4, 24)
        ),
        Recipe(
            "02-magnitude-limit",
            "image and weights up to 1000 in magnitude, 6 x 4, C=2, p=2",
            _magnitude_limit(1, 6, 4, 2, 2, 8),
        ),
    ),
    "random": tuple(
        Recipe(f"{i:02d}-random-shape", "random B, H, W, C, p and embed_dim", _random_shape) for i in range(1, 7)
    ),
    "realistic": (
        Recipe(
            "01-vit-tiny",
            "ViT-Tiny: B=1, 224 x 224 RGB, p=16 (196 patches of 768 values), embed_dim=192",
            _shape(1, 224, 224, 3, 16, 192),
        ),
    ),
}

# The practice set: the hidden groups' recipes from the public practice seed; the realistic
# case at a fraction of the bytes (still large enough that float32 arithmetic fails).
PRACTICE_RECIPES: dict[str, tuple[Recipe, ...]] = {
    **RECIPES,
    "realistic": (
        Recipe(
            "01-vit-small-image",
            "a 96 x 96 RGB image, p=16 (36 patches of 768 values), embed_dim=64",
            _shape(1, 96, 96, 3, 16, 64),
        ),
    ),
}


def expected_output(reference: ModuleType, inputs: Mapping[str, Any], xp: Any) -> Any:
    """The reference's patch embedding in the arithmetic of namespace `xp`."""
    return reference.embed(inputs["image"], inputs["patch_size"], inputs["W_proj"], xp=xp)


def case_work(dims: Mapping[str, int]) -> int:
    """Multiply-adds of the projection: B * N * (p*p*C) * embed_dim = B*H*W*C*embed_dim."""
    return dims["B"] * dims["H"] * dims["W"] * dims["C"] * dims["embed_dim"]


def extra_case_problems(case: Any) -> list[str]:
    """A rule that cannot be data: a square W_proj in a hidden case is never symmetric, since a
    symmetric one hides "used W_proj.T" (the samples' identities are the deliberate exception).
    Not part of the Kattis input validator."""
    w = np.asarray(case.inputs["W_proj"])
    if case.group == "sample" or w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] <= 1:
        return []
    if np.any(w) and np.array_equal(w, w.T):
        return ["W_proj is square and symmetric in a hidden case (it would hide the transposed projection)"]
    return []


# --- feedback ----------------------------------------------------------------------------

# The parts of the computation a diagnosis can point at, in the order data flows.
PARTS: dict[str, str] = {
    "layout": "the image layout (channels last, (B, H, W, C))",
    "cut": "cutting the image into p x p squares (reshape, transpose, reshape)",
    "patch_order": "the order of the patches (row by row over the grid)",
    "flattening": "the order of the values in a flattened patch (pixels row by row, channels together)",
    "projection": "the projection (patches @ W_proj, no bias)",
    "precision": "floating-point precision (float64 throughout)",
}
_SHAPES, _CUT, _ORDER, _FLAT, _ALL, _PROJ, _RET = (
    "Shapes and notation",
    "Cutting the image into patches",
    "The order of the patches",
    "Flattening a patch",
    "All patches at once",
    "The projection",
    "What to return",
)
# Where statement.md specifies each part.
PART_SECTIONS: dict[str, str] = {
    "layout": _SHAPES,
    "cut": _CUT,
    "patch_order": _ORDER,
    "flattening": _FLAT,
    "projection": _PROJ,
    "precision": _RET,
}

CATALOGUE: dict[str, Mistake] = {
    m.id: m
    for m in (
        Mistake(
            "reshape_without_transpose",
            "Image reshaped to (B, N, p*p*C) without the transpose",
            "Reshaping the image straight to (B, N, p*p*C) has the right shape but cuts the wrong "
            "values: each 'patch' is p*p*C consecutive values, a strip of whole pixel rows, not a "
            "p x p square. Cut each spatial axis into (patches, pixels), bring the two patch axes "
            "together with a transpose, then flatten.",
            "cut",
            _ALL,
            "The transpose is essential",
            "Reshape to (B, H/p, p, W/p, p, C), transpose to (B, H/p, W/p, p, p, C), then reshape to (B, N, p*p*C).",
        ),
        Mistake(
            "channels_first_cut",
            "Image cut as if it were channels-first (B, C, H, W)",
            "The image is channels last, (B, H, W, C). Reshaping it as (B, C, H/p, p, W/p, p), the "
            "patchify of a PyTorch tensor, reads pixels and channels from the wrong places.",
            "layout",
            _SHAPES,
            "**channels last**",
            "Read the image as (B, H, W, C): reshape to (B, H/p, p, W/p, p, C).",
        ),
        Mistake(
            "channels_first_shape",
            "Image shape read as (B, C, H, W)",
            "The image is already channels last, (B, H, W, C). Unpacking its shape as B, C, H, W = image.shape "
            "before a channels-last cut, or 'converting' it with image.transpose(0, 2, 3, 1) first (the same "
            "computation), takes the pixel rows for channels, the columns for rows and the channels for "
            "columns. The cut then fails unless C is a multiple of p and the product unless H = C, so most "
            "tests raise an error; where it runs, each 'patch' mixes rows and channels.",
            "layout",
            _SHAPES,
            "not PyTorch's $(B, C, H, W)$",
            "Use the image as it is: B, H, W, C = image.shape, no transpose before the cut.",
        ),
        Mistake(
            "column_major_patch_order",
            "Patches listed column by column over the grid",
            "Patch k is in grid row k // (W/p) and grid column k % (W/p): the patches go left to "
            "right along the first grid row, then the next row. Listing them down the grid's "
            "columns first permutes the output's rows.",
            "patch_order",
            _ORDER,
            "**row by row over the grid**",
            "Order the patch axes (grid row, grid column) before flattening: transpose(0, 1, 3, 2, 4, 5).",
        ),
        Mistake(
            "channel_before_pixel",
            "Patch flattened channel by channel (C, p, p)",
            "A flattened patch lists the pixels row by row and the C channels of a pixel together "
            "(R G B R G B ...), the order reshape gives for a (p, p, C) patch. Listing all values of "
            "one channel first is the layout of a PyTorch Conv2d weight, not of W_proj's rows.",
            "flattening",
            _FLAT,
            "the $C$ channels of a pixel together",
            "Flatten each patch from (p, p, C), channels last: keep the channel axis after the two pixel axes.",
        ),
        Mistake(
            "column_major_pixels",
            "Pixels inside a patch read column by column",
            "Inside a patch the pixels are read row by row: value (u*p + v)*C + c is channel c of "
            "the pixel in patch row u, patch column v. Swapping the two pixel axes reads them "
            "column by column.",
            "flattening",
            _FLAT,
            "pixels row by row",
            "Keep the pixel axes in the order (row in the patch, column in the patch) before flattening.",
        ),
        Mistake(
            "no_projection",
            "Flattened patches returned without the projection",
            "The embedding is the flattened patches times W_proj, (B, N, p*p*C) @ (p*p*C, embed_dim). "
            "Returning the flattened patches themselves has the right shape only when p*p*C = embed_dim, "
            "and right values only when W_proj is the identity (examples 1 and 2); on the other tests the "
            "shape or the values are wrong.",
            "projection",
            _PROJ,
            "its flattened vector times `W_proj`",
            "Project the flattened patches: return patches @ W_proj.",
        ),
        Mistake(
            "ones_bias",
            "A bias of ones added to the projection",
            "The embedding is patches @ W_proj with no bias, unlike torch.nn.Linear or a Conv2d with its "
            "default bias. Adding a bias vector of ones (np.ones(embed_dim)) shifts every output value by 1.",
            "projection",
            _PROJ,
            "with no bias",
            "Remove the bias: return patches @ W_proj alone.",
        ),
        Mistake(
            "transposed_projection",
            "W_proj applied transposed (patches @ W_proj.T)",
            "W_proj is stored as (inputs, outputs), shape (p*p*C, embed_dim), and multiplies from the "
            "right: patches @ W_proj. Its transpose only fits when W_proj is square, and then gives "
            "other values; on every other test the product raises a shape error.",
            "projection",
            _SHAPES,
            "never transpose it",
            "Multiply by W_proj itself: patches @ W_proj.",
        ),
        Mistake(
            "rescaled_pixels",
            "Pixel values divided by 255",
            "The image is embedded as given. Dividing it by 255 first, as an image pipeline scales 8-bit "
            "pixels to [0, 1], divides every output by 255.",
            "layout",
            _SHAPES,
            "do not rescale them (no division by 255",
            "Use the image as given: remove the division by 255.",
        ),
        Mistake(
            "float32_arithmetic",
            "Computed in float32",
            "float32 keeps about 7 significant digits; its rounding errors (1e-7 relative and more) are "
            "far above the tolerance even when every convention is right. Keep every array float64.",
            "precision",
            _RET,
            "Computing in `float32` fails",
            "Keep every array float64: no .astype(np.float32), no float32 constants.",
            match="rounding",
            dtype="float32",
        ),
    )
}

# A constant a diagnosis may fit when no catalogue mistake matches (docs/feedback.md, "Combined
# and fitted diagnoses"): a bias other than ones (ones is the catalogue's `ones_bias`), the same
# value added to every output value. The grid is tried first (alone, and its head with one
# catalogue mistake); then a positive value is fitted on a log scale. A negative offset outside
# the grid or a bias vector of different values is not fitted: "No known mistake matches".
CONSTANTS: dict[str, Constant] = {
    "bias": Constant(
        "bias",
        "bias",
        "projection",
        0.0,
        (0.1, 0.01, 0.5, 2.0, 0.001, 0.2, 0.05, -1.0, -0.1),
        (-6.0, 3.0),
        "Remove the bias: return patches @ W_proj alone.",
        "every output value is shifted by {value:.6g}, a bias where the statement has none",
        signed=True,
    ),
}

# Where a wrong answer's values may be confined: the output is (B, N, embed_dim).
AXES: tuple[Axis, ...] = (
    Axis("batches", "B"),
    Axis("patches", 1, letter="N", within="batches"),
    Axis("features", "embed_dim", letter="D"),
)
AXES_PHRASES = {"everywhere": "some patches, features or batches", "spread": "every batch, patch and feature"}
SUBJECT = "the patch embedding"
# Every image is embedded on its own: large cases are compared on their first image.
BATCH_DIM = "B"
# The inputs whose sizes order the evidence, small cases first.
SIZE_INPUTS = ("image", "W_proj")


def run_variant(
    variants: ModuleType, inputs: Mapping[str, Any], variant: Any, arithmetic: Callable[..., Any] | None = None
) -> Any:
    """reference/variants.evaluate on one case's inputs under one configuration.

    Where the configuration cannot run (W_proj.T of a non-square W_proj, an image read as
    channels-first that cannot be cut or projected: a learner's program raises there, a
    run-time error) or returns the wrong shape (no projection when p*p*C != embed_dim: the
    shape check rejects it), the answer is an all-NaN array of the output's shape: it matches
    no array a program returns and never passes, so the diagnosis finds the mistake
    inconsistent with every case where the submission returned or passed, and the stored
    mistake outputs (testcases/mistakes-sample.json) hold NaN for it."""
    args = [inputs[k] for k in ("image", "patch_size", "embed_dim", "W_proj")]
    B, H, W, _ = np.shape(inputs["image"])
    p = int(inputs["patch_size"])
    shape = (B, (H // p) * (W // p), int(inputs["embed_dim"]))
    try:
        out = variants.evaluate(*args, v=variant, arithmetic=arithmetic)
    except ValueError:
        return np.full(shape, np.nan)
    return out if out.shape == shape else np.full(shape, np.nan)


def canonical_variant(variant: Any) -> Any:
    """One configuration per distinct function: a cut that is not into squares (the strips, the
    channels-first reading) fixes the order of the patches and of their values itself, so the
    grid and inside-patch orders no longer matter; without the projection, its orientation
    does not matter."""
    if not variant.project:
        variant = replace(variant, transpose_w=False)
    if variant.cut == "squares":
        return variant
    return replace(variant, grid="row_major", inside="pixel_channel")


# --- how the group pattern reads (the grader applies the first rule that fits) ---------------

# "Only this group fails", in the order they are tried.
ONLY_GROUP: tuple[OnlyGroup, ...] = (
    OnlyGroup(
        "non_square",
        ("cut", "patch_order"),
        "Only the non-square images fail: look for H and W swapped (the grid has H/p rows and W/p columns).",
    ),
    OnlyGroup(
        "many_channels",
        ("layout",),
        "Only the images with more than 3 channels fail: look for an assumption that C = 3.",
    ),
    OnlyGroup(
        "single_channel",
        ("layout",),
        "Only the grey images (C = 1) fail: look for a dropped or squeezed channel axis.",
    ),
    OnlyGroup(
        "one_patch",
        ("cut",),
        "Only the one-patch tests (p = H = W, N = 1) fail: look for an assumption that there are several patches.",
    ),
    OnlyGroup(
        "patch_size_1",
        ("cut",),
        "Only the p = 1 tests fail: look for an assumption that a patch has more than one pixel.",
    ),
    OnlyGroup(
        "large_values",
        ("precision",),
        "Only the large values fail: look for rescaled pixels (no division by 255) or lost precision.",
    ),
    OnlyGroup(
        "realistic",
        ("precision",),
        "Only the large ViT-Tiny-sized test fails: look for a size-dependent assumption or lost precision.",
    ),
    OnlyGroup("random", (), "Only random shapes fail: look at edge sizes (p = 1, one patch, C = 1, H != W)."),
)
# They mix every feature, so they may fail along with the one group.
MIXED_GROUPS = ("random", "realistic")

# What the groups where a convention cannot show say together; the first rule that fits applies.
GROUP_RULES: tuple[GroupRule, ...] = (
    GroupRule(
        ("one_patch", "patch_size_1"),
        ("non_square", "rgb"),
        ("cut",),
        "one_patch and patch_size_1 pass but larger grids fail: a single patch and one-pixel patches are "
        "right, so look at the cut: the transpose that brings the two patch axes together.",
    ),
    GroupRule(
        ("one_patch", "single_channel"),
        ("rgb",),
        ("layout",),
        "one_patch and single_channel pass but rgb fails: the error needs several channels and several "
        "patches, so look at the image layout: channels last, (B, H, W, C).",
    ),
    GroupRule(
        ("one_patch", "one_row_or_column"),
        ("non_square",),
        ("patch_order",),
        "one_patch and one_row_or_column pass but larger grids fail: look at the order of the patches, "
        "row by row over the grid.",
    ),
    GroupRule(
        ("patch_size_1", "single_channel"),
        ("one_patch",),
        ("flattening",),
        "patch_size_1 and single_channel pass but one_patch fails: look at the channel order inside a "
        "flattened patch (the channels of a pixel together).",
    ),
    GroupRule(
        ("patch_size_1",),
        ("one_patch", "single_channel"),
        ("flattening",),
        "patch_size_1 passes but one_patch and single_channel fail: look at the pixel order inside a "
        "flattened patch (row by row).",
    ),
    GroupRule(
        ("sample",),
        ("one_patch", "patch_size_1", "single_channel", "one_row_or_column"),
        ("precision",),
        "The samples pass and every hidden group fails, even those where no order of patches, pixels or "
        "channels can matter: look at float64 precision.",
    ),
)

# When only the samples ran: exactly these failing ("{more}": how to learn more).
SAMPLE_RULES: tuple[SampleRule, ...] = (
    SampleRule(
        ("sample/02-channels-last",),
        ("flattening", "layout"),
        "Only example 2, the one with two channels, fails: look at the channel order inside a flattened "
        "patch and at the channels-last layout.",
    ),
    SampleRule(
        ("sample/03-batch-projection",),
        ("projection",),
        "Only example 3, the one whose W_proj is not the identity, fails: look at how W_proj multiplies "
        "the patches (patches @ W_proj, no transpose, no bias); {more}.",
    ),
)

# When the only group not passing is too slow.
TOO_SLOW = {
    "realistic": "Only the large ViT-Tiny-sized test is too slow: cut all patches with one reshape and "
    "transpose and project them with one matrix product, instead of Python loops over pixels.",
}
