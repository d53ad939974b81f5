"""The ViT Encoder Block's problem module: what about this problem cannot be data.

problem.yaml says what the problem is; this module, loaded by the grader from the bundle
(`Bundle.load_problem_module`), holds the code that goes with it: the recipes of the test
cases and the statement's examples, how the reference computes an expected output, the
work a case costs; and, below, the mistake catalogue and the rules that read a wrong
answer's pattern. The interface is documented in docs/bundle.md, "The problem module";
grader/problem/authoring.py and grader/feedback/authoring.py hold its records.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import ModuleType
from typing import Any

import numpy as np

from grader.authoring import Axis, Constant, GroupRule, Mistake, OnlyGroup, Recipe, Sample, SampleRule

Inputs = dict[str, Any]  # the arrays, and num_heads an int

# --- cases: the recipes of the test cases (read by grader/problem/generate.py) ---


def _q(a: np.ndarray, decimals: int = 3) -> np.ndarray:
    return np.round(a, decimals) + 0.0  # + 0.0 turns -0.0 into 0.0


def _weights(rng: np.random.Generator, D: int, M: int, scale: float = 1.0) -> dict[str, np.ndarray]:
    """Non-symmetric Gaussian weights with the usual 1/sqrt(fan_in) scale."""

    def mat(rows: int, cols: int, s: float) -> np.ndarray:
        while True:
            w = _q(rng.standard_normal((rows, cols)) * s)
            # A symmetric square matrix would hide "used W.T instead of W".
            if rows != cols or rows == 1 or not np.array_equal(w, w.T):
                return w

    s = scale / np.sqrt(D)
    return {
        "Wq": mat(D, D, s),
        "Wk": mat(D, D, s),
        "Wv": mat(D, D, s),
        "Wo": mat(D, D, s),
        "W1": mat(D, M, s),
        "W2": mat(M, D, 1.0 / np.sqrt(M)),
    }


def _tokens(rng: np.random.Generator, B: int, N: int, D: int) -> np.ndarray:
    """Tokens with a per-token offset, so subtracting the mean matters."""
    return _q(rng.standard_normal((B, N, D)) + rng.normal(0.0, 1.0, (B, N, 1)))


def _case(rng: np.random.Generator, B: int, N: int, D: int, H: int, M: int, **overrides: Any) -> Inputs:
    inputs: Inputs = {"x": _tokens(rng, B, N, D), "num_heads": H, **_weights(rng, D, M)}
    inputs.update(overrides)
    return inputs


def _shape_case(B: int, N: int, D: int, H: int, M: int) -> Callable[[np.random.Generator], Inputs]:
    return lambda rng: _case(rng, B, N, D, H, M)


def _zeroed(B: int, N: int, D: int, H: int, M: int, which: str) -> Callable[[np.random.Generator], Inputs]:
    def make(rng: np.random.Generator) -> Inputs:
        inputs = _case(rng, B, N, D, H, M)
        inputs[which] = np.zeros_like(inputs[which])
        return inputs

    return make


def _near_constant(
    B: int, N: int, D: int, H: int, M: int, noise: float, exact_rows: int = 0
) -> Callable[[np.random.Generator], Inputs]:
    """Tokens = per-token constant + tiny noise, so the variance is far below eps."""

    def make(rng: np.random.Generator) -> Inputs:
        level = _q(rng.normal(0.0, 1.0, (B, N, 1)))
        x = level + np.round(rng.standard_normal((B, N, D)) * noise, 9)
        x[:, :exact_rows, :] = level[:, :exact_rows, :]  # variance exactly 0
        return {"x": x + 0.0, "num_heads": H, **_weights(rng, D, M)}

    return make


def _large_scores(B: int, N: int, D: int, H: int, M: int, qk_scale: float) -> Callable[[np.random.Generator], Inputs]:
    """Scale Wq and Wk so attention scores reach the thousands (exp overflows past 709)."""

    def make(rng: np.random.Generator) -> Inputs:
        inputs = _case(rng, B, N, D, H, M)
        inputs["Wq"] = _q(inputs["Wq"] * qk_scale, 2)
        inputs["Wk"] = _q(inputs["Wk"] * qk_scale, 2)
        return inputs

    return make


def _random_shape(rng: np.random.Generator) -> Inputs:
    H = int(rng.integers(1, 7))
    D = H * int(rng.integers(1, 7))
    return _case(rng, int(rng.integers(1, 4)), int(rng.integers(1, 13)), D, H, int(rng.integers(1, 41)))


# --- the sample group: the statement's three examples, verbatim ----------------

_I2 = [[1.0, 0.0], [0.0, 1.0]]

SAMPLES: tuple[Sample, ...] = (
    Sample(
        "01-identity-weights",
        "Example 1: one head, identity weights.",
        "Pre-normalized attention and the GELU MLP contribute through separate residual paths.",
        {"x": [[[1, 0], [0, 1]]], "num_heads": 1, "Wq": _I2, "Wk": _I2, "Wv": _I2, "Wo": _I2, "W1": _I2, "W2": _I2},
    ),
    Sample(
        "02-two-heads",
        "Example 2: two heads of width 1; the constant third token is normalised to zero.",
        "The third token [1,1] is constant, so LayerNorm maps it to zeros: its query gives every key "
        "the same score, and the values it averages (about [1,-1], [-1,1] and [0,0]) cancel. "
        "Both residual paths then add zero, so it comes out unchanged.",
        {
            "x": [[[1, 0], [0, 1], [1, 1]]],
            "num_heads": 2,
            "Wq": [[0, 1], [1, 0]],
            "Wk": _I2,
            "Wv": _I2,
            "Wo": _I2,
            "W1": _I2,
            "W2": _I2,
        },
    ),
    Sample(
        "03-batch-of-two",
        "Example 3: a batch of two sequences and non-identity weights.",
        "The second sequence is the first plus a per-token constant ([1,1] and [-1,-1]). LayerNorm "
        "removes such a constant, so both sub-blocks add the same updates to both sequences and the "
        "outputs differ by exactly that constant.",
        {
            "x": [[[1, -1], [0, 2]], [[2, 0], [-1, 1]]],
            "num_heads": 1,
            "Wq": [[1, 0], [0, 0.5]],
            "Wk": [[0.5, 0], [0, 1]],
            "Wv": [[1, 0.25], [-0.5, 1]],
            "Wo": [[1, 0], [0.5, 1]],
            "W1": [[1, -0.5], [0.5, 1]],
            "W2": [[0.5, 0], [0, 1]],
        },
    ),
)


# --- hidden groups -------------------------------------------------------------

RECIPES: dict[str, tuple[Recipe, ...]] = {
    "single_head": (
        Recipe("01-d4-n3", "B=1, N=3, D=4, one head, M=16", _shape_case(1, 3, 4, 1, 16)),
        Recipe("02-d8-n5-b2", "B=2, N=5, D=8, one head, M=32", _shape_case(2, 5, 8, 1, 32)),
        Recipe("03-d6-n4-m5", "B=1, N=4, D=6, one head, M=5", _shape_case(1, 4, 6, 1, 5)),
    ),
    "multi_head": (
        Recipe("01-two-heads", "B=1, N=5, D=8, 2 heads of width 4", _shape_case(1, 5, 8, 2, 32)),
        Recipe("02-four-heads-b2", "B=2, N=6, D=16, 4 heads of width 4", _shape_case(2, 6, 16, 4, 24)),
        Recipe("03-head-width-1", "B=1, N=4, D=6, num_heads = D = 6 (head width 1)", _shape_case(1, 4, 6, 6, 12)),
        Recipe("04-three-heads", "B=1, N=7, D=12, 3 heads of width 4", _shape_case(1, 7, 12, 3, 48)),
    ),
    "single_token": (
        Recipe("01-one-head", "N=1, B=1, D=8, one head", _shape_case(1, 1, 8, 1, 32)),
        Recipe("02-two-heads-b3", "N=1, B=3, D=8, 2 heads", _shape_case(3, 1, 8, 2, 16)),
    ),
    "batch": (
        Recipe("01-b3", "B=3 distinct sequences, N=4, D=8, 2 heads", _shape_case(3, 4, 8, 2, 32)),
        Recipe("02-b4", "B=4 distinct sequences, N=3, D=6, 3 heads", _shape_case(4, 3, 6, 3, 9)),
    ),
    "mlp_width": (
        Recipe("01-m1", "M=1 (a single hidden unit), D=8, 2 heads", _shape_case(1, 4, 8, 2, 1)),
        Recipe("02-m3", "M=3, D=6, 3 heads", _shape_case(2, 3, 6, 3, 3)),
        Recipe("03-m2d", "M=2D=16, D=8, 4 heads", _shape_case(1, 5, 8, 4, 16)),
        Recipe("04-m8d", "M=8D=64, D=8, 2 heads", _shape_case(1, 4, 8, 2, 64)),
    ),
    "attention_only": (
        Recipe("01-w2-zero", "W2 = 0: z equals the first residual y; D=8, 2 heads", _zeroed(1, 5, 8, 2, 32, "W2")),
        Recipe("02-w2-zero-b2", "W2 = 0, B=2, D=12, 4 heads", _zeroed(2, 6, 12, 4, 12, "W2")),
    ),
    "mlp_only": (
        Recipe(
            "01-wo-zero", "Wo = 0: y = x, only the MLP changes the tokens; D=8, 2 heads", _zeroed(1, 5, 8, 2, 32, "Wo")
        ),
        Recipe("02-wo-zero-b2", "Wo = 0, B=2, D=6, one head, M=10", _zeroed(2, 3, 6, 1, 10, "Wo")),
    ),
    "layernorm_eps": (
        Recipe(
            "01-variance-1e-8",
            "token variance ~1e-8, far below eps=1e-6; D=8, 2 heads",
            _near_constant(1, 5, 8, 2, 32, noise=1e-4),
        ),
        Recipe(
            "02-constant-tokens",
            "two tokens exactly constant (variance 0), the rest ~1e-8",
            _near_constant(2, 4, 6, 3, 12, noise=1e-4, exact_rows=2),
        ),
        Recipe(
            "03-variance-near-eps",
            "token variance ~1e-6, comparable to eps; D=8, one head",
            _near_constant(1, 4, 8, 1, 16, noise=1e-3),
        ),
    ),
    "stability": (
        Recipe(
            "01-scores-thousands",
            "Wq, Wk scaled x40: scores in the thousands; D=8, 2 heads",
            _large_scores(1, 6, 8, 2, 32, 40.0),
        ),
        Recipe("02-scores-thousands-b2", "Wq, Wk scaled x25, B=2, D=12, 3 heads", _large_scores(2, 5, 12, 3, 24, 25.0)),
    ),
    "random": tuple(
        Recipe(f"{i:02d}-random-shape", "random B, N, D, num_heads and M", _random_shape) for i in range(1, 7)
    ),
    "realistic": (
        Recipe("01-vit-tiny", "ViT-Tiny sizes: B=2, N=197, D=192, 3 heads, M=768", _shape_case(2, 197, 192, 3, 768)),
    ),
}


# --- the visible practice set --------------------------------------------------------
# The hidden groups' recipes from a separate public seed (tests.practice_seed), so a learner
# offline gets the same group reading and fingerprints as the judge. The realistic case is
# ViT-Tiny at half width (3 heads of width 32) with 7x7 patches plus the class token: large
# enough that float32 arithmetic fails, a fifth of the hidden one's bytes.

PRACTICE_RECIPES: dict[str, tuple[Recipe, ...]] = {
    **RECIPES,
    "realistic": (
        Recipe(
            "01-vit-half-width",
            "ViT-Tiny at half width: B=1, N=50 (7x7 patches + class token), D=96, 3 heads, M=384",
            _shape_case(1, 50, 96, 3, 384),
        ),
    ),
}


def expected_output(reference: ModuleType, inputs: Mapping[str, Any], xp: Any) -> Any:
    """The reference's block on `inputs` in the arithmetic `xp` (the generator's double-double)."""
    return reference.encoder_block(*inputs.values(), xp=xp)


# Why the tolerance is what it is, for docs/tolerance.md ("Why this tolerance"; the
# general reasons follow it): Markdown bullets.
TOLERANCE_ARGUMENT = """
- Honest float64 errors are not all at the 1e-16 level. LayerNorm divides by
  sqrt(var + eps), which is about 1e-3 for the near-constant tokens of the
  `layernorm_eps` group, so it amplifies rounding in the centred values about
  1000-fold; the one-pass variance E[x^2] - mean^2 (`accepted/one_pass_variance`)
  additionally cancels catastrophically there and is the least accurate honest
  style, near 1e-10. A tolerance at 1e-10 would reject it, and nothing in the
  statement forbids it.
