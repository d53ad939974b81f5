"""grader/judging/paths.py: a path from outside is opened without being fooled.

Real symlinks, FIFOs, sockets and devices on the real filesystem: a symlink is
refused, never followed (to the reference, to a secret, to a folder), a
special file is refused by its type without blocking, and with `within` a
path cannot leave the submission folder, lexically or through a symlinked
folder. The last tests swap a path between a file and a symlink while it is
being read: what is read is always the honest file or a refusal, never the target.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from grader.judging.paths import (
    DIRECTORY,
    ESCAPE,
    LINK,
    MISSING,
    SPECIAL,
    PathRefused,
    open_regular,
    read_regular,
    shown,
)
from grader.judging.source import SubmissionUnreadable, read_submission

REFERENCE = ROOT / "reference" / "solution.py"
SECRET = "root:$6$not-for-students:19000:0:99999:7:::\n"
HONEST = "x = 1\n"


def refused(path, within=None) -> PathRefused:
    with pytest.raises(PathRefused) as info:
        read_regular(path, 1 << 20, within)
    assert "\n" not in info.value.reason
    return info.value


@pytest.fixture
def upload(tmp_path) -> Path:
    """A student's upload folder with one honest file, and a secret outside it."""
    up = tmp_path / "submission"
    up.mkdir()
    (up / "solution.py").write_text(HONEST)
    (tmp_path / "shadow").write_text(SECRET)
    return up


def test_a_regular_file_is_read_with_and_without_within(upload):
    assert read_regular(upload / "solution.py", 100) == HONEST.encode()
    assert read_regular(upload / "solution.py", 100, within=upload) == HONEST.encode()
    assert read_regular(upload / "solution.py", 3) == b"x ="  # bounded
    (upload / "deep" / "er").mkdir(parents=True)
    (upload / "deep" / "er" / "s.py").write_text(HONEST)
    assert read_regular(upload / "deep" / "er" / "s.py", 100, within=upload) == HONEST.encode()


def test_relative_paths_are_relative_to_the_working_folder(upload, monkeypatch):
    monkeypatch.chdir(upload.parent)
    assert read_regular("submission/solution.py", 100, within="submission") == HONEST.encode()
    assert read_regular("./submission/./solution.py", 100, within=str(upload)) == HONEST.encode()


@pytest.mark.parametrize("within", [False, True])
@pytest.mark.parametrize("target", ["reference", "secret", "dangling", "self-loop"])
def test_a_symlinked_file_is_refused_never_followed(upload, within, target):
    link = upload / "link.py"
    link.symlink_to(
        {
            "reference": REFERENCE,
            "secret": upload.parent / "shadow",
            "dangling": upload / "nowhere.py",
            "self-loop": link,
        }[target]
    )
    exc = refused(link, upload if within else None)
    assert exc.kind == LINK and "symbolic link" in exc.reason
    assert "not-for-students" not in exc.reason and str(REFERENCE) not in exc.reason


def test_a_relative_symlink_inside_the_folder_is_refused_too(upload):
    """Even a link to a file of the upload itself: the grader reads only what is there."""
    (upload / "alias.py").symlink_to("solution.py")
    assert refused(upload / "alias.py", upload).kind == LINK


def test_a_symlinked_folder_inside_the_upload_is_refused(upload):
    (upload / "src").symlink_to(REFERENCE.parent)
    exc = refused(upload / "src" / "solution.py", upload)
    assert exc.kind == LINK and "folder src on the way" in exc.reason
    # The operator named it directly: the folders above the file are the operator's.
    assert read_regular(upload / "src" / "solution.py", 1 << 20) == REFERENCE.read_bytes()


@pytest.mark.parametrize("rel", ["../shadow", "sub/../../shadow", "../submission/solution.py"])
def test_dot_dot_cannot_leave_the_upload(upload, rel):
    (upload / "sub").mkdir()
    exc = refused(upload / rel, upload)
    assert exc.kind == ESCAPE and "'..'" in exc.reason and str(upload) not in exc.reason


def test_an_absolute_path_outside_the_upload_is_refused(upload):
    for outside in (upload.parent / "shadow", REFERENCE, Path("/etc/passwd")):
        exc = refused(outside, upload)
        assert exc.kind == ESCAPE and "outside the submission folder" in exc.reason
    assert refused(upload, upload).kind == DIRECTORY
    # A sibling whose name starts like the upload's is outside it too.
    (upload.parent / "submission2").mkdir()
    (upload.parent / "submission2" / "x.py").write_text(HONEST)
    assert refused(upload.parent / "submission2" / "x.py", upload).kind == ESCAPE


def test_special_files_are_refused_by_their_type_without_blocking(upload):
    fifo = upload / "fifo.py"
    os.mkfifo(fifo)  # without a writer, a plain open() would block forever
    exc = refused(fifo, upload)
    assert exc.kind == SPECIAL and "FIFO" in exc.reason
    assert refused(fifo).kind == SPECIAL
    sock_path = upload / "sock.py"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(sock_path))
        assert refused(sock_path, upload).kind == SPECIAL and "socket" in refused(sock_path).reason
    for device in ("/dev/zero", "/dev/null"):
        exc = refused(device)
        assert exc.kind == SPECIAL and "character device" in exc.reason


