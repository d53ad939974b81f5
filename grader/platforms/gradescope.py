"""Gradescope's results.json (https://gradescope-autograders.readthedocs.io/en/latest/specs/).

One Gradescope test per problem group: a group is the unit that earns points
(all its cases must pass), so each entry carries the group's score and
max_score, status "passed"/"failed", and in `output` one line per case.
The top-level `score` is the grader's score (Gradescope lets it override
the sum of the tests).

Visibility: the visible groups are "visible"; the hidden groups are
"after_published" (shown once the instructor publishes grades). "hidden" would
never show them, and Gradescope's specification reserves that for tests that
carry no points. Hidden groups' output holds only what the bundle's feedback
policy allows for hidden cases (the judge already stripped values, captured
output and exception text from their messages); captured output is never
copied from a hidden case. The top-level output is always visible, so it
speaks of the visible groups only; the mistake diagnosis, which may rest on
hidden cases, is a point-less "diagnosis" test shown after publication. All
text is "text" formatted: Gradescope's default for the top-level output,
"simple_format", renders HTML, and a traceback's "<module>" must not become a
tag.
"""
from __future__ import annotations

import json
from typing import Any

from ..problem.spec import ProblemSpec
from ..judging.verdict import VERDICT_NAMES, CaseResult, GradeReport, GroupResult

VISIBLE, HIDDEN = "visible", "after_published"
STDOUT_CHARS = 2000          # captured output shown per visible failing case
MESSAGE_CHARS = 4000         # one case's message


def _clip(text: str, limit: int) -> str:
    text = text.rstrip()
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more characters cut]"


def _case_lines(c: CaseResult) -> list[str]:
    mark = "PASS" if c.verdict == "AC" else "FAIL"
    t = f", {c.time_s:.2f} s" if c.time_s is not None else ""
    lines = [f"{mark} {c.name}: {c.verdict} ({VERDICT_NAMES.get(c.verdict, c.verdict)}{t})"]
    if c.verdict != "AC":
        lines += ["    " + ln for ln in _clip(c.message, MESSAGE_CHARS).splitlines()]
        captured = (c.stdout + c.stderr).strip() if c.visible else ""
        if captured:
            lines.append("    your output:")
            lines += ["      " + ln for ln in _clip(captured, STDOUT_CHARS).splitlines()]
    return lines


def _group_test(g: GroupResult, cases: list[CaseResult], number: int) -> dict[str, Any]:
    head = f"{g.description}\n" if g.description else ""
    head += f"{g.passed} of {g.total} tests passed; the group earns its {g.points} points only when all pass.\n"
    if not g.visible:
        head += "Hidden group: inputs, expected values and your output are not shown.\n"
    body = "\n".join(ln for c in cases for ln in _case_lines(c))
    # Gradescope's statistics group tests by name across submissions: keep it free of results.
    return {"name": f"{g.name}: {g.description}" if g.description else g.name,
            "number": str(number),
            "score": g.score,
            "max_score": g.points,
            "status": "passed" if g.verdict == "AC" else "failed",
            "output": head + "\n" + body,
            "output_format": "text",
            "visibility": VISIBLE if g.visible else HIDDEN}


def _top_output(r: GradeReport) -> str:
    """Only what a student may see at once: visible groups, never a hidden group's outcome."""
    visible = [g for g in r.groups if g.visible]
    hidden = [g for g in r.groups if not g.visible]
    if r.compile.verdict == "CE":
        lines = ["Your file could not be run (Compilation Error):", r.compile.message]
    elif r.verdict == "JE":
        lines = [f"Judging error (a grader fault, not yours): {r.summary}"]
    else:
        lines = [f"{g.name}: {g.passed}/{g.total} tests passed, {g.score}/{g.points} points" for g in visible]
    failing = [c for c in r.tests if c.visible and c.verdict != "AC"]
    if r.compile.verdict == "CE":
        nxt = "fix the problem above; no test could run."
    elif failing:
        nxt = f"fix {failing[0].name} first: {failing[0].message.splitlines()[0] if failing[0].message else failing[0].verdict}"
    else:
        nxt = "the visible tests pass; the hidden groups decide the rest of the score."
    lines.append(f"Next: {nxt}")
    if hidden:
        lines.append(f"{len(hidden)} hidden groups ({sum(g.points for g in hidden)} points) were graded too; "
                     "their results appear when your instructor publishes the grades.")
    return "\n".join(lines)


def _diagnosis_test(r: GradeReport) -> dict[str, Any] | None:
    """The mistake diagnosis may rest on hidden cases, so it is shown with them, after publication."""
    if not r.diagnosis:
        return None
    text = "\n".join(str(r.diagnosis[k]) for k in ("summary", "next_step") if r.diagnosis.get(k))
    if not text:
        return None
    return {"name": "diagnosis", "status": "failed", "output": text, "output_format": "text",
            "visibility": HIDDEN}


def gradescope_results(r: GradeReport, elapsed_s: float | None = None) -> dict[str, Any]:
    """The results.json document for one grading run."""
    tests = [_group_test(g, [c for c in r.tests if c.group == g.name], i)
             for i, g in enumerate(r.groups, start=1)]
    diagnosis = _diagnosis_test(r)
    if diagnosis is not None:
        tests.append(diagnosis)
    doc: dict[str, Any] = {"score": r.score, "output": _top_output(r), "output_format": "text",
                           "test_output_format": "text", "test_name_format": "text",
                           "stdout_visibility": "hidden"}
    if elapsed_s is not None:
        doc["execution_time"] = max(0, round(elapsed_s))
    doc["tests"] = tests
    doc["extra_data"] = {"verdict": r.verdict, "max_score": r.max_score, "bundle": f"{r.bundle_id} {r.bundle_version}",
                         "grader_version": r.grader_version, "selection": r.selection, "hidden_set": r.hidden_set,
                         "submission_sha256": r.submission.sha256 if r.submission else None}
    return doc


def gradescope_error(spec: ProblemSpec, reason: str) -> dict[str, Any]:
    """results.json when the submission cannot be judged at all (no file, a folder, unreadable)."""
    params = ", ".join(spec.parameter_names)
    return {"score": 0,
            "output": f"Your submission could not be graded: {reason}\n"
                      f"Upload one file named {spec.entry_file} that defines {spec.function}({params}).",
            "output_format": "text", "stdout_visibility": "hidden",
            "tests": [{"name": "submission found", "status": "failed", "score": 0, "max_score": 0,
                       "output": reason, "output_format": "text", "visibility": VISIBLE}],
            "extra_data": {"verdict": None, "max_score": spec.max_score, "bundle": f"{spec.id} {spec.version}"}}


def render(r: GradeReport, elapsed_s: float | None = None) -> str:
    return json.dumps(gradescope_results(r, elapsed_s), indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def render_error(spec: ProblemSpec, reason: str) -> str:
    return json.dumps(gradescope_error(spec, reason), indent=2, ensure_ascii=False) + "\n"
