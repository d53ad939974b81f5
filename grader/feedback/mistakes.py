"""The catalogue of classic mistakes, as learners read it.

reference/variants.py holds the *implementation* of each mistake (judge bundle
only, because its default configuration is a correct solution); this module
holds the human side, keyed by the same ids: a title, a plain-words
explanation, the part of the block it affects, the one thing to change, and a
pointer into statement.md (a section heading plus a phrase quoted from that
section, both checked against the statement by tests/test_diagnose.py).

It contains no numerics, so it ships with the practice archive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

STATEMENT = "statement.md"

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


@dataclass(frozen=True)
class Mistake:
    """One catalogue entry: what went wrong, where, and where the statement says otherwise."""

    id: str
    title: str
    explanation: str
    part: str  # a key of PARTS
    section: str  # a heading of statement.md
    quote: str  # a phrase of that section that the mistake violates
    fix: str  # the one thing to change, as an imperative sentence
    match: str = "values"  # "values": outputs reproduce the mistake's; "rounding": error of its size

    @property
    def anchor(self) -> str:
        return f"{STATEMENT}#{slug(self.section)}"

    @property
    def pointer(self) -> str:
        """Where to read, e.g. 'statement.md, section "GELU"'."""
        return f'{STATEMENT}, section "{self.section}"'


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


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
        ),
    )
}


def get(mistake_id: str) -> Mistake:
    """The catalogue entry for `mistake_id`; KeyError names the unknown id."""
    try:
        return CATALOGUE[mistake_id]
    except KeyError:
        raise KeyError(f"no catalogue entry for mistake {mistake_id!r}") from None
