"""Mistake fingerprints: does a wrong submission behave like a catalogued mistake?

For every case that ran, the parent knows the submission's verdict and, when
it returned a float64 array of the right shape, its values. A catalogue
mistake (reference/variants.MISTAKES[id]) is *consistent* with that evidence
when, on every case:

- the submission passed and the mistake's output passes the same comparison, or
- the submission failed with an array (wrong values, or NaN/inf) and the
  mistake's output fails too and reproduces the submission's: identical NaN and
  +-inf positions, and the finite values within a tolerance comparable to the
  grading one (MATCH_FACTOR times rtol and atol), or, for mistakes of kind
  "rounding" (float32 arithmetic), errors of the same size as the mistake's.

An array of the wrong shape is evidence too: it is compared with the mistakes whose
output has that same shape on that case (a mistake of the expected shape never
returns it), by the same rules. Cases without a returned array (RE, TLE, ...) are
no evidence either way. A mistake matches when it is consistent everywhere and reproduces
at least one failure. One match is a diagnosis; several are reported as
indistinguishable on these cases; none is reported as such, never guessed.

The mistakes' outputs come from reference/variants.py (judge bundle, live), or
from the precomputed sample-case file SAMPLE_FILE (practice archive, which has
no reference/): see sample_document / check_sample_file.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

import numpy as np

from ..problem.cases import TestCase
from ..problem.portable_arithmetic import rounded
from .live import LiveOutputs, data_size
from .matching import ROUNDING_FACTOR, _spread, reproduces, rounding_like
from .matching import passes as passes  # re-exported: the grading comparison, for callers of the fingerprint
from .mistakes import FeedbackData

SAMPLE_FILE = "mistakes-sample.json"  # under testcases/; its format: FeedbackData.sample_format
STORED_DIGITS = 10  # significant digits kept in SAMPLE_FILE
# SAMPLE_FILE stores outputs of cases up to this many elements: the practice set's
# realistic case would triple the file, and the small cases already tell mistakes apart.
STORED_MAX_ELEMENTS = 2_000


@dataclass(frozen=True)
class Observation:
    """What one case showed about the submission."""

    case: TestCase
    verdict: str
    check: str
    array: np.ndarray | None = None  # the returned float64 array, when one arrived (of any shape)
    dtype: str | None = None  # dtype of a returned ndarray (even if not float64)
    visible: bool = False  # the case's inputs and shapes may be shown to the learner

    @property
    def wrong_shape(self) -> bool:
        """An array arrived, of another shape than the expected output's."""
        return self.array is not None and self.array.shape != self.case.expected_output.shape

    @property
    def output(self) -> np.ndarray:
        """`array`, read where the observation must have one (evidence: a float64 array arrived)."""
        assert self.array is not None, f"{self.case.name}: no array arrived"
        return self.array


@dataclass(frozen=True)
class Fingerprint:
    status: str  # match | ambiguous | no_match | no_evidence | unavailable
    ids: tuple[str, ...] = ()  # consistent mistakes, catalogue order
    basis: str | None = None  # "values" or "dtype"
    source: str = "live"  # "live" or "precomputed"
    compared: int = 0  # cases whose evidence was compared
    failures_reproduced: int = 0  # failing cases the matched mistake(s) reproduce
    without_evidence: tuple[str, ...] = ()  # non-AC cases with no array to compare (not foreseen by the match)
    unavailable: tuple[str, ...] = ()  # cases the mistakes' outputs are unknown for
    subsampled: tuple[str, ...] = ()  # cases compared on their first batch only
    by_shape: bool = False  # found by comparing arrays of the wrong shape with the mistakes' (see fingerprint)


class MistakeOutputs(Protocol):
    source: str
    data: FeedbackData

    def output(self, mistake_id: str, case: TestCase) -> np.ndarray | None:
        """The mistake's output on `case` (possibly its first batches only), or None if unknown."""


# --- the mistakes' outputs ------------------------------------------------------


