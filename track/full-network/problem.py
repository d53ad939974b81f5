"""The problem module of the "Full Network" bundle: what cannot be data.

The grader loads this file by path (trusted, judge side) and reads the names below
(docs/bundle.md, "The problem module"):

- cases: SAMPLES (the statement's examples), RECIPES (one tuple of recipes per hidden
  group of problem.yaml), PRACTICE_RECIPES, expected_output and case_work;
- feedback: PARTS (one per step of the track), PART_SECTIONS, CATALOGUE (one entry per
  reference/variants.py MISTAKES id, each naming the step to revisit), AXES and the rules
  that read the group pattern.

A recipe's `make(rng)` returns the inputs keyed by parameter name; encoder_weights is a
list of dicts, one per block. Values are rounded to three decimals (short JSON numbers,
still generic: no symmetric square weight, a class token unlike the patches). The
samples' values are tenths drawn from a fixed seed by integer arithmetic, so they are
the same numbers on every machine. Weights have the usual 1/sqrt(fan_in) scale, so the
tokens stay of order 1 through every block.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

import numpy as np

from grader.authoring import Axis, GroupRule, Mistake, OnlyGroup, Recipe, Sample

Inputs = dict[str, Any]
BLOCK_KEYS = ("Wq", "Wk", "Wv", "Wo", "W1", "W2")
PARAMETERS = (
    "image",
    "patch_size",
    "num_heads",
    "W_patch",
    "patch_bias",
    "cls_token",
    "pos_embed",
    "encoder_weights",
    "W_head",
)


# --- building blocks ------------------------------------------------------------------


def _q(a: np.ndarray, decimals: int = 3) -> np.ndarray:
    return np.round(a, decimals) + 0.0  # + 0.0 turns -0.0 into 0.0


def _mat(rng: np.random.Generator, rows: int, cols: int, scale: float) -> np.ndarray:
    while True:
        w = _q(rng.standard_normal((rows, cols)) * scale)
        # A symmetric square matrix would hide "used W.T instead of W".
        if rows != cols or rows == 1 or not np.array_equal(w, w.T):
            return w


def _block(rng: np.random.Generator, D: int, M: int) -> dict[str, np.ndarray]:
    s = 1.0 / np.sqrt(D)
    square = {k: _mat(rng, D, D, s) for k in ("Wq", "Wk", "Wv", "Wo")}
    return {**square, "W1": _mat(rng, D, M, s), "W2": _mat(rng, M, D, 1.0 / np.sqrt(M))}


def _case(
    rng: np.random.Generator, B: int, H: int, W: int, C: int, p: int, D: int, h: int, M: int, L: int, K: int
) -> Inputs:
    """A case of the given sizes; N = (H/p)(W/p) patches."""
    N = (H // p) * (W // p)
    return {
        "image": _q(rng.uniform(-1.0, 1.0, (B, H, W, C))),
        "patch_size": p,
        "num_heads": h,
        "W_patch": _mat(rng, p * p * C, D, 1.0 / np.sqrt(p * p * C)),
        "patch_bias": _q(rng.standard_normal(D) * 0.5),
        "cls_token": _q(rng.standard_normal((1, D)) + 0.5),
        "pos_embed": _q(rng.standard_normal((N + 1, D)) * 0.5),
        "encoder_weights": [_block(rng, D, M) for _ in range(L)],
        "W_head": _mat(rng, D, K, 1.0 / np.sqrt(D)),
    }


def _sizes(B: int, H: int, W: int, C: int, p: int, D: int, h: int, M: int, L: int, K: int) -> Callable[..., Inputs]:
    return lambda rng: _case(rng, B, H, W, C, p, D, h, M, L, K)


def _random_sizes(rng: np.random.Generator) -> Inputs:
    p = int(rng.integers(1, 5))
    H, W = p * int(rng.integers(1, 4)), p * int(rng.integers(2, 4))  # W > p: the patch order shows
    h = int(rng.integers(1, 4))
    D = h * int(rng.integers(max(1, 3 // h + (3 % h > 0)), 6))  # D >= 3
    B, C, L, K = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 9))
    return _case(rng, B, H, W, C, p, D, h, D * int(rng.integers(1, 4)), L, K)


def _tenths(rng: np.random.Generator, shape: tuple[int, ...]) -> list[Any]:
    """Values -0.9 .. 0.9 in tenths, from integers: the same on every machine."""
    values: list[Any] = (rng.integers(-9, 10, shape) / 10).tolist()
    return values


def _sample(seed: int, B: int, H: int, W: int, C: int, p: int, D: int, h: int, M: int, L: int, K: int) -> Inputs:
    rng = np.random.default_rng(seed)
    N = (H // p) * (W // p)
    return {
        "image": _tenths(rng, (B, H, W, C)),
        "patch_size": p,
        "num_heads": h,
        "W_patch": _tenths(rng, (p * p * C, D)),
        "patch_bias": _tenths(rng, (D,)),
        "cls_token": _tenths(rng, (1, D)),
        "pos_embed": _tenths(rng, (N + 1, D)),
        "encoder_weights": [
            {k: _tenths(rng, (D, M) if k == "W1" else (M, D) if k == "W2" else (D, D)) for k in BLOCK_KEYS}
            for _ in range(L)
        ],
        "W_head": _tenths(rng, (D, K)),
    }


# --- the sample group: the statement's three examples ----------------------------------

SAMPLES: tuple[Sample, ...] = (
    Sample(
        "01-one-patch",
        "Example 1: one 2 x 2 grey image that is a single patch (p = 2), D = 3, one head, one block, 2 classes.",
        "The image is one patch of 4 pixels: W_patch (4, 3) projects it to one token, plus patch_bias. The "
        "class token goes in front, the position table (2, 3) is added, the block runs on the 2 tokens, and "
        "the head normalizes row 0, the class token's, and multiplies it by W_head.",
        _sample(61, 1, 2, 2, 1, 2, 3, 1, 3, 1, 2),
    ),
    Sample(
        "02-two-blocks",
        "Example 2: one 2 x 4 grey image, two patches side by side (p = 2), D = 4, two heads, two blocks, 3 classes.",
        "Patch 0 is the left 2 x 2 square, patch 1 the right one (rows of the image are not patches). "
        "encoder_weights holds two blocks: block 0 runs first, then block 1 on its output.",
        _sample(62, 1, 2, 4, 1, 2, 4, 2, 2, 2, 3),
    ),
    Sample(
        "03-batch",
        "Example 3: a batch of two 2 x 2 images with 2 channels, p = 1 (four one-pixel patches), D = 3, "
        "three heads, one block, 2 classes.",
        "Each image gives its own row of logits; the same weights serve both. With p = 1 a patch is one pixel, "
        "its 2 channels flattened together.",
        _sample(63, 2, 2, 2, 2, 1, 3, 3, 3, 1, 2),
    ),
)


# --- hidden groups -------------------------------------------------------------------
# Sizes are (B, H, W, C, p, D, h, M, L, K).

RECIPES: dict[str, tuple[Recipe, ...]] = {
    "one_block": (
        Recipe("01-b2-8x8x3-p4", "B=2, 8x8x3, p=4, D=8, h=2, M=16, L=1, K=5", _sizes(2, 8, 8, 3, 4, 8, 2, 16, 1, 5)),
        Recipe("02-b1-6x9x1-p3", "B=1, 6x9x1, p=3, D=6, h=3, M=12, L=1, K=4", _sizes(1, 6, 9, 1, 3, 6, 3, 12, 1, 4)),
        Recipe("03-b3-4x8x2-p2", "B=3, 4x8x2, p=2, D=12, h=4, M=24, L=1, K=3", _sizes(3, 4, 8, 2, 2, 12, 4, 24, 1, 3)),
    ),
    "several_blocks": (
        Recipe("01-l2", "L=2: B=2, 8x8x1, p=4, D=8, h=2, M=16, K=4", _sizes(2, 8, 8, 1, 4, 8, 2, 16, 2, 4)),
        Recipe("02-l3", "L=3: B=1, 6x6x3, p=3, D=12, h=3, M=24, K=5", _sizes(1, 6, 6, 3, 3, 12, 3, 24, 3, 5)),
        Recipe("03-l4", "L=4: B=2, 4x8x2, p=4, D=8, h=4, M=32, K=3", _sizes(2, 4, 8, 2, 4, 8, 4, 32, 4, 3)),
    ),
    "one_patch": (
        Recipe("01-4x4x3", "H=W=p=4: B=1, C=3, D=8, h=2, M=16, L=2, K=5", _sizes(1, 4, 4, 3, 4, 8, 2, 16, 2, 5)),
        Recipe("02-2x2x1", "H=W=p=2: B=2, C=1, D=6, h=1, M=12, L=1, K=3", _sizes(2, 2, 2, 1, 2, 6, 1, 12, 1, 3)),
        Recipe("03-8x8x2", "H=W=p=8: B=3, C=2, D=16, h=4, M=32, L=2, K=4", _sizes(3, 8, 8, 2, 8, 16, 4, 32, 2, 4)),
    ),
    "single_head": (
        Recipe("01-d8", "h=1: B=2, 8x8x3, p=4, D=8, M=16, L=2, K=5", _sizes(2, 8, 8, 3, 4, 8, 1, 16, 2, 5)),
        Recipe("02-d5", "h=1: B=1, 6x4x1, p=2, D=5, M=10, L=1, K=3", _sizes(1, 6, 4, 1, 2, 5, 1, 10, 1, 3)),
        Recipe("03-d12", "h=1: B=2, 9x6x2, p=3, D=12, M=24, L=3, K=4", _sizes(2, 9, 6, 2, 3, 12, 1, 24, 3, 4)),
    ),
    "batch_of_one": (
        Recipe("01-8x8x3", "B=1, 8x8x3, p=4, D=16, h=4, M=32, L=2, K=6", _sizes(1, 8, 8, 3, 4, 16, 4, 32, 2, 6)),
        Recipe("02-4x6x2", "B=1, 4x6x2, p=2, D=6, h=2, M=12, L=1, K=2", _sizes(1, 4, 6, 2, 2, 6, 2, 12, 1, 2)),
        Recipe("03-12x8x1", "B=1, 12x8x1, p=4, D=10, h=2, M=20, L=2, K=1", _sizes(1, 12, 8, 1, 4, 10, 2, 20, 2, 1)),
    ),
    "random": tuple(Recipe(f"{i:02d}-random-sizes", "random sizes", _random_sizes) for i in range(1, 7)),
    "realistic": (
        Recipe(
            "01-small-vit",
            "a small ViT: B=2, 32x32x3 images, p=8 (16 patches), D=64, h=4, M=256, L=2, K=10",
            _sizes(2, 32, 32, 3, 8, 64, 4, 256, 2, 10),
        ),
    ),
}

# The practice set: the hidden groups' recipes from the public practice seed; the realistic
# case at half the width.
PRACTICE_RECIPES: dict[str, tuple[Recipe, ...]] = {
    **RECIPES,
    "realistic": (
        Recipe(
            "01-smaller-vit",
            "a smaller ViT: B=1, 16x16x3 images, p=4 (16 patches), D=32, h=4, M=128, L=2, K=10",
            _sizes(1, 16, 16, 3, 4, 32, 4, 128, 2, 10),
        ),
    ),
}


def expected_output(reference: ModuleType, inputs: Mapping[str, Any], xp: Any) -> Any:
    """The reference's logits in the arithmetic of namespace `xp`."""
    return reference.forward(*(inputs[k] for k in PARAMETERS), xp=xp)


