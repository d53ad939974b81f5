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

PE = ROOT / "track" / "position-embedding"
VERDICTS = {
    "accepted": "AC",
    "wrong_answer": "WA",
    "compile_error": "CE",
    "run_time_error": "RE",
    "time_limit_exceeded": "TLE",
}
SUBMISSIONS = submissions(PE)
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
    check_regenerates_validates_and_statement_agrees(pe, "add_position_embedding")
    assert [p.name for p in pe.spec.parameters] == ["patches", "num_patches", "embed_dim", "pos_embed"]


@pytest.mark.parametrize("path", SUBMISSIONS, ids=submission_id)
def test_every_submission_gets_its_folders_verdict(pe, path: Path):
    check_verdict_and_fingerprint(pe, path, VERDICTS, BY_VALUES, BY_SHAPE, COMBINED)


def test_pack_and_check_archive(tmp_path):
    check_pack_and_check_archive(PE, tmp_path, "position-embedding-")


def test_batch_grades_a_class_of_its_submissions(tmp_path):
    students = (
        ("alice", "accepted/plain_add.py"),
        ("bob", "wrong_answer/class_token_row_skipped.py"),
        ("carol", "compile_error/syntax_error.py"),
    )
    check_batch_grades_a_class(PE, tmp_path, VERDICTS, students)


@pytest.mark.slow
def test_verifyproblem_accepts_the_kattis_export_and_every_verdict(pe, tmp_path):
    check_verifyproblem(pe, tmp_path)


@pytest.mark.slow
def test_otter_assign_and_run_grade_the_reference_and_a_mistake(pe, tmp_path):
    check_otter_grades_the_reference_and_a_mistake(pe, PE, tmp_path, "wrong_answer/first_sequence_only.py")
