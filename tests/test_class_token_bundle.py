"""The Class Token bundle (track/class-token) through the grader, as a platform, an instructor
and a learner use it: regeneration, validation and the statement; every expected-verdict
submission judged, each single-mistake file named by its fingerprint (a wrong-shape mistake
by the values of its array of that shape, its message telling the shape as well); pack and
check-archive; the Kattis export under problemtools' verifyproblem; the Otter export under
`otter assign` and `otter run`; `batch` over a class of its submissions.

The bundle's own content (the reference against torch.cat, each mistake's effect) is tested in
tests/test_class_token_oracle.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT
from grader.problem.bundle import open_bundle
from track_bundle_checks import (
    check_batch_grades_a_class,
    check_otter_grades_the_reference_and_a_mistake,
    check_pack_and_check_archive,
    check_regenerates_validates_and_statement_agrees,
    check_verdict_and_fingerprint,
    check_verifyproblem,
    submission_id,
    submissions,
)

CT = ROOT / "track" / "class-token"
VERDICTS = {
    "accepted": "AC",
    "wrong_answer": "WA",
    "compile_error": "CE",
    "run_time_error": "RE",
    "time_limit_exceeded": "TLE",
}
SUBMISSIONS = submissions(CT)
# The mistakes whose output has the right shape (B, N+1, D) everywhere.
BY_VALUES = ("appended_at_end", "first_sequence_only", "zeros_instead_of_token", "float32_arithmetic")
# The others return a wrong shape on every hidden test (class_token_per_patch: all but N = 1, where
# it is right): the first failing test's message shows the shape returned, and the fingerprint
# names the mistake from the values of that wrongly shaped array (three of them share the shape
# (B, N, D): the values tell them apart).
BY_SHAPE = {
    "added_to_every_patch": "(1, 2, 3)",
    "added_to_first_patch": "(1, 2, 3)",
    "first_row_overwritten": "(1, 2, 3)",
    "batch_dimension_lost": "the batch axis B is missing",
    "class_token_per_patch": "(1, 4, 3)",
    "feature_axis_concatenation": "(1, 2, 6)",
}
COMBINED = {
    "combined_appended_float32": ["appended_at_end", "float32_arithmetic"],
    "combined_zeros_appended": ["appended_at_end", "zeros_instead_of_token"],
}


@pytest.fixture(scope="module")
def ct():
    return open_bundle(CT)


def test_the_bundle_regenerates_validates_and_its_statement_agrees(ct):
    check_regenerates_validates_and_statement_agrees(ct, "prepend_class_token")
    assert [p.name for p in ct.spec.parameters] == ["patches", "embed_dim", "cls_token"]


@pytest.mark.parametrize("path", SUBMISSIONS, ids=submission_id)
def test_every_submission_gets_its_folders_verdict(ct, path: Path):
    check_verdict_and_fingerprint(ct, path, VERDICTS, BY_VALUES, BY_SHAPE, COMBINED)


def test_pack_and_check_archive(tmp_path):
    check_pack_and_check_archive(CT, tmp_path, "class-token-")


def test_batch_grades_a_class_of_its_submissions(tmp_path):
    students = (
        ("alice", "accepted/broadcast_concatenate.py"),
        ("bob", "wrong_answer/appended_at_end.py"),
        ("carol", "compile_error/syntax_error.py"),
    )
    check_batch_grades_a_class(CT, tmp_path, VERDICTS, students)


@pytest.mark.slow
def test_verifyproblem_accepts_the_kattis_export_and_every_verdict(ct, tmp_path):
    check_verifyproblem(ct, tmp_path)


@pytest.mark.slow
def test_otter_assign_and_run_grade_the_reference_and_a_mistake(ct, tmp_path):
    check_otter_grades_the_reference_and_a_mistake(ct, CT, tmp_path, "wrong_answer/first_sequence_only.py")
