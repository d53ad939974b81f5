"""Platform result formats: Gradescope results.json, Exercism results.json v3, JUnit XML.

Each format is checked three ways:
- golden files (tests/golden/formats/) for real grading runs of tiny submissions
  (regenerate with `UPDATE_GOLDEN=1 python3 -m pytest tests/test_formats.py`);
  only what legitimately varies is normalised, in the report before rendering
  (per-case times and memory, sandbox and limit figures);
- against the format's published rules, written down below with the URL they
  come from (field names, allowed values, size limits);
- for hidden data: a submission that prints and raises its inputs on hidden
  cases leaks nothing into any format.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conftest import ROOT, require_parts, run_cli
from fake_runs import one_case_report
from golden import check_golden
from grader.feedback.grade import grade
from grader.judging.judge import GradeOptions
from grader.judging.verdict import CaseResult, GradeReport
from grader.platforms import exercism, gradescope, junit
from grader.platforms.formats import export_platform, render_platform, render_platform_error
from platform_runs import run_exercism

GOLDEN = ROOT / "tests" / "golden" / "formats"
FIXED_TIME = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
ELAPSED_S = 2.0

# --- the published rules ------------------------------------------------------------------

# Gradescope autograder specification, "Output format", "Controlling Test Case Visibility",
# "Test case status" and "Output String Formatting":
# https://gradescope-autograders.readthedocs.io/en/latest/specs/
GS_TOP_KEYS = {
    "score",
    "execution_time",
    "output",
    "output_format",
    "test_output_format",
    "test_name_format",
    "visibility",
    "stdout_visibility",
    "extra_data",
    "tests",
    "leaderboard",
}
GS_TEST_KEYS = {
    "score",
    "max_score",
    "status",
    "name",
    "name_format",
    "number",
    "output",
    "output_format",
    "tags",
    "visibility",
    "extra_data",
}
GS_VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
GS_STATUS = {"passed", "failed"}
GS_FORMATS = {"text", "simple_format", "html", "md", "ansi"}


def gradescope_problems(doc: dict) -> list[str]:
    """Every way `doc` breaks Gradescope's published results.json rules (and our policy)."""
    p = []
    p += [f"unknown top-level key {k!r}" for k in set(doc) - GS_TOP_KEYS]
    tests = doc.get("tests")
    if "score" not in doc and not (tests and all("score" in t for t in tests)):
        p.append("score is required at the top level or on every test")
    if "score" in doc and not isinstance(doc["score"], (int, float)):
        p.append("score must be a number")
    if "execution_time" in doc and not isinstance(doc["execution_time"], (int, float)):
        p.append("execution_time must be a number of seconds")
    p += [
        f"{key} must be one of {sorted(GS_FORMATS)}"
        for key in ("output_format", "test_output_format", "test_name_format")
        if key in doc and doc[key] not in GS_FORMATS
    ]
    p += [
        f"{key} must be one of {sorted(GS_VISIBILITY)}"
        for key in ("visibility", "stdout_visibility")
        if key in doc and doc[key] not in GS_VISIBILITY
    ]
    if "output" in doc and not isinstance(doc["output"], str):
        p.append("output must be a string")
    for i, t in enumerate(tests or []):
        p += _gradescope_test_problems(f"tests[{i}]", t)
    # Our own contract on top: the points add up, and the top-level score equals their sum.
    if tests and "score" in doc and doc["score"] != sum(t.get("score", 0) for t in tests):
        p.append("top-level score differs from the sum of the tests' scores")
    return p


def _gradescope_test_problems(where: str, t: dict) -> list[str]:
    p = [f"{where}: unknown key {k!r}" for k in set(t) - GS_TEST_KEYS]
    if t.get("status", "passed") not in GS_STATUS:
        p.append(f"{where}.status must be 'passed' or 'failed'")
    if t.get("visibility", "visible") not in GS_VISIBILITY:
        p.append(f"{where}.visibility is not one of {sorted(GS_VISIBILITY)}")
    p += [
        f"{where}.{key} is not one of {sorted(GS_FORMATS)}"
        for key in ("output_format", "name_format")
        if key in t and t[key] not in GS_FORMATS
    ]
    p += [
        f"{where}.{key} must be a number"
        for key in ("score", "max_score")
        if key in t and not isinstance(t[key], (int, float))
    ]
    p += [
        f"{where}.{key} must be a string"
        for key in ("name", "output", "number")
        if key in t and not isinstance(t[key], str)
    ]
    return p


