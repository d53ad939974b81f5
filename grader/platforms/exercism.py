"""Exercism's test-runner results.json, version 3
(https://exercism.org/docs/building/tooling/test-runners/interface).

Top level: version 3, status "pass" (every test passed), "fail" (at least one
test failed or errored) or "error" (no test ran: a compilation error, a file
that cannot be judged, a grader fault), and `message` only for "error".
One entry per case, in judging order (the spec requires the tests file's
order): name, status "pass"/"fail"/"error" (a wrong answer fails, a crash or
a limit errors), message for a failing case, output (what the submission
printed, visible cases only) and test_code (the call and the check, with the
inputs, for visible cases, importing the function from the student's own
file). The mistake diagnosis (its summary and next step), which the other
formats carry too, is added to the first failing test's message: the
interface has no other place for it (the top-level message is only for
"error"). task_id is left out: the statement has no numbered tasks, and the
spec links a test to a task only when it belongs to exactly one.

Size limits: `output` must be at most 500 characters, truncated with the
spec's notice; messages are capped at 65535 characters, the limit the current
interface page gives for `message` ("if the value contains multibyte
characters, the effective max length is smaller", so the cap is on UTF-8
bytes).
"""

from __future__ import annotations

import json
import keyword
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..judging.paths import read_regular
from ..judging.verdict import VERDICT_NAMES, CaseResult, GradeReport
from ..problem.bundle import Bundle
from ..problem.cases import TestCase, load_cases
from ..problem.spec import ProblemSpec
from .registry import Platform, Rendering

VERSION = 3
OUTPUT_LIMIT = 500
TRUNCATION_NOTICE = "\nOutput was truncated. Please limit to 500 chars"
MESSAGE_LIMIT_BYTES = 65535
TEST_CODE_LIMIT_BYTES = 65535
CONFIG_LIMIT_BYTES = 1 << 20  # .meta/config.json is a few hundred bytes; a bigger one is not read whole


def truncate_output(text: str) -> str:
    """At most 500 characters, the notice included."""
    if len(text) <= OUTPUT_LIMIT:
        return text
    return text[: OUTPUT_LIMIT - len(TRUNCATION_NOTICE)] + TRUNCATION_NOTICE


def cap_bytes(text: str, limit: int = MESSAGE_LIMIT_BYTES) -> str:
    """At most `limit` UTF-8 bytes, cut on a character boundary, with a marker."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    marker = "\n[... truncated]"
    return data[: limit - len(marker.encode())].decode("utf-8", errors="ignore") + marker


def _status(c: CaseResult) -> str:
    if c.verdict == "AC":
        return "pass"
    return "fail" if c.verdict == "WA" else "error"


def _literal(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"np.array({value.tolist()!r})"
    if isinstance(value, list):  # a list of dicts of arrays
        items = (", ".join(f"{k!r}: {_literal(a)}" for k, a in d.items()) for d in value)
        return "[" + ", ".join("{" + item + "}" for item in items) + "]"
    return repr(value)


def import_lines(file_name: str, function: str) -> list[str]:
    """How a Python session next to the student's file gets `function` from it."""
    path = Path(file_name)
    if path.suffix == ".ipynb":
        return [f"# run in your notebook, after the cell that defines {function}"]
    if path.suffix == ".py" and path.stem.isidentifier() and not keyword.iskeyword(path.stem):
        return [f"from {path.stem} import {function}"]
    return ["import runpy", f"{function} = runpy.run_path({path.name!r})[{function!r}]"]


def case_test_code(case: TestCase, spec: ProblemSpec, file_name: str | None = None) -> str:
    """The call and the comparison a learner can paste into a Python session beside their
    file `file_name` (default: the problem's entry file)."""
    lines = ["import numpy as np", *import_lines(file_name or spec.entry_file, spec.function), ""]
    lines += [f"{k} = {_literal(case.inputs[k])}" for k in spec.parameter_names]
    lines.append(f"z = {spec.function}({', '.join(spec.parameter_names)})")
    if case.expected is not None:
        lines.append(f"expected = {_literal(case.expected)}")
        lines.append(
            f"np.testing.assert_allclose(z, expected, rtol={spec.comparison.rtol:g}, atol={spec.comparison.atol:g})"
        )
    return "\n".join(lines)


def diagnosis_text(r: GradeReport) -> str:
    """The mistake diagnosis as the other formats give it: its summary, then the next step."""
    d = r.diagnosis or {}
    parts = [str(d["summary"])] if d.get("summary") else []
    if d.get("next_step"):
        parts.append(f"Next: {d['next_step']}")
    return "\n".join(parts)


