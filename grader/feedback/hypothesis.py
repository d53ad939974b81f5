"""A diagnosis beyond one catalogue mistake, as feedback/combined.py finds it: the hypothesis
itself (catalogue mistakes and a fitted constant of the problem module's CONSTANTS), and what a
found one says (its record in the verdict JSON, its message, its next step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .fingerprint import Fingerprint
from .mistakes import STATEMENT, FeedbackData


@dataclass(frozen=True)
class Hypothesis:
    ids: tuple[str, ...]  # catalogue mistakes (0, 1 or 2)
    constant: str | None = None  # a key of the problem module's CONSTANTS
    value: float | None = None

    @property
    def kind(self) -> str:
        return "fitted" if self.constant else "combined"


def record(hyp: Hypothesis, fp: Fingerprint, resid: float, data: FeedbackData) -> dict[str, Any]:
    """The extra fields of a combined/fitted fingerprint record (beside the catalogue entries)."""
    out: dict[str, Any] = {"kind": hyp.kind}
    if hyp.constant is not None:
        assert hyp.value is not None  # a fitted constant has its value
        c = data.constants[hyp.constant]
        catalogue = data.catalogue
        out["fit"] = {
            "constant": c.name,
            "title": c.title,
            "value": hyp.value,
            "expected": c.correct,
            "description": c.describe(hyp.value),
            "fix": c.fix,
            "part": c.part,
            "statement": {
                "section": data.part_sections[c.part],
                "anchor": catalogue[next(m for m in catalogue if catalogue[m].part == c.part)].anchor,
            },
            "largest_residual": float(f"{resid:.3g}"),
            "cases_explained": fp.compared,
        }
    return out


def message(hyp: Hypothesis, compared: int, resid: float, data: FeedbackData) -> str:
    """One or two sentences; the size of the residual is in the record (and --verbose)."""
    titles = [data.catalogue[m].title for m in hyp.ids]
    if hyp.constant is None:
        return f"Two known mistakes together: {titles[0]}; and {titles[1]}."
    assert hyp.value is not None  # a fitted constant has its value
    what = data.constants[hyp.constant].describe(hyp.value)
    return f"Fitted: {titles[0]}, and {what}." if titles else f"Fitted: {what}; explains all {compared} tests."


def next_step(hyp: Hypothesis, data: FeedbackData) -> str:
    """Every fix, in one sentence, then the statement sections to reread."""
    fixes = [data.catalogue[m].fix for m in hyp.ids]
    sections = [data.catalogue[m].section for m in hyp.ids]
    if hyp.constant is not None:
        c = data.constants[hyp.constant]
        fixes.append(c.fix)
        sections.append(data.part_sections[c.part])
    fixes = [f.rstrip(".") for f in fixes]
    text = "; then ".join([fixes[0]] + [f[0].lower() + f[1:] for f in fixes[1:]])
    names = " and ".join(f'"{s}"' for s in dict.fromkeys(sections))
    return f"{text} ({STATEMENT}, section{'s' if len(set(sections)) > 1 else ''} {names})."
