"""The MLP Head bundle (track/mlp-head) through the grader, as a platform, an instructor
and a learner use it: regeneration, validation and the statement; every expected-verdict
submission judged, each single-mistake file named by its fingerprint (the lost batch axis by
the values of its array of that shape, its message telling the shape as well); pack and
check-archive; the Kattis export under problemtools' verifyproblem; the Otter export under
`otter assign` and `otter run`; `batch` over a class of its submissions.

The bundle's own content (the reference against torch's LayerNorm and Linear, each mistake's
effect) is tested in tests/test_mlp_head_oracle.py.
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

CT = ROOT / "track" / "mlp-head"
VERDICTS = {
    "accepted": "AC",
    "wrong_answer": "WA",
    "compile_error": "CE",
    "run_time_error": "RE",
    "time_limit_exceeded": "TLE",
}
SUBMISSIONS = submissions(CT)
# The mistakes whose output has the right shape (B, C) everywhere.
BY_VALUES = (
    "mean_pooled_tokens",
    "last_row_read",
    "mean_of_patch_rows",
    "layernorm_skipped",
    "layernorm_after_head",
    "layernorm_over_tokens",
    "sample_variance",
    "eps_outside_sqrt",
    "teaching_script_eps",
    "softmax_applied",
    "float32_arithmetic",
)
# The other returns (C,) on every test: the first failing test's message shows the shape
# returned, and the fingerprint names the mistake from the values of that wrongly shaped array.
BY_SHAPE = {"batch_dimension_lost": "the batch axis B is missing"}
COMBINED = {
    "combined_last_row_softmax": ["last_row_read", "softmax_applied"],
    "combined_mean_pool_sample_variance": ["mean_pooled_tokens", "sample_variance"],
}


@pytest.fixture(scope="module")
def ct():
    return open_bundle(CT)


def test_the_bundle_regenerates_validates_and_its_statement_agrees(ct):
    check_regenerates_validates_and_statement_agrees(ct, "classification_head")
    assert [p.name for p in ct.spec.parameters] == ["encoder_output", "W_head"]


@pytest.mark.parametrize("path", SUBMISSIONS, ids=submission_id)
def test_every_submission_gets_its_folders_verdict(ct, path: Path):
    check_verdict_and_fingerprint(ct, path, VERDICTS, BY_VALUES, BY_SHAPE, COMBINED)


def test_pack_and_check_archive(tmp_path):
    check_pack_and_check_archive(CT, tmp_path, "mlp-head-")


def test_batch_grades_a_class_of_its_submissions(tmp_path):
    students = (
        ("alice", "accepted/four_lines.py"),
        ("bob", "wrong_answer/last_row_read.py"),
        ("carol", "compile_error/syntax_error.py"),
    )
    check_batch_grades_a_class(CT, tmp_path, VERDICTS, students)


@pytest.mark.slow
def test_verifyproblem_accepts_the_kattis_export_and_every_verdict(ct, tmp_path):
    check_verifyproblem(ct, tmp_path)


@pytest.mark.slow
def test_otter_assign_and_run_grade_the_reference_and_a_mistake(ct, tmp_path):
    check_otter_grades_the_reference_and_a_mistake(ct, CT, tmp_path, "wrong_answer/teaching_script_eps.py")
