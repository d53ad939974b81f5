"""Grading with feedback: judge a submission, then say why it is wrong.

This is the composition every user-facing caller wants (the CLI, verify,
the platforms); it lives here, above judging/, so that judging never
imports feedback.
"""

from __future__ import annotations

from pathlib import Path

from ..judging.judge import GradeOptions, judge
from ..judging.verdict import GradeReport
from ..problem.bundle import Bundle
from ..problem.cases import TestCase
from ..sandbox.early import Spawned


def grade(
    bundle: Bundle,
    path: Path,
    options: GradeOptions = GradeOptions(),
    cases: list[TestCase] | None = None,
    zygote: Spawned | None = None,
) -> GradeReport:
    """Judge `path` (see judging.judge.judge) and, unless options.diagnose is off, diagnose it."""
    judged = judge(bundle, path, options, cases, zygote)
    if not options.diagnose or judged.report.verdict == "AC":
        # An AC has nothing to diagnose (diagnose() returns it unchanged): skip importing the
        # diagnosis (~25 ms) in a learner's edit-grade loop.
        return judged.report
    from .diagnose import diagnose

    return diagnose(judged.report, bundle, judged.cases, judged.returned)
