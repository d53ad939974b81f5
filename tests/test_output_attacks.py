"""Every command that writes an output the user names, attacked through the command line.

The file outputs (`grade --json OUT`, `export-gradescope --out FILE`, the
archive `pack --out DIR` writes) and the folder outputs (`export PLATFORM
--out DIR`, `batch --out DIR`, `batch-merge --out DIR`, `pack --out DIR`)
against what a hostile or careless folder holds: an existing file, a link to a
file outside, a dangling link, a folder, a FIFO, a missing parent, a path
under a regular file, and the bundle's own files. A refusal is exit 2 with one
line on stderr and leaves everything as it was; `--force` replaces a regular
file and nothing else. The rules are problem/safe_write.py's
(tests/test_safe_write.py).

The commands run in this process (`grader.cli.main`) on a copy of the bundle,
so that a regression cannot damage the checkout.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from grader.cli import main
from grader.maintain.pack import archive_stem, flavour_entries, select_files
from grader.problem.bundle import open_bundle

SOLUTION = ROOT / "submissions" / "accepted" / "vectorised_matmul.py"


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """A copy of the judge bundle's files."""
    dest = tmp_path_factory.mktemp("bundle") / "bundle"
    for rel in select_files(ROOT, flavour_entries(open_bundle(ROOT).spec, "judge")):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest / rel)
    return dest


def _digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def run(capsys, *argv: str) -> tuple[int, str]:
    status = main(list(argv))
    err = capsys.readouterr().err
    return status, err


def refused(capsys, *argv: str) -> str:
    status, err = run(capsys, *argv)
    lines = err.splitlines()
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("grader: ") and "Traceback" not in err, err
    assert "internal error" not in err
    return lines[0]


# --- the file outputs -------------------------------------------------------------------


def _file_command(entry: str, bundle: Path, target: Path) -> list[str]:
    """The command that writes `target` (for pack, the archive named by its folder)."""
    return {
        "grade": ["--bundle", str(bundle), "grade", str(SOLUTION), "--tests", "sample", "--json", str(target)],
        "export-gradescope": ["--bundle", str(bundle), "export-gradescope", "--out", str(target)],
        "pack": ["--bundle", str(bundle), "pack", "--out", str(target.parent)],
    }[entry]


def _target(entry: str, folder: Path, bundle: Path) -> Path:
    name = {
        "grade": "verdict.json",
        "export-gradescope": "autograder.zip",
        "pack": f"{archive_stem(open_bundle(bundle).spec, 'judge')}.tar.gz",
    }[entry]
    return folder / name


def _valid(entry: str, path: Path) -> bool:
    if entry == "grade":
        return json.loads(path.read_text())["verdict"] == "AC"
    if entry == "export-gradescope":
        return zipfile.is_zipfile(path)
    return tarfile.is_tarfile(path)


ENTRIES = ["grade", "export-gradescope", "pack"]


def _plant(kind: str, target: Path, outside: Path) -> None:
    outside.write_text("not yours")
    if kind == "file":
        target.write_text("mine")
    elif kind == "link":
        target.symlink_to(outside)
    elif kind == "dangling link":
        target.symlink_to(outside.with_name("made-through-the-link"))
    elif kind == "folder":
        target.mkdir()
        (target / "keep").write_text("mine")
    else:
        os.mkfifo(target)


def _intact(kind: str, target: Path, outside: Path) -> bool:
    mode = os.lstat(target).st_mode
    return (
        outside.read_text() == "not yours"
        and not outside.with_name("made-through-the-link").exists()
        and {
            "file": lambda: stat.S_ISREG(mode) and target.read_text() == "mine",
            "link": lambda: stat.S_ISLNK(mode),
            "dangling link": lambda: stat.S_ISLNK(mode),
            "folder": lambda: stat.S_ISDIR(mode) and (target / "keep").read_text() == "mine",
            "fifo": lambda: stat.S_ISFIFO(mode),
        }[kind]()
    )


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("kind", ["file", "link", "dangling link", "folder", "fifo"])
def test_what_is_at_the_target_is_refused_and_left_as_it_was(capsys, copy, tmp_path, entry, kind):
    target, outside = _target(entry, tmp_path / "out", copy), tmp_path / "outside.txt"
    target.parent.mkdir()
    _plant(kind, target, outside)
    reader = os.open(target, os.O_RDONLY | os.O_NONBLOCK) if kind == "fifo" else None  # a writer could not block
    try:
        line = refused(capsys, *_file_command(entry, copy, target))
        assert str(target) in line, line
        if reader is not None:
            assert os.read(reader, 100) == b""
    finally:
        if reader is not None:
            os.close(reader)
    assert _intact(kind, target, outside)
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]  # no temporary file left


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("kind", ["link", "dangling link", "folder", "fifo"])
def test_force_replaces_no_link_folder_or_special_file(capsys, copy, tmp_path, entry, kind):
    target, outside = _target(entry, tmp_path / "out", copy), tmp_path / "outside.txt"
    target.parent.mkdir()
    _plant(kind, target, outside)
    reader = os.open(target, os.O_RDONLY | os.O_NONBLOCK) if kind == "fifo" else None
    try:
        refused(capsys, *_file_command(entry, copy, target), "--force")
    finally:
        if reader is not None:
            os.close(reader)
    assert _intact(kind, target, outside)


