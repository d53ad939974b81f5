"""Where a wrong answer diverges: how many values are off and whether they are everywhere or
confined to some entries along the problem module's AXES (feedback/authoring.py's Axis: an
output dimension, or the equal blocks a dimension name splits it into). Positions only, as
counts and index ranges: a hidden test's pattern is made coarse (`coarse_pattern`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..problem.cases import TestCase
from ..problem.comparison import within_tolerance
from ..problem.input_rules import item_entry
from .authoring import Axis
from .mistakes import FeedbackData

SENTENCE_RANGES = 4  # ranges spelled out in a sentence before "..."


def ranges(mask: np.ndarray) -> list[list[int]]:
    """Indices where `mask` is true, as inclusive [start, end] runs: [F,T,T,F,T] -> [[1,2],[4,4]]."""
    idx = np.flatnonzero(mask)
    if idx.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(idx) > 1)
    starts = np.concatenate(([idx[0]], idx[breaks + 1]))
    ends = np.concatenate((idx[breaks], [idx[-1]]))
    return [[int(s), int(e)] for s, e in zip(starts, ends)]


def _spell(runs: list[list[int]]) -> str:
    parts = [f"{s}" if s == e else f"{s}-{e}" for s, e in runs[:SENTENCE_RANGES]]
    return ", ".join(parts) + (", ..." if len(runs) > SENTENCE_RANGES else "")


def off_mask(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """True where a value fails the comparison (NaN and inf always fail)."""
    return ~within_tolerance(got, expected, rtol, atol)


@dataclass(frozen=True)
class _Placed:
    """An axis on the error mask viewed with each grouped dimension split in (blocks, width)."""

    axis: Axis
    coords: tuple[int, ...]  # the view's coordinates the axis spans
    letter: str
    width: int  # a block's width along its dimension (1 for an axis that is not grouped)


def _place(
    shape: tuple[int, ...], axes: Sequence[Axis], dims: Mapping[str, int], symbols: Sequence[str]
) -> tuple[tuple[int, ...], list[_Placed], dict[str, int]]:
    """(the view's shape, each axis placed on it, each grouped axis's name -> its blocks)."""
    index = [a.dim if isinstance(a.dim, int) else list(symbols).index(a.dim) for a in axes]
    blocks: dict[int, int] = {}
    for a, i in zip(axes, index):
        if a.groups is not None:
            g = int(dims.get(a.groups, 1))
            blocks[i] = g if g >= 1 and shape[i] % g == 0 else 1
    view: list[int] = []
    first: list[int] = []
    for i, n in enumerate(shape):
        first.append(len(view))
        view += [blocks[i], n // blocks[i]] if i in blocks else [n]
    placed = []
    for a, i in zip(axes, index):
        split = i in blocks
        coords = (first[i],) if a.groups is not None or not split else (first[i], first[i] + 1)
        symbol = symbols[i] if i < len(symbols) else str(i)
        letter = a.letter or (a.groups if a.groups is not None else symbol)
        placed.append(_Placed(a, coords, letter, shape[i] // blocks[i] if a.groups is not None else 1))
    grouped = {a.groups: blocks[i] for a, i in zip(axes, index) if a.groups is not None}
    return tuple(view), placed, grouped


def _projection(view_off: np.ndarray, keep: set[int]) -> Any:
    """The view's mask, true where any value is off, over the coordinates `keep` only."""
    drop = tuple(c for c in range(view_off.ndim) if c not in keep)
    return view_off.any(axis=drop) if drop else view_off


def _confined(view_off: np.ndarray, placed: Sequence[_Placed], marks: Mapping[str, Any]) -> list[str]:
    """The axes along which the wrong values leave some entries clean: at all, or within the
    affected entries of the axis each is `within`."""
    by_name = {p.axis.name: p for p in placed}
    out = []
    for p in placed:
        name = p.axis.name
        if p.axis.within is None:
            if marks[name].size > 1 and not marks[name].all():
                out.append(name)
            continue
        parent = by_name[p.axis.within]
        joint = _projection(view_off, set(parent.coords) | set(p.coords))
        inner = math.prod(view_off.shape[c] for c in p.coords if c not in parent.coords)
        if int(joint.sum()) < int(marks[parent.axis.name].sum()) * inner:
            out.append(name)
    return out