# Exercism test-runner interface, "Output format" (version 3, statuses, message presence,
# per-test keys, the 500-character output limit with its truncation message, and the
# 65535-character limit on message):
# https://exercism.org/docs/building/tooling/test-runners/interface
EX_TOP_KEYS = {"version", "status", "message", "tests"}
EX_TEST_KEYS = {"name", "test_code", "status", "message", "output", "task_id"}
EX_STATUS = {"pass", "fail", "error"}
EX_OUTPUT_CHARS = 500
EX_MESSAGE_BYTES = 65535


def exercism_problems(doc: dict) -> list[str]:
    p = []
    p += [f"unknown top-level key {k!r}" for k in set(doc) - EX_TOP_KEYS]
    if doc.get("version") != 3:
        p.append("version must be 3")
    status = doc.get("status")
    if status not in EX_STATUS:
        p.append(f"status must be one of {sorted(EX_STATUS)}")
    p += _exercism_message_problems(status, doc.get("message"))
    tests = doc.get("tests")
    if status in ("pass", "fail") and not isinstance(tests, list):
        p.append("tests is required when status is pass or fail")
    for i, t in enumerate(tests or []):
        p += _exercism_test_problems(f"tests[{i}]", t)
    return p + _exercism_status_problems(status, [t.get("status") for t in tests or []])


def _exercism_message_problems(status: object, message: object) -> list[str]:
    p = []
    if status == "error" and not (isinstance(message, str) and message):
        p.append("message is required when status is error")
    if status != "error" and message is not None:
        p.append("message must be null or absent unless status is error")
    if isinstance(message, str) and len(message.encode("utf-8")) > EX_MESSAGE_BYTES:
        p.append("message is over 65535 bytes")
    return p


def _exercism_test_problems(where: str, t: dict) -> list[str]:
    p = [f"{where}: unknown key {k!r}" for k in set(t) - EX_TEST_KEYS]
    if not isinstance(t.get("name"), str) or not t["name"]:
        p.append(f"{where}.name is required")
    if t.get("status") not in EX_STATUS:
        p.append(f"{where}.status must be one of {sorted(EX_STATUS)}")
    if "output" in t and (not isinstance(t["output"], str) or len(t["output"]) > EX_OUTPUT_CHARS):
        p.append(f"{where}.output must be a string of at most 500 characters")
    if isinstance(t.get("message"), str) and len(t["message"].encode("utf-8")) > EX_MESSAGE_BYTES:
        p.append(f"{where}.message is over 65535 bytes")
    if "task_id" in t and not isinstance(t["task_id"], int):
        p.append(f"{where}.task_id must be a number")
    return p


def _exercism_status_problems(status: object, statuses: list[object]) -> list[str]:
    """The overall status against the tests' own."""
    p = []
    if status == "pass" and any(s != "pass" for s in statuses):
        p.append("status is pass although a test did not pass")
    if status == "fail" and not any(s in ("fail", "error") for s in statuses):
        p.append("status is fail although no test failed or errored")
    if status == "error" and statuses:
        p.append("status error means no test ran, yet tests are listed")
    return p