- The closest mistakes are a GELU constant typed as 0.7979 (about 1e-5) and
  float32 arithmetic (about 1e-7 relative per operation; its largest error is
  amplified by the same LayerNorm effect). Both stay more than 100x above the
  tolerance on their worst hidden case.
"""


def extra_case_problems(case: Any) -> list[str]:
    """Symmetric square weights hide transposition mistakes, so a hidden case may not have them;
    zero matrices are the deliberate exception of the attention_only / mlp_only groups."""
    if case.group == "sample" or case.inputs["x"].shape[-1] <= 1:
        return []
    return [
        f"{key} is symmetric in a hidden case (it would hide transposition bugs)"
        for key in ("Wq", "Wk", "Wv", "Wo")
        if np.any(case.inputs[key]) and np.array_equal(case.inputs[key], case.inputs[key].T)
    ]


def case_work(sizes: Mapping[str, int]) -> int:
    """The multiply-adds of one block (the projections, the scores, the MLP): a case's relative cost."""
    B, N, D, M = sizes["B"], sizes["N"], sizes["D"], sizes["M"]
    return B * N * (4 * D * D + 2 * N * D + 2 * D * M)


# --- feedback: the mistake catalogue, constants, axes (read by grader/feedback/) ---
# The human side of reference/variants.py's MISTAKES (no numerics: this ships in the practice
# archive): each mistake's title, explanation, part of the block, fix and the statement's
# words it violates (a section heading plus a phrase quoted from it, both checked against
# statement.md by tests/test_diagnose.py); the constants a diagnosis may fit; the axes along
# which an error is located; how the group pattern is read. Records: grader/feedback/authoring.py.


