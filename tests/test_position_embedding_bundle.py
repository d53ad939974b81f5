"""The Position Embedding bundle (track/position-embedding) through the grader, as a platform,
an instructor and a learner use it: regeneration, validation and the statement; every expected-verdict
submission judged, each single-mistake file named by its fingerprint (a wrong-shape mistake
by the values of its array of that shape, its message telling the shape as well); pack and
check-archive; the Kattis export under problemtools' verifyproblem; the Otter export under
`otter assign` and `otter run`; `batch` over a class of its submissions.

The bundle's own content (the reference against torch's x + pos.unsqueeze(0), each mistake's
effect) is tested in tests/test_position_embedding_oracle.py.
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

PE = ROOT / "track" / "position-embedding"
VERDICTS = {
    "accepted": "AC",
    "wrong_answer": "WA",
    "compile_error": "CE",
    "run_time_error": "RE",
    "time_limit_exceeded": "TLE",
}
SUBMISSIONS = sorted(p for p in (PE / "submissions").glob("*/*.py"))
# The mistakes whose output has the right shape (B, N+1, D) everywhere: named by their values.
BY_VALUES = (
    "positions_skipped",
    "class_token_row_skipped",
    "table_offset_by_one",
    "last_token_skipped",
    "first_row_broadcast",
    "first_sequence_only",
    "multiplied_instead_of_added",
    "added_twice",
    "float32_arithmetic",
)
# The others return a wrong shape on every test: the first failing test's message shows the
# shape returned, and the fingerprint names the mistake from the values of that wrongly shaped array.
BY_SHAPE = {
    "table_concatenated": "(1, 3, 4)",
    "batch_dimension_lost": "the batch axis B is missing",
}
COMBINED = {
    "combined_class_row_skipped_float32": ["class_token_row_skipped", "float32_arithmetic"],
    "combined_last_token_first_sequence": ["first_sequence_only", "last_token_skipped"],
}


@pytest.fixture(scope="module")
def pe():
    return open_bundle(PE)


def test_the_bundle_regenerates_validates_and_its_statement_agrees(pe):
    assert check_testcases(pe) == []
    assert validate_tree(pe.testcases, pe) == []
    assert statement_diffs(pe) == []
    assert pe.spec.function == "add_position_embedding"
    assert [p.name for p in pe.spec.parameters] == ["patches", "num_patches", "embed_dim", "pos_embed"]


@pytest.mark.parametrize("path", SUBMISSIONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_submission_gets_its_folders_verdict(pe, path: Path):
    report = grade(pe, path, GradeOptions(tests="all"))
    assert report.verdict == VERDICTS[path.parent.name], report.summary
    fingerprint = (report.diagnosis or {}).get("fingerprint") or {}
    named = sorted(m["id"] for m in fingerprint.get("mistakes", []))
    if path.stem in BY_VALUES:
        assert fingerprint.get("status") == "match" and named == [path.stem], fingerprint
    elif path.stem in COMBINED:
        assert named == COMBINED[path.stem], fingerprint
    elif path.stem in BY_SHAPE:
        assert fingerprint.get("status") == "match" and named == [path.stem], fingerprint
        assert fingerprint["message"].startswith("Your output has shape "), fingerprint["message"]
        assert "Known mistake: " in fingerprint["message"]
        first = next(c for c in report.tests if c.verdict != "AC")
        assert first.name == "sample/01-one-sequence" and BY_SHAPE[path.stem] in first.message, first.message
        pointer = feedback_data(pe).catalogue[path.stem].pointer
        step = (report.diagnosis or {}).get("next_step") or ""
        assert step.endswith(f"({pointer})"), step
    elif path.stem.startswith("unknown_"):
        # Never a guess, and never a fault of the diagnosis ("unavailable").
        assert fingerprint.get("status") in ("no_match", "no_evidence"), fingerprint


def test_pack_and_check_archive(tmp_path):
    out = tmp_path / "dist"
    r = run_cli("--bundle", str(PE), "pack", "--out", str(out))
    assert r.returncode == 0, r.stderr
    (archive,) = sorted(out.glob("*-judge.tar.gz"))
    assert archive.name.startswith("position-embedding-")
    r = run_cli("--bundle", str(PE), "check-archive", str(archive), timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def test_batch_grades_a_class_of_its_submissions(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    wanted = {}
    for name, rel in (
        ("alice", "accepted/plain_add.py"),
        ("bob", "wrong_answer/class_token_row_skipped.py"),
        ("carol", "compile_error/syntax_error.py"),
    ):
        shutil.copy(PE / "submissions" / rel, folder / f"{name}.py")
        wanted[name] = VERDICTS[rel.split("/")[0]]
    r = run_cli("--bundle", str(PE), "batch", str(folder), "--out", str(tmp_path / "out"), "--jobs", "2")
    assert r.returncode in (0, 1), r.stderr
    with (tmp_path / "out" / "grades.csv").open(encoding="utf-8-sig", newline="") as f:
        got = {row["student"]: row["verdict"] for row in csv.DictReader(f)}
    assert got == wanted


@pytest.mark.slow
def test_verifyproblem_accepts_the_kattis_export_and_every_verdict(pe, tmp_path):
    run_verifyproblem(export_kattis(pe, tmp_path / "out"))


@pytest.mark.slow
def test_otter_assign_and_run_grade_the_reference_and_a_mistake(pe, tmp_path):
    function = pe.spec.function
    dist = otter_assign(otter.export_otter(pe, tmp_path / "src"), tmp_path / "dist")
    scores = {}
    for label, source in (
        ("good", PE / "reference/solution.py"),
        ("bad", PE / "submissions/wrong_answer/first_sequence_only.py"),
    ):
        notebook = student_notebook(dist, function, tmp_path / label, source.read_text())
        results = otter_run(dist, function, notebook)
        scores[label] = next(t for t in results["tests"] if t["name"] == otter.question(pe.spec))
    assert scores["good"]["score"] == scores["good"]["max_score"] == pe.spec.max_score
    assert scores["bad"]["score"] < scores["bad"]["max_score"]