def case_work(dims: Mapping[str, int]) -> int:
    """Multiply-adds: the patch projection, then per block the projections, scores and MLP."""
    B, p, C, D, M, L = (dims[k] for k in ("B", "patch_size", "C", "D", "M", "L"))
    T = (dims["H"] // p) * (dims["W"] // p) + 1
    return B * (T * p * p * C * D + L * T * (4 * D * D + 2 * T * D + 2 * D * M) + D * dims["num_classes"])


# --- feedback ----------------------------------------------------------------------------

SUBJECT = "the forward pass"

# One part per step of the track: a mistake's part says which earlier step to revisit.
PARTS: dict[str, str] = {
    "patches": "step 1, Patch Embedding (cutting the image into patches, W_patch and patch_bias)",
    "class_token": "step 2, Class Token (prepended at position 0)",
    "position": "step 3, Position Embedding (pos_embed added to every token)",
    "blocks": "step 4, the Encoder Block (pre-norm, every block in the order of the list)",
    "head": "step 5, MLP Head (row 0, the final LayerNorm, W_head)",
    "precision": "floating-point precision (float64 throughout)",
}
_S1, _S2, _S3, _S4, _S5, _RET = (
    "Step 1: patch embedding",
    "Step 2: the class token",
    "Step 3: the position table",
    "Step 4: the encoder blocks",
    "Step 5: the head",
    "What to return",
)
# Where statement.md specifies each part.
PART_SECTIONS: dict[str, str] = {
    "patches": _S1,
    "class_token": _S2,
    "position": _S3,
    "blocks": _S4,
    "head": _S5,
    "precision": _RET,
}

CATALOGUE: dict[str, Mistake] = {
    m.id: m
    for m in (
        Mistake(
            "patches_as_strips",
            "Patches cut as strips: the reshape of step 1 without the transpose",
            "This is the wrong reshape of step 1, Patch Embedding: revisit track/patch-embedding. Reshaping the "
            "image straight to (B, N, p*p*C) reads p*p*C consecutive values, which are strips of image rows, not "
            "p x p squares. Cut each spatial axis into (patches, pixels), bring the two patch axes together "
            "(transpose), then flatten.",
            "patches",
            _S1,
            "square of p x p pixels",
            "Reshape to (B, H/p, p, W/p, p, C), transpose to (B, H/p, W/p, p, p, C), then reshape to (B, N, p*p*C).",
        ),
        Mistake(
            "patch_bias_skipped",
            "patch_bias left out",
            "A mistake of step 1, Patch Embedding: revisit track/patch-embedding and this statement's step 1. "
            "Every patch token is patches @ W_patch + patch_bias; leaving the bias out shifts every patch token.",
            "patches",
            _S1,
            "plus `patch_bias`",
            "Add patch_bias to patches @ W_patch, before the class token is prepended.",
        ),
        Mistake(
            "patch_bias_after_class_token",
            "patch_bias added after the class token is prepended (to the class token too)",
            "A mistake of step 1, Patch Embedding, against step 2: revisit track/patch-embedding and "
            "track/class-token. patch_bias belongs to the patch projection, so only the N patch tokens get it; "
            "adding it to the whole sequence after prepending also shifts the class token.",
            "patches",
            _S1,
            "before the class token is prepended",
            "Add patch_bias to the patch tokens only, then prepend cls_token unchanged.",
        ),
        Mistake(
            "class_token_appended",
            "Class token appended after the patches",
            "A mistake of step 2, Class Token: revisit track/class-token. The class token is token 0, the row the "
            "head reads; appending it puts patch 0 at row 0, so the head classifies a patch.",
            "class_token",
            _S2,
            "position 0",
            "Prepend: np.concatenate([cls, tokens], axis=1) with cls of shape (B, 1, D).",
        ),
        Mistake(
            "position_table_skipped",
            "The position table never added",
            "A mistake of step 3, Position Embedding: revisit track/position-embedding. pos_embed (N+1, D) is "
            "added to every sequence after the class token is prepended; without it the blocks see the tokens "
            "without their positions.",
            "position",
            _S3,
            "added to every sequence",
            "Add pos_embed to the (B, N+1, D) sequence before the first block.",
        ),
        Mistake(
            "class_token_row_skipped",
            "The class token's row 0 of the position table left out",
            "A mistake of step 3, Position Embedding: revisit track/position-embedding. The table has N + 1 rows "
            "because the class token has a position too: adding pos_embed[1:] to the patch tokens only (tokens 1 "
            "to N) leaves token 0 without row 0, and the head reads token 0.",
            "position",
            _S3,
            "row 0 to the class token",
            "Add the whole table, all N + 1 rows, to the whole sequence: z = z + pos_embed.",
        ),
        Mistake(
            "post_norm_blocks",
            "Post-norm blocks: LayerNorm after each residual sum",
            "A mistake of step 4, the Encoder Block: revisit the root exercise (statement.md of ViT Encoder "
            "Block). The block is pre-norm: y = x + MSA(LN(x)), then y + MLP(LN(y)); the 2017 Transformer's "
            "LN(x + MSA(x)) is a different network.",
            "blocks",
            _S4,
            "pre-norm",
            "Normalize the input of each sublayer, not the residual sum: y = x + MSA(LN(x)); out = y + MLP(LN(y)).",
        ),
        Mistake(
            "blocks_in_reverse_order",
            "Encoder blocks applied in reverse order",
            "A mistake of step 4, the Encoder Block (the stacking): revisit this statement's step 4. "
            "encoder_weights[0] is the first block the tokens meet; walking the list backwards gives another "
            "network. Only L = 1 hides it.",
            "blocks",
            _S4,
            "in the order of the list",
            "Loop over encoder_weights from its first item to its last.",
        ),
        Mistake(
            "first_block_only",
            "Only the first encoder block applied",
            "A mistake of step 4, the Encoder Block (the stacking): revisit this statement's step 4. Every block "
            "of encoder_weights is applied, each to the previous one's output; stopping after the first is right "
            "only when L = 1.",
            "blocks",
            _S4,
            "every block",
            "Apply every dict of encoder_weights in turn: for w in encoder_weights: z = block(z, w).",
        ),
        Mistake(
            "erf_gelu",
            "GELU computed with erf instead of the tanh approximation",
            "A mistake of step 4, the Encoder Block: revisit the root exercise (statement.md of ViT Encoder "
            "Block). The block's GELU is the tanh approximation 0.5*u*(1 + tanh(sqrt(2/pi)*(u + 0.044715*u^3))); "
            "the exact form 0.5*u*(1 + erf(u/sqrt(2))) (PyTorch's nn.GELU() default) differs from it by up to "
            "about 1e-3, far above the tolerance.",
            "blocks",
            _S4,
            "the tanh form",
            "Use the tanh approximation of GELU from the statement, not erf.",
        ),
        Mistake(
            "scale_by_sqrt_d_model",
            "Attention scores scaled by 1/sqrt(D) instead of 1/sqrt(d_h)",
            "A mistake of step 4, the Encoder Block: revisit the root exercise (statement.md of ViT Encoder "
            "Block). The scores are scaled by the head width d_h = D / num_heads, not the model width D; the two "
            "agree only when num_heads = 1, so single-head tests pass and multi-head tests fail.",
            "blocks",
            _S4,
            r"K_i^\top / \sqrt{d_h}",
            "Scale the scores by 1/sqrt(D // num_heads), the head width, not 1/sqrt(D).",
        ),
        Mistake(
            "sample_variance",
            "LayerNorm uses the sample variance (divides by D - 1)",
            "A mistake of step 4, the Encoder Block, repeated in step 5's final LayerNorm: revisit the root "
            "exercise (statement.md of ViT Encoder Block) and track/mlp-head. Every LayerNorm uses the population "
            "variance, the mean of the squared deviations (divide by D, np.var's default ddof=0); dividing by "
            "D - 1 (ddof=1, torch.var's default) scales every normalized token by sqrt((D-1)/D).",
            "blocks",
            _S4,
            "divide by $D$",
            "Compute the variance with ddof=0 (divide by D) in every LayerNorm, the final one too.",
        ),
        Mistake(
            "head_reads_mean_pool",
            "The head reads the mean of the tokens",
            "A mistake of step 5, MLP Head: revisit track/mlp-head. The head reads row 0, the class token's; "
            "mean-pooling the tokens (another ViT variant) is not this network.",
            "head",
            _S5,
            "row 0",
            "Take z[:, 0], not z.mean(axis=1).",
        ),
        Mistake(
            "head_reads_last_row",
            "The head reads the last row",
            "A mistake of step 5, MLP Head: revisit track/mlp-head. The class token is row 0; z[:, -1] is the "
            "last patch's token.",
            "head",
            _S5,
            "row 0",
            "Take z[:, 0], not z[:, -1].",
        ),
        Mistake(
            "final_norm_skipped",
            "The final LayerNorm left out",
            "A mistake of step 5, MLP Head: revisit track/mlp-head. The class token's row is normalized (population "
            "variance, eps = 1e-6 inside the square root, no scale or shift) before W_head.",
            "head",
            _S5,
            "final LayerNorm",
            "Normalize z[:, 0] over its D features before multiplying by W_head.",
        ),
        Mistake(
            "float32_arithmetic",
            "Computed in float32",
            "float32 keeps about 7 significant digits: any float32 array in the forward pass gives errors near "
            "1e-7, far above the tolerance. Keep every array float64.",
            "precision",
            _RET,
            "Converting to `float32` fails",
            "Keep every array float64: no .astype(np.float32), no float32 buffers.",
            match="rounding",
            dtype="float32",
        ),
    )
}

# Where a wrong answer's values may be confined: the output is (B, K).
AXES: tuple[Axis, ...] = (
    Axis("images", "B"),
    Axis("classes", "num_classes", letter="K", within="images"),
)
AXES_PHRASES = {"everywhere": "some images or classes", "spread": "every image and class"}
# Every image is independent: large cases are compared on their first.
BATCH_DIM = "B"
# The inputs whose sizes order the evidence, small cases first.
SIZE_INPUTS = ("image", "W_patch")


def run_variant(
    variants: ModuleType, inputs: Mapping[str, Any], variant: Any, arithmetic: Callable[..., Any] | None = None
) -> Any:
    """reference/variants.evaluate on one case's inputs under one configuration."""
    return variants.evaluate(*(inputs[k] for k in PARAMETERS), v=variant, arithmetic=arithmetic)


# --- how the group pattern reads (the grader applies the first rule that fits) ---------------

ONLY_GROUP: tuple[OnlyGroup, ...] = (
    OnlyGroup(
        "several_blocks",
        ("blocks",),
        "Only the tests with several blocks fail: apply every block of encoder_weights, in the order of the "
        "list (step 4).",
    ),
    OnlyGroup(
        "realistic",
        ("precision",),
        "Only the large realistic test fails: look for a size written into the code.",
    ),
    OnlyGroup("random", (), "Only random sizes fail: look at edge sizes (h = 1, one patch, K = 1)."),
)
# They mix every feature, so they may fail along with the one group.
MIXED_GROUPS = ("random", "realistic")

GROUP_RULES: tuple[GroupRule, ...] = (
    GroupRule(
        ("one_block",),
        ("several_blocks",),
        ("blocks",),
        "one_block passes but several_blocks fails: one block is right, so look at the stacking (step 4): "
        "every block of encoder_weights, first to last, each on the previous one's output.",
    ),
    GroupRule(
        ("one_patch",),
        ("one_block", "batch_of_one"),
        ("patches",),
        "one_patch passes but larger images fail: a single patch is right, so look at how the image is cut "
        "(step 1, Patch Embedding): p x p squares in row-major order, not strips of rows.",
    ),
)

# When the only group not passing is too slow.
TOO_SLOW = {
    "realistic": "Only the realistic test is too slow: replace the Python loops over pixels, tokens or heads "
    "by reshapes and matrix products.",
}
