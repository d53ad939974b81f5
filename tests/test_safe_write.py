"""problem/safe_write.py: the one writer of every output a user names, attacked directly.

Each attack leaves what was there as it was: a file not overwritten without
force, a link never written through (nor replaced), a folder or FIFO never
opened, nothing created where the folder is missing, nothing written into the
bundle. The commands' own attack tests are tests/test_output_attacks.py.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from grader.maintain.pack import flavour_entries
from grader.problem.bundle import OWN_PARTS
from grader.problem.safe_write import (
    WriteRefused,
    bundle_part,
    folder_problem,
    make_output_folder,
    target_problem,
    write_file,
)


@pytest.fixture
def outside(tmp_path) -> Path:
    f = tmp_path / "outside.txt"
    f.write_text("not yours")
    return f


def _only(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_new_file_is_written_whole_and_no_temporary_file_is_left(tmp_path):
    write_file(tmp_path / "out.json", "{}\n")
    write_file(tmp_path / "raw.bin", b"\x00\xff")
    assert (tmp_path / "out.json").read_text() == "{}\n" and (tmp_path / "raw.bin").read_bytes() == b"\x00\xff"
    assert _only(tmp_path) == ["out.json", "raw.bin"]
    assert stat.S_IMODE((tmp_path / "out.json").stat().st_mode) & 0o600 == 0o600


def test_an_existing_file_is_kept_without_force_and_replaced_with_it(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    with pytest.raises(WriteRefused, match=r"exists: not overwritten .pass --force"):
        write_file(target, "new")
    assert target.read_text() == "old" and _only(tmp_path) == ["out.json"]
    write_file(target, "new", force=True)
    assert target.read_text() == "new" and _only(tmp_path) == ["out.json"]


def test_force_replaces_the_entry_never_the_bytes_of_a_hard_link(tmp_path):
    """A rename replaces the folder entry: another name for the old file keeps its bytes."""
    target, other = tmp_path / "out.json", tmp_path / "other.json"
    target.write_text("old")
    os.link(target, other)
    write_file(target, "new", force=True)
    assert target.read_text() == "new" and other.read_text() == "old"


@pytest.mark.parametrize("force", [False, True])
def test_a_link_to_a_file_outside_is_never_written_through_nor_replaced(tmp_path, outside, force):
    link = tmp_path / "out.json"
    link.symlink_to(outside)
    with pytest.raises(WriteRefused, match="is a symbolic link: never written through or replaced"):
        write_file(link, "pwned", force=force)
    assert link.is_symlink() and outside.read_text() == "not yours"


@pytest.mark.parametrize("force", [False, True])
def test_a_dangling_link_is_refused_and_its_target_not_created(tmp_path, force):
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "created-through-the-link")
    with pytest.raises(WriteRefused, match="symbolic link"):
        write_file(link, "pwned", force=force)
    assert not (tmp_path / "created-through-the-link").exists() and _only(tmp_path) == ["out.json"]


@pytest.mark.parametrize("force", [False, True])
def test_a_folder_is_refused(tmp_path, force):
    (tmp_path / "out.json").mkdir()
    with pytest.raises(WriteRefused, match="is a folder, not a file"):
        write_file(tmp_path / "out.json", "x", force=force)
    assert (tmp_path / "out.json").is_dir() and not any((tmp_path / "out.json").iterdir())


@pytest.mark.parametrize("force", [False, True])
def test_a_fifo_is_refused_without_being_opened(tmp_path, force):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    # A reader is kept open, so that a writer that did open the FIFO would not block: its bytes would show.
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(WriteRefused, match="special file"):
            write_file(fifo, "x" * 100, force=force)
        assert os.read(reader, 1000) == b""
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_device_is_refused_but_dev_null_discards(tmp_path):
    assert "special file" in target_problem(Path("/dev/zero"), force=True)
    assert target_problem(Path(os.devnull)) is None
    write_file(Path(os.devnull), "discarded")


def test_a_missing_or_non_folder_parent_is_refused_and_nothing_created(tmp_path, outside):
    with pytest.raises(WriteRefused, match=r"the folder .*missing does not exist"):
        write_file(tmp_path / "missing" / "out.json", "x", force=True)
    with pytest.raises(WriteRefused, match=r"outside\.txt is not a folder"):
        write_file(outside / "out.json", "x", force=True)
    assert _only(tmp_path) == ["outside.txt"] and outside.read_text() == "not yours"


def test_an_unwritable_folder_is_a_one_line_refusal(tmp_path):
    with pytest.raises(WriteRefused, match="cannot be written") as exc:
        write_file(Path("/proc/self/out.json"), "x")
    assert "\n" not in str(exc.value)


def test_nothing_is_written_into_a_protected_part_even_through_a_linked_folder(tmp_path):
    part = tmp_path / "reference"
    part.mkdir()
    (part / "solution.py").write_text("reference")
    (tmp_path / "innocent").symlink_to(part)
    for target in (part / "solution.py", part / "new.py", tmp_path / "innocent" / "solution.py", part):
        with pytest.raises(WriteRefused, match=r"is part of the bundle \(reference\)"):
            write_file(target, "pwned", force=True, protected=(part,))
    assert _only(part) == ["solution.py"] and (part / "solution.py").read_text() == "reference"
    write_file(tmp_path / "beside.json", "fine", protected=(part,))  # beside a part is not in it


def test_the_bundle_protects_its_own_parts_and_the_graders_source(bundle):
    parts = bundle.own_parts()
    import grader.cli

    for target in (
        bundle.root / "reference" / "solution.py",
        bundle.root / "problem.yaml",
        bundle.root / "testcases" / "sample" / "new.json",
        bundle.calibration_file,
        Path(grader.cli.__file__),
    ):
        assert bundle_part(target, parts) is not None, target
        assert "part of the bundle" in target_problem(target, force=True, protected=parts)
    assert bundle_part(bundle.root / "out.json", parts) is None
    assert bundle_part(bundle.root / "dist" / "x.zip", parts) is None


def test_own_parts_cover_every_top_level_part_the_judge_archive_holds(bundle):
    """What `pack` archives is the bundle: each of its top-level names is one of OWN_PARTS."""
    import fnmatch

    tops = {e.pattern.split("/")[0] for e in flavour_entries(bundle.spec, "judge")}
    uncovered = {
        t
        for t in tops
        if not any(t == p or fnmatch.fnmatch(t, p) for p in OWN_PARTS) and t != bundle.spec.time_calibration.file
    }
    assert not uncovered, f"top-level parts of the bundle that outputs could overwrite: {sorted(uncovered)}"


def test_output_folders_follow_the_same_rules(tmp_path, outside):
    made = make_output_folder(tmp_path / "new")
    assert made.is_dir() and make_output_folder(made) == made  # an existing folder is fine
    (tmp_path / "link").symlink_to(made)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    cases = {
        tmp_path / "link": "is a symbolic link",
        tmp_path / "dangling": "is a symbolic link",
        outside: "exists and is not a folder",
        outside / "sub": "is not a folder",
        tmp_path / "a" / "b": "does not exist",
    }
    for path, why in cases.items():
        assert why in folder_problem(path), path
        with pytest.raises(WriteRefused, match=why):
            make_output_folder(path)
    assert not (tmp_path / "nowhere").exists() and not (tmp_path / "a").exists()
    assert "part of the bundle" in folder_problem(made / "x", protected=(made,))
