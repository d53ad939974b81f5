"""The whole track's practice archive (`pack --track --flavour practice`, issue 25): what it holds
and never holds, check-archive's reading of it, each step graded in it with `--step`, and its
README's quick start taken literally in an empty folder.

Packed from this checkout with whichever steps it holds (steps 3, 5 and 6 land later).
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
from pathlib import Path, PurePosixPath

import pytest

from conftest import ROOT, run_cli
from grader.maintain.archive_check import check_archive
from grader.maintain.manifest import MANIFEST_NAME, build_manifest, file_records
from grader.maintain.pack import write_tar_gz
from grader.maintain.unpack import safe_unpack
from grader.problem.bundle import open_bundle
from grader.problem.track import load_track
from test_practice_readme import _run, quick_start

TRACK = load_track(ROOT)
OTHERS = [s for s in TRACK.steps if s.present and s.folder != "."]


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    proc = run_cli("pack", "--track", "--flavour", "practice", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    for step in TRACK.steps:
        assert (step.missing_text() in proc.stdout) == (not step.present), proc.stdout
    return out / f"{TRACK.id}-{TRACK.version}-practice.tar.gz"


@pytest.fixture(scope="module")
def unpacked(archive, tmp_path_factory) -> Path:
    return safe_unpack(archive, tmp_path_factory.mktemp("unpacked"))


def names(archive: Path) -> set[str]:
    with tarfile.open(archive, "r:gz") as tar:
        return {m.name.split("/", 1)[1] for m in tar.getmembers()}


def test_the_archive_holds_every_present_step_for_practice(archive):
    got = names(archive)
    assert {"track.yaml", "README.md", "statement.md", "starter/solution.py", "grader/cli/steps.py"} <= got
    for step in OTHERS:
        spec = open_bundle(step.root).spec
        for part in ("problem.yaml", "problem.py", "statement.md", f"starter/{spec.entry_file}"):
            assert f"{step.folder}/{part}" in got
        samples = {p.name for p in (step.root / "testcases" / "sample").glob("*.json")}
        assert {n.rsplit("/", 1)[1] for n in got if n.startswith(f"{step.folder}/testcases/sample/")} == samples
        assert any(n.startswith(f"{step.folder}/testcases/practice/") for n in got)


def test_no_step_leaks_its_hidden_cases_reference_or_submissions(archive):
    got = names(archive)
    for step in [s for s in TRACK.steps if s.present]:
        spec = open_bundle(step.root).spec
        prefix = "" if step.folder == "." else f"{step.folder}/"
        inside = [n.removeprefix(prefix) for n in got if n.startswith(prefix)]
        hidden = {g.name for g in spec.groups if not g.visible}
        assert not [n for n in inside if n.startswith(("reference/", "submissions/", "tests/"))], step.name
        assert not [n for n in inside if n.startswith("testcases/") and n.split("/")[1] in hidden], step.name
        assert f"{prefix}README.md" not in got or prefix == "", "a step's README is written for a clone"
    # The grader is there once, at the top.
    assert not [n for n in got if "/grader/" in n or n.startswith("track/") and n.endswith("requirements.txt")]


def test_the_readme_is_the_tracks(unpacked):
    readme = (unpacked / "README.md").read_text(encoding="utf-8")
    assert readme == (ROOT / "docs" / "track" / "readme-practice.md").read_text(encoding="utf-8")
    assert "--step patch-embedding" in readme


def test_check_archive_accepts_the_track_archive(archive):
    proc = run_cli("check-archive", str(archive))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for step in OTHERS:
        assert f"grade {step.name} starter (--step, practice set): verdict RE" in proc.stdout
        assert f"ok      validate {step.name}:" in proc.stdout


def repacked(root: Path, dest: Path) -> Path:
    """`root`, edited, packed again with a manifest that agrees with it: only the allowlist can object."""
    bundle = open_bundle(root)
    (root / MANIFEST_NAME).unlink(missing_ok=True)
    rels = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    manifest = build_manifest(bundle, "practice", file_records(root, rels))
    write_tar_gz(dest, "vit-track-1.0.0-practice", manifest, root)
    return dest


@pytest.mark.parametrize("leak", ["hidden", "reference", "submission", "junk"])
def test_check_archive_refuses_a_step_with_secrets(archive, tmp_path, leak):
    if not OTHERS:
        pytest.skip("this checkout holds no step but the root")
    step = OTHERS[0]
    root = safe_unpack(archive, tmp_path / "u")
    folder = root / step.folder
    spec = open_bundle(step.root).spec
    hidden = next(g.name for g in spec.groups if not g.visible)
    planted = {
        "hidden": (f"testcases/{hidden}/01.json", "a practice archive must not contain hidden cases"),
        "reference": ("reference/solution.py", f"must not contain {step.folder}/reference/"),
        "submission": ("submissions/accepted/a.py", f"must not contain {step.folder}/submissions/"),
        "junk": ("notes.txt", f"{step.folder}/notes.txt is not a file a practice archive holds"),
    }[leak]
    source = next((step.root / "testcases").glob(f"{hidden}/*.json"), step.root / "problem.yaml")
    (folder / planted[0]).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, folder / planted[0])
    report = check_archive(repacked(root, tmp_path / "t.tar.gz"), run_grader=False)
    assert not report.ok and planted[1] in report.reason, report.reason


def test_check_archive_refuses_a_hostile_track_yaml(archive, tmp_path):
    root = safe_unpack(archive, tmp_path / "u")
    text = (root / "track.yaml").read_text(encoding="utf-8")
    (root / "track.yaml").write_text(text.replace("bundle: track/class-token", "bundle: /etc"), encoding="utf-8")
    report = check_archive(repacked(root, tmp_path / "t.tar.gz"), run_grader=False)
    assert not report.ok and "steps[1].bundle '/etc' must be relative" in report.reason


def _grade(folder: Path, *args: str):
    # The archive's own grader, as `python -m grader` from the folder runs it.
    return run_cli(*args, cwd=folder, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})


@pytest.mark.parametrize("step", [s.name for s in TRACK.steps if s.present])
def test_each_step_grades_in_the_archive_with_step(unpacked, tmp_path, step):
    chosen = TRACK.step(step)
    spec = open_bundle(chosen.root).spec
    starter = ("" if chosen.folder == "." else f"{chosen.folder}/") + f"starter/{spec.entry_file}"
    proc = _grade(unpacked, "grade", starter, "--step", step, "--tests", "sample", "--json", "-")
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["bundle_id"] == spec.id
    mine = tmp_path / "mine.py"
    shutil.copy(chosen.root / "reference" / "solution.py", mine)
    proc = _grade(unpacked, "grade", str(mine), "--step", str(chosen.number), "--json", "-")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["verdict"], doc["selection"], doc["bundle_id"]) == ("AC", "practice", spec.id)


def test_a_step_missing_from_the_archive_is_one_line(unpacked):
    """A step track.yaml lists but the unpacked copy lacks (its folder taken away for the test)."""
    step = next(s for s in reversed(TRACK.steps) if s.folder != ".")
    folder, aside = unpacked / step.folder, unpacked / f"{step.folder}.aside"
    folder.rename(aside)
    try:
        proc = _grade(unpacked, "grade", "x.py", "--step", step.name)
    finally:
        aside.rename(folder)
    assert proc.returncode == 2 and proc.stderr == f"grader: {step.missing_text()}\n"


@pytest.mark.slow
def test_the_track_quick_start_works_literally_in_an_empty_folder(archive, tmp_path):
    if shutil.which("python3") is None or shutil.which("bash") is None:
        pytest.fail("python3 and bash must be on PATH: the README's quick start uses them")
    folder = safe_unpack(archive, tmp_path / "fresh")
    lines = quick_start((folder / "README.md").read_text(encoding="utf-8"))
    assert len(lines) == 4, lines
    setup, listing, copy, grade = lines
    for line in (setup, listing, copy):
        proc = _run(line, folder)
        assert proc.returncode == 0, f"{line}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        if line == listing:
            assert "patch-embedding" in proc.stdout and "Patch Embedding" in proc.stdout
    proc = _run(grade, folder)
    assert proc.returncode == 1, f"{grade}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert proc.stdout.startswith("RE  Run-Time Error") and "patch-embedding" in proc.stdout.splitlines()[0]
    target = PurePosixPath(grade.split()[2])
    shutil.copy(ROOT / "track" / "patch-embedding" / "reference" / "solution.py", folder / target)
    proc = _run(grade, folder)
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert proc.stdout.startswith("AC  Accepted") and "practice tests" in proc.stdout