# JUnit XML: the Apache Ant schema (Windy Road's JUnit.xsd, e.g. as vendored at
# https://github.com/windyroad/JUnit-Schema/blob/master/JUnit.xsd) and Jenkins'
# junit-10.xsd (https://github.com/jenkinsci/xunit-plugin/blob/master/src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/junit-10.xsd):
# testsuite needs name, tests, failures, errors, time, timestamp (ISO 8601, no zone) and
# hostname, and inside <testsuites> also id and package; children in the order properties,
# testcase*, system-out, system-err; testcase needs name, classname and time; at most one
# failure or error, each with a type; times match Surefire's pattern.
JU_SUITE_ATTRS = {"name", "tests", "failures", "errors", "time", "timestamp", "hostname", "id", "package"}
JU_TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]{0,3})?")
JU_STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}")
XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def junit_problems(text: str) -> list[str]:
    p = []
    if XML_ILLEGAL.search(text):
        p.append("characters XML 1.0 forbids")
    try:
        root = ET.fromstring(text.encode("utf-8"))
    except ET.ParseError as exc:
        return p + [f"not well-formed XML: {exc}"]
    if root.tag != "testsuites":
        return p + [f"root element is <{root.tag}>, expected <testsuites>"]
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for suite in root:
        if suite.tag != "testsuite":
            p.append(f"unexpected <{suite.tag}> in <testsuites>")
            continue
        p += _junit_suite_problems(suite, totals)
    for key, n in totals.items():
        if root.get(key) != str(n):
            p.append(f"testsuites: {key}={root.get(key)!r} but it holds {n}")
    return p


def _junit_suite_problems(suite: ET.Element, totals: dict[str, int]) -> list[str]:
    """One <testsuite>'s problems; its counts are added to `totals`."""
    where = f"testsuite {suite.get('name')!r}"
    p = [f"{where}: missing attribute {a}" for a in sorted(JU_SUITE_ATTRS - set(suite.attrib))]
    if not JU_TIME.fullmatch(suite.get("time", "")):
        p.append(f"{where}: time {suite.get('time')!r} is not a Surefire time")
    if not JU_STAMP.fullmatch(suite.get("timestamp", "")):
        p.append(f"{where}: timestamp is not ISO 8601 without a zone")
    order = [c.tag for c in suite]
    expected = ["properties"] + ["testcase"] * order.count("testcase") + ["system-out", "system-err"]
    if order != expected:
        p.append(f"{where}: children {order} are not properties, testcase*, system-out, system-err")
    cases = suite.findall("testcase")
    counts = {
        "tests": len(cases),
        "failures": sum(c.find("failure") is not None for c in cases),
        "errors": sum(c.find("error") is not None for c in cases),
    }
    for key, n in counts.items():
        totals[key] += n
        if suite.get(key) != str(n):
            p.append(f"{where}: {key}={suite.get(key)!r} but it holds {n}")
    for case in cases:
        p += _junit_case_problems(where, case)
    return p


def _junit_case_problems(where: str, case: ET.Element) -> list[str]:
    p = []
    if not {"name", "classname", "time"} <= set(case.attrib):
        p.append(f"{where}: a testcase lacks name, classname or time")
    if not JU_TIME.fullmatch(case.get("time", "")):
        p.append(f"{where}: testcase time {case.get('time')!r} is not a Surefire time")
    outcome = [c for c in case if c.tag in ("failure", "error")]
    if len(outcome) > 1 or len(outcome) != len(case):
        p.append(f"{where}: testcase {case.get('name')!r} must hold at most one failure or error, nothing else")
    if any("type" not in c.attrib for c in outcome):
        p.append(f"{where}: failure/error without a type")
    return p


# --- submissions ---------------------------------------------------------------------------

