"""Feedback that teaches: where a wrong answer diverges, what the group pattern
says, and which known mistake (if any) the submission reproduces.

Three independent pieces, assembled by `diagnose` after all cases ran:

- `locate`: for one wrong array, how many values are off and whether they are
  everywhere or confined to some entries along the problem module's AXES (such
  as some batches, tokens, or a head's block of columns; positions only: safe for
  hidden cases).
- `read_groups` (feedback/reading.py): one sentence interpreting which groups
  pass and fail (each group isolates part of the function; see problem.yaml tests.groups).
- fingerprint.fingerprint: the catalogue mistakes consistent with the outputs.

Nothing here ever puts an input, expected or received value of a hidden case
into the report: patterns are counts and indices, fingerprints are ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..judging.verdict import CaseResult, GradeReport
from ..problem.bundle import Bundle
from ..problem.cases import TestCase
from . import combined, hypothesis
from .fingerprint import (
    SAMPLE_FILE,
    Fingerprint,
    MistakeOutputs,
    Observation,
    StoredOutputs,
    fingerprint,
    read_sample_file,
    without_shapes,
)
from .live import LiveOutputs
from .mistakes import STATEMENT, FeedbackData, feedback_data
from .positions import case_dims, coarse_pattern, locate
from .reading import GroupReading, read_groups

# --- assembling the diagnosis ----------------------------------------------------------------


def mistake_record(mistake_id: str, data: FeedbackData) -> dict[str, Any]:
    """A catalogue entry as JSON-ready data."""
    m = data.mistake(mistake_id)
    return {
        "id": m.id,
        "title": m.title,
        "part": m.part,
        "explanation": m.explanation,
        "fix": m.fix,
        "statement": {"section": m.section, "anchor": m.anchor, "quote": m.quote},
    }


def unexplained_note(n: int) -> str:
    """What a match does not cover: its `n` failing tests that returned no array (none: '')."""
    return f" It does not explain the {n} failing test(s) that returned no array." if n else ""


def _shape_note(fp: Fingerprint, observed: Sequence[Observation]) -> str:
    """For a match on arrays of the wrong shape: the shapes of the first visible such case (a
    hidden case's shape is never shown), then that the values are the mistake's."""
    wrong = [o for o in observed if o.wrong_shape]
    if not fp.by_shape or not wrong:
        return ""
    shown = next((o for o in wrong if o.visible), None)
    if shown is None:
        return "Your output has the wrong shape; its values are exactly those of this mistake. "
    got, expected = shown.output.shape, shown.case.expected_output.shape
    return f"Your output has shape {got} where {expected} is expected; its values are exactly those of this mistake. "


def _fingerprint_message(
    fp: Fingerprint, flavour: str, selection: str, data: FeedbackData, observed: Sequence[Observation] = ()
) -> str:
    catalogue = data.catalogue
    if fp.status == "match":
        m = catalogue[fp.ids[0]]
        how = (
            f"returned {m.dtype} arrays"
            if fp.basis == "dtype"
            else f"reproduce it on every test that ran ({fp.compared} compared)"
        )
        unexplained = unexplained_note(len(fp.without_evidence)) if fp.basis != "dtype" else ""
        return f"{_shape_note(fp, observed)}Known mistake: {m.title}. Your outputs {how}.{unexplained}"
    if fp.status == "ambiguous":
        names = "; ".join(catalogue[i].title for i in fp.ids)
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


def _fingerprint_record(fp: Fingerprint, message: str, data: FeedbackData) -> dict[str, Any]:
    return {
        "status": fp.status,
        "basis": fp.basis,
        "source": fp.source,
        "cases_compared": fp.compared,
        "failures_reproduced": fp.failures_reproduced,
        "cases_without_evidence": list(fp.without_evidence),
        "cases_unavailable": list(fp.unavailable),
        "subsampled": list(fp.subsampled),
        "mistakes": [mistake_record(i, data) for i in fp.ids],
        "message": message,
    }


def _next_step(fp: Fingerprint | None, reading: GroupReading | None, data: FeedbackData) -> str | None:
    if fp is not None and fp.status == "match":
        m = data.catalogue[fp.ids[0]]
        return f"{m.fix} ({m.pointer})"
    if fp is not None and fp.status == "ambiguous":
        sections = list(dict.fromkeys(data.catalogue[i].pointer for i in fp.ids))
        return f"check the conventions in {'; '.join(sections)}."
    if reading is not None and reading.parts:
        part = reading.parts[0]
        return f'check {data.parts[part]} against {STATEMENT}, section "{data.part_sections[part]}".'
    return None


def _summary(reading: GroupReading | None, fp_message: str, fp: Fingerprint | None, data: FeedbackData) -> str:
    lines = []
    if reading is not None:
        lines.append(f"Reading: {reading.text}")
    if fp_message:
        lines.append(fp_message)
    if fp is not None and fp.status == "match":
        for mid in fp.ids:  # one catalogue entry, or both of a pair (none for a fitted constant alone)
            m = data.catalogue[mid]
            lines.append(f"Why: {m.explanation}")
            lines.append(f'Part: {data.parts[m.part]}. Statement: {m.pointer}: "{m.quote}".')
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
    parts = reading.parts if reading else ()
    # As for one mistake: arrays of the wrong shape are evidence only when the others name nothing.
    found = combined.search(without_shapes(observed), outputs, parts, rtol, atol)
    if found is None and any(o.wrong_shape for o in observed):
        found = combined.search(observed, outputs, parts, rtol, atol)
    else:
        observed = without_shapes(observed)
    if found is None:
        return None
    hyp, compared, reproduced = found
    resid = combined.residual(observed, outputs, hyp, rtol, atol)
    new = replace(fp, status="match", ids=hyp.ids, basis="values", compared=compared, failures_reproduced=reproduced)
    data = outputs.data
    return (
        new,
        hypothesis.message(hyp, compared, resid, data),
        hypothesis.record(hyp, new, resid, data),
        hypothesis.next_step(hyp, data),
    )


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
        usable = array is not None and r.check in ("finite", "tolerance", "passed", "shape")
        out.append(
            Observation(case, r.verdict, r.check, array if usable else None, getattr(value, "dtype", None), r.visible)
        )
    return out


def mistake_outputs(bundle: Bundle) -> MistakeOutputs | None:
    """Live outputs from reference/variants.py when the bundle has it, else the stored sample file."""
    data = feedback_data(bundle)
    if (bundle.reference_dir / "variants.py").is_file():
        return LiveOutputs(bundle.load_reference_module("variants"), data)
    doc = read_sample_file(bundle.testcases / SAMPLE_FILE, data.sample_format)
    return StoredOutputs(doc, data) if doc is not None else None


def with_patterns(
    results: Sequence[CaseResult], observed: Sequence[Observation], rtol: float, atol: float, data: FeedbackData
) -> list[CaseResult]:
    """Add error.pattern (tolerance failures) and diagnosis.pattern (every failure with an array);
    a hidden test's pattern is coarse (`coarse_pattern`)."""
    by_name = {o.case.name: o for o in observed}
    out = []
    for r in results:
        o = by_name.get(r.name)
        if r.verdict != "WA" or o is None or o.array is None or o.wrong_shape:
            out.append(r)
            continue
        dims = case_dims(o.case, data)
        expected = o.case.expected_output
        pattern = locate(o.array, expected, data.axes, dims, rtol, atol, data.output_shape, data.axes_phrases)
        if not r.visible:
            pattern = coarse_pattern(pattern, data)
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
    data = feedback_data(bundle)
    observed = observations(cases, report.tests, returned)
    tests = with_patterns(report.tests, observed, rtol, atol, data)
    reading = read_groups(report.groups, tests, bundle.flavour, data)
    fp, fault = None, ""
    try:
        if outputs is None:
            outputs = mistake_outputs(bundle)
        if outputs is not None:
            fp = fingerprint(observed, outputs, rtol, atol)
    except Exception as exc:  # a fault here must never cost the submission its verdict
        fp = Fingerprint("unavailable", source=getattr(outputs, "source", "live"))
        fault = f"{type(exc).__name__}: {exc}"[:300]
    message = _fingerprint_message(fp, bundle.flavour, report.selection, data, observed) if fp else ""
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
        "fingerprint": None if fp is None else {**_fingerprint_record(fp, message, data), **extra},
        "summary": _summary(reading, message, fp, data),
        "next_step": step or _next_step(fp, reading, data),
    }
    return replace(report, tests=tuple(tests), diagnosis=diagnosis)
