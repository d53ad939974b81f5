"""The Patch Embedding bundle (track/patch-embedding) through the grader, as a platform, an
instructor and a learner use it: regeneration, validation and the statement; every
expected-verdict submission judged, each single-mistake file named by its fingerprint (those in
wrong_answer/, and a catalogue mistake's file in run_time_error/); pack and
check-archive; the Kattis export under problemtools' verifyproblem; the Otter export under
`otter assign` and `otter run`; `batch` over a class of its submissions.

The bundle's own content (the reference against torch's Conv2d, each mistake's effect) is
tested in tests/test_patch_embedding_oracle.py.
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

PE = ROOT / "track" / "patch-embedding"
VERDICTS = {
    "accepted": "AC",
    "wrong_answer": "WA",
    "compile_error": "CE",
    "run_time_error": "RE",
    "time_limit_exceeded": "TLE",
}
SUBMISSIONS = sorted(p for p in (PE / "submissions").glob("*/*.py"))


@pytest.fixture(scope="module")
def pe():
    return open_bundle(PE)


def test_the_bundle_regenerates_validates_and_its_statement_agrees(pe):
    assert check_testcases(pe) == []
    assert validate_tree(pe.testcases, pe) == []
    assert statement_diffs(pe) == []
    assert pe.spec.function == "patch_embed"
    assert [p.name for p in pe.spec.parameters] == ["image", "patch_size", "embed_dim", "W_proj"]


@pytest.mark.parametrize("path", SUBMISSIONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_submission_gets_its_folders_verdict(pe, path: Path):
    report = grade(pe, path, GradeOptions(tests="all"))
    assert report.verdict == VERDICTS[path.parent.name], report.summary
    # Each catalogue mistake's file is named by it: in wrong_answer/, or in run_time_error/ when the
    # mistake raises on example 1 (channels_first_shape) and is named by the tests where it runs.
    if path.stem.startswith("fitted_"):  # a constant off the catalogue, fitted: fitted_bias adds 0.02
        fingerprint = (report.diagnosis or {}).get("fingerprint") or {}
        assert fingerprint.get("kind") == "fitted" and fingerprint["fit"]["constant"] == "bias", fingerprint
        assert fingerprint["fit"]["value"] == 0.02 and fingerprint["mistakes"] == [], fingerprint
    elif (path.parent.name == "wrong_answer" and not path.stem.startswith("combined_")) or (
        path.parent.name == "run_time_error" and path.stem in feedback_data(pe).catalogue
    ):
        fingerprint = (report.diagnosis or {}).get("fingerprint") or {}
        named = [m["id"] for m in fingerprint.get("mistakes", [])]
        assert fingerprint.get("status") == "match" and named == [path.stem], fingerprint


def test_pack_and_check_archive(tmp_path):
    out = tmp_path / "dist"
    r = run_cli("--bundle", str(PE), "pack", "--out", str(out))
    assert r.returncode == 0, r.stderr
    (archive,) = sorted(out.glob("*-judge.tar.gz"))
    assert archive.name.startswith("patch-embedding-")
    r = run_cli("--bundle", str(PE), "check-archive", str(archive), timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def test_batch_grades_a_class_of_its_submissions(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    wanted = {}
    for name, rel in (
        ("alice", "accepted/reshape_transpose.py"),
        ("bob", "wrong_answer/reshape_without_transpose.py"),
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
        ("bad", PE / "submissions/wrong_answer/column_major_patch_order.py"),
    ):
        notebook = student_notebook(dist, function, tmp_path / label, source.read_text())
        results = otter_run(dist, function, notebook)
        scores[label] = next(t for t in results["tests"] if t["name"] == otter.question(pe.spec))
    assert scores["good"]["score"] == scores["good"]["max_score"] == pe.spec.max_score
    assert scores["bad"]["score"] < scores["bad"]["max_score"]


@pytest.mark.parametrize("bias", [-0.25, -1.5, 0.3])
def test_a_constant_bias_of_either_sign_is_fitted(pe, tmp_path, bias):
    """The bias constant is signed: a negative bias is fitted as well as a positive one."""
    source = (PE / "submissions/wrong_answer/fitted_bias.py").read_text(encoding="utf-8")
    path = tmp_path / "solution.py"
    path.write_text(source.replace("np.full(embed_dim, 0.02)", f"np.full(embed_dim, {bias!r})"), encoding="utf-8")
    fp = grade(pe, path, GradeOptions(tests="all")).diagnosis["fingerprint"]
    assert (fp["status"], fp["kind"]) == ("match", "fitted"), fp["message"]
    assert f"shifted by {bias:.6g}," in fp["message"]
