"""DIR/<id>.json read back into the GradeReport it was rendered from, so that the text report
a student gets is the one `grade` prints, from the same renderer.

The verdict JSON (report/json_report.py) holds every field the text report shows but two,
which come from the bundle the batch grades with: each group's description and what it
exercises (problem.yaml). A verdict naming a group the bundle does not have is not this
bundle's, and is read as damaged.

The file is read as hostile (a resumed DIR, a merged shard): every field is type-checked and a
wrong one makes the whole report None, never a crash further on; every string passes through
sandbox/untrusted.py's `clean`, which leaves the grader's own (already clean) text as it is, so
that `render_json` of what is read gives back the same bytes (tests/test_batch_feedback.py).
Non-finite floats were written as null; an error size read back as null is infinity.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..judging.timing import EffectiveLimits
from ..judging.verdict import (
    VERDICTS,
    CaseResult,
    CompileResult,
    ErrorSummary,
    GradeReport,
    GroupResult,
    SubmissionInfo,
)
from ..problem.spec import Group
from ..sandbox.records import Layer, SandboxInfo
from ..sandbox.untrusted import clean


class _Damaged(Exception):
    """A field of the verdict JSON is missing or of the wrong type."""


def _get(d: object, key: str) -> object:
    if not isinstance(d, dict) or key not in d:
        raise _Damaged(key)
    return d[key]


def _str(d: object, key: str) -> str:
    value = _get(d, key)
    if type(value) is not str:
        raise _Damaged(key)
    return clean(value, len(value))


def _int(d: object, key: str) -> int:
    value = _get(d, key)
    if type(value) is not int or value < 0:
        raise _Damaged(key)
    return value


def _bool(d: object, key: str) -> bool:
    value = _get(d, key)
    if type(value) is not bool:
        raise _Damaged(key)
    return value


def _num(d: object, key: str, null: float | None = None) -> Any:
    """A number (int or float, as written), or `null` for a JSON null."""
    value = _get(d, key)
    if value is None:
        return null
    if not isinstance(value, (int, float)) or type(value) is bool or not math.isfinite(value):
        raise _Damaged(key)
    return value


def _opt_int(d: object, key: str) -> int | None:
    return None if _get(d, key) is None else _int(d, key)


def _list(d: object, key: str) -> list[Any]:
    value = _get(d, key)
    if type(value) is not list:
        raise _Damaged(key)
    return value


def _indices(d: object, key: str) -> tuple[int, ...]:
    values = _list(d, key)
    if not all(type(v) is int for v in values):
        raise _Damaged(key)
    return tuple(values)


def _free(value: object, depth: int = 0) -> Any:
    """Free-form JSON (the diagnosis): the same structure, every string cleaned."""
    if depth > 32:
        raise _Damaged("diagnosis")
    if isinstance(value, str):
        return clean(value, len(value))
    if isinstance(value, list):
        return [_free(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {clean(k, len(k)): _free(v, depth + 1) for k, v in value.items()}
    return value


def _free_dict(d: object, key: str) -> dict[str, Any] | None:
    value = _get(d, key)
    if value is not None and not isinstance(value, dict):
        raise _Damaged(key)
    return None if value is None else _free(value)


def _error(e: object) -> ErrorSummary | None:
    if e is None:
        return None
    return ErrorSummary(
        max_abs_error=_num(e, "max_abs_error", math.inf),
        max_abs_at=_indices(e, "max_abs_at"),
        max_rel_error=_num(e, "max_rel_error", math.inf),
        max_rel_at=_indices(e, "max_rel_at"),
        outside=_int(e, "outside_tolerance"),
        total=_int(e, "elements"),
        expected_at_worst=_num(e, "expected_at_worst"),
        received_at_worst=_num(e, "received_at_worst"),
        pattern=_free_dict(e, "pattern") or {},
    )


def _verdict(d: object, key: str) -> str:
    value = _str(d, key)
    if value not in VERDICTS:
        raise _Damaged(key)
    return value


def _test(t: object) -> CaseResult:
    return CaseResult(
        name=_str(t, "name"),
        group=_str(t, "group"),
        visible=_bool(t, "visible"),
        verdict=_verdict(t, "verdict"),
        check=_str(t, "check"),
        message=_str(t, "message"),
        time_s=_num(t, "time_s"),
        memory_mib=_num(t, "memory_mib"),
        error=_error(_get(t, "error")),
        stdout=_str(t, "stdout"),
        stderr=_str(t, "stderr"),
        diagnosis=_free_dict(t, "diagnosis"),
    )


def _group(g: object, spec: Mapping[str, Group]) -> GroupResult:
    name = _str(g, "name")
    if name not in spec:
        raise _Damaged("groups")
    return GroupResult(
        name=name,
        visible=_bool(g, "visible"),
        verdict=_verdict(g, "verdict"),
        passed=_int(g, "passed"),
        total=_int(g, "total"),
        points=_int(g, "points"),
        score=_int(g, "score"),
        description=spec[name].description,
        exercises=tuple(spec[name].exercises),
    )


def _submission(s: object) -> SubmissionInfo | None:
    if s is None:
        return None
    return SubmissionInfo(_str(s, "file"), _str(s, "sha256"), _int(s, "bytes"), _str(s, "kind"))


def _limits(m: object) -> EffectiveLimits | None:
    if m is None:
        return None
    return EffectiveLimits(
        cpu_s=_num(m, "cpu_s_per_test", math.nan),
        wall_s=_num(m, "wall_s_per_test", math.nan),
        scale=_num(m, "machine_scale"),
        probe_s=_num(m, "probe_s"),
        time_factor=_num(m, "time_factor", math.nan),
        probe=_str(m, "probe"),
    )


def _sandbox(s: object) -> SandboxInfo | None:
    if s is None:
        return None
    layers = tuple(Layer(_str(la, "name"), _str(la, "status"), _str(la, "detail")) for la in _list(s, "layers"))
    info = SandboxInfo(_str(s, "mode"), layers)
    if list(info.unavailable) != _list(s, "unavailable"):
        raise _Damaged("sandbox")
    return info


def _seed(d: object) -> int | None:
    value = _get(d, "secret_seed")
    if value is not None and type(value) is not int:
        raise _Damaged("secret_seed")
    return value


def _report(d: object, spec: Mapping[str, Group]) -> GradeReport:
    compiled = _get(d, "compile")
    return GradeReport(
        verdict=_verdict(d, "verdict"),
        score=_int(d, "score"),
        max_score=_int(d, "max_score"),
        summary=_str(d, "summary"),
        compile=CompileResult(_str(compiled, "verdict"), _str(compiled, "message"), _opt_int(compiled, "line")),
        tests=tuple(_test(t) for t in _list(d, "tests")),
        groups=tuple(_group(g, spec) for g in _list(d, "groups")),
        bundle_id=_str(d, "bundle_id"),
        bundle_version=_str(d, "bundle_version"),
        grader_version=_str(d, "grader_version"),
        selection=_str(d, "selection"),
        hidden_set=_str(d, "hidden_set"),
        submission=_submission(_get(d, "submission")),
        sandbox=_sandbox(_get(d, "sandbox")),
        limits=_limits(_get(d, "limits")),
        diagnosis=_free_dict(d, "diagnosis"),
        complete=_bool(d, "complete"),
        secret_seed=_seed(d),
    )


def read_report(data: object, groups: Mapping[str, Group]) -> GradeReport | None:
    """The GradeReport a verdict JSON (parsed) was rendered from, or None if it is damaged;
    `groups`: the bundle's groups by name (their descriptions, which the JSON does not hold)."""
    try:
        return _report(data, groups)
    except _Damaged:
        return None