SUBJECT = "the block"

# The parts of the block a diagnosis can point at, in the order data flows.
PARTS: dict[str, str] = {
    "layer_norm": "layer normalization (mean, population variance, eps inside the square root)",
    "attention_scores": "the attention weights (Q and K, the 1/sqrt(d_h) scale, the softmax axis)",
    "softmax_stability": "the softmax's numerical stability",
    "heads": "splitting into heads and merging them back",
    "block_structure": "how the block is wired (pre-norm, the two residuals, what the MLP reads)",
    "activation": "the MLP activation (GELU)",
    "mlp": "the MLP path (second layer norm, W1, GELU, W2)",
    "precision": "floating-point precision (float64 throughout)",
}
# Where statement.md specifies each part.
PART_SECTIONS: dict[str, str] = {
    "layer_norm": "Layer normalization",
    "attention_scores": "Multi-head self-attention",
    "softmax_stability": "Multi-head self-attention",
    "heads": "Multi-head self-attention",
    "block_structure": "The whole block",
    "activation": "GELU",
    "mlp": "The whole block",
    "precision": "What to return",
}


_LN, _ATT, _GELU, _BLOCK, _RET = (
    "Layer normalization",
    "Multi-head self-attention",
    "GELU",
    "The whole block",
    "What to return",
)

