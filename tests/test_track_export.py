"""`export PLATFORM --track` (grader/platforms/track_export.py): every step present, one package per
step (each the one `export --step` writes), or for PrairieLearn one course folder; the output
folder's rules as for any export; the steps not in this copy named, not a crash.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from grader.platforms.files import ExportError
from grader.platforms.track_export import export_track, present_steps
from grader.problem.track import load_track

TRACK = load_track(ROOT)
PRESENT = [s for s in TRACK.steps if s.present]
MISSING = [s for s in TRACK.steps if not s.present]


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_kattis_gives_one_package_per_step_each_the_single_steps_export(tmp_path):
    r = run_cli("export", "kattis", "--track", "--out", str(tmp_path / "all"))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == sorted(s.name for s in PRESENT)
    for step in MISSING:
        assert f"left out {step.missing_text()}" in r.stdout
    for step in PRESENT:
        one = run_cli("export", "kattis", "--step", step.name, "--out", str(tmp_path / f"one-{step.name}"))
        assert one.returncode == 0, one.stderr
        assert _files(tmp_path / "all" / step.name) == _files(tmp_path / f"one-{step.name}"), step.name


def test_prairielearn_gives_one_course_with_a_question_per_step(tmp_path):
    r = run_cli("export", "prairielearn", "--track", "--out", str(tmp_path / "course"))
    assert r.returncode == 0, r.stderr
    course = tmp_path / "course"
    assert json.loads((course / "infoCourse.json").read_text())["title"] == TRACK.name
    questions = sorted(p.parent.name for p in (course / "questions").rglob("info.json"))
    assert questions == sorted(s.name for s in PRESENT)


def test_otter_writes_a_master_notebook_per_step(tmp_path):
    r = run_cli("export", "otter", "--track", "--out", str(tmp_path / "otter"))
    assert r.returncode == 0, r.stderr
    for step in PRESENT:
        assert list((tmp_path / "otter" / step.name).rglob("*.ipynb")), step.name


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--step", "class-token"], "leave out --step"),
        (["--out", "track"], "part of the bundle"),
    ],
)
def test_refused_with_one_line_and_nothing_written(tmp_path, args, message):
    r = run_cli("export", "kattis", "--track", *args)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_a_used_folder_is_refused_and_kept(tmp_path):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine")
    for platform in ("kattis", "prairielearn"):
        r = run_cli("export", platform, "--track", "--out", str(tmp_path / "used"))
        assert r.returncode == 2 and "not empty" in r.stderr, r.stderr
    assert _files(tmp_path / "used") == {"notes.txt": b"mine"}


def test_a_link_as_the_output_folder_is_refused(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ExportError):
        export_track("kattis", TRACK, tmp_path / "link")
    assert not any((tmp_path / "elsewhere").iterdir())


def test_a_folder_holding_no_track_says_so(tmp_path):
    bundle = ROOT / "track" / "class-token"
    r = run_cli("export", "kattis", "--track", "--bundle", str(bundle), "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "holds no track" in r.stderr, r.stderr


def test_present_steps_are_the_tracks_in_order():
    steps, left_out = present_steps(TRACK)
    assert [name for name, _ in steps] == [s.name for s in PRESENT]
    assert left_out == [s.missing_text() for s in MISSING]


def test_a_step_not_in_this_copy_is_left_out_and_named(tmp_path):
    """A track whose last step's folder is absent: the others are exported, that one named."""
    gone = dataclasses.replace(TRACK.steps[-1], root=tmp_path / "absent")
    track = dataclasses.replace(TRACK, steps=(*TRACK.steps[:-1], gone))
    result = export_track("kattis", track, tmp_path / "out")
    assert result.left_out == (gone.missing_text(),)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(s.name for s in track.steps if s.present)
