"""Records made up for tests of what reads them: a run's outcome as the sandbox reports it (for
the checker, the per-case steps, the time rules), the checker's context, a one-test report (for
the report formats)."""

from __future__ import annotations

from typing import Any

from grader.judging.checker import RunContext
from grader.judging.verdict import CaseResult, CompileResult, GradeReport, GroupResult
from grader.sandbox import child
from grader.sandbox.records import RunOutcome


def run_outcome(**changes: Any) -> RunOutcome:
    """A run that ended normally after 0.01 s of CPU with no value, with `changes` applied."""
    fields: dict[str, Any] = dict(
        status=child.STATUS_OK,
        exit_code=0,
        signal=None,
        cpu_s=0.01,
        wall_s=0.02,
        maxrss_kib=30000,
        killed_by=None,
        value=None,
        error=None,
        detail="",
        stdout="",
        stderr="",
        output_bytes=0,
        result_too_large=False,
        worker_layers={"rlimits": ["active", "."]},  # the worker reported its layers: submission code ran
    )
    fields.update(changes)
    return RunOutcome(**fields)


def run_context(**changes: Any) -> RunContext:
    """What the checker knows of a run of the root bundle's function, with `changes` applied."""
    fields: dict[str, Any] = dict(
        function="vit_encoder_block",
        parameters=("x", "num_heads", "Wq", "Wk", "Wv", "Wo", "W1", "W2"),
        cpu_limit_s=1.0,
        wall_limit_s=3.0,
        flood_bytes=32 << 20,
        result_bytes=16 << 20,
        allowed_hint="allowed: NumPy and math",
        output_shape=("B", "N", "D"),
        axis_names={"B": "batch"},
        output_axes=("batch", "token", "channel"),
    )
    fields.update(changes)
    return RunContext(**fields)


def one_case_report(case: CaseResult, summary: str) -> GradeReport:
    """The report of a run of the sample group's one test `case` (12 points, none earned)."""
    group = GroupResult(case.group, case.visible, case.verdict, 0, 1, 12, 0, "The examples.")
    return GradeReport(
        verdict=case.verdict,
        score=0,
        max_score=12,
        summary=summary,
        compile=CompileResult("OK", ""),
        tests=(case,),
        groups=(group,),
        bundle_id="vit-encoder-block",
        bundle_version="1.0.0",
        grader_version="1.0.0",
        selection="sample",
        hidden_set="published",
    )
