"""Deterministic test generation.

Every case comes from a recipe (a small function of a seeded RNG) and the
expected output comes from reference/solution.py evaluated in double-double
arithmetic (portable_arithmetic.DOUBLE_DOUBLE, about 106 bits) and rounded once to
float64. That arithmetic is built from IEEE 754 operations in a fixed order,
with exp and tanh in software, so the expected outputs are a function of the
inputs alone: the same bytes on every CPU, BLAS kernel and thread count
(docs/bundle.md, "How the expected outputs are computed"). The random inputs
come from NumPy's PCG64 generator: integer arithmetic, and a ziggurat whose
only libm calls (exp in a rare rejection test, log1p in the tail) decide a
comparison, not a value; rounding to three decimals is IEEE arithmetic.

Input values are rounded to three decimals: short JSON numbers keep the files
small, and the rounded values are still generic (no symmetry, no ties).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from .bundle import Bundle
from .cases import PRACTICE_DIR, TestCase, case_to_text, write_case
from .portable_arithmetic import DOUBLE_DOUBLE
from .spec import ProblemSpec

Inputs = dict[str, Any]  # the arrays, and num_heads an int


@dataclass(frozen=True)
class Recipe:
    slug: str
    description: str
    make: Callable[[np.random.Generator], Inputs]


# --- building blocks ----------------------------------------------------------


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

SAMPLES: tuple[tuple[str, str, str, Inputs], ...] = (
    (
        "01-identity-weights",
        "Example 1: one head, identity weights.",
        "Pre-normalized attention and the GELU MLP contribute through separate residual paths.",
        {"x": [[[1, 0], [0, 1]]], "num_heads": 1, "Wq": _I2, "Wk": _I2, "Wv": _I2, "Wo": _I2, "W1": _I2, "W2": _I2},
    ),
    (
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
    (
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


# --- assembling cases ----------------------------------------------------------------


def expected_output(reference: ModuleType, inputs: Inputs) -> np.ndarray:
    """The reference evaluated in double-double arithmetic, rounded once to float64."""
    args = [inputs[k] for k in ("x", "num_heads", "Wq", "Wk", "Wv", "Wo", "W1", "W2")]
    out: np.ndarray = reference.encoder_block(*args, xp=DOUBLE_DOUBLE).to_numpy()
    return out


def _as_float_inputs(inputs: Inputs) -> Inputs:
    return {k: (int(v) if k == "num_heads" else np.asarray(v, dtype=np.float64)) for k, v in inputs.items()}


def sample_cases(reference: ModuleType) -> list[TestCase]:
    out = []
    for slug, description, explanation, raw in SAMPLES:
        inputs = _as_float_inputs(raw)
        out.append(
            TestCase(f"sample/{slug}", "sample", description, inputs, expected_output(reference, inputs), explanation)
        )
    return out


def _recipe_cases(
    spec: ProblemSpec, reference: ModuleType, seed: int, recipes: dict[str, tuple[Recipe, ...]], prefix: str = ""
) -> list[TestCase]:
    out = []
    for gi, group in enumerate(spec.groups):
        for ci, recipe in enumerate(recipes.get(group.name, ())):
            rng = np.random.default_rng([seed, gi, ci])
            inputs = _as_float_inputs(recipe.make(rng))
            out.append(
                TestCase(
                    f"{prefix}{group.name}/{recipe.slug}",
                    group.name,
                    recipe.description,
                    inputs,
                    expected_output(reference, inputs),
                )
            )
    return out


def hidden_cases(spec: ProblemSpec, reference: ModuleType, seed: int) -> list[TestCase]:
    """All hidden cases for `seed`, in judging order (groups as in problem.yaml)."""
    return _recipe_cases(spec, reference, seed, RECIPES)


def practice_cases(spec: ProblemSpec, reference: ModuleType, seed: int | None = None) -> list[TestCase]:
    """The visible practice set (tests.practice_seed unless `seed`), named practice/<group>/<slug>."""
    seed = spec.practice_seed if seed is None else seed
    return _recipe_cases(spec, reference, seed, PRACTICE_RECIPES, prefix=f"{PRACTICE_DIR}/")


def build_cases(bundle: Bundle, seed: int | None = None) -> list[TestCase]:
    """Every case of the bundle: samples verbatim, hidden groups from `seed`, the practice set."""
    reference = bundle.load_reference_module()
    seed = bundle.spec.generator_seed if seed is None else seed
    return sample_cases(reference) + hidden_cases(bundle.spec, reference, seed) + practice_cases(bundle.spec, reference)


def _case_files(bundle: Bundle) -> set[Path]:
    return set(bundle.testcases.glob("*/*.json")) | set(bundle.practice_cases_dir.glob("*/*.json"))


def write_cases(bundle: Bundle, cases: list[TestCase]) -> list[Path]:
    """Write `cases` into testcases/, removing stale case files."""
    keep = {bundle.testcases / f"{c.name}.json" for c in cases}
    for stale in _case_files(bundle):
        if stale not in keep:
            stale.unlink()
    return [write_case(bundle.testcases, c) for c in cases]


def first_difference(stored: bytes, fresh: str) -> str:
    """Where two texts first differ, in one short line: line number, count, both versions."""
    old = stored.decode("utf-8", errors="replace").splitlines()
    new = fresh.splitlines()
    differing = [i for i in range(max(len(old), len(new))) if i >= len(old) or i >= len(new) or old[i] != new[i]]
    i = differing[0]

    def line(lines: list[str]) -> str:
        return repr(lines[i].strip()[:60]) if i < len(lines) else "(end of file)"

    return f"{len(differing)} line(s) differ; first, line {i + 1}: stored {line(old)}, fresh {line(new)}"


def check_cases(bundle: Bundle, cases: list[TestCase]) -> list[str]:
    """Differences between testcases/ and `cases` (empty when identical)."""
    problems = []
    wanted = {bundle.testcases / f"{c.name}.json": case_to_text(c) for c in cases}
    for path, text in wanted.items():
        if not path.is_file():
            problems.append(f"{path.relative_to(bundle.root)}: missing")
        elif path.read_bytes() != text.encode("utf-8"):
            problems.append(
                f"{path.relative_to(bundle.root)}: differs from a fresh regeneration"
                f" ({first_difference(path.read_bytes(), text)})"
            )
    for extra in sorted(_case_files(bundle) - set(wanted)):
        problems.append(f"{extra.relative_to(bundle.root)}: not produced by the generator")
    return problems
