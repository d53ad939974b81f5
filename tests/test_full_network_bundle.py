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

from pathlib import Path

import pytest

from conftest import ROOT
from grader.problem.bundle import open_bundle
from track_bundle_checks import (
    check_batch_grades_a_class,
    check_next_step_points_at_the_catalogue,
    check_otter_grades_the_reference_and_a_mistake,
    check_pack_and_check_archive,
    check_regenerates_validates_and_statement_agrees,
    check_verifyproblem,
    graded,
    submission_id,
    submissions,
)

CT = ROOT / "track" / "full-network"
VERDICTS = {
    "accepted": "AC",
    "wrong_answer": "WA",
    "compile_error": "CE",
    "run_time_error": "RE",
    "time_limit_exceeded": "TLE",
}
SUBMISSIONS = submissions(CT)
# Every catalogue mistake keeps the output's shape (B, K): the fingerprint names it from the values.
COMBINED = {"combined_strips_reversed": ["blocks_in_reverse_order", "patches_as_strips"]}


@pytest.fixture(scope="module")
def ct():
    return open_bundle(CT)


def test_the_bundle_regenerates_validates_and_its_statement_agrees(ct):
    check_regenerates_validates_and_statement_agrees(ct, "vit_forward")
    assert [p.name for p in ct.spec.parameters][-2:] == ["encoder_weights", "W_head"]
    blocks = ct.spec.parameters[-2]
    assert blocks.length == "L" and [k.name for k in blocks.items] == ["Wq", "Wk", "Wv", "Wo", "W1", "W2"]


@pytest.mark.parametrize("path", SUBMISSIONS, ids=submission_id)
def test_every_submission_gets_its_folders_verdict(ct, path: Path):
    report, fingerprint, named = graded(ct, path, VERDICTS)
    if path.parent.name != "wrong_answer":
        return
    if path.stem in COMBINED:
        assert named == COMBINED[path.stem], fingerprint
    elif path.stem.startswith("unknown_"):
        # Never a guess, and never a fault of the diagnosis ("unavailable").
        assert fingerprint.get("status") in ("no_match", "no_evidence"), fingerprint
    else:
        assert fingerprint.get("status") == "match" and named == [path.stem], fingerprint
        check_next_step_points_at_the_catalogue(ct, report, path.stem)


def test_pack_and_check_archive(tmp_path):
    check_pack_and_check_archive(CT, tmp_path, "full-network-")


def test_batch_grades_a_class_of_its_submissions(tmp_path):
    students = (
        ("alice", "accepted/vectorised.py"),
        ("bob", "wrong_answer/class_token_appended.py"),
        ("carol", "compile_error/syntax_error.py"),
    )
    check_batch_grades_a_class(CT, tmp_path, VERDICTS, students)


@pytest.mark.slow
def test_verifyproblem_accepts_the_kattis_export_and_every_verdict(ct, tmp_path):
    check_verifyproblem(ct, tmp_path)


@pytest.mark.slow
def test_otter_assign_and_run_grade_the_reference_and_a_mistake(ct, tmp_path):
    check_otter_grades_the_reference_and_a_mistake(ct, CT, tmp_path, "wrong_answer/head_reads_last_row.py")
