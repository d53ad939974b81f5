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

from pathlib import Path

import pytest

from conftest import ROOT
from grader.feedback.grade import grade
from grader.feedback.mistakes import feedback_data
from grader.judging.judge import GradeOptions
from grader.problem.bundle import open_bundle
from track_bundle_checks import (
    check_batch_grades_a_class,
    check_otter_grades_the_reference_and_a_mistake,
    check_pack_and_check_archive,
    check_regenerates_validates_and_statement_agrees,
    check_verifyproblem,
    graded,
    submission_id,
    submissions,
)

PE = ROOT / "track" / "patch-embedding"
VERDICTS = {
    "accepted": "AC",
    "wrong_answer": "WA",
    "compile_error": "CE",
    "run_time_error": "RE",
    "time_limit_exceeded": "TLE",
}
SUBMISSIONS = submissions(PE)


@pytest.fixture(scope="module")
def pe():
    return open_bundle(PE)


def test_the_bundle_regenerates_validates_and_its_statement_agrees(pe):
    check_regenerates_validates_and_statement_agrees(pe, "patch_embed")
    assert [p.name for p in pe.spec.parameters] == ["image", "patch_size", "embed_dim", "W_proj"]


@pytest.mark.parametrize("path", SUBMISSIONS, ids=submission_id)
def test_every_submission_gets_its_folders_verdict(pe, path: Path):
    _, fingerprint, named = graded(pe, path, VERDICTS)
    # Each catalogue mistake's file is named by it: in wrong_answer/, or in run_time_error/ when the
    # mistake raises on example 1 (channels_first_shape) and is named by the tests where it runs.
    if path.stem.startswith("fitted_"):  # a constant off the catalogue, fitted: fitted_bias adds 0.02
        assert fingerprint.get("kind") == "fitted" and fingerprint["fit"]["constant"] == "bias", fingerprint
        assert fingerprint["fit"]["value"] == 0.02 and fingerprint["mistakes"] == [], fingerprint
    elif (path.parent.name == "wrong_answer" and not path.stem.startswith("combined_")) or (
        path.parent.name == "run_time_error" and path.stem in feedback_data(pe).catalogue
    ):
        assert fingerprint.get("status") == "match" and named == [path.stem], fingerprint


def test_pack_and_check_archive(tmp_path):
    check_pack_and_check_archive(PE, tmp_path, "patch-embedding-")


def test_batch_grades_a_class_of_its_submissions(tmp_path):
    students = (
        ("alice", "accepted/reshape_transpose.py"),
        ("bob", "wrong_answer/reshape_without_transpose.py"),
        ("carol", "compile_error/syntax_error.py"),
    )
    check_batch_grades_a_class(PE, tmp_path, VERDICTS, students)


@pytest.mark.slow
def test_verifyproblem_accepts_the_kattis_export_and_every_verdict(pe, tmp_path):
    check_verifyproblem(pe, tmp_path)


@pytest.mark.slow
def test_otter_assign_and_run_grade_the_reference_and_a_mistake(pe, tmp_path):
    check_otter_grades_the_reference_and_a_mistake(pe, PE, tmp_path, "wrong_answer/column_major_patch_order.py")


@pytest.mark.parametrize("bias", [-0.25, -1.5, 0.3])
def test_a_constant_bias_of_either_sign_is_fitted(pe, tmp_path, bias):
    """The bias constant is signed: a negative bias is fitted as well as a positive one."""
    source = (PE / "submissions/wrong_answer/fitted_bias.py").read_text(encoding="utf-8")
    path = tmp_path / "solution.py"
    path.write_text(source.replace("np.full(embed_dim, 0.02)", f"np.full(embed_dim, {bias!r})"), encoding="utf-8")
    fp = grade(pe, path, GradeOptions(tests="all")).diagnosis["fingerprint"]
    assert (fp["status"], fp["kind"]) == ("match", "fitted"), fp["message"]
    assert f"shifted by {bias:.6g}," in fp["message"]