CATALOGUE: dict[str, Mistake] = {
    m.id: m
    for m in (
        Mistake(
            "erf_gelu",
            "GELU computed with erf instead of the tanh approximation",
            "The block's GELU is the tanh approximation 0.5*u*(1 + tanh(sqrt(2/pi)*(u + 0.044715*u^3))). "
            "The exact form 0.5*u*(1 + erf(u/sqrt(2))) (PyTorch's nn.GELU() default) differs from it by up "
            "to about 1e-3, far above the tolerance.",
            "activation",
            _GELU,
            "GELU is the **tanh approximation**",
            "Use the tanh approximation of GELU from the statement, not erf.",
        ),
        Mistake(
            "eps_1e5",
            "LayerNorm with eps = 1e-5 instead of 1e-6",
            "1e-5 is PyTorch's default, but this block uses eps = 1e-6. The difference is small for "
            "ordinary tokens and large for tokens whose variance is close to or below eps.",
            "layer_norm",
            _LN,
            r"$\varepsilon = 10^{-6}$ is added to the variance **inside** the square root",
            "Use eps = 1e-6 in both layer norms.",
        ),
        Mistake(
            "eps_outside_sqrt",
            "LayerNorm divides by sqrt(var) + eps",
            "eps belongs inside the square root: divide by sqrt(var + eps). Adding it to the standard "
            "deviation instead gives a different function; for a token whose variance is far below eps "
            "the two disagree completely.",
            "layer_norm",
            _LN,
            "**inside** the square root (not to the standard deviation",
            "Divide by np.sqrt(var + eps), with eps inside the square root.",
        ),
        Mistake(
            "sample_variance",
            "LayerNorm uses the sample variance (divides by D - 1)",
            "The variance is the population variance, the mean of the squared deviations (divide by D, "
            "np.var's default ddof=0). Dividing by D - 1 (ddof=1, torch.var's default) scales every "
            "normalized token by sqrt((D-1)/D).",
            "layer_norm",
            _LN,
            "The variance is the **population** variance",
            "Compute the variance with ddof=0 (divide by D).",
        ),
        Mistake(
            "no_scaling",
            "Attention scores are not scaled by 1/sqrt(d_h)",
            "The scores are Q K^T / sqrt(d_h). Without the division the softmax is too peaked and the "
            "attention weights are wrong whenever there is more than one token.",
            "attention_scores",
            _ATT,
            r"The scale is $1/\sqrt{d_h}$ with the **head** width",
            "Divide the scores by sqrt(d_h), d_h = D / num_heads.",
        ),
        Mistake(
            "scale_by_sqrt_d_model",
            "Attention scores scaled by 1/sqrt(D) instead of 1/sqrt(d_h)",
            "The scale uses the head width d_h = D / num_heads, not the model width D. The two agree only "
            "when num_heads = 1, which is why single-head tests pass and multi-head tests fail.",
            "attention_scores",
            _ATT,
            r"The scale is $1/\sqrt{d_h}$ with the **head** width",
            "Scale the scores by 1/sqrt(D // num_heads), the head width, not 1/sqrt(D).",
        ),
        Mistake(
            "softmax_wrong_axis",
            "Softmax over the queries instead of the keys",
            "For each query (a row of the (N, N) score matrix) the weights over the keys must sum to 1, so "
            "the softmax runs over the last axis. Normalizing over the other axis mixes queries.",
            "attention_scores",
            _ATT,
            "The softmax runs over the **keys**, the last axis of $S$",
            "Take the softmax over the last axis (axis=-1) of the scores.",
        ),
        Mistake(
            "naive_softmax",
            "Softmax without subtracting the row maximum",
            "np.exp overflows for scores above about 709 and inf/inf gives NaN. Subtracting each row's "
            "maximum before exp does not change the result and never overflows.",
            "softmax_stability",
            _ATT,
            "The softmax must be numerically stable",
            "Subtract each row's maximum from the scores before np.exp.",
        ),
        Mistake(
            "split_heads_without_transpose",
            "Heads split by reshape without moving the head axis",
            "Reshaping (B, N, D) straight to (B, H, N, d_h) cuts the data in the wrong places: a 'head' "
            "then holds pieces of several tokens. Reshape to (B, N, H, d_h) and transpose to (B, H, N, d_h).",
            "heads",
            _ATT,
            "move the head axis in front of the token axis",
            "Split with .reshape(B, N, H, d_h).transpose(0, 2, 1, 3).",
        ),
        Mistake(
            "interleaved_heads",
            "Heads take interleaved columns",
            "Head i owns the contiguous columns i*d_h .. (i+1)*d_h - 1, not every H-th column. With "
            "interleaved columns each head attends with the wrong channels.",
            "heads",
            _ATT,
            "Split into heads by **contiguous column blocks**",
            "Give head i the contiguous columns i*d_h to (i+1)*d_h - 1.",
        ),
        Mistake(
            "merge_heads_without_transpose",
            "Heads merged by reshape without moving the head axis back",
            "The merge must invert the split: transpose (B, H, N, d_h) back to (B, N, H, d_h) before "
            "reshaping to (B, N, D). Reshaping directly mixes the outputs of different tokens.",
            "heads",
            _ATT,
            "the exact inverse of the split",
            "Merge with .transpose(0, 2, 1, 3).reshape(B, N, D).",
        ),
        Mistake(
            "post_norm",
            "Post-norm block (LayerNorm after each residual sum)",
            "This is a pre-norm block: LayerNorm is applied to the input of each sub-block, "
            "y = x + Attn(LN(x)) and z = y + MLP(LN(y)), and the result is not normalized again. "
            "Normalizing after each sum is the 2017 Transformer's post-norm layout.",
            "block_structure",
            _BLOCK,
            "this is a **pre-norm** block",
            "Normalize the input of each sub-block, never the sum after a residual.",
        ),
        Mistake(
            "missing_attention_residual",
            "First residual missing (y = attention output)",
            "The first residual adds the block's input back: y = x + concat(A_1..A_H) Wo.",
            "block_structure",
            _BLOCK,
            "The residual adds the input $x$ itself",
            "Add x to the projected attention output: y = x + concat(heads) @ Wo.",
        ),
        Mistake(
            "missing_mlp_residual",
            "Second residual missing (z = MLP output)",
            "The second residual adds y back: z = y + GELU(LN(y) W1) W2.",
            "block_structure",
            _BLOCK,
            "its residual adds $y$",
            "Add y to the MLP output: z = y + GELU(LN(y) @ W1) @ W2.",
        ),
        Mistake(
            "mlp_from_x",
            "MLP applied to x instead of y",
            "The MLP sub-block reads y, the output of the attention sub-block, not the block's input x. "
            "Both paths are right on their own, which is why the attention-only and MLP-only tests pass.",
            "block_structure",
            _BLOCK,
            "The MLP reads $y$",
            "Feed LN(y), not LN(x), to the MLP.",
        ),
        Mistake(
            "relu_activation",
            "ReLU instead of GELU",
            "The activation between W1 and W2 is the tanh-approximated GELU, not ReLU; they differ for "
            "every negative and every small positive input.",
            "activation",
            _GELU,
            "not ReLU",
            "Replace ReLU with the tanh approximation of GELU.",
        ),
        Mistake(
            "no_activation",
            "No activation between W1 and W2",
            "The MLP is GELU(LN(y) W1) W2: without the GELU the two matrices collapse into one linear map.",
            "activation",
            _GELU,
            "GELU is the **tanh approximation**, applied element-wise",
            "Apply GELU (tanh approximation) to LN(y) @ W1 before multiplying by W2.",
        ),
        Mistake(
            "sigmoid_gelu",
            "GELU approximated by u * sigmoid(1.702 u)",
            "The sigmoid approximation differs from the tanh approximation by up to about 2e-2.",
            "activation",
            _GELU,
            r"not the sigmoid approximation $u\,\sigma(1.702\,u)$",
            "Use the tanh approximation of GELU from the statement.",
        ),
        Mistake(
            "rounded_gelu_constant",
            "sqrt(2/pi) rounded to 0.7979 in GELU",
            "0.7979 differs from sqrt(2/pi) = 0.7978845608... in the fifth digit; the outputs move by about "
            "1e-5, tiny but a hundred thousand times the tolerance.",
            "activation",
            _GELU,
            r"Use $\sqrt{2/\pi}$ to full precision",
            "Compute the constant as np.sqrt(2 / np.pi) instead of writing a rounded number.",
        ),
        Mistake(
            "ignore_num_heads",
            "num_heads ignored (a single head of width D)",
            "The attention has num_heads heads of width d_h = D / num_heads, each with its own softmax. "
            "One head of width D is right only when num_heads = 1.",
            "heads",
            _ATT,
            "Split into heads by **contiguous column blocks**",
            "Split Q, K and V into num_heads heads and run the softmax per head.",
        ),
        Mistake(
            "transposed_wq",
            "Wq applied transposed (Q = LN(x) Wq^T)",
            "Weights are stored as (inputs, outputs) and multiply from the right: Q = LN(x) @ Wq. "
            "Transposing Wq changes every attention score.",
            "attention_scores",
            "Shapes and notation",
            "never transpose it",
            "Compute Q as LN(x) @ Wq, without transposing Wq.",
        ),
        Mistake(
            "float32_arithmetic",
            "Computed in float32",
            "float32 keeps about 7 significant digits; its rounding errors (1e-7 and more) are far above "
            "the tolerance even when every formula is right. Keep every array float64.",
            "precision",
            _RET,
            "Computing in `float32` fails",
            "Keep every array float64: no .astype(np.float32), no float32 constants.",
            match="rounding",
            dtype="float32",
        ),
    )
}


