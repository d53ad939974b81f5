"""The benchmark's class (tests/batch_class.full_class, used by scripts/bench_batch.py) is issue 11's mix.

The benchmark once took the first 40 of "accepted + wrong_answer + the rest",
and the catalogue had grown past 40, so it timed a class with no compile
error, crash, infinite loop, memory bomb, notebook or unreadable file: the
speed-up it printed was for the wrong class. These checks make that visible.
"""

from __future__ import annotations

import batch_class as bc
from grader.feedback.mistakes import feedback_data
from grader.problem.bundle import open_bundle


def test_the_benchmark_class_has_40_distinct_students():
    students = bc.full_class()
    assert len(students) == 40
    assert len({s.key for s in students}) == 40
    assert len({s.content for s in students}) == 40


def test_it_holds_every_accepted_file_and_every_catalogue_mistake():
    keys = {s.key for s in bc.full_class()}
    accepted = {f"ac-{p.stem}" for p in (bc.SUBMISSIONS / "accepted").glob("*.py")}
    assert accepted <= keys
    assert {f"wa-{m}" for m in feedback_data(open_bundle(bc.ROOT)).catalogue} <= keys


def test_it_holds_the_kinds_that_are_not_wrong_answers():
    students = {s.key: s for s in bc.full_class()}
    for kind in (
        "syntax",
        "ce-missing",
        "crash",
        "re-segfault",
        "loop",
        "tle-sleep",
        "bomb",
        "binary",
        "wa-combined",
        "wa-unknown",
    ):
        assert kind in students, kind
    assert students["notebook"].suffix == ".ipynb"
    assert b"\x00" in students["binary"].content
    assert b"while True" in students["bomb"].content
