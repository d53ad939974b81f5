"""Calibration measurements: the speed probe's readings and submissions' CPU times.

Everything runs in the sandbox exactly as grading runs it (same zygote, a
fresh worker per test, every layer on). Each figure keeps its spread.
"""

from __future__ import annotations

import dataclasses
import math
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..feedback.grade import grade
from ..judging.sandbox_terms import sandbox_allowed, sandbox_limits
from ..problem.bundle import Bundle
from ..problem.cases import TestCase
from ..sandbox.launcher import PROBE_REPEATS, Sandbox
from .verify import ExpectedSubmission, one_pass_options

PROBE_GROUP = PROBE_REPEATS  # grading reads the probe as the minimum of this many runs (Sandbox.probe)


@dataclass(frozen=True)
class Spread:
    """A median and how far the individual measurements strayed from it."""

    median: float
    low: float
    high: float
    n: int

    @property
    def relative(self) -> float:
        """(high - low) / median: 0.1 means the runs spanned 10 % of the median."""
        return (self.high - self.low) / self.median if self.median else 0.0

    def as_dict(self, digits: int = 4) -> dict[str, Any]:
        return {
            "median_s": round(self.median, digits),
            "min_s": round(self.low, digits),
            "max_s": round(self.high, digits),
            "runs": self.n,
            "spread": round(self.relative, 3),
        }


def spread(values: Sequence[float]) -> Spread:
    if not values:
        raise ValueError("no measurements")
    return Spread(statistics.median(values), min(values), max(values), len(values))


@dataclass(frozen=True)
class ProbeStats:
    readings: tuple[tuple[float, ...], ...]  # per probe worker, every run's CPU seconds, in order

    @property
    def group(self) -> int:
        """Runs per reading (grading reads the probe once: the minimum of this many runs)."""
        return max((len(r) for r in self.readings), default=0)

    @property
    def runs(self) -> tuple[float, ...]:
        return tuple(v for r in self.readings for v in r)

    @property
    def single(self) -> Spread:
        return spread(self.runs)

    @property
    def grouped(self) -> Spread:
        """The spread of what grading sees: the minimum of each worker's runs."""
        return spread([min(r) for r in self.readings])


@dataclass(frozen=True)
class Timing:
    """One submission's CPU times under the generous cap, per case over the repetitions."""

    submission: ExpectedSubmission
    verdicts: tuple[str, ...]  # verdict of each repetition
    case_times: dict[str, tuple[float, ...]]  # case -> CPU seconds, one per repetition
    capped: bool  # hit the cap (CPU or wall): time >= cap
    cap_s: float
    capped_by: str = ""  # "cpu" or "wall" when capped

    @property
    def slowest_case(self) -> str | None:
        if not self.case_times:
            return None
        return max(self.case_times, key=lambda c: statistics.median(self.case_times[c]))

    @property
    def slowest_runs(self) -> tuple[float, ...]:
        """The times of every run of the slowest case; () when no case ran."""
        name = self.slowest_case
        return self.case_times[name] if name else ()

    @property
    def slowest(self) -> Spread | None:
        name = self.slowest_case
        return spread(self.case_times[name]) if name else None

    @property
    def time_s(self) -> float:
        """Median CPU time of the slowest case; infinity when it hit the cap."""
        if self.capped:
            return math.inf
        s = self.slowest
        return s.median if s else 0.0


def probe_sandbox(bundle: Bundle, isolation: str) -> Sandbox:
    """A sandbox for the probe alone: a stub submission, compiled but never called."""
    spec = bundle.spec
    # The probe needs a compiled submission in the zygote, but never runs it.
    return Sandbox(
        f"def {spec.function}(*args):\n    return None\n",
        function=spec.function,
        n_args=len(spec.parameters),
        limits=sandbox_limits(spec),
        allowed=sandbox_allowed(spec),
        preload=spec.allowed_imports.all_modules(),
        isolation=isolation,
    )


def measure_probe(
    bundle: Bundle, readings: int = 25, isolation: str = "auto", repeats: int = PROBE_GROUP
) -> ProbeStats:
    """`readings` probe readings, each a fresh sandbox worker running the probe `repeats` times."""
    with probe_sandbox(bundle, isolation) as sb:
        return ProbeStats(tuple(sb.probe_runs(repeats) for _ in range(readings)))


def probe_conditions(
    bundle: Bundle, readings: int, isolation: str = "auto", load: int = 0
) -> list[tuple[str, ProbeStats]]:
    """`calibrate --probe-only`: the probe's readings as found and, with `load`, again with that
    many busy processes running; each labelled with its condition and the load average then."""

    def condition(what: str) -> str:
        return f"{what} (load average {os.getloadavg()[0]:.1f})"

    stats = [(condition("as found"), measure_probe(bundle, readings, isolation))]
    if load:
        with BackgroundLoad(load):
            stats.append((condition(f"with {load} more busy process(es)"), measure_probe(bundle, readings, isolation)))
    return stats


class BackgroundLoad:
    """`n` busy-looping processes, to measure the probe on a loaded machine; ended by PID."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.procs: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> BackgroundLoad:
        for _ in range(self.n):
            self.procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
                )
            )
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self.procs:
            p.kill()
            p.wait()


def full_figures(bundle: Bundle) -> Bundle:
    """`bundle` with every test's figures in full: a hidden test's report rounds its CPU time up
    to a 1-2-5 series (judging/hidden.py), too coarse for evidence, and the maintainer's own
    submissions are no channel to guard."""
    spec = bundle.spec
    if spec.feedback.hidden == "full":
        return bundle
    return Bundle(bundle.root, dataclasses.replace(spec, feedback=dataclasses.replace(spec.feedback, hidden="full")))


def measure_submission(
    bundle: Bundle,
    sub: ExpectedSubmission,
    cap_s: float,
    repeats: int,
    isolation: str = "auto",
    cases: list[TestCase] | None = None,
) -> Timing:
    """Grade `sub` `repeats` times with the CPU limit raised to `cap_s` (no probe scaling)."""
    factor = cap_s / bundle.spec.limits.time_per_test_s
    # Alone: these CPU times are the calibration's evidence, and a shared run's are upper bounds only.
    options = one_pass_options(isolation, factor, scale_time=False)
    bundle = full_figures(bundle)
    verdicts: list[str] = []
    times: dict[str, list[float]] = {}
    capped_by = ""
    for _ in range(repeats):
        report = grade(bundle, sub.path, options, cases)
        verdicts.append(report.verdict)
        for c in report.tests:
            if c.time_s is not None:
                times.setdefault(c.name, []).append(c.time_s)
        stopped = [c for c in report.tests if c.verdict == "TLE"]
        if stopped:
            # Little CPU time at a TLE means the wall-clock cap (a sleeper) stopped it.
            capped_by = "cpu" if (stopped[0].time_s or 0.0) >= 0.9 * cap_s else "wall"
            break  # another run would only burn the cap again
    return Timing(sub, tuple(verdicts), {k: tuple(v) for k, v in times.items()}, bool(capped_by), cap_s, capped_by)