_SQRT_2_PI = math.sqrt(2.0 / math.pi)
CONSTANTS: dict[str, Constant] = {
    c.name: c
    for c in (
        Constant(
            "eps",
            "LayerNorm eps",
            "layer_norm",
            1e-6,
            (
                0.0,
                1e-5,
                1e-8,
                1e-12,
                1e-7,
                1e-9,
                1e-10,
                1e-4,
                1e-3,
                1e-16,
                1e-14,
                1e-15,
                1e-11,
                1e-13,
                1e-2,
                1e-1,
                2.220446049250313e-16,
                1.1920928955078125e-07,
            ),
            (-17.0, -1.0),
            "Use eps = 1e-6 inside the square root, in both layer norms.",
            "LayerNorm behaves as if eps = {value:.3g} (not 1e-06)",
        ),
        Constant(
            "gelu_constant",
            "GELU constant",
            "activation",
            _SQRT_2_PI,
            (
                0.8,
                0.798,
                0.79788,
                0.797885,
                0.7978846,
                0.797,
                0.79,
                0.7978,
                0.79788456,
                math.sqrt(2) / math.pi,
                math.sqrt(math.pi / 2),
                2 / math.pi,
                1 / math.sqrt(2),
                math.sqrt(2 * math.pi),
                1.0,
            ),
            (-1.0, 0.5),
            "Compute the GELU constant as np.sqrt(2 / np.pi).",
            "GELU behaves as if sqrt(2/pi) = {value:.6g} (not 0.7978845608)",
            requires=("gelu",),  # a constant of the tanh approximation only
        ),
        Constant(
            "temperature",
            "softmax temperature",
            "attention_scores",
            1.0,
            (2.0, 0.5, 4.0, 0.25, math.sqrt(2), 1 / math.sqrt(2), 8.0, 10.0, 0.1, 3.0, 16.0),
            (-2.0, 2.0),
            "Divide the scores by sqrt(d_h), with no extra temperature.",
            "the scores behave as if divided by {value:.3g}*sqrt(d_h) (softmax temperature {value:.3g})",
            requires=("scale",),  # a factor of the head-width scale only
        ),
    )
}


