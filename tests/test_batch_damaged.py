"""A damaged output folder: a folder, a link or a FIFO where batch writes a file.

batch never writes through such a thing nor replaces it (it did not make it):
a student's file is that student's "could not be judged" and the others are
graded; a run-level file (grades.csv, summary.md, .batch/_run.json) stops the
batch before anything is graded (exit 2), and one that turns bad during a
run is reported after the rest is written (exit 1). docs/batch.md says so.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

import batch_class as bc
from grader.batch.api import BatchError, BatchOptions, run_batch
from grader.batch.gradebook import mistake_titles
from grader.batch.gradebook_files import write_outputs
from grader.batch.state import load_records, state_dir
from grader.batch.writes import OutputError, atomic_write
from grader.problem.bundle import open_bundle

TITLES = mistake_titles(open_bundle())  # the root bundle's catalogue: the ids a verdict JSON may name

CODE = bc.sub("accepted", "vectorised_matmul")


def _plant(path: Path, kind: str, outside: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "folder":
        path.mkdir()
        (path / "keep.txt").write_text("mine")
    elif kind == "symlink":
        outside.write_text("not batch's")
        path.symlink_to(outside)
    else:
        os.mkfifo(path)


def _class(tmp_path: Path) -> Path:
    bc.write_files(tmp_path / "cls", [bc.Student("alice", CODE), bc.Student("bob", CODE)])
    return tmp_path / "cls"


def _rows(out: Path) -> dict[str, dict]:
    return {r["student"]: r for r in csv.DictReader((out / "grades.csv").read_text(encoding="utf-8-sig").splitlines())}


@pytest.mark.parametrize("kind", ["folder", "symlink", "fifo"])
@pytest.mark.parametrize("where", ["{id}.json", ".batch/{id}.json"])
def test_a_damaged_student_file_is_that_students_could_not_be_judged(tmp_path, bundle, kind, where):
    cls, out, outside = _class(tmp_path), tmp_path / "out", tmp_path / "outside.txt"
    target = out / where.format(id="alice")
    _plant(target, kind, outside)
    result = run_batch(bundle, BatchOptions(inputs=(cls,), out=out, jobs=1, tests="sample"))
    assert result.exit_status == 1
    rows = _rows(out)
    assert set(rows) == {"alice", "bob"}
    assert rows["bob"]["judged"] == "yes" and rows["alice"]["judged"] == "no"
    # "could not be judged" is a CE, as for a student with no file; JE is the grader's own fault
    assert rows["alice"]["verdict"] == "CE" and "JE" not in result.outputs.summary
    assert str(target) in rows["alice"]["message"] and "move it away" in rows["alice"]["message"]
    assert str(target) in result.outputs.summary
    # not replaced, not written through
    assert os.path.lexists(target) and (kind != "symlink" or outside.read_text() == "not batch's")
    assert kind != "folder" or (target / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize("name", ["grades.csv", "summary.md", ".batch/_run.json"])
def test_a_damaged_run_level_file_stops_the_batch_before_grading(tmp_path, bundle, name):
    cls, out = _class(tmp_path), tmp_path / "out"
    _plant(out / name, "folder", tmp_path / "x")
    with pytest.raises(BatchError, match=rf"{name}.*is a folder where batch writes a file"):
        run_batch(bundle, BatchOptions(inputs=(cls,), out=out, jobs=1, tests="sample"))
    assert not (out / "alice.json").exists() and load_records(out) == []


def test_the_cli_names_the_damaged_gradebook_and_exits_2(tmp_path, cli):
    cls, out = _class(tmp_path), tmp_path / "out"
    (out / "grades.csv").mkdir(parents=True)
    r = cli("batch", str(cls), "--out", str(out), "--tests", "sample", "--jobs", "1")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "grades.csv is a folder where batch writes a file" in r.stderr and len(r.stderr.splitlines()) == 1


def test_a_gradebook_that_turns_bad_is_reported_and_the_summary_still_written(tmp_path):
    out = tmp_path / "out"
    state_dir(out).mkdir(parents=True)
    (out / "grades.csv").mkdir()
    outputs = write_outputs(out, {"groups": [], "students_in_shard": 0}, [], TITLES)
    assert len(outputs.problems) == 1 and "grades.csv is a folder" in outputs.problems[0]
    assert (out / "summary.md").is_file() and (out / "grades.csv").is_dir()


def test_atomic_write_never_writes_through_a_link(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("keep")
    (tmp_path / "grades.csv").symlink_to(secret)
    with pytest.raises(OutputError, match="a symbolic link"):
        atomic_write(tmp_path / "grades.csv", "pwned")
    assert secret.read_text() == "keep" and sorted(p.name for p in tmp_path.iterdir()) == ["grades.csv", "secret"]
    atomic_write(tmp_path / "new.csv", "a\n")
    atomic_write(tmp_path / "new.csv", "b\n")  # a regular file batch wrote is replaced
    assert (tmp_path / "new.csv").read_text() == "b\n"
