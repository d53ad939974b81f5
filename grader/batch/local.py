"""Grading one student, in the batch's forked child: exactly what `grade` does.

The verdict JSON is rendered by report.json_report from feedback.grade.grade,
with the test cases and the speed probe that the batch prepared once
(GradeOptions.probe_s). A student with no file to grade (several candidates,
none, an unreadable file) gets the verdict JSON of a compilation error whose
message says what was found, with every test "not run" like any CE.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..feedback.grade import grade
from ..judging.judge import GradeOptions, unjudged
from ..judging.paths import read_regular
from ..judging.source import SubmissionUnreadable
from ..judging.verdict import CompileResult, GradeReport
from ..problem.bundle import Bundle
from ..problem.cases import TestCase
from ..report.json_report import render_json
from ..sandbox.early import Spawned
from .ids import clean_text
from .writes import atomic_write

if TYPE_CHECKING:
    from ..feedback.fingerprint import MistakeOutputs

MAX_READ = 16 << 20  # a submission over 64 KiB is a CE anyway; a notebook may be bigger


@dataclass(frozen=True)
class Task:
    """One student to grade: crosses into the forked child."""

    student: str
    path: Path | None
    problem: str  # the CE message when path is None
    out_json: Path
    container: str = ""  # --docker: the container's name, so the batch can remove it when killed
    within: Path | None = None  # the input folder the file must lie in (judging/paths.py)


def unjudged_report(bundle: Bundle, options: GradeOptions, cases: list[TestCase], message: str) -> GradeReport:
    """The report `grade` gives a file that cannot be compiled, for a student with no file at all."""
    return unjudged(bundle, options, cases, None, CompileResult("CE", message), "compile").report


def file_sha256(path: Path | None) -> str:
    """sha256 of the file's bytes, or "" when it cannot be read."""
    if path is None:
        return ""
    try:
        return hashlib.sha256(read_regular(path, MAX_READ)).hexdigest()
    except OSError:
        return ""


def grade_task(
    bundle: Bundle,
    options: GradeOptions,
    cases: list[TestCase],
    task: Task,
    zygote: Spawned | None = None,
    mistakes: MistakeOutputs | None = None,
) -> dict[str, Any]:
    """Grade one student and write DIR/<id>.json; the result dict goes back to the batch (in
    `zygote`, one the batch's master forked, if given: sandbox/master.py; the diagnosis against
    `mistakes`, which the batch prepared once, if given: feedback.grade.prepared_mistakes)."""
    started = time.monotonic()
    judged, reason = True, ""
    if task.path is None:
        report = unjudged_report(bundle, options, cases, task.problem)
        judged, reason = False, task.problem
    else:
        try:
            report = grade(bundle, task.path, replace(options, within=task.within), cases, zygote, mistakes)
        except SubmissionUnreadable as exc:
            reason = clean_text(str(exc).replace(str(task.path), task.path.name))
            report = unjudged_report(bundle, options, cases, reason)
            judged = False
    if report.verdict == "JE":
        judged, reason = False, clean_text(report.summary)
    atomic_write(task.out_json, render_json(report))
    return {
        "verdict": report.verdict,
        "judged": judged,
        "reason": reason,
        "seconds": round(time.monotonic() - started, 3),
    }