# Where a wrong answer's values may be confined. Head h owns columns h*d_h .. (h+1)*d_h - 1 of the
# output (the residual stream keeps the attention output's column layout only through Wo, so a
# head-confined error means the error entered after the merge or Wo is block-structured; the
# sentence states positions, not causes).
AXES: tuple[Axis, ...] = (
    Axis("batches", "B"),
    Axis("tokens", "N", within="batches"),
    Axis("heads", "D", groups="num_heads", letter="H", unit="columns"),
    Axis("channels", "D", within="heads"),
)
AXES_PHRASES = {"everywhere": "some tokens, heads or batches", "spread": "every batch, token and head"}
# Every block is independent per sequence: large cases are compared on their first.
BATCH_DIM = "B"
# The inputs whose sizes order the evidence, small cases first.
SIZE_INPUTS = ("x", "W1")


def run_variant(
    variants: ModuleType, inputs: Mapping[str, Any], variant: Any, arithmetic: Callable[..., Any] | None = None
) -> Any:
    """reference/variants.block on one case's inputs under one configuration."""
    args = [inputs[k] for k in ("x", "num_heads", "Wq", "Wk", "Wv", "Wo", "W1", "W2")]
    if arithmetic is None:
        return variants.block(*args, v=variant)
    return variants.block(*args, v=variant, arithmetic=arithmetic)