class StoredOutputs:
    """Outputs read from SAMPLE_FILE; a case whose inputs changed since is unknown."""

    source = "precomputed"

    def __init__(self, document: dict[str, Any], data: FeedbackData) -> None:
        self._cases = document.get("cases", {})
        self.data = data

    def output(self, mistake_id: str, case: TestCase) -> np.ndarray | None:
        entry = self._cases.get(case.name)
        if entry is None or entry.get("inputs_sha256") != inputs_digest(case, self.data):
            return None
        raw = entry.get("outputs", {}).get(mistake_id)
        return None if raw is None else _decode(raw)


def inputs_digest(case: TestCase, data: FeedbackData) -> str:
    """sha256 of the case's inputs (shapes and float64 bytes of arrays, scalars' values, in
    parameter order), to detect stale data."""
    h = hashlib.sha256()
    for key, kind in data.parameters:
        value = case.inputs[key]
        if kind == "list":
            h.update(f"{key}[{len(value)}]".encode())
            for i, item in enumerate(value):
                for k, a in item.items():
                    _digest_array(h, f"{key}[{i}][{k!r}]", a)
        elif kind == "ndarray":
            _digest_array(h, key, value)
        elif kind == "int":
            h.update(f"{key}={int(value)}".encode())
        else:
            h.update(f"{key}={float(value)!r}".encode())
    return h.hexdigest()


def _digest_array(h: Any, name: str, value: Any) -> None:
    a = np.ascontiguousarray(value, dtype="<f8")
    h.update(f"{name}{a.shape}".encode())
    h.update(a.tobytes())


def _encode(a: np.ndarray) -> Any:
    def one(v: float) -> Any:
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return float(f"{v:.{STORED_DIGITS - 1}e}") + 0.0  # + 0.0: no "-0.0"

    return np.vectorize(one, otypes=[object])(a).tolist() if a.size else a.tolist()


def _decode(raw: Any) -> np.ndarray:
    special = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}

    def walk(v: Any) -> Any:
        if isinstance(v, list):
            return [walk(x) for x in v]
        return special[v] if isinstance(v, str) else float(v)

    return np.array(walk(raw), dtype=np.float64)


def sample_document(live: LiveOutputs, cases: Sequence[TestCase]) -> str:
    """SAMPLE_FILE's text: every mistake's output on every sample case.

    Each mistake runs in its own precision (float64, or float32 for float32
    arithmetic) in portable_arithmetic's fixed-order arithmetic, so the file is the
    same bytes on every CPU and BLAS; it agrees with a NumPy evaluation (the
    live outputs) to rounding, far inside the match tolerance.
    """
    variants = live.variants
    doc = {
        "format": live.data.sample_format,
        "about": "Outputs of each mistake of reference/variants.MISTAKES on the sample and practice cases, "
        "for offline fingerprints in the practice archive (which has no reference/). "
        "Written by `python -m grader generate`; do not edit.",
        "significant_digits": STORED_DIGITS,
        "cases": {
            c.name: {
                "inputs_sha256": inputs_digest(c, live.data),
                "outputs": {mid: _encode(live.run(v, c, rounded)) for mid, v in variants.MISTAKES.items()},
            }
            for c in cases
        },
    }
    return json.dumps(doc, indent=1, sort_keys=True, allow_nan=False) + "\n"