def locate(
    got: np.ndarray,
    expected: np.ndarray,
    axes: Sequence[Axis],
    dims: Mapping[str, int],
    rtol: float,
    atol: float,
    symbols: Sequence[str] = (),
    phrases: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Where the values outside the tolerance sit, as data plus one sentence.

    `axes` (the problem module's AXES) name output dimensions by index or by their symbol in
    `symbols` (problem.yaml's output.shape); `dims` gives a grouped axis its number of blocks
    (one when it does not divide the dimension); `phrases` name the axes together (AXES_PHRASES).
    The sentence states positions, not causes.
    """
    off = off_mask(got, expected, rtol, atol)
    view, placed, grouped = _place(off.shape, axes, dims, symbols)
    view_off = off.reshape(view)
    marks: dict[str, Any] = {p.axis.name: _projection(view_off, set(p.coords)).reshape(-1) for p in placed}
    n_off = int(off.sum())
    confined = _confined(view_off, placed, marks) if n_off else []
    scope = "none" if not n_off else ("confined" if confined else ("everywhere" if n_off == off.size else "spread"))
    pattern: dict[str, Any] = {
        "off": n_off,
        "total": int(off.size),
        "nonfinite": int((~np.isfinite(got)).sum()),
        "shape": list(off.shape),
        **grouped,
        "scope": scope,
        "confined_to": confined,
        **{p.axis.name: ranges(marks[p.axis.name]) for p in placed},
    }
    sizes = {p.axis.name: int(marks[p.axis.name].size) for p in placed}
    pattern["sentence"] = _pattern_sentence(pattern, placed, sizes, _phrases(axes, phrases))
    return pattern


def _phrases(axes: Sequence[Axis], given: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """How sentences name the axes together: the problem module's AXES_PHRASES, else their names."""
    if given:
        return given
    if not axes:
        return {"everywhere": "some positions", "spread": "every position"}
    return {
        "everywhere": "some " + _joined([a.name for a in axes], "or"),
        "spread": "every " + _joined([a.singular for a in axes], "and"),
    }


def _joined(words: Sequence[str], conjunction: str) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + f" {conjunction} " + words[-1]


def _pattern_sentence(
    p: dict[str, Any], placed: Sequence[_Placed], sizes: Mapping[str, int], phrases: Mapping[str, str]
) -> str:
    if p["scope"] == "none":
        return "No value is outside the tolerance."
    nonfinite = f", {p['nonfinite']} of them NaN or infinite" if p["nonfinite"] else ""
    if p["scope"] == "everywhere":
        return (
            f"Every value is off ({p['off']} of {p['total']}{nonfinite}): the error is not confined "
            f"to {phrases['everywhere']}."
        )
    head = f"{p['off']} of {p['total']} values are off{nonfinite}"
    if p["scope"] == "spread":
        return f"{head}, spread over {phrases['spread']}."
    by_name = {q.axis.name: q for q in placed}
    where = []
    for axis in p["confined_to"]:
        q = by_name[axis]
        runs = p[axis]
        one = runs == [[runs[0][0]] * 2]
        name = q.axis.singular if one else axis
        extra = ""
        if q.axis.groups is not None:
            w = q.width
            extra = f"; {q.axis.unit} " + ", ".join(f"{s * w}-{(e + 1) * w - 1}" for s, e in runs[:SENTENCE_RANGES])
        where.append(f"{name} {_spell(runs)} ({q.letter} = {sizes[axis]}{extra})")
    joined = where[0] if len(where) == 1 else ", in ".join(where[:-1]) + " and in " + where[-1]
    return f"{head}, only in {joined}; the rest is right."


def coarse_pattern(p: dict[str, Any], data: FeedbackData) -> dict[str, Any]:
    """A hidden test's pattern: the scope and the confined axes, never positions or counts
    (the submission chooses which values it gets wrong: see judging/hidden.py)."""
    off = p["total"] if p["off"] == p["total"] else min(p["off"], 1)
    out = {**p, "off": off, "nonfinite": min(p["nonfinite"], 1), **{a.name: [] for a in data.axes}}
    axes = ", ".join(p["confined_to"])
    phrases = _phrases(data.axes, data.axes_phrases)
    out["sentence"] = {
        "none": "No value is outside the tolerance.",
        "everywhere": f"Every value is off: the error is not confined to {phrases['everywhere']}.",
        "spread": f"Some values are off, spread over {phrases['spread']}.",
    }.get(
        p["scope"],
        f"Some values are off, confined to some of the {axes}; the rest is "
        "right (positions are not shown for hidden tests).",
    )
    return out


def case_dims(case: TestCase, data: FeedbackData) -> dict[str, int]:
    """The case's dimensions: its integer arguments, and each array's sizes under the bare
    names of its shape in problem.yaml (where first bound)."""
    dims: dict[str, int] = {}
    for name, kind in data.parameters:
        value = case.inputs.get(name)
        if kind == "int" and value is not None:
            dims.setdefault(name, int(value))
        elif kind == "ndarray" and isinstance(value, np.ndarray):
            _array_dims(dims, data.shapes.get(name, ()), value)
        elif kind == "list" and isinstance(value, list) and value:
            dims.setdefault(data.shapes[name][0], len(value))
            for key, a in value[0].items():  # the items share one binding: the first says it
                _array_dims(dims, data.shapes.get(item_entry(name, "*", key), ()), np.asarray(a))
    return dims


def _array_dims(dims: dict[str, int], shape: tuple[str, ...], value: np.ndarray) -> None:
    for symbol, n in zip(shape, value.shape):
        if symbol.isidentifier():
            dims.setdefault(symbol, int(n))