def canonical_variant(variant: Any) -> Any:
    """One configuration per distinct block: sqrt(var) + 0 is sqrt(var + 0), so with eps = 0 where
    eps sits no longer matters."""
    return replace(variant, eps_inside_sqrt=True) if variant.eps == 0.0 else variant


# --- how the group pattern reads (grader/feedback/reading.py applies the first rule that fits) ---

# "Only this group fails", in the order they are tried.
ONLY_GROUP: tuple[OnlyGroup, ...] = (
    OnlyGroup(
        "stability",
        ("softmax_stability",),
        "Only the stability tests (attention scores in the thousands) fail: the softmax overflows.",
        samples_pass=True,
    ),
    OnlyGroup(
        "layernorm_eps",
        ("layer_norm",),
        "Only the near-constant tokens (variance below eps) fail: look at eps and the variance in layer norm.",
    ),
    OnlyGroup("mlp_width", ("mlp",), "Only the tests with an MLP width M other than 4D fail: take M from W1.shape[1]."),
    OnlyGroup(
        "batch",
        ("attention_scores",),
        "Only the tests with several sequences fail: sequences of a batch must not attend to each other.",
    ),
    OnlyGroup(
        "multi_head",
        ("heads", "attention_scores"),
        "Only multi_head fails: look at splitting and merging heads, including num_heads = D (head width 1).",
    ),
    OnlyGroup(
        "single_token",
        ("attention_scores",),
        "Only the N = 1 tests fail: look for an assumption that there are several tokens.",
    ),
    OnlyGroup(
        "realistic",
        ("precision",),
        "Only the large ViT-Tiny-sized test fails: look for a size-dependent assumption or lost precision.",
    ),
    OnlyGroup("random", (), "Only random shapes fail: look at edge sizes (N = 1, M = 1, head width 1, num_heads = D)."),
)
# They mix every feature, so they may fail along with the one group.
MIXED_GROUPS = ("random", "realistic")

