"""The Full Network bundle (track/full-network) through the grader, as a platform, an instructor
and a learner use it: regeneration, validation and the statement; every expected-verdict
submission judged, each single-mistake file named by its fingerprint and its Next: step pointing
at the statement section of the step to revisit; pack and
check-archive; the Kattis export under problemtools' verifyproblem; the Otter export under
`otter assign` and `otter run`; `batch` over a class of its submissions.

The bundle's own content (the reference against PyTorch's layers, each mistake's effect) is tested in
tests/test_full_network_oracle.py.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from grader.feedback.grade import grade
from grader.feedback.mistakes import feedback_data
from grader.judging.judge import GradeOptions
from grader.maintain.regenerate import check_testcases
from grader.maintain.statement import statement_diffs
from grader.platforms import otter
from grader.platforms.kattis import export_kattis
from grader.problem.bundle import open_bundle
from grader.problem.validate import validate_tree
from test_kattis import run_verifyproblem
from test_otter import otter_assign, otter_run, student_notebook

CT = ROOT / "track" / "full-network"
VERDICTS = {
    "accepted": "AC",
    "wrong_answer": "WA",
    "compile_error": "CE",
    "run_time_error": "RE",
    "time_limit_exceeded": "TLE",
}
SUBMISSIONS = sorted(p for p in (CT / "submissions").glob("*/*.py"))
# Every catalogue mistake keeps the output's shape (B, K): the fingerprint names it from the values.
COMBINED = {"combined_strips_reversed": ["blocks_in_reverse_order", "patches_as_strips"]}


@pytest.fixture(scope="module")
def ct():
    return open_bundle(CT)


def test_the_bundle_regenerates_validates_and_its_statement_agrees(ct):
    assert check_testcases(ct) == []
    assert validate_tree(ct.testcases, ct) == []
    assert statement_diffs(ct) == []
    assert ct.spec.function == "vit_forward"
    assert [p.name for p in ct.spec.parameters][-2:] == ["encoder_weights", "W_head"]
    blocks = ct.spec.parameters[-2]
    assert blocks.length == "L" and [k.name for k in blocks.items] == ["Wq", "Wk", "Wv", "Wo", "W1", "W2"]


@pytest.mark.parametrize("path", SUBMISSIONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_submission_gets_its_folders_verdict(ct, path: Path):
    report = grade(ct, path, GradeOptions(tests="all"))
    assert report.verdict == VERDICTS[path.parent.name], report.summary
    fingerprint = (report.diagnosis or {}).get("fingerprint") or {}
    named = sorted(m["id"] for m in fingerprint.get("mistakes", []))
    if path.parent.name != "wrong_answer":
        return
    if path.stem in COMBINED:
        assert named == COMBINED[path.stem], fingerprint
    elif path.stem.startswith("unknown_"):
        # Never a guess, and never a fault of the diagnosis ("unavailable").
        assert fingerprint.get("status") in ("no_match", "no_evidence"), fingerprint
    else:
        assert fingerprint.get("status") == "match" and named == [path.stem], fingerprint
        pointer = feedback_data(ct).catalogue[path.stem].pointer
        step = (report.diagnosis or {}).get("next_step") or ""
        assert step.endswith(f"({pointer})"), step


def test_pack_and_check_archive(tmp_path):
    out = tmp_path / "dist"
    r = run_cli("--bundle", str(CT), "pack", "--out", str(out))
    assert r.returncode == 0, r.stderr
    (archive,) = sorted(out.glob("*-judge.tar.gz"))
    assert archive.name.startswith("full-network-")
    r = run_cli("--bundle", str(CT), "check-archive", str(archive), timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def test_batch_grades_a_class_of_its_submissions(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    wanted = {}
    for name, rel in (
        ("alice", "accepted/vectorised.py"),
        ("bob", "wrong_answer/class_token_appended.py"),
        ("carol", "compile_error/syntax_error.py"),
    ):
        shutil.copy(CT / "submissions" / rel, folder / f"{name}.py")
        wanted[name] = VERDICTS[rel.split("/")[0]]
    r = run_cli("--bundle", str(CT), "batch", str(folder), "--out", str(tmp_path / "out"), "--jobs", "2")
    assert r.returncode in (0, 1), r.stderr
    with (tmp_path / "out" / "grades.csv").open(encoding="utf-8-sig", newline="") as f:
        got = {row["student"]: row["verdict"] for row in csv.DictReader(f)}
    assert got == wanted


@pytest.mark.slow
def test_verifyproblem_accepts_the_kattis_export_and_every_verdict(ct, tmp_path):
    run_verifyproblem(export_kattis(ct, tmp_path / "out"))


@pytest.mark.slow
def test_otter_assign_and_run_grade_the_reference_and_a_mistake(ct, tmp_path):
    function = ct.spec.function
    dist = otter_assign(otter.export_otter(ct, tmp_path / "src"), tmp_path / "dist")
    scores = {}
    for label, source in (
        ("good", CT / "reference/solution.py"),
        ("bad", CT / "submissions/wrong_answer/head_reads_last_row.py"),
    ):
        notebook = student_notebook(dist, function, tmp_path / label, source.read_text())
        results = otter_run(dist, function, notebook)
        scores[label] = next(t for t in results["tests"] if t["name"] == otter.question(ct.spec))
    assert scores["good"]["score"] == scores["good"]["max_score"] == ct.spec.max_score
    assert scores["bad"]["score"] < scores["bad"]["max_score"]