@pytest.mark.parametrize("entry", ENTRIES)
def test_an_existing_file_is_refused_then_replaced_with_force(capsys, copy, tmp_path, entry):
    target = _target(entry, tmp_path, copy)
    target.write_text("mine")
    assert "exists: not overwritten (pass --force to replace it)" in refused(
        capsys, *_file_command(entry, copy, target)
    )
    assert target.read_text() == "mine"
    status, err = run(capsys, *_file_command(entry, copy, target), "--force")
    assert status == 0, err
    assert _valid(entry, target) and sorted(p.name for p in tmp_path.iterdir()) == [target.name]


@pytest.mark.parametrize("entry", ["grade", "export-gradescope"])
def test_a_missing_folder_or_a_file_as_folder_is_refused(capsys, copy, tmp_path, entry):
    (tmp_path / "file").write_text("mine")
    assert "does not exist" in refused(capsys, *_file_command(entry, copy, tmp_path / "missing" / "x"))
    assert "is not a folder" in refused(capsys, *_file_command(entry, copy, tmp_path / "file" / "x"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"] and (tmp_path / "file").read_text() == "mine"


@pytest.mark.parametrize(
    "argv",
    [
        ["export-gradescope", "--out", "reference/solution.py", "--force"],
        ["export-gradescope", "--out", "problem.yaml", "--force"],
        ["export-gradescope", "--out", "grader/cli/__init__.py", "--force"],
        ["grade", str(SOLUTION), "--tests", "sample", "--json", "reference/solution.py", "--force"],
        ["grade", str(SOLUTION), "--tests", "sample", "--json", "testcases/sample/99-new.json"],
        ["grade", str(SOLUTION), "--tests", "sample", "--format", "junit", "--output", "statement.md", "--force"],
        ["pack", "--out", "reference", "--force"],
        ["export", "kattis", "--out", "testcases/kattis"],
    ],
    ids=lambda a: " ".join(a[:1] + a[-3:]),
)
def test_the_bundle_is_never_written_even_with_force(capsys, copy, monkeypatch, argv):
    before = _digest(copy)
    monkeypatch.chdir(copy)  # relative paths, as in the report: `export-gradescope --out reference/solution.py`
    assert "is part of the bundle" in refused(capsys, "--bundle", str(copy), *argv)
    assert _digest(copy) == before


def test_a_linked_folder_into_the_bundle_is_caught(capsys, copy, tmp_path):
    (tmp_path / "innocent").symlink_to(copy / "reference")
    before = _digest(copy)
    assert "is part of the bundle" in refused(
        capsys,
        "--bundle",
        str(copy),
        "export-gradescope",
        "--out",
        str(tmp_path / "innocent" / "solution.py"),
        "--force",
    )
    assert _digest(copy) == before


def test_json_to_dev_null_discards_it(capsys, copy):
    status, err = run(capsys, "--bundle", str(copy), "grade", str(SOLUTION), "--tests", "sample", "--json", os.devnull)
    assert status == 0, err


# --- the folder outputs -----------------------------------------------------------------


def _folder_command(entry: str, bundle: Path, out: Path, work: Path) -> list[str]:
    cls = work / "class"
    (cls / "alice").mkdir(parents=True, exist_ok=True)
    shutil.copy(SOLUTION, cls / "alice" / "solution.py")
    return {
        "batch": ["--bundle", str(bundle), "batch", str(cls), "--out", str(out), "--tests", "sample"],
        "batch-merge": ["--bundle", str(bundle), "batch-merge", str(cls), "--out", str(out)],
        "export": ["--bundle", str(bundle), "export", "kattis", "--out", str(out)],
        "pack": ["--bundle", str(bundle), "pack", "--out", str(out)],
    }[entry]


@pytest.mark.parametrize("entry", ["batch", "batch-merge", "export", "pack"])
def test_a_bad_output_folder_is_a_one_line_refusal(capsys, copy, tmp_path, entry):
    work = tmp_path / "work"
    work.mkdir()
    (work / "regular").write_text("mine")
    (work / "elsewhere").mkdir()
    (work / "link").symlink_to(work / "elsewhere")
    (work / "dangling").symlink_to(work / "nowhere")
    cases = {
        "dangling": "is a symbolic link",
        "link": "is a symbolic link",
        "regular": "exists and is not a folder",
        "regular/sub": "regular is not a folder",
        "missing/sub": "does not exist",
    }
    before = _digest(copy)
    for rel, why in cases.items():
        assert why in refused(capsys, *_folder_command(entry, copy, work / rel, work)), rel
    assert "part of the bundle" in refused(capsys, *_folder_command(entry, copy, copy / "testcases" / "sample", work))
    if entry != "batch-merge":  # a folder that cannot be made is found on making it, after the shards are read
        assert "/proc/self/x" in refused(capsys, *_folder_command(entry, copy, Path("/proc/self/x"), work))
    assert not any((work / "elsewhere").iterdir()) and not (work / "nowhere").exists()
    assert not (work / "missing").exists() and (work / "regular").read_text() == "mine"
    assert _digest(copy) == before