def _test(
    c: CaseResult, spec: ProblemSpec | None, cases: Mapping[str, TestCase], file_name: str | None, diagnosis: str = ""
) -> dict[str, Any]:
    out: dict[str, Any] = {"name": c.name, "status": _status(c)}
    if c.verdict != "AC":
        message = f"{c.verdict} ({VERDICT_NAMES.get(c.verdict, c.verdict)}): {c.message}"
        out["message"] = cap_bytes(f"{message}\n\n{diagnosis}" if diagnosis else message)
    printed = (c.stdout + c.stderr) if c.visible else ""
    if printed:
        out["output"] = truncate_output(printed)
    if c.visible and spec is not None and c.name in cases:
        code = case_test_code(cases[c.name], spec, file_name)
        if len(code.encode("utf-8")) <= TEST_CODE_LIMIT_BYTES:
            out["test_code"] = code
    return out


def exercism_results(
    r: GradeReport, spec: ProblemSpec | None = None, cases: Mapping[str, TestCase] | None = None
) -> dict[str, Any]:
    """The results.json document; `cases` (visible ones) give each test its test_code."""
    if r.compile.verdict != "OK" and all(c.check == "compile" for c in r.tests):
        message = f"{VERDICT_NAMES.get(r.compile.verdict, r.compile.verdict)}: {r.compile.message}"
        return {"version": VERSION, "status": "error", "message": cap_bytes(message), "tests": []}
    if r.verdict == "JE" and all(c.verdict == "JE" for c in r.tests):
        return {"version": VERSION, "status": "error", "message": cap_bytes(f"Judging error: {r.summary}"), "tests": []}
    status = "pass" if r.tests and all(c.verdict == "AC" for c in r.tests) else "fail"
    file_name = r.submission.file if r.submission else None
    first_failing = next((c.name for c in r.tests if c.verdict != "AC"), None)
    diagnosis = diagnosis_text(r)
    return {
        "version": VERSION,
        "status": status,
        "message": None,
        "tests": [
            _test(c, spec, cases or {}, file_name, diagnosis if c.name == first_failing else "") for c in r.tests
        ],
    }


def exercism_error(reason: str, solution_dir: Path | None = None) -> dict[str, Any]:
    """results.json when nothing could run (no solution file, unreadable).

    The interface asks for `<solution-dir>/relative/path` rather than the runner's full paths."""
    if solution_dir is not None:
        reason = reason.replace(str(Path(solution_dir)), "<solution-dir>")
    return {"version": VERSION, "status": "error", "message": cap_bytes(reason), "tests": []}


def visible_cases(bundle: Bundle) -> dict[str, TestCase]:
    """The visible cases by name, for test_code (hidden inputs never reach a report)."""
    return {c.name: c for c in load_cases(bundle.testcases, bundle.group_names("sample"))}


def find_solution(input_dir: Path, slug: str, entry_file: str) -> Path:
    """The solution file in an Exercism input folder: .meta/config.json's first solution file,
    else the problem's entry file, else <slug with '-' as '_'>.py (the Python track's naming).

    Only a name is chosen here, never opened: the runner grades it with `--within
    input_dir`, so a config that names a path outside the folder ('../', an absolute
    path) or a symlink gives a CE saying so. The config itself is read without
    following links; one that cannot be read that way counts as absent.
    """
    input_dir = Path(input_dir)
    config = input_dir / ".meta" / "config.json"
    try:
        files = json.loads(read_regular(config, CONFIG_LIMIT_BYTES, within=input_dir))["files"]["solution"]
        if files and isinstance(files[0], str) and files[0]:
            return input_dir / files[0]
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        pass
    for name in (entry_file, slug.replace("-", "_") + ".py"):
        if os.path.lexists(input_dir / name):  # a symlink too: the grader then says what it is
            return input_dir / name
    return input_dir / entry_file


def render(r: GradeReport, spec: ProblemSpec | None = None, cases: Mapping[str, TestCase] | None = None) -> str:
    return json.dumps(exercism_results(r, spec, cases), indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def render_error(reason: str, solution_dir: Path | None = None) -> str:
    return json.dumps(exercism_error(reason, solution_dir), indent=2, ensure_ascii=False) + "\n"


# --- the registry's record (registry.py) ---------------------------------------------------


def _render(report: GradeReport, ctx: Rendering) -> str:
    return render(report, ctx.bundle.spec, visible_cases(ctx.bundle))


def _render_error(ctx: Rendering, submission: Path, reason: str) -> str:
    return render_error(reason, submission.parent)


PLATFORM = Platform("exercism", _render, _render_error)