# What attention_only and mlp_only (each path of the block alone) say with the other groups.
GROUP_RULES: tuple[GroupRule, ...] = (
    GroupRule(
        ("attention_only", "mlp_only"),
        ("single_head",),
        ("block_structure",),
        "attention_only and mlp_only pass but the full block fails: each path is right alone, so look at "
        "how they connect (the MLP reads y, the first residual's output, and adds it back).",
    ),
    GroupRule(
        ("attention_only",),
        ("mlp_only",),
        ("activation", "mlp"),
        "attention_only passes but mlp_only fails: the attention path is right and the error is in the "
        "MLP path (second layer norm, W1, GELU, W2, second residual).",
    ),
    GroupRule(
        ("mlp_only", "single_head"),
        ("multi_head",),
        ("heads", "attention_scores"),
        "mlp_only and single_head pass but multi_head fails: the error appears only with several heads "
        "(splitting and merging heads, or the per-head scale).",
    ),
    GroupRule(
        ("mlp_only", "single_token"),
        ("attention_only",),
        ("attention_scores", "heads"),
        "mlp_only and single_token (N = 1) pass but attention_only fails: the value path is right and the "
        "attention weights are wrong (Q and K, the scale, the softmax axis, the heads).",
    ),
    GroupRule(
        ("mlp_only",),
        ("attention_only",),
        ("attention_scores", "heads"),
        "mlp_only passes but attention_only fails: the error is in the attention path "
        "(first layer norm, Q/K/V, softmax, heads, Wo, first residual).",
    ),
    GroupRule(
        (),
        ("attention_only", "mlp_only"),
        ("layer_norm", "block_structure", "precision"),
        "attention_only and mlp_only both fail: look at what both paths share: layer norm, the residuals, "
        "float64 precision.",
    ),
)

# When only the samples ran: exactly these failing.
SAMPLE_RULES: tuple[SampleRule, ...] = (
    SampleRule(
        ("sample/02-two-heads",),
        ("heads", "attention_scores"),
        "Only example 2, the one with two heads, fails: look at splitting and merging heads and the per-head scale.",
    ),
    SampleRule(("sample/03-batch-of-two",), (), "Only example 3, the batch of two, fails; {more}."),
)

# When the only group not passing is too slow.
TOO_SLOW = {
    "realistic": "Only the large ViT-Tiny-sized test is too slow: use batched matrix "
    "products instead of Python loops over tokens or heads.",
}
