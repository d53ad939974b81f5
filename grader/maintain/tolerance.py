"""Evidence for the comparison tolerance: honest and wrong populations, measured.

Every honest implementation (each file in submissions/accepted/, the
reference in float64 and the independent formulation of reference/variants.py)
and every wrong one (each file in submissions/wrong_answer/) is run
in-process on every test case. These are the bundle's own trusted files, so
no sandbox is needed, and the whole measurement takes seconds.

The error of one output is the smallest t for which the comparison rule with
rtol = atol = t accepts it:

    e = max over elements of |got - expected| / (1 + |expected|)

(infinite for NaN/inf, a wrong shape or dtype, or an exception). With
rtol = atol = tol, a case passes exactly when e <= tol, so the two populations
are comparable with the tolerance on one axis. The bar a tolerance must meet:

    max honest error (all cases) * MARGIN <= tol
    tol * MARGIN <= min over wrong submissions of (largest error on hidden cases)
    every wrong submission fails at least one hidden case
"""

from __future__ import annotations

import importlib.util
import math
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..feedback.mistakes import feedback_data
from ..judging.values import compare
from ..problem.bundle import Bundle
from ..problem.cases import TestCase, load_cases

MARGIN = 100.0


@dataclass(frozen=True)
class Implementation:
    name: str  # how it appears in the tables, e.g. "accepted/einsum_style"
    honest: bool
    catalogue: bool  # a wrong submission whose id is in reference/variants.MISTAKES
    fn: Callable[..., object]


@dataclass(frozen=True)
class CaseError:
    case: str
    hidden: bool
    error: float  # the metric above; inf when the output cannot pass at any tolerance
    passes: bool  # under the tolerance in problem.yaml (values.compare's verdict)
    note: str = ""  # why the error is infinite, when it is


@dataclass(frozen=True)
class Row:
    name: str
    honest: bool
    catalogue: bool
    errors: tuple[CaseError, ...]

    def worst(self, hidden_only: bool) -> CaseError:
        pool = [e for e in self.errors if e.hidden or not hidden_only]
        return max(pool, key=lambda e: e.error)

    def hidden_failures(self) -> int:
        return sum(1 for e in self.errors if e.hidden and not e.passes)

    @property
    def hidden_total(self) -> int:
        return sum(1 for e in self.errors if e.hidden)


@dataclass(frozen=True)
class SetEvidence:
    """One set of cases (the published one, or a set generated from a seed)."""

    label: str
    rows: tuple[Row, ...]
    n_cases: int
    n_hidden: int

    @property
    def honest(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.honest)

    @property
    def wrong(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if not r.honest)

    @property
    def honest_max(self) -> float:
        return max((r.worst(hidden_only=False).error for r in self.honest), default=0.0)

    @property
    def tightest_wrong(self) -> Row | None:
        return min(self.wrong, key=lambda r: r.worst(hidden_only=True).error, default=None)

    @property
    def wrong_min(self) -> float:
        row = self.tightest_wrong
        return row.worst(hidden_only=True).error if row is not None else math.inf

    @property
    def uncaught(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.wrong if r.hidden_failures() == 0)

    @property
    def honest_failing(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.honest if not all(e.passes for e in r.errors))


@dataclass(frozen=True)
class Evidence:
    tol: float
    rtol: float
    atol: float
    sets: tuple[SetEvidence, ...]  # the published set first
    machine: tuple[tuple[str, str], ...]

    @property
    def published(self) -> SetEvidence:
        return self.sets[0]

    def problems(self) -> list[str]:
        """Every way the tolerance misses the bar (an empty list means it meets it)."""
        out = []
        if self.rtol != self.atol:
            out.append(f"rtol ({self.rtol:g}) != atol ({self.atol:g}): the error metric assumes rtol = atol")
        for s in self.sets:
            if not s.wrong or s.n_hidden == 0:
                out.append(f"{s.label}: nothing to separate (no wrong_answer submissions or no hidden cases)")
                continue
            if s.honest_max * MARGIN > self.tol:
                out.append(f"{s.label}: max honest error {s.honest_max:.3g} x {MARGIN:g} > tol {_g(self.tol)}")
            if self.tol * MARGIN > s.wrong_min:
                tightest = s.tightest_wrong
                assert tightest is not None  # s.wrong is not empty
                out.append(
                    f"{s.label}: tol {_g(self.tol)} x {MARGIN:g} > largest hidden error "
                    f"{s.wrong_min:.3g} of {tightest.name}"
                )
            out += [f"{s.label}: {name} fails no hidden case" for name in s.uncaught]
            out += [f"{s.label}: honest {name} fails a case" for name in s.honest_failing]
        return out

    @property
    def bar_met(self) -> bool:
        return not self.problems()

    @property
    def suggested_tol(self) -> float:
        """The geometric middle of the gap (one significant digit), for when the bar is missed."""
        lo = max(s.honest_max for s in self.sets)
        hi = min(s.wrong_min for s in self.sets)
        if lo <= 0 or not math.isfinite(hi):
            return self.tol
        mid = math.sqrt(lo * hi)
        return float(f"{mid:.0e}")