def read_sample_file(path: Path, fmt: str) -> dict[str, Any] | None:
    """The parsed SAMPLE_FILE, or None when it is missing or not in format `fmt`."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("format") == fmt else None


# --- comparing -------------------------------------------------------------------


def _consistent(obs: Observation, m: np.ndarray, kind: str, rtol: float, atol: float) -> tuple[bool, bool]:
    """(consistent, reproduces a failure) for one observation and one mistake output."""
    k = m.shape[0]
    expected = obs.case.expected_output[:k]
    if obs.wrong_shape:
        # Only a mistake of that same shape returns it (never one that passes: it has the expected shape).
        same = not passes(m, expected, rtol, atol) and reproduces(obs.output[:k], m, rtol, atol)
        return same, same
    if kind == "rounding":
        if obs.verdict == "AC":
            # Two implementations round differently: on an easy case either may land
            # inside the tolerance, but not when the mistake's error is far above it.
            return _spread(m, expected) <= ROUNDING_FACTOR * max(rtol, atol), False
        same = rounding_like(obs.output[:k], expected, m)
        return same, same
    mistake_passes = passes(m, expected, rtol, atol)
    if obs.verdict == "AC":
        return mistake_passes, False
    if mistake_passes:
        return False, False
    same = reproduces(obs.output[:k], m, rtol, atol)
    return same, same


def _enough(kind: str, reproduced: int, compared: int) -> bool:
    """A mistake must reproduce a failure; a rounding mistake, most of the cases compared
    (real float32 code fails nearly everywhere, an unrelated slip only in places)."""
    return reproduced > 0 and (kind == "values" or 2 * reproduced >= compared)


def evidence_size(case: TestCase, data: FeedbackData) -> int:
    """How large a case is as evidence: the problem module's SIZE_INPUTS (else every array input),
    counted in elements."""
    return sum(int(np.asarray(case.inputs[n]).size) for n in data.size_inputs or data.array_parameters)


def _evidence_order(observations: Iterable[Observation], data: FeedbackData) -> list[Observation]:
    """Small cases first (evidence_size): passes and failures both eliminate mistakes, so the
    costly large case is evaluated, if at all, only for the few that survive."""
    useful = [o for o in observations if o.verdict == "AC" or o.array is not None]
    return sorted(useful, key=lambda o: evidence_size(o.case, data))


def _dtype_fingerprint(observations: Sequence[Observation], data: FeedbackData) -> Fingerprint | None:
    """An array of a mistake's dtype returned (dtype check) is that mistake, whatever its values."""
    dtypes = {o.dtype for o in observations if o.check == "dtype"}
    named = [m.id for m in data.catalogue.values() if m.dtype is not None and {m.dtype} == dtypes]
    if not named:
        return None
    return Fingerprint(
        "match",
        (named[0],),
        basis="dtype",
        compared=sum(o.check == "dtype" for o in observations),
        failures_reproduced=sum(o.check == "dtype" for o in observations),
    )


@dataclass
class _Elimination:
    """What comparing the surviving mistakes with each observation left: the survivors with the
    failures each reproduced and the cases each was compared on, and which cases could be compared."""

    reproduced: dict[str, int]
    seen: dict[str, int]
    compared: set[str] = field(default_factory=set)
    unavailable: set[str] = field(default_factory=set)
    subsampled: set[str] = field(default_factory=set)


def _eliminate(
    observations: Sequence[Observation], outputs: MistakeOutputs, ids: Sequence[str], rtol: float, atol: float
) -> _Elimination:
    """Every mistake of `ids` compared with each observation, small cases first, until it is inconsistent."""
    e = _Elimination({mid: 0 for mid in ids}, {mid: 0 for mid in ids})
    for obs in _evidence_order(observations, outputs.data):
        if not e.reproduced:
            break
        for mid in list(e.reproduced):
            m = outputs.output(mid, obs.case)
            if m is None:
                e.unavailable.add(obs.case.name)
                continue
            if m.ndim == obs.case.expected_output.ndim and m.shape[0] < obs.case.expected_output.shape[0]:
                e.subsampled.add(obs.case.name)
            e.compared.add(obs.case.name)
            e.seen[mid] += 1
            ok, again = _consistent(obs, m, outputs.data.catalogue[mid].match, rtol, atol)
            if not ok:
                del e.reproduced[mid]
            elif again:
                e.reproduced[mid] += 1
    return e


def without_shapes(observations: Sequence[Observation]) -> list[Observation]:
    """The observations with every array of the wrong shape left out (no evidence)."""
    return [replace(o, array=None) if o.wrong_shape else o for o in observations]