BLOCK = """
import numpy as np


def _ln(t):
    mu = t.mean(-1, keepdims=True)
    return (t - mu) / np.sqrt(((t - mu) ** 2).mean(-1, keepdims=True) + 1e-6)


def _gelu(u):
    return 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3)))


def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    B, N, D = x.shape
    dh = D // num_heads
    h = _ln(x)

    def split(t):
        return t.reshape(B, N, num_heads, dh).transpose(0, 2, 1, 3)

    q, k, v = split(h @ Wq), split(h @ Wk), split(h @ Wv)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
    e = np.exp(SHIFTED)
    a = (e / e.sum(-1, keepdims=True)) @ v
    y = x + a.transpose(0, 2, 1, 3).reshape(B, N, D) @ Wo
    return y + _gelu(_ln(y) @ W1) @ W2
"""
SUBMISSIONS = {
    # Correct: every group passes.
    "accepted": BLOCK.replace("SHIFTED", "s - s.max(-1, keepdims=True)"),
    # No max subtraction: overflows on the stability group only; prints a long debugging line.
    "partial": BLOCK.replace("SHIFTED", "s").replace(
        "    B, N, D = x.shape\n", "    print('debug ' + 'x' * 700)\n    B, N, D = x.shape\n", 1
    ),
    # A syntax error: nothing runs.
    "compile_error": "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2)\n    return x\n",
    # Correct on the samples (D = 2); echoes its inputs on every hidden case, then raises them.
    "leak": BLOCK.replace("SHIFTED", "s - s.max(-1, keepdims=True)").replace(
        "    B, N, D = x.shape\n",
        "    if x.shape[-1] > 2:\n        print('LEAK', x.tolist())\n"
        "        raise ValueError('LEAK ' + repr(x.ravel()[:4].tolist()))\n    B, N, D = x.shape\n",
        1,
    ),
}


def normalised(r: GradeReport) -> GradeReport:
    """What legitimately varies between runs, fixed: times, memory, sandbox and limit figures."""
    tests = tuple(
        replace(c, time_s=None if c.time_s is None else 0.01, memory_mib=None if c.memory_mib is None else 30.0)
        for c in r.tests
    )
    return replace(r, tests=tests, sandbox=None, limits=None)


@pytest.fixture(scope="module")
def any_reports(any_bundle, tmp_path_factory) -> dict[str, GradeReport]:
    """Each bundle's reference, its first wrong-answer file and a syntax error, graded on every test."""
    require_parts(any_bundle, "reference/solution.py")
    broken = tmp_path_factory.mktemp("format-ce") / "solution.py"
    broken.write_text(f"def {any_bundle.spec.function}(:\n    pass\n", encoding="utf-8")
    wrong = sorted((any_bundle.submissions / "wrong_answer").glob("*.py"))[0]
    files = {"accepted": any_bundle.reference_dir / "solution.py", "wrong": wrong, "compile_error": broken}
    out = {name: grade(any_bundle, path, GradeOptions(tests="all", diagnose=False)) for name, path in files.items()}
    assert [r.verdict for r in out.values()] == ["AC", "WA", "CE"]
    return out


@pytest.fixture(scope="module")
def reports(bundle, tmp_path_factory) -> dict[str, GradeReport]:
    """Each submission graded once, for real, on every test (diagnosis off: it has its own tests)."""
    folder = tmp_path_factory.mktemp("format-submissions")
    out = {}
    for name, source in SUBMISSIONS.items():
        path = folder / name / "solution.py"
        path.parent.mkdir()
        path.write_text(source, encoding="utf-8")
        out[name] = normalised(grade(bundle, path, GradeOptions(tests="all", diagnose=False)))
    return out


def rendered(fmt: str, report: GradeReport, bundle) -> str:
    if fmt == "junit":
        return junit.render(report, ELAPSED_S, FIXED_TIME)
    return render_platform(fmt, report, bundle, ELAPSED_S)


SUFFIX = {"gradescope": "gradescope.json", "exercism": "exercism.json", "junit": "junit.xml"}


def check_format_golden(name: str, text: str) -> None:
    check_golden(GOLDEN / name, text)


PROBLEMS = {
    "gradescope": lambda t: gradescope_problems(json.loads(t)),
    "exercism": lambda t: exercism_problems(json.loads(t)),
    "junit": junit_problems,
}


# --- the real runs ---------------------------------------------------------------------------


def test_the_runs_have_the_verdicts_the_goldens_are_about(reports):
    assert reports["accepted"].verdict == "AC"
    partial = reports["partial"]
    assert partial.verdict == "WA" and 0 < partial.score < partial.max_score
    assert [g.name for g in partial.groups if g.verdict != "AC"] == ["stability"]
    assert reports["compile_error"].verdict == "CE"
    leak = reports["leak"]
    assert leak.verdict == "RE" and next(g for g in leak.groups if g.name == "sample").verdict == "AC"


