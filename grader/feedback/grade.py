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

TYPE_CHECKING = False  # typing's flag without importing typing for it
if TYPE_CHECKING:
    from .fingerprint import MistakeOutputs


def grade(
    bundle: Bundle,
    path: Path,
    options: GradeOptions = GradeOptions(),
    cases: list[TestCase] | None = None,
    zygote: Spawned | None = None,
    mistakes: MistakeOutputs | None = None,
) -> GradeReport:
    """Judge `path` (see judging.judge.judge) and, unless options.diagnose is off, diagnose it
    (against `mistakes`, from `prepared_mistakes`, when given)."""
    judged = judge(bundle, path, options, cases, zygote)
    if not options.diagnose or judged.report.verdict == "AC":
        # An AC has nothing to diagnose (diagnose() returns it unchanged): skip importing the
        # diagnosis (~25 ms) in a learner's edit-grade loop.
        return judged.report
    from .diagnose import diagnose

    return diagnose(judged.report, bundle, judged.cases, judged.returned, mistakes)


WARMED_CASES = 2  # the smallest cases whose mistake outputs prepared_mistakes computes at once


def prepared_mistakes(bundle: Bundle, cases: list[TestCase] | None = None) -> MistakeOutputs | None:
    """The diagnosis imported and the bundle's mistakes ready to compute (reference/variants.py
    loaded), for a caller that grades many files with the same `cases`: `batch` prepares them once
    before it forks a process per student, which then imports and loads nothing of it. Every
    mistake's output on the WARMED_CASES smallest of `cases` is computed here too: every wrong
    answer's diagnosis compares all the mistakes there first (fingerprint._evidence_order), about
    two in five of the outputs a class's diagnoses ask. None when they cannot be prepared: each
    grading then tries for itself and its report says why not."""
    try:
        from .diagnose import mistake_outputs
        from .fingerprint import evidence_size
        from .live import LiveOutputs

        outputs = mistake_outputs(bundle)
    except Exception:  # a broken variants.py: reported by each diagnosis, never by the batch
        return None
    if isinstance(outputs, LiveOutputs) and cases:
        try:
            outputs.warm(sorted(cases, key=lambda c: evidence_size(c, outputs.data))[:WARMED_CASES])
        except Exception:  # a variant that fails on a case: each diagnosis meets it, and says so
            pass
    return outputs