def fingerprint(
    observations: Sequence[Observation],
    outputs: MistakeOutputs,
    rtol: float,
    atol: float,
    ids: Sequence[str] | None = None,
) -> Fingerprint:
    """Which catalogue mistakes are consistent with everything the submission did.

    First on the arrays of the expected shape alone (a wrong shape is then no evidence); when
    that names no mistake, again with the arrays of the wrong shape as evidence too: so a
    wrong shape only ever adds a named mistake (`by_shape`), never hides one."""
    plain = _fingerprint(without_shapes(observations), outputs, rtol, atol, ids)
    if plain.status in ("match", "ambiguous") or not any(o.wrong_shape for o in observations):
        return plain
    shaped = _fingerprint(observations, outputs, rtol, atol, ids)
    return replace(shaped, by_shape=True) if shaped.status in ("match", "ambiguous") else plain


def _fingerprint(
    observations: Sequence[Observation],
    outputs: MistakeOutputs,
    rtol: float,
    atol: float,
    ids: Sequence[str] | None = None,
) -> Fingerprint:
    catalogue = outputs.data.catalogue
    ids = list(catalogue if ids is None else ids)
    without = tuple(o.case.name for o in observations if o.verdict != "AC" and o.array is None)
    if not any(o.verdict != "AC" and o.array is not None for o in observations):
        found = _dtype_fingerprint(observations, outputs.data)
        if found is not None:
            return found
        return Fingerprint("no_evidence", source=outputs.source, without_evidence=without)
    e = _eliminate(observations, outputs, ids, rtol, atol)
    common: dict[str, Any] = dict(
        source=outputs.source,
        compared=len(e.compared),
        without_evidence=without,
        unavailable=tuple(sorted(e.unavailable)),
        subsampled=tuple(sorted(e.subsampled)),
    )
    if not e.compared:
        return Fingerprint("unavailable", **common)
    matched = tuple(
        mid for mid in ids if mid in e.reproduced and _enough(catalogue[mid].match, e.reproduced[mid], e.seen[mid])
    )
    if not matched:
        return Fingerprint("no_match", **common)
    status = "match" if len(matched) == 1 else "ambiguous"
    common["without_evidence"] = tuple(o.case.name for o in _unforeseen(observations, outputs, matched))
    return Fingerprint(
        status, matched, basis="values", failures_reproduced=min(e.reproduced[mid] for mid in matched), **common
    )


def _unforeseen(observations: Sequence[Observation], outputs: MistakeOutputs, ids: Sequence[str]) -> list[Observation]:
    """The failures without an array that the mistakes `ids` do not foresee. A mistake foresees one
    where its own output is all NaN: the problem module's way of saying that the mistake cannot
    run there either (a learner's program with it raises, or returns a wrongly shaped array)."""

    def foreseen(o: Observation) -> bool:
        outs = [outputs.output(mid, o.case) for mid in ids]
        return all(m is not None and m.size > 0 and (bool(np.isnan(m).all()) or _shape_foreseen(o, m)) for m in outs)

    return [o for o in observations if o.verdict != "AC" and o.array is None and not foreseen(o)]


def _shape_foreseen(o: Observation, m: np.ndarray) -> bool:
    """A wrong shape whose array did not come (too large to send) is foreseen by a mistake of another shape."""
    expected = o.case.expected_output.shape
    return o.check == "shape" and (m.ndim != len(expected) or m.shape[1:] != expected[1:])


def sample_file_text(
    bundle_root: Path, variants: ModuleType, cases: Sequence[TestCase], data: FeedbackData | None = None
) -> tuple[Path, str]:
    """(path, text) of SAMPLE_FILE for the sample and practice cases among `cases` (the bundle's
    feedback `data` is read from `bundle_root` when not given)."""
    if data is None:
        from ..problem.bundle import open_bundle
        from .mistakes import feedback_data

        data = feedback_data(open_bundle(bundle_root))
    samples = [c for c in cases if c.group == "sample" or (c.practice and data_size(c, data) <= STORED_MAX_ELEMENTS)]
    return Path(bundle_root) / "testcases" / SAMPLE_FILE, sample_document(LiveOutputs(variants, data), samples)