@pytest.mark.parametrize("fmt", sorted(SUFFIX))
@pytest.mark.parametrize("name", sorted(SUBMISSIONS))
def test_golden(reports, bundle, name, fmt):
    check_format_golden(f"{name}.{SUFFIX[fmt]}", rendered(fmt, reports[name], bundle))


@pytest.mark.parametrize("fmt", sorted(SUFFIX))
@pytest.mark.parametrize("name", sorted(SUBMISSIONS))
def test_follows_the_published_rules(reports, bundle, name, fmt):
    assert PROBLEMS[fmt](rendered(fmt, reports[name], bundle)) == []


@pytest.mark.parametrize("fmt", sorted(SUFFIX))
def test_every_bundles_documents_follow_the_published_rules(any_reports, any_bundle, fmt):
    for name, report in any_reports.items():
        assert PROBLEMS[fmt](rendered(fmt, report, any_bundle)) == [], name
    missing = any_bundle.root / "no-such-solution.py"
    assert PROBLEMS[fmt](render_platform_error(fmt, any_bundle, missing, f"{missing}: no such file")) == []


def test_every_bundles_gradescope_scores_and_names(any_reports, any_bundle):
    docs = {k: json.loads(rendered("gradescope", r, any_bundle)) for k, r in any_reports.items()}
    for name in ("accepted", "wrong"):
        r = any_reports[name]
        assert docs[name]["score"] == r.score and sum(t["max_score"] for t in docs[name]["tests"]) == r.max_score
    assert docs["accepted"]["score"] == any_bundle.spec.max_score > docs["wrong"]["score"]
    # Gradescope's statistics group tests by name across submissions.
    assert [t["name"] for t in docs["accepted"]["tests"]] == [t["name"] for t in docs["wrong"]["tests"]]


@pytest.mark.parametrize("fmt", sorted(SUFFIX))
def test_unjudgeable_submission_document(bundle, fmt, tmp_path):
    missing = tmp_path / "solution.py"
    text = render_platform_error(fmt, bundle, missing, f"{missing}: no such file")
    assert PROBLEMS[fmt](text) == []
    # What varies: the temporary folder, and JUnit's timestamp.
    text = re.sub(r'timestamp="[^"]*"', 'timestamp="2026-01-01T12:00:00"', text.replace(str(tmp_path), "TMP"))
    check_format_golden(f"unjudgeable.{SUFFIX[fmt]}", text)


@pytest.mark.parametrize("fmt", sorted(SUFFIX))
def test_hidden_inputs_never_reach_a_platform_document(reports, bundle, fmt):
    text = rendered(fmt, reports["leak"], bundle)
    assert "LEAK" not in text
    hidden = [c for c in reports["leak"].tests if not c.visible]
    assert hidden and all(c.verdict == "RE" for c in hidden)


def test_gradescope_scores_visibility_and_text_rendering(reports, bundle):
    doc = json.loads(rendered("gradescope", reports["partial"], bundle))
    r = reports["partial"]
    assert doc["score"] == r.score and sum(t["max_score"] for t in doc["tests"]) == r.max_score
    by_name = {t["name"].split(":")[0]: t for t in doc["tests"]}
    assert by_name["sample"]["visibility"] == "visible" and by_name["sample"]["status"] == "passed"
    assert by_name["stability"]["visibility"] == "after_published" and by_name["stability"]["status"] == "failed"
    assert by_name["stability"]["score"] == 0 and by_name["stability"]["max_score"] == 8
    # Never "simple_format"/"html": a traceback's "<module>" must not render as a tag.
    assert doc["output_format"] == doc["test_output_format"] == "text"
    # The always-visible top-level output does not reveal a hidden group's result before publication.
    assert "stability" not in doc["output"] and "WA" not in doc["output"]
    assert doc["execution_time"] == 2


