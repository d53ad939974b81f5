"""The native verdict JSON (schema: schemas/verdict.schema.json, docs/verdict-json.md).

Stable contract: keys are only ever added in a new schema_version. Floats
that are not finite (a relative error where the expected value is 0) are
written as null, so the output is strict JSON.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..judging.verdict import VERDICT_NAMES, CaseResult, ErrorSummary, GradeReport

SCHEMA_VERSION = 3


def _num(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x


def _error(e: ErrorSummary | None) -> dict[str, Any] | None:
    if e is None:
        return None
    return {
        "max_abs_error": _num(e.max_abs_error),
        "max_abs_at": list(e.max_abs_at),
        "max_rel_error": _num(e.max_rel_error),
        "max_rel_at": list(e.max_rel_at),
        "outside_tolerance": e.outside,
        "elements": e.total,
        "expected_at_worst": _num(e.expected_at_worst),
        "received_at_worst": _num(e.received_at_worst),
        "pattern": e.pattern or None,
    }


def _test(c: CaseResult) -> dict[str, Any]:
    return {
        "name": c.name,
        "group": c.group,
        "visible": c.visible,
        "verdict": c.verdict,
        "check": c.check,
        "time_s": _num(c.time_s),
        "memory_mib": _num(c.memory_mib),
        "message": c.message,
        "error": _error(c.error),
        "diagnosis": c.diagnosis,
        "stdout": c.stdout,
        "stderr": c.stderr,
    }


def report_dict(r: GradeReport) -> dict[str, Any]:
    """The report as plain JSON-ready data, keys in a fixed order."""
    sandbox = None
    if r.sandbox is not None:
        sandbox = {
            "mode": r.sandbox.mode,
            "layers": [{"name": la.name, "status": la.status, "detail": la.detail} for la in r.sandbox.layers],
            "unavailable": list(r.sandbox.unavailable),
        }
    limits = None
    if r.limits is not None:
        limits = {
            "cpu_s_per_test": round(r.limits.cpu_s, 4),
            "wall_s_per_test": round(r.limits.wall_s, 4),
            "machine_scale": None if r.limits.scale is None else round(r.limits.scale, 4),
            "probe_s": None if r.limits.probe_s is None else round(r.limits.probe_s, 5),
            "time_factor": r.limits.time_factor,
            "probe": r.limits.probe,
        }
    sub = None
    if r.submission is not None:
        sub = {
            "file": r.submission.file,
            "sha256": r.submission.sha256,
            "bytes": r.submission.bytes,
            "kind": r.submission.kind,
        }
    return {
        "schema_version": SCHEMA_VERSION,
        "verdict": r.verdict,
        "verdict_name": VERDICT_NAMES[r.verdict],
        "score": r.score,
        "max_score": r.max_score,
        "summary": r.summary,
        "bundle_id": r.bundle_id,
        "bundle_version": r.bundle_version,
        "grader_version": r.grader_version,
        "selection": r.selection,
        "hidden_set": r.hidden_set,
        "secret_seed": r.secret_seed,
        "complete": r.complete,
        "submission": sub,
        "compile": {"verdict": r.compile.verdict, "message": r.compile.message, "line": r.compile.line},
        "limits": limits,
        "groups": [
            {
                "name": g.name,
                "visible": g.visible,
                "verdict": g.verdict,
                "passed": g.passed,
                "total": g.total,
                "points": g.points,
                "score": g.score,
            }
            for g in r.groups
        ],
        "tests": [_test(c) for c in r.tests],
        "diagnosis": r.diagnosis,
        "sandbox": sandbox,
    }


def render_json(r: GradeReport) -> str:
    return json.dumps(report_dict(r), indent=2, allow_nan=False) + "\n"
