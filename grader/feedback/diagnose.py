"""Feedback that teaches: where a wrong answer diverges, what the group pattern
says, and which known mistake (if any) the submission reproduces.

Three independent pieces, assembled by `diagnose` after all cases ran:

- `locate`: for one wrong array, how many values are off and whether they are
  everywhere or confined to some batches, tokens, heads' column ranges or
  channels (positions only: safe for hidden cases).
- `read_groups` (feedback/reading.py): one sentence interpreting which groups
  pass and fail (each group isolates part of the block; see problem.yaml tests.groups).
- fingerprint.fingerprint: the catalogue mistakes consistent with the outputs.

Nothing here ever puts an input, expected or received value of a hidden case
into the report: patterns are counts and indices, fingerprints are ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..judging.verdict import CaseResult, GradeReport
from ..problem.bundle import Bundle
from ..problem.cases import TestCase
from ..problem.comparison import within_tolerance
from . import combined, hypothesis
from .fingerprint import (
    SAMPLE_FILE,
    Fingerprint,
    LiveOutputs,
    MistakeOutputs,
    Observation,
    StoredOutputs,
    fingerprint,
    read_sample_file,
)
from .mistakes import CATALOGUE, PART_SECTIONS, PARTS, STATEMENT
from .reading import GroupReading, read_groups

AXES = ("batches", "tokens", "heads", "channels")
SENTENCE_RANGES = 4  # ranges spelled out in a sentence before "..."


# --- where a wrong answer diverges -----------------------------------------------------


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


def locate(got: np.ndarray, expected: np.ndarray, num_heads: int, rtol: float, atol: float) -> dict[str, Any]:
    """Where the values outside the tolerance sit, as data plus one sentence.

    Head h owns columns h*d_h .. (h+1)*d_h - 1 of the output (the residual
    stream keeps the attention output's column layout only through Wo, so a
    head-confined error means the error entered after the merge or Wo is
    block-structured; the sentence states positions, not causes).
    """
    off = off_mask(got, expected, rtol, atol)
    B, N, D = off.shape
    H = num_heads if num_heads >= 1 and D % num_heads == 0 else 1
    # Arrays all (NumPy's stubs type .any(axis=...) as a NumPy bool or an array).
    rows: Any = off.any(axis=2)  # (B, N)
    marks: dict[str, Any] = {
        "batches": rows.any(axis=1),
        "tokens": rows.any(axis=0),
        "heads": off.reshape(B, N, H, D // H).any(axis=(0, 1, 3)),
        "channels": off.any(axis=(0, 1)),
    }
    sizes = {"batches": B, "tokens": N, "heads": H, "channels": D}
    n_off = int(off.sum())
    confined = []
    if n_off:
        if B > 1 and not marks["batches"].all():
            confined.append("batches")
        # within the affected batches, some token rows are clean
        if int(rows.sum()) < int(marks["batches"].sum()) * N:
            confined.append("tokens")
        if H > 1 and not marks["heads"].all():
            confined.append("heads")
        # within the affected heads, some channels are clean
        if int(marks["channels"].sum()) < int(marks["heads"].sum()) * (D // H):
            confined.append("channels")
    scope = "none" if not n_off else ("confined" if confined else ("everywhere" if n_off == off.size else "spread"))
    pattern: dict[str, Any] = {
        "off": n_off,
        "total": int(off.size),
        "nonfinite": int((~np.isfinite(got)).sum()),
        "shape": [B, N, D],
        "num_heads": H,
        "scope": scope,
        "confined_to": confined,
        **{axis: ranges(marks[axis]) for axis in AXES},
    }
    pattern["sentence"] = _pattern_sentence(pattern, sizes)
    return pattern


def _pattern_sentence(p: dict[str, Any], sizes: Mapping[str, int]) -> str:
    if p["scope"] == "none":
        return "No value is outside the tolerance."
    nonfinite = f", {p['nonfinite']} of them NaN or infinite" if p["nonfinite"] else ""
    if p["scope"] == "everywhere":
        return (
            f"Every value is off ({p['off']} of {p['total']}{nonfinite}): the error is not confined "
            "to some tokens, heads or batches."
        )
    head = f"{p['off']} of {p['total']} values are off{nonfinite}"
    if p["scope"] == "spread":
        return f"{head}, spread over every batch, token and head."
    d_h = sizes["channels"] // sizes["heads"]
    letter = {"batches": "B", "tokens": "N", "heads": "H", "channels": "D"}
    where = []
    for axis in p["confined_to"]:
        runs = p[axis]
        one = runs == [[runs[0][0]] * 2]
        name = axis[:-2] if axis == "batches" and one else (axis[:-1] if one else axis)
        extra = ""
        if axis == "heads":
            extra = "; columns " + ", ".join(f"{s * d_h}-{(e + 1) * d_h - 1}" for s, e in runs[:SENTENCE_RANGES])
        where.append(f"{name} {_spell(runs)} ({letter[axis]} = {sizes[axis]}{extra})")
    joined = where[0] if len(where) == 1 else ", in ".join(where[:-1]) + " and in " + where[-1]
    return f"{head}, only in {joined}; the rest is right."


# --- assembling the diagnosis ----------------------------------------------------------------


def mistake_record(mistake_id: str) -> dict[str, Any]:
    """A catalogue entry as JSON-ready data."""
    m = CATALOGUE[mistake_id]
    return {
        "id": m.id,
        "title": m.title,
        "part": m.part,
        "explanation": m.explanation,
        "fix": m.fix,
        "statement": {"section": m.section, "anchor": m.anchor, "quote": m.quote},
    }


def _fingerprint_message(fp: Fingerprint, flavour: str, selection: str) -> str:
    if fp.status == "match":
        m = CATALOGUE[fp.ids[0]]
        how = (
            "returned float32 arrays"
            if fp.basis == "dtype"
            else f"reproduce it on every test that ran ({fp.compared} compared)"
        )
        return f"Known mistake: {m.title}. Your outputs {how}."
    if fp.status == "ambiguous":
        names = "; ".join(CATALOGUE[i].title for i in fp.ids)
        where = "on the samples" if selection == "sample" else "on these tests"
        tell = " Grading with --tests all tells them apart." if selection == "sample" and flavour == "judge" else ""
        return f"{len(fp.ids)} known mistakes fit your outputs and cannot be told apart {where}: {names}.{tell}"
    if fp.status == "no_match":
        partial = (
            f" ({len(fp.without_evidence)} failing test(s) returned no array to compare)" if fp.without_evidence else ""
        )
        return (
            "No known mistake matches: your outputs differ from every mistake in the catalogue"
            f"{partial}, so the error is something else; use the group reading and the error positions."
        )
    if fp.status == "unavailable":
        return "No fingerprint: the known mistakes' outputs are not available for these tests."
    return ""


def _fingerprint_record(fp: Fingerprint, message: str) -> dict[str, Any]:
    return {
        "status": fp.status,
        "basis": fp.basis,
        "source": fp.source,
        "cases_compared": fp.compared,
        "failures_reproduced": fp.failures_reproduced,
        "cases_without_evidence": list(fp.without_evidence),
        "cases_unavailable": list(fp.unavailable),
        "subsampled": list(fp.subsampled),
        "mistakes": [mistake_record(i) for i in fp.ids],
        "message": message,
    }


def _next_step(fp: Fingerprint | None, reading: GroupReading | None) -> str | None:
    if fp is not None and fp.status == "match":
        m = CATALOGUE[fp.ids[0]]
        return f"{m.fix} ({m.pointer})"
    if fp is not None and fp.status == "ambiguous":
        sections = list(dict.fromkeys(CATALOGUE[i].pointer for i in fp.ids))
        return f"check the conventions in {'; '.join(sections)}."
    if reading is not None and reading.parts:
        part = reading.parts[0]
        return f'check {PARTS[part]} against {STATEMENT}, section "{PART_SECTIONS[part]}".'
    return None


def _summary(reading: GroupReading | None, fp_message: str, fp: Fingerprint | None) -> str:
    lines = []
    if reading is not None:
        lines.append(f"Reading: {reading.text}")
    if fp_message:
        lines.append(fp_message)
    if fp is not None and fp.status == "match":
        for mid in fp.ids:  # one catalogue entry, or both of a pair (none for a fitted constant alone)
            m = CATALOGUE[mid]
            lines.append(f"Why: {m.explanation}")
            lines.append(f'Part: {PARTS[m.part]}. Statement: {m.pointer}: "{m.quote}".')
    return "\n".join(lines)


def _combined(
    fp: Fingerprint,
    observed: Sequence[Observation],
    outputs: LiveOutputs,
    reading: GroupReading | None,
    rtol: float,
    atol: float,
) -> tuple[Fingerprint, str, dict[str, Any], str] | None:
    """A pair of mistakes or a fitted constant when no single mistake matches (feedback/combined.py)."""
    variants = outputs.variants
    found = combined.search(observed, variants, reading.parts if reading else (), rtol, atol)
    if found is None:
        return None
    hyp, compared, reproduced = found
    resid = combined.residual(observed, variants, hyp, rtol, atol)
    new = replace(fp, status="match", ids=hyp.ids, basis="values", compared=compared, failures_reproduced=reproduced)
    return new, hypothesis.message(hyp, compared, resid), hypothesis.record(hyp, new, resid), hypothesis.next_step(hyp)


def observations(
    cases: Sequence[TestCase], results: Sequence[CaseResult], returned: Mapping[str, Any]
) -> list[Observation]:
    """Pair each case with its result and the value it returned (a sandbox ReturnedValue, or None)."""
    by_name = {c.name: c for c in cases}
    out = []
    for r in results:
        case = by_name.get(r.name)
        if case is None or case.expected is None or r.check in ("compile",) or r.message.startswith("not run"):
            continue
        value = returned.get(r.name)
        array = getattr(value, "array", None)
        usable = array is not None and r.check in ("finite", "tolerance", "passed")
        out.append(Observation(case, r.verdict, r.check, array if usable else None, getattr(value, "dtype", None)))
    return out


def mistake_outputs(bundle: Bundle) -> MistakeOutputs | None:
    """Live outputs from reference/variants.py when the bundle has it, else the stored sample file."""
    if (bundle.reference_dir / "variants.py").is_file():
        return LiveOutputs(bundle.load_reference_module("variants"))
    doc = read_sample_file(bundle.testcases / SAMPLE_FILE)
    return StoredOutputs(doc) if doc is not None else None


def coarse_pattern(p: dict[str, Any]) -> dict[str, Any]:
    """A hidden test's pattern: the scope and the confined axes, never positions or counts
    (the submission chooses which values it gets wrong: see judging/hidden.py)."""
    off = p["total"] if p["off"] == p["total"] else min(p["off"], 1)
    out = {**p, "off": off, "nonfinite": min(p["nonfinite"], 1), **{axis: [] for axis in AXES}}
    axes = ", ".join(p["confined_to"])
    out["sentence"] = {
        "none": "No value is outside the tolerance.",
        "everywhere": "Every value is off: the error is not confined to some tokens, heads or batches.",
        "spread": "Some values are off, spread over every batch, token and head.",
    }.get(
        p["scope"],
        f"Some values are off, confined to some of the {axes}; the rest is "
        "right (positions are not shown for hidden tests).",
    )
    return out


def with_patterns(
    results: Sequence[CaseResult], observed: Sequence[Observation], rtol: float, atol: float
) -> list[CaseResult]:
    """Add error.pattern (tolerance failures) and diagnosis.pattern (every failure with an array);
    a hidden test's pattern is coarse (`coarse_pattern`)."""
    by_name = {o.case.name: o for o in observed}
    out = []
    for r in results:
        o = by_name.get(r.name)
        if r.verdict != "WA" or o is None or o.array is None:
            out.append(r)
            continue
        pattern = locate(o.array, o.case.expected_output, int(o.case.inputs["num_heads"]), rtol, atol)
        if not r.visible:
            pattern = coarse_pattern(pattern)
        error = replace(r.error, pattern=pattern) if r.error is not None else None
        out.append(replace(r, error=error, diagnosis={"pattern": pattern}))
    return out