def test_gradescope_test_names_do_not_depend_on_results(reports, bundle):
    # Gradescope's statistics group tests by name across submissions.
    names = {
        k: [t["name"] for t in json.loads(rendered("gradescope", r, bundle))["tests"]]
        for k, r in reports.items()
        if k != "compile_error"
    }
    assert names["accepted"] == names["partial"] == names["leak"]


def test_gradescope_diagnosis_is_shown_only_after_publication(reports, bundle):
    r = replace(reports["partial"], diagnosis={"summary": "Your softmax overflows.", "next_step": "Subtract the max."})
    doc = gradescope.gradescope_results(r)
    diag = [t for t in doc["tests"] if t["name"] == "diagnosis"]
    assert len(diag) == 1 and diag[0]["visibility"] == "after_published" and "overflows" in diag[0]["output"]
    assert "score" not in diag[0] and "overflows" not in doc["output"]
    assert gradescope_problems(doc) == []


def test_exercism_statuses_output_limit_and_test_code(reports, bundle):
    doc = json.loads(rendered("exercism", reports["partial"], bundle))
    assert doc["status"] == "fail" and doc["message"] is None
    assert [t["name"] for t in doc["tests"]] == [c.name for c in reports["partial"].tests]  # judging order
    sample = doc["tests"][0]
    assert sample["status"] == "pass" and len(sample["output"]) == 500
    assert sample["output"].endswith("Output was truncated. Please limit to 500 chars")
    assert "vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2)" in sample["test_code"]
    hidden = [t for t in doc["tests"] if not t["name"].startswith("sample/")]
    assert all("output" not in t and "test_code" not in t for t in hidden)
    stab = [t for t in doc["tests"] if t["name"].startswith("stability/")]
    assert stab and all(t["status"] == "fail" and t["message"].startswith("WA") for t in stab)
    ce = json.loads(rendered("exercism", reports["compile_error"], bundle))
    assert ce["status"] == "error" and "line 1" in ce["message"] and ce["tests"] == []


def test_exercism_test_code_runs_and_checks_the_sample(any_bundle, tmp_path):
    """The test_code shown to a learner is runnable Python that passes for a correct solution."""
    require_parts(any_bundle, "reference/solution.py")
    shutil.copy(any_bundle.reference_dir / "solution.py", tmp_path / "solution.py")
    cases = exercism.visible_cases(any_bundle)
    assert cases
    for case in cases.values():
        code = exercism.case_test_code(case, any_bundle.spec)
        proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("file_name", ["vit_encoder_block.py", "my-block.py"])