def test_directories_and_missing_files(upload):
    (upload / "solution.ipynb").mkdir()
    assert refused(upload / "solution.ipynb", upload).kind == DIRECTORY
    assert refused(upload).kind == DIRECTORY
    assert refused(upload / "none.py", upload).kind == MISSING
    assert refused(upload / "solution.py" / "x.py").kind == MISSING  # a file on the way
    assert refused(upload / "no" / "x.py", upload).kind == MISSING
    assert refused(upload / "absent" / "x.py", upload / "absent").kind == MISSING


def test_names_in_messages_cannot_carry_terminal_escapes(upload):
    name = "evil\x1b[2J\x1b[32mAC\u202e.py"
    (upload / name).symlink_to(REFERENCE)
    exc = refused(upload / name, upload)
    assert "\x1b" not in exc.reason and "\u202e" not in exc.reason and "evil?[2J?[32mAC?.py" in exc.reason
    assert len(shown("x" * 1000)) == 200


def test_the_descriptor_is_the_opened_file_and_blocking(upload):
    fd = open_regular(upload / "solution.py", upload)
    try:
        assert os.get_blocking(fd) and os.read(fd, 100) == HONEST.encode()
    finally:
        os.close(fd)


# A separate process, so the swaps really interleave with the reads (a thread would
# mostly wait for the GIL and a check-then-open reader could pass by luck).
SWAPPER = r"""
import os, sys
victim, target, kind = sys.argv[1:4]
honest, bad, real = victim + ".honest", victim + ".bad", victim + ".real"
print("ready", flush=True)
while True:
    if kind == "file":
        with open(honest, "w") as f:
            f.write("x = 1\n")
        os.replace(honest, victim)
        os.symlink(target, bad)
        os.replace(bad, victim)
    else:
        os.rename(victim, real)
        os.symlink(target, victim)
        os.unlink(victim)
        os.rename(real, victim)
"""


def _reads_while_swapping(
    upload: Path, victim: Path, read: Path, target: Path, kind: str, rounds: int = 3000
) -> set[bytes]:
    """Every distinct content read from `read` while another process keeps swapping `victim`
    between the honest thing and a symlink to `target`."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(victim), str(target), kind], stdout=subprocess.PIPE, text=True
    )
    seen = set()
    assert proc.stdout is not None  # stdout=PIPE
    try:
        assert proc.stdout.readline() == "ready\n"
        for _ in range(rounds):
            try:
                seen.add(read_regular(read, 1 << 16, upload))
            except PathRefused as exc:
                assert exc.kind in (LINK, MISSING, "unreadable"), exc.reason
    finally:
        proc.kill()
        proc.wait()
    return seen


def test_a_file_swapped_for_a_symlink_during_reading_never_yields_the_target(upload):
    victim = upload / "solution.py"
    seen = _reads_while_swapping(upload, victim, victim, upload.parent / "shadow", "file")
    assert seen <= {HONEST.encode()}


def test_a_folder_swapped_for_a_symlink_during_reading_never_yields_the_target(upload):
    (upload.parent / "elsewhere").mkdir()
    (upload.parent / "elsewhere" / "solution.py").write_text(SECRET)
    (upload / "src").mkdir()
    (upload / "src" / "solution.py").write_text(HONEST)
    seen = _reads_while_swapping(
        upload, upload / "src", upload / "src" / "solution.py", upload.parent / "elsewhere", "folder"
    )
    assert seen <= {HONEST.encode()}


# --- through read_submission and the CLI: exit 2 for the operator's path, CE inside an upload --------


def test_read_submission_maps_refusals_to_exit_2_or_ce(upload):
    (upload / "link.py").symlink_to(REFERENCE)
    with pytest.raises(SubmissionUnreadable, match="symbolic link"):
        read_submission(upload / "link.py", 65536)
    sub, check = read_submission(upload / "link.py", 65536, within=upload)
    assert sub is None and not check.ok and "symbolic link" in check.message
    with pytest.raises(SubmissionUnreadable, match="no such file"):  # missing stays "cannot judge"
        read_submission(upload / "none.py", 65536, within=upload)


def test_cli_refuses_a_symlink_to_the_reference_with_exit_2(upload):
    (upload / "solution.py").unlink()
    (upload / "solution.py").symlink_to(REFERENCE)
    proc = run_cli("grade", str(upload / "solution.py"), "--tests", "sample")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "symbolic link" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_within_makes_a_symlink_a_compilation_error_and_never_shows_the_target(upload):
    (upload / "solution.py").unlink()
    (upload / "solution.py").symlink_to(upload.parent / "shadow")
    proc = run_cli("grade", str(upload / "solution.py"), "--within", str(upload), "--json", "-")
    assert proc.returncode == 1, proc.stderr
    import json

    doc = json.loads(proc.stdout)
    assert doc["verdict"] == "CE" and "symbolic link" in doc["compile"]["message"]
    assert "not-for-students" not in proc.stdout + proc.stderr


def test_cli_within_refuses_a_path_that_climbs_out(upload):
    proc = run_cli("grade", str(upload / ".." / "shadow"), "--within", str(upload), "--format", "exercism")
    assert proc.returncode == 1, proc.stderr
    assert '"status": "error"' in proc.stdout and "climbs out" in proc.stdout


def test_an_operator_folder_given_with_dot_dot_still_works(upload, monkeypatch):
    monkeypatch.chdir(upload)
    given = f"{upload}/../{upload.name}"
    assert read_regular(f"{given}/solution.py", 100, within=given) == HONEST.encode()
    assert read_regular(upload / "solution.py", 100, within=given) == HONEST.encode()
    assert refused(f"{given}/../shadow", given).kind == ESCAPE
