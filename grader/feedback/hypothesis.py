"""A diagnosis beyond one catalogue mistake, as feedback/combined.py finds it: the constants
a fit may change, the hypothesis itself, and what a found one says (its record in the
verdict JSON, its message, its next step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .fingerprint import Fingerprint
from .mistakes import CATALOGUE, PART_SECTIONS, STATEMENT


@dataclass(frozen=True)
class Constant:
    """A continuous constant of the block a learner can get wrong."""

    name: str  # Variant field
    title: str
    part: str  # a key of mistakes.PARTS
    correct: float
    grid: tuple[float, ...]  # values learners write, tried before any fit
    bounds: tuple[float, float]  # log10 range of the continuous fit
    fix: str

    def describe(self, value: float) -> str:
        if self.name == "eps":
            return f"LayerNorm behaves as if eps = {value:.3g} (not 1e-06)"
        if self.name == "gelu_constant":
            return f"GELU behaves as if sqrt(2/pi) = {value:.6g} (not 0.7978845608)"
        return f"the scores behave as if divided by {value:.3g}*sqrt(d_h) (softmax temperature {value:.3g})"


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
        ),
        Constant(
            "temperature",
            "softmax temperature",
            "attention_scores",
            1.0,
            (2.0, 0.5, 4.0, 0.25, math.sqrt(2), 1 / math.sqrt(2), 8.0, 10.0, 0.1, 3.0, 16.0),
            (-2.0, 2.0),
            "Divide the scores by sqrt(d_h), with no extra temperature.",
        ),
    )
}


@dataclass(frozen=True)
class Hypothesis:
    ids: tuple[str, ...]  # catalogue mistakes (0, 1 or 2)
    constant: str | None = None  # a key of CONSTANTS
    value: float | None = None

    @property
    def kind(self) -> str:
        return "fitted" if self.constant else "combined"


def record(hyp: Hypothesis, fp: Fingerprint, resid: float) -> dict[str, Any]:
    """The extra fields of a combined/fitted fingerprint record (beside the catalogue entries)."""
    out: dict[str, Any] = {"kind": hyp.kind}
    if hyp.constant is not None:
        assert hyp.value is not None  # a fitted constant has its value
        c = CONSTANTS[hyp.constant]
        out["fit"] = {
            "constant": c.name,
            "title": c.title,
            "value": hyp.value,
            "expected": c.correct,
            "description": c.describe(hyp.value),
            "fix": c.fix,
            "part": c.part,
            "statement": {
                "section": PART_SECTIONS[c.part],
                "anchor": CATALOGUE[next(m for m in CATALOGUE if CATALOGUE[m].part == c.part)].anchor,
            },
            "largest_residual": float(f"{resid:.3g}"),
            "cases_explained": fp.compared,
        }
    return out


def message(hyp: Hypothesis, compared: int, resid: float) -> str:
    """One or two sentences; the size of the residual is in the record (and --verbose)."""
    titles = [CATALOGUE[m].title for m in hyp.ids]
    if hyp.constant is None:
        return f"Two known mistakes together: {titles[0]}; and {titles[1]}."
    assert hyp.value is not None  # a fitted constant has its value
    what = CONSTANTS[hyp.constant].describe(hyp.value)
    return f"Fitted: {titles[0]}, and {what}." if titles else f"Fitted: {what}; explains all {compared} tests."


def next_step(hyp: Hypothesis) -> str:
    """Every fix, in one sentence, then the statement sections to reread."""
    fixes = [CATALOGUE[m].fix for m in hyp.ids]
    sections = [CATALOGUE[m].section for m in hyp.ids]
    if hyp.constant is not None:
        c = CONSTANTS[hyp.constant]
        fixes.append(c.fix)
        sections.append(PART_SECTIONS[c.part])
    fixes = [f.rstrip(".") for f in fixes]
    text = "; then ".join([fixes[0]] + [f[0].lower() + f[1:] for f in fixes[1:]])
    names = " and ".join(f'"{s}"' for s in dict.fromkeys(sections))
    return f"{text} ({STATEMENT}, section{'s' if len(set(sections)) > 1 else ''} {names})."