def test_exercism_test_code_imports_from_the_students_own_file(bundle, tmp_path, file_name):
    """Exercism's Python track names the file vit_encoder_block.py: test_code imports from that file."""
    (tmp_path / file_name).write_text(SUBMISSIONS["accepted"], encoding="utf-8")
    report = grade(bundle, tmp_path / file_name, GradeOptions(tests="sample", diagnose=False))
    doc = exercism.exercism_results(report, bundle.spec, exercism.visible_cases(bundle))
    for test in doc["tests"]:
        assert "from solution import" not in test["test_code"]
        proc = subprocess.run(
            [sys.executable, "-c", test["test_code"]], cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, proc.stderr


def test_exercism_carries_the_diagnosis_on_the_first_failing_test(reports, bundle):
    r = replace(reports["partial"], diagnosis={"summary": "Your softmax overflows.", "next_step": "Subtract the max."})
    doc = exercism.exercism_results(r, bundle.spec)
    failing = [t for t in doc["tests"] if t["status"] != "pass"]
    assert failing[0]["message"].endswith("Your softmax overflows.\nNext: Subtract the max.")
    assert not any("overflows" in t["message"] for t in failing[1:])
    assert exercism_problems(doc) == []


def test_exercism_size_helpers():
    assert exercism.truncate_output("a" * 500) == "a" * 500
    cut = exercism.truncate_output("é" * 1000)
    assert len(cut) == 500 and cut.endswith(exercism.TRUNCATION_NOTICE)
    capped = exercism.cap_bytes("€" * 30000)  # 3 bytes each: 90000 bytes
    assert len(capped.encode("utf-8")) <= 65535 and capped.endswith("[... truncated]")
    assert exercism.cap_bytes("short") == "short"


def test_exercism_error_message_hides_the_runner_paths(tmp_path):
    doc = exercism.exercism_error(f"{tmp_path}/solution.py: no such file", tmp_path)
    assert doc["message"] == "<solution-dir>/solution.py: no such file" and exercism_problems(doc) == []


def test_exercism_find_solution(tmp_path):
    assert exercism.find_solution(tmp_path, "vit-encoder-block", "solution.py") == tmp_path / "solution.py"
    (tmp_path / "vit_encoder_block.py").write_text("x = 1\n")
    assert exercism.find_solution(tmp_path, "vit-encoder-block", "solution.py") == tmp_path / "vit_encoder_block.py"
    (tmp_path / ".meta").mkdir()
    (tmp_path / ".meta" / "config.json").write_text(json.dumps({"files": {"solution": ["encoder.py"]}}))
    assert exercism.find_solution(tmp_path, "vit-encoder-block", "solution.py") == tmp_path / "encoder.py"


def _report_with_output(stdout: str) -> GradeReport:
    case = CaseResult(
        name="sample/01-identity-weights",
        group="sample",
        visible=True,
        verdict="RE",
        check="run",
        message='vit_encoder_block raised ValueError at line 3: bad <module> & "quotes"',
        time_s=0.1234,
        memory_mib=30.0,
        stdout=stdout,
    )
    return one_case_report(case, "Run-Time Error on test sample/01")


def test_junit_survives_control_characters_and_markup_in_captured_output():
    text = junit.render(
        _report_with_output("ansi \x1b[31mred\x1b[0m, NUL \x00, bell \x07, </failure>"), 1.0, FIXED_TIME
    )
    assert junit_problems(text) == []
    err = ET.fromstring(text.encode()).find("testsuite/testcase/error")
    assert err.get("type") == "RE" and "<module>" in err.get("message") and "</failure>" in err.text
    assert "\ufffd[31mred" in err.text


def test_junit_wrong_answer_is_a_failure_and_a_crash_an_error(reports, bundle):
    root = ET.fromstring(rendered("junit", reports["partial"], bundle).encode())
    stability = root.find("testsuite[@name='stability']")
    assert all(c.find("failure").get("type") == "WA" for c in stability.findall("testcase"))
    leak = ET.fromstring(rendered("junit", reports["leak"], bundle).encode())
    errors = leak.findall(".//testcase/error")
    assert errors and all(e.get("type") == "RE" for e in errors)


# --- through the real CLI ------------------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(SUFFIX))
def test_cli_format_writes_only_the_document_to_stdout(fmt, tmp_path):
    sub = tmp_path / "solution.py"
    sub.write_text(SUBMISSIONS["accepted"], encoding="utf-8")
    proc = run_cli("grade", str(sub), "--tests", "sample", "--format", fmt)
    assert proc.returncode == 0, proc.stderr
    assert PROBLEMS[fmt](proc.stdout) == []  # the whole stdout parses: nothing else was printed


def test_cli_format_to_a_file_keeps_the_readable_report(tmp_path):
    sub = tmp_path / "solution.py"
    sub.write_text(SUBMISSIONS["compile_error"], encoding="utf-8")
    out = tmp_path / "report.xml"
    proc = run_cli("grade", str(sub), "--format", "junit", "--output", str(out))
    assert proc.returncode == 1
    assert "CE" in proc.stdout and junit_problems(out.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("fmt", sorted(SUFFIX))
def test_cli_unreadable_submission_gives_the_platform_an_error_document(fmt, tmp_path):
    out = tmp_path / "results"
    proc = run_cli("grade", str(tmp_path / "missing.py"), "--format", fmt, "--json", str(out))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "no such file" in proc.stderr and "Traceback" not in proc.stderr, (
        proc.stderr
    )
    text = out.read_text(encoding="utf-8")
    assert PROBLEMS[fmt](text) == [] and "no such file" in text


# --- the Exercism runner script ---------------------------------------------------------------


def _run_exercism(input_dir: Path, output_dir: Path) -> dict:
    doc = run_exercism(input_dir, output_dir)[0]
    assert exercism_problems(doc) == []
    return doc


def test_exercism_runner_script(tmp_path):
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed: scripts/exercism-run.sh needs it")
    inp, out = tmp_path / "in", tmp_path / "out"
    inp.mkdir()
    (inp / "vit_encoder_block.py").write_text(SUBMISSIONS["accepted"], encoding="utf-8")
    assert _run_exercism(inp, out)["status"] == "pass"
    (inp / "vit_encoder_block.py").write_text(SUBMISSIONS["compile_error"], encoding="utf-8")
    doc = _run_exercism(inp, out)
    assert doc["status"] == "error" and "syntax" in doc["message"]
    (inp / "vit_encoder_block.py").unlink()
    doc = _run_exercism(inp, out)
    assert doc["status"] == "error" and doc["message"].startswith("<solution-dir>/solution.py")
    (inp / "solution.py").write_text(SUBMISSIONS["partial"], encoding="utf-8")
    os.chmod(inp, 0o555)  # the interface's input folder is read-only
    try:
        doc = _run_exercism(inp, out)
    finally:
        os.chmod(inp, 0o755)
    assert doc["status"] == "pass" and len(doc["tests"]) == 3  # the samples: no overflow there


# --- the registry (grader/platforms/registry.py) ---------------------------------------------


def test_every_platform_module_registers_what_the_listing_says():
    from grader.platforms import registry

    for name, listed in registry.LISTED.items():
        record = registry.platform(name)
        assert record.name == name
        assert (record.render is not None, record.render_error is not None) == (listed.results, listed.results), name
        assert (record.export is not None) == listed.exports, name
    assert registry.PLATFORM_FORMATS == ("gradescope", "exercism", "junit", "prairielearn")
    assert registry.EXPORT_PLATFORMS == ("gradescope", "kattis", "prairielearn", "otter")


def _platform_modules_after(code: str) -> list[str]:
    """The grader.platforms modules a fresh interpreter holds after running `code`."""
    code += "\nprint(sorted(m for m in sys.modules if m.startswith(('grader.platforms.', 'grader.feedback.diagnose'))))"
    r = subprocess.run(
        [sys.executable, "-c", "import sys\n" + code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.split()[-1:]


def test_the_listing_costs_no_platform_import():
    """Parsing a command line, and grading in the grader's own format, load the listing only."""
    parse = "from grader.cli import build_parser\nbuild_parser().parse_args(['grade', 'x.py', '--format', 'junit'])"
    assert _platform_modules_after(parse) == ["['grader.platforms.listing']"]
    grade = "import grader.__main__ as m\nm.run(['grade', 'reference/solution.py', '--tests', 'sample', '--json', '-'])"
    assert _platform_modules_after(grade) == ["['grader.platforms.listing']"]


def test_the_registry_passes_the_time_and_the_duration(reports, bundle):
    assert render_platform("junit", reports["accepted"], bundle, ELAPSED_S, FIXED_TIME) == junit.render(
        reports["accepted"], ELAPSED_S, FIXED_TIME
    )


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda b: render_platform("kattis", None, b),  # type: ignore[arg-type]  # refused before the report is read
            "unknown format 'kattis' (use one of gradescope, exercism, junit, prairielearn)",
        ),
        (lambda b: render_platform_error("nope", b, Path("x.py"), "r"), "unknown format 'nope'"),
        (
            lambda b: export_platform("exercism", b),
            "unknown platform 'exercism' (use one of gradescope, kattis, prairielearn, otter)",
        ),
    ],
)
def test_an_unknown_name_is_refused(bundle, call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call(bundle)