# --- the populations -------------------------------------------------------------------


def _load_function(path: Path, function: str) -> Callable[..., object]:
    spec = importlib.util.spec_from_file_location(f"_bundle_tolerance_{path.parent.name}_{path.stem}", path)
    assert spec is not None and spec.loader is not None  # a .py file: the source loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found: Callable[..., object] = getattr(module, function)
    return found


def implementations(bundle: Bundle) -> list[Implementation]:
    """Honest implementations first, then the wrong ones, each group sorted by name."""
    function = bundle.spec.function
    reference = bundle.load_reference_module()
    variants = bundle.load_reference_module("variants")
    data = feedback_data(bundle)
    names = bundle.spec.parameter_names

    def formulation(*args: object) -> object:
        return data.variant_output(variants, dict(zip(names, args, strict=True)), variants.Variant())

    honest = [
        Implementation("reference/solution (float64)", True, False, getattr(reference, function)),
        Implementation("reference/variants (Variant())", True, False, formulation),
    ]
    honest += [
        Implementation(f"accepted/{p.stem}", True, False, _load_function(p, function))
        for p in sorted((bundle.submissions / "accepted").glob("*.py"))
    ]
    wrong = [
        Implementation(f"wrong_answer/{p.stem}", False, p.stem in variants.MISTAKES, _load_function(p, function))
        for p in sorted((bundle.submissions / "wrong_answer").glob("*.py"))
    ]
    return honest + wrong


# --- measuring -----------------------------------------------------------------------------


def normalised_error(got: np.ndarray, expected: np.ndarray) -> float:
    """Smallest t with |got - expected| <= t + t*|expected| everywhere (inf if not finite)."""
    if not np.isfinite(got).all():
        return math.inf
    return float(np.max(np.abs(got - expected) / (1.0 + np.abs(expected)))) if got.size else 0.0


def case_error(impl: Implementation, case: TestCase, hidden: bool, rtol: float, atol: float) -> CaseError:
    try:
        with np.errstate(all="ignore"):
            got = impl.fn(*case.args())
    except Exception as exc:  # a wrong submission may crash on some shapes: it fails that case
        return CaseError(case.name, hidden, math.inf, False, f"raised {type(exc).__name__}")
    expected = case.expected_output
    if type(got) is not np.ndarray or got.dtype != np.float64 or got.shape != expected.shape:
        what = f"{type(got).__name__} {getattr(got, 'dtype', '')} {getattr(got, 'shape', '')}".strip()
        return CaseError(case.name, hidden, math.inf, False, f"returned {what}")
    error = normalised_error(got, expected)
    passes = compare(got, expected, rtol, atol, show_values=False).verdict == "AC"
    return CaseError(case.name, hidden, error, passes, "" if math.isfinite(error) else "NaN or inf")


def measure_set(
    label: str, impls: list[Implementation], cases: list[TestCase], hidden_groups: set[str], rtol: float, atol: float
) -> SetEvidence:
    rows = tuple(
        Row(i.name, i.honest, i.catalogue, tuple(case_error(i, c, c.group in hidden_groups, rtol, atol) for c in cases))
        for i in impls
    )
    return SetEvidence(label, rows, len(cases), sum(c.group in hidden_groups for c in cases))


def machine_info() -> tuple[tuple[str, str], ...]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    blas = "unknown"
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{deps.get('name', '?')} {deps.get('version', '')}".strip()
    except Exception:  # the config layout differs between NumPy versions; it is only informative
        pass
    return (
        ("python", sys.version.split()[0]),
        ("numpy", np.__version__),
        ("blas", blas),
        ("platform", f"{platform.system()} {platform.machine()}"),
        ("cpu", cpu),
    )


def measure(bundle: Bundle, extra_seeds: int = 0) -> Evidence:
    """Run every implementation on the published cases (and on `extra_seeds` fresh hidden sets)."""
    spec = bundle.spec
    rtol, atol = spec.comparison.rtol, spec.comparison.atol
    impls = implementations(bundle)
    hidden = {g.name for g in spec.groups if not g.visible}
    sets = [
        measure_set(
            "published testcases/", impls, load_cases(bundle.testcases, bundle.group_names("all")), hidden, rtol, atol
        )
    ]
    if extra_seeds:
        from ..problem.generate import case_maker, hidden_cases

        maker = case_maker(bundle)
        for seed in range(1, extra_seeds + 1):
            fresh = hidden_cases(maker, seed)
            sets.append(measure_set(f"fresh hidden set, seed {seed}", impls, fresh, hidden, rtol, atol))
    return Evidence(max(rtol, atol), rtol, atol, tuple(sets), machine_info())


# --- figures in text --------------------------------------------------------------------------


def _g(v: float) -> str:
    """5e-08 -> 5e-8."""
    mantissa, _, exponent = f"{v:g}".partition("e")
    return f"{mantissa}e{int(exponent)}" if exponent else mantissa
