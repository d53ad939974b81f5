"""grader/batch/intake.py, zip_intake.py and folder_intake.py: hostile zips and folders never get
through, and each refusal names its entry."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path
from pathlib import PurePosixPath as P

import pytest

from grader.batch.folder_intake import walk_folder
from grader.batch.intake import IntakeError, IntakeLimits
from grader.batch.zip_intake import unpack_zip
from grader.batch.zipdir import read_directory


def _zip(path: Path, members: list[tuple[str, bytes] | zipfile.ZipInfo | tuple[zipfile.ZipInfo, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for m in members:
            if isinstance(m, tuple) and isinstance(m[0], zipfile.ZipInfo):
                zf.writestr(m[0], m[1])
            else:
                zf.writestr(*m)  # type: ignore[misc]  # a (name, bytes) pair here
    return path


def _unix(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = mode << 16
    return info


def _refused(intake) -> dict[str, str]:
    return {r.entry: r.reason for r in intake.refused}


def test_good_entries_are_unpacked_as_private_regular_files(tmp_path):
    z = _zip(
        tmp_path / "c.zip", [("alice/solution.py", b"x = 1\n"), ("bob.py", b"y = 2\n"), ("__MACOSX/._bob.py", b"junk")]
    )
    out = unpack_zip(z, tmp_path / "u")
    assert sorted(map(str, out.files)) == ["alice/solution.py", "bob.py"]
    assert out.refused == []
    f = tmp_path / "u" / "alice" / "solution.py"
    assert f.read_bytes() == b"x = 1\n" and stat.S_IMODE(f.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    "name, why",
    [
        ("../evil.py", "path traversal"),
        ("alice/../../evil.py", "path traversal"),
        ("/etc/evil.py", "absolute path"),
        ("C:/evil.py", "absolute path"),
        ("alice\\..\\evil.py", "backslash"),
    ],
)
def test_escaping_names_are_refused_by_name(tmp_path, name, why):
    z = _zip(tmp_path / "c.zip", [(name, b"pwned"), ("ok.py", b"x = 1\n")])
    out = unpack_zip(z, tmp_path / "u")
    assert why in _refused(out)[name]
    assert [str(f) for f in out.files] == ["ok.py"]
    assert not (tmp_path / "evil.py").exists() and not Path("/etc/evil.py").exists()


def test_symlink_and_special_entries_are_refused(tmp_path):
    z = _zip(
        tmp_path / "c.zip",
        [
            (_unix("alice/solution.py", stat.S_IFLNK | 0o777), b"/etc/passwd"),
            (_unix("bob/fifo", stat.S_IFIFO | 0o644), b""),
            (_unix("carol/dev", stat.S_IFCHR | 0o644), b""),
            (_unix("dave/solution.py", stat.S_IFREG | 0o644), b"x = 1\n"),
        ],
    )
    out = unpack_zip(z, tmp_path / "u")
    refused = _refused(out)
    assert "symbolic link" in refused["alice/solution.py"]
    assert "special file" in refused["bob/fifo"] and "special file" in refused["carol/dev"]
    assert [str(f) for f in out.files] == ["dave/solution.py"]
    assert not (tmp_path / "u" / "alice" / "solution.py").exists()


def test_a_symlink_entry_cannot_redirect_a_later_entry(tmp_path):
    z = _zip(
        tmp_path / "c.zip",
        [(_unix("alice", stat.S_IFLNK | 0o777), str(tmp_path / "outside").encode()), ("alice/solution.py", b"x = 1\n")],
    )
    (tmp_path / "outside").mkdir()
    out = unpack_zip(z, tmp_path / "u")
    assert "symbolic link" in _refused(out)["alice"]
    assert list((tmp_path / "outside").iterdir()) == []


def test_duplicate_and_encrypted_entries_are_refused(tmp_path):
    z = tmp_path / "c.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("a.py", b"1")
        with pytest.warns(UserWarning):
            zf.writestr("a.py", b"2")
        info = zipfile.ZipInfo("secret.py")
        zf.writestr(info, b"x")
    # mark the last entry encrypted in both headers (zipfile cannot write encrypted entries)
    data = bytearray(z.read_bytes())
    for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        pos = data.rfind(sig)
        data[pos + off] |= 1
    z.write_bytes(bytes(data))
    out = unpack_zip(z, tmp_path / "u")
    refused = _refused(out)
    assert "same name" in refused["a.py"]
    assert "encrypted" in refused["secret.py"]
    assert (tmp_path / "u" / "a.py").read_bytes() == b"1"


def test_a_zip_bomb_entry_is_refused_by_ratio(tmp_path):
    z = _zip(tmp_path / "c.zip", [("bomb.py", b"\0" * (8 << 20)), ("ok.py", b"x = 1\n")])
    out = unpack_zip(z, tmp_path / "u")
    assert "zip bomb" in _refused(out)["bomb.py"]
    assert [str(f) for f in out.files] == ["ok.py"]


def test_too_many_entries_refuse_the_archive_from_its_end_record(tmp_path):
    z = _zip(tmp_path / "c.zip", [(f"s{i}.py", b"x") for i in range(12)])
    with pytest.raises(IntakeError, match=r"lists 12 entries, more than the class-wide bound of 10"):
        unpack_zip(z, tmp_path / "u", IntakeLimits(max_class_entries=10))


def test_a_zip64_count_is_read_before_zipfile_parses_the_directory(tmp_path, monkeypatch):
    z = _zip(tmp_path / "c.zip", [(f"s{i}", b"") for i in range(0x10000 + 5)])  # past 65535: zip64 records
    assert read_directory(z) is not None and read_directory(z).entries == 0x10000 + 5

    def never(*args, **kwargs):
        raise AssertionError("zipfile parsed a directory the end record already refuses")

    monkeypatch.setattr(zipfile, "ZipFile", never)
    with pytest.raises(IntakeError, match=r"lists 65541 entries"):
        unpack_zip(z, tmp_path / "u", IntakeLimits(max_class_entries=0x10000))


def test_an_end_record_understating_the_count_is_still_caught(tmp_path):
    z = _zip(tmp_path / "c.zip", [(f"s{i}.py", b"x") for i in range(12)])
    data = bytearray(z.read_bytes())
    pos = data.rfind(b"PK\x05\x06")
    data[pos + 8 : pos + 12] = (3).to_bytes(2, "little") * 2  # "3 entries"
    z.write_bytes(bytes(data))
    with pytest.raises(IntakeError, match=r"12 entries.*'s10.py' is the first one over"):
        unpack_zip(z, tmp_path / "u", IntakeLimits(max_class_entries=10))


def test_a_huge_directory_is_refused_before_parsing(tmp_path):
    z = _zip(tmp_path / "c.zip", [("a" * 200 + f"{i}.py", b"x") for i in range(40)])
    with pytest.raises(IntakeError, match=r"its directory takes \d+ bytes, more than the 0 MiB bound"):
        unpack_zip(z, tmp_path / "u", IntakeLimits(max_directory_bytes=4096))


def test_skipped_folders_are_not_counted_nor_unpacked(tmp_path):
    members = [(f"__MACOSX/._s{i}.py", b"junk") for i in range(30)]
    members += [(f"hw1-alice/.git/objects/{i}", b"git") for i in range(30)]
    members += [
        ("hw1-alice/solution.py", b"x = 1\n"),
        ("bob/__pycache__/a.pyc", b"\0"),
        ("bob/.ipynb_checkpoints/s-checkpoint.ipynb", b"{}"),
        ("bob/solution.py", b"y = 2\n"),
    ]
    z = _zip(tmp_path / "c.zip", members)
    out = unpack_zip(z, tmp_path / "u", IntakeLimits(max_student_entries=5, max_class_entries=100))
    assert sorted(map(str, out.files)) == ["bob/solution.py", "hw1-alice/solution.py"]
    assert not out.oversized and out.refused == []
    assert P("hw1-alice/.git") in out.skipped_dirs and not (tmp_path / "u" / "hw1-alice" / ".git").exists()


def test_one_oversized_student_is_named_and_the_others_unpacked(tmp_path):
    members = [(f"carol/data/{i}.txt", b"d") for i in range(20)] + [("alice/solution.py", b"x = 1\n")]
    z = _zip(tmp_path / "c.zip", members)
    out = unpack_zip(z, tmp_path / "u", IntakeLimits(max_student_entries=10))
    assert set(out.oversized) == {P("carol")}
    assert P("alice/solution.py") in out.files
    assert len([f for f in out.files if f.parts[0] == "carol"]) == 10
    root = tmp_path / "cls"
    for i in range(20):
        (root / "carol" / "data").mkdir(parents=True, exist_ok=True)
        (root / "carol" / "data" / f"{i}.txt").write_text("d")
    (root / "alice").mkdir()
    (root / "alice" / "solution.py").write_text("x = 1\n")
    walked = walk_folder(root, IntakeLimits(max_student_entries=10))
    assert set(walked.oversized) == {P("carol")} and P("alice/solution.py") in walked.files


def test_a_folder_past_the_class_wide_bound_is_refused(tmp_path):
    root = tmp_path / "cls"
    root.mkdir()
    for i in range(12):
        (root / f"s{i:02}.py").write_text("x")
    with pytest.raises(IntakeError, match=r"refused at 's10.py': more than the class-wide bound of 10"):
        walk_folder(root, IntakeLimits(max_class_entries=10))


def test_too_much_in_total_refuses_the_archive_naming_the_entry(tmp_path):
    z = _zip(tmp_path / "c.zip", [(f"s{i}.py", os.urandom(4096)) for i in range(5)])
    with pytest.raises(IntakeError, match=r"entry 's2.py'.*MiB unpacked in all"):
        unpack_zip(z, tmp_path / "u", IntakeLimits(max_total_bytes=10_000))


def test_an_entry_lying_about_its_size_is_stopped_while_unpacking(tmp_path):
    z = _zip(tmp_path / "c.zip", [("liar.py", b"a" * 5000)])
    data = bytearray(z.read_bytes())
    # shrink the declared uncompressed size in the central directory and the local header
    for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        pos = data.find(sig)
        data[pos + off : pos + off + 4] = (100).to_bytes(4, "little")
    z.write_bytes(bytes(data))
    # zipfile never yields more than the declared size; the CRC then fails: refused, nothing kept
    out = unpack_zip(z, tmp_path / "u")
    assert "cannot be unpacked" in _refused(out)["liar.py"]
    assert out.files == [] and not (tmp_path / "u" / "liar.py").exists()


def test_not_a_zip_is_one_clear_error(tmp_path):
    p = tmp_path / "c.zip"
    p.write_bytes(b"this is no zip")
    with pytest.raises(IntakeError, match="not a readable zip"):
        unpack_zip(p, tmp_path / "u")


def test_a_folder_walk_refuses_links_and_special_files(tmp_path):
    root = tmp_path / "cls"
    (root / "alice").mkdir(parents=True)
    (root / "alice" / "solution.py").write_text("x = 1\n")
    (root / "bob.py").symlink_to("/etc/passwd")
    (root / "carol").symlink_to(tmp_path)
    os.mkfifo(root / "dave.py")
    out = walk_folder(root)
    refused = _refused(out)
    assert [str(f) for f in out.files] == ["alice/solution.py"]
    assert "symbolic link" in refused["bob.py"] and "symbolic link" in refused["carol"]
    assert "special file" in refused["dave.py"]


def test_a_million_entry_claim_is_refused_from_the_tail_alone(tmp_path, monkeypatch):
    import struct

    # Just the end records of a zip64 archive claiming 10^6 entries in a 46 MB directory.
    eocd64 = struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, 10**6, 10**6, 46 * 10**6, 0)
    locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, 0, 1)
    eocd = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    z = tmp_path / "class.zip"
    z.write_bytes(b"\0" * 100 + eocd64 + locator + eocd)
    monkeypatch.setattr(zipfile, "ZipFile", lambda *a, **k: pytest.fail("zipfile was asked to parse it"))
    with pytest.raises(IntakeError, match=r"lists 1000000 entries, more than the class-wide bound of 100000"):
        unpack_zip(z, tmp_path / "u")
