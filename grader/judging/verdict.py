"""Verdict records and how case results add up to groups, a score and one verdict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

VERDICTS = ("AC", "WA", "TLE", "MLE", "RE", "CE", "OLE", "JE")
VERDICT_NAMES = {
    "AC": "Accepted",
    "WA": "Wrong Answer",
    "TLE": "Time Limit Exceeded",
    "MLE": "Memory Limit Exceeded",
    "RE": "Run-Time Error",
    "CE": "Compilation Error",
    "OLE": "Output Limit Exceeded",
    "JE": "Judging Error",
}
# Which check decided a case, in the order they are applied.
CHECKS = ("compile", "limits", "run", "type", "dtype", "shape", "finite", "tolerance", "passed")


@dataclass(frozen=True)
class ErrorSummary:
    """How far a returned array is from the expected one, and where."""

    max_abs_error: float
    max_abs_at: tuple[int, ...]
    max_rel_error: float
    max_rel_at: tuple[int, ...]
    outside: int  # elements outside the tolerance
    total: int
    expected_at_worst: float | None = None  # only where feedback may show values
    received_at_worst: float | None = None
    pattern: dict[str, Any] = field(default_factory=dict)  # where the error sits (see diagnose)


@dataclass(frozen=True)
class CaseResult:
    name: str
    group: str
    visible: bool
    verdict: str
    check: str  # one of CHECKS: the check that decided
    message: str
    time_s: float | None = None
    memory_mib: float | None = None
    error: ErrorSummary | None = None
    stdout: str = ""  # captured output, kept for visible cases only
    stderr: str = ""
    diagnosis: dict[str, Any] | None = None


@dataclass(frozen=True)
class GroupResult:
    name: str
    visible: bool
    verdict: str
    passed: int
    total: int
    points: int
    score: int
    description: str = ""
    exercises: tuple[str, ...] = ()  # what the group isolates (problem.yaml), for the report


@dataclass(frozen=True)
class CompileResult:
    verdict: str  # "OK", or the verdict every case inherits (CE, RE, TLE, ...)
    message: str
    line: int | None = None


def overall_verdict(cases: Sequence[CaseResult]) -> str:
    """ICPC convention: the first non-AC case verdict in test order; AC if none."""
    for c in cases:
        if c.verdict != "AC":
            return c.verdict
    return "AC" if cases else "JE"


def group_results(groups: Sequence[Any], cases: Sequence[CaseResult], scored: bool = True) -> list[GroupResult]:
    """Per-group verdicts; a group earns its points only when all its cases pass
    (never when not `scored`: the practice set earns no points)."""
    out = []
    for g in groups:
        mine = [c for c in cases if c.group == g.name]
        if not mine:
            continue
        passed = sum(c.verdict == "AC" for c in mine)
        verdict = overall_verdict(mine)
        points = g.points if scored else 0
        visible = g.visible or all(c.visible for c in mine)
        out.append(
            GroupResult(
                g.name,
                visible,
                verdict,
                passed,
                len(mine),
                points,
                points if verdict == "AC" else 0,
                g.description,
                tuple(getattr(g, "exercises", ())),
            )
        )
    return out


@dataclass(frozen=True)
class SubmissionInfo:
    file: str
    sha256: str
    bytes: int
    kind: str  # "python" or "notebook"


@dataclass(frozen=True)
class GradeReport:
    """Everything one grading run decided; the JSON and text reports render this."""

    verdict: str
    score: int
    max_score: int
    summary: str
    compile: CompileResult
    tests: tuple[CaseResult, ...]
    groups: tuple[GroupResult, ...]
    bundle_id: str
    bundle_version: str
    grader_version: str
    selection: str  # "sample", "practice" or "all"
    hidden_set: str  # "published" or "secret-seed"
    submission: SubmissionInfo | None = None
    sandbox: Any = None  # sandbox.records.SandboxInfo
    limits: Any = None  # timing.EffectiveLimits
    diagnosis: dict[str, Any] | None = None
    complete: bool = True  # False when judging stopped at the first failure
    secret_seed: int | None = None  # the seed of a fresh hidden set (--secret-seed), to reproduce it
