"""A run's outcome as the sandbox reports it, made up for tests of what reads one (the checker,
the per-case steps, the time rules): a clean run that returned nothing, changed by keyword."""

from __future__ import annotations

from typing import Any

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