def diagnose(
    report: GradeReport,
    bundle: Bundle,
    cases: Sequence[TestCase],
    returned: Mapping[str, Any],
    outputs: MistakeOutputs | None = None,
) -> GradeReport:
    """The report with error patterns, the group reading and the fingerprint added.

    An accepted submission, or one that did not compile, is returned unchanged:
    there is nothing to diagnose (and an AC is never fingerprinted).
    """
    if report.verdict in ("AC", "CE", "JE") or report.compile.verdict != "OK":
        return report
    rtol, atol = bundle.spec.comparison.rtol, bundle.spec.comparison.atol
    observed = observations(cases, report.tests, returned)
    tests = with_patterns(report.tests, observed, rtol, atol)
    reading = read_groups(report.groups, tests, bundle.flavour)
    fp, fault = None, ""
    try:
        if outputs is None:
            outputs = mistake_outputs(bundle)
        if outputs is not None:
            fp = fingerprint(observed, outputs, rtol, atol)
    except Exception as exc:  # a fault here must never cost the submission its verdict
        fp = Fingerprint("unavailable", source=getattr(outputs, "source", "live"))
        fault = f"{type(exc).__name__}: {exc}"[:300]
    message = _fingerprint_message(fp, bundle.flavour, report.selection) if fp else ""
    extra: dict[str, Any] = {}
    step = None
    if fp is not None and fp.status == "no_match" and not fault and isinstance(outputs, LiveOutputs):
        try:
            fp, message, extra, step = _combined(fp, observed, outputs, reading, rtol, atol) or (fp, message, {}, None)
        except Exception as exc:  # never cost the verdict; the single-mistake answer stands
            fault = ""
            message += f" (the search for combined mistakes failed: {type(exc).__name__})"
    if fault:
        message = f"No fingerprint: the diagnosis failed ({fault}); a grader fault, the verdict stands."
    diagnosis = {
        "groups": None
        if reading is None
        else {
            "failing": [g.name for g in report.groups if g.verdict != "AC"],
            "passing": [g.name for g in report.groups if g.verdict == "AC"],
            "parts": list(reading.parts),
            "reading": reading.text,
        },
        "fingerprint": None if fp is None else {**_fingerprint_record(fp, message), **extra},
        "summary": _summary(reading, message, fp),
        "next_step": step or _next_step(fp, reading),
    }
    return replace(report, tests=tuple(tests), diagnosis=diagnosis)
