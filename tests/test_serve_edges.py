# ruff: noqa: F811  (each test takes test_serve's `server` fixture, imported by name below)
"""`serve` at its edges: callers it must not serve, connections that are not requests, and endings
(grader/cli/server_peer.py, grader/cli/server_intake.py, grader/cli/server_grading.py).

The promise (grader/served.py): with a server running, `grade` prints what it prints in its own
process, with the same status; a caller gets nothing through the server that it could not do
itself; no connection holds up another's grading. Each test compares with the same command in
its own process (GRADER_SERVER=off) and checks from the server's log whether it served.
"""

from __future__ import annotations

import os
import resource
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from grader import served
from grader.cli.server_peer import difference
from test_serve import ROOT, assert_same, grade, in_process, server  # noqa: F401  (the fixture, used by name)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="serve needs Linux")

PY = sys.executable
SAMPLE = ("reference/solution.py", "--tests", "sample")


def _run(args: list[str], env: dict, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _refusals(server) -> list[str]:
    return [line for line in server.log.read_text().splitlines() if "not serving a caller" in line]


def test_a_connection_that_trickles_its_header_holds_up_no_one(server):
    """A connection that sends a byte every second never completes its request; a `grade` that
    connects meanwhile is served all the same (before, it waited 10 s and graded alone), and the
    trickling one is closed at its deadline."""
    stop, closed = threading.Event(), threading.Event()

    def trickle() -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(served.socket_path(str(server.directory)))
            s.send(b"\x10")
            while not stop.wait(1.0):
                try:
                    s.send(b"\x00")
                except OSError:
                    closed.set()
                    return

    t = threading.Thread(target=trickle, daemon=True)
    t.start()
    try:
        got = grade(*SAMPLE, env=server.env)
        assert got.returncode == 0, got.stderr
        assert server.gradings() == 1, "the grading waited out its handshake and graded in its own process"
        assert closed.wait(120), "the server kept reading a request that never ends"
    finally:
        stop.set()
        t.join()


def test_silent_connections_hold_up_no_one(server):
    """Connections that send nothing at all (more than the handshake's 10 s would allow, at 5 s
    each, if they were read one after another) do not keep a `grade` from being served."""
    conns = []
    try:
        for _ in range(4):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(served.socket_path(str(server.directory)))
            conns.append(s)
        got = grade(*SAMPLE, env=server.env)
        assert got.returncode == 0, got.stderr
        assert server.gradings() == 1
        for s in conns:
            s.settimeout(120)
            assert s.recv(1) == b"", "a silent connection was answered instead of closed"
    finally:
        for s in conns:
            s.close()


def test_a_request_with_bytes_after_it_is_closed_unanswered(server):
    header = served.request(["grade", *SAMPLE])
    assert header is not None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(served.socket_path(str(server.directory)))
        s.sendall(header + b"extra")
        s.settimeout(120)
        assert s.recv(1) == b""
    assert server.gradings() == 0
    assert grade(*SAMPLE, env=server.env).returncode == 0 and server.gradings() == 1


@pytest.mark.skipif(
    os.getuid() != 0 or shutil.which("setpriv") is None, reason="needs root (CI runs as root) and setpriv"
)
def test_a_caller_without_capabilities_cannot_read_through_the_server(server, tmp_path):
    """A root caller that dropped its capabilities cannot read another user's 0600 file; the
    server (all capabilities) must not read it for it: it refuses, and the caller grades alone."""
    secret = tmp_path / "secret.py"
    secret.write_text("def f(:\n    SECRET = 42\n")
    os.chown(secret, 65534, 65534)
    secret.chmod(0o600)
    tmp_path.chmod(0o755)
    drop = ["setpriv", "--inh-caps=-all", "--bounding-set=-all"]
    assert _run([*drop, "cat", str(secret)], server.env).returncode != 0
    cmd = [*drop, PY, "-m", "grader", "grade", str(secret)]
    served_run, alone = _run(cmd, server.env), _run(cmd, in_process(server.env))
    assert "SECRET" not in served_run.stdout + served_run.stderr
    assert "Permission denied" in alone.stderr
    assert_same(served_run, alone)
    assert server.gradings() == 0 and any("Cap" in line for line in _refusals(server)), _refusals(server)


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux)")
def test_a_caller_with_no_new_privileges_is_not_served(server):
    got = _run(["setpriv", "--no-new-privs", PY, "-m", "grader", "grade", *SAMPLE], server.env)
    assert got.returncode == 0, got.stderr
    assert server.gradings() == 0 and any("NoNewPrivs" in line for line in _refusals(server)), _refusals(server)


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="needs prlimit (util-linux)")
def test_the_callers_resource_limits_bind_its_grading(server, tmp_path):
    """Under RLIMIT_FSIZE of 100 bytes the caller cannot write a 5 kB report; a served grading
    would have (the server's limits): it is refused, and both runs fail alike."""
    out = tmp_path / "v.json"
    cmd = ["prlimit", "--fsize=100", PY, "-m", "grader", "grade", *SAMPLE, "--json", str(out)]
    served_run = _run(cmd, server.env)
    size = out.stat().st_size if out.exists() else 0
    out.unlink(missing_ok=True)
    alone = _run(cmd, in_process(server.env))
    assert size <= 100, f"{size} bytes written past the caller's 100-byte RLIMIT_FSIZE"
    assert_same(served_run, alone)
    assert server.gradings() == 0 and any("resource limits" in line for line in _refusals(server))


@pytest.mark.parametrize("how", ["PYTHONWARNINGS", "-W", "-X"])
def test_the_callers_python_options_are_its_own(server, how):
    """PYTHONWARNINGS=error, -W error, -X dev: interpreter settings a forked server cannot take on;
    such a caller grades in its own process (and prints no warning of the grader's own)."""
    env = {**server.env, "PYTHONWARNINGS": "error"} if how == "PYTHONWARNINGS" else server.env
    opts = {"PYTHONWARNINGS": [], "-W": ["-W", "error"], "-X": ["-X", "dev"]}[how]
    cmd = [PY, *opts, "-m", "grader", "grade", *SAMPLE]
    served_run, alone = _run(cmd, env), _run(cmd, in_process(env))
    assert_same(served_run, alone)
    assert alone.returncode == 0 and "Warning" not in alone.stderr, alone.stderr
    assert server.gradings() == 0 and any("Python" in line for line in _refusals(server)), _refusals(server)


@pytest.mark.parametrize("name", ["numpy.py", "yaml.py", "random.py"])
def test_a_module_beside_the_submission_does_not_replace_the_real_one(server, tmp_path, name):
    """`python -m grader` puts the current folder first on sys.path; the grader takes it off
    (__main__.drop_current_folder), so a learner's numpy.py there is not imported by the grader,
    served or not."""
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(ROOT / "reference" / "solution.py", work / "mine.py")
    (work / name).write_text('raise ImportError("the learner\'s own module")\n')
    args = ("mine.py", "--bundle", str(ROOT), "--tests", "sample")
    served_run, alone = grade(*args, env=server.env, cwd=work), grade(*args, env=in_process(server.env), cwd=work)
    assert alone.returncode == 0, alone.stderr
    assert_same(served_run, alone)
    assert server.gradings() == 1


def _into_closed_pipe(argv: list[str], env: dict) -> subprocess.CompletedProcess:
    r, w = os.pipe()
    os.close(r)
    try:
        return subprocess.run([PY, "-m", "grader", *argv], cwd=ROOT, env=env, stdout=w, stderr=subprocess.PIPE,
                              text=True, timeout=300)  # fmt: skip
    finally:
        os.close(w)


@pytest.mark.parametrize("buffering", ["buffered", "unbuffered"])
def test_a_reader_that_went_away_gets_the_same_status_and_message(server, buffering):
    """Standard output a pipe nobody reads (`grade x | true`): buffered, the flush at the end fails
    (status 120, "could not write the output"); unbuffered (PYTHONUNBUFFERED), the report's write
    fails (an internal error, status 2). Served, the same, in either mode."""
    env = {**server.env, "PYTHONUNBUFFERED": "1"} if buffering == "unbuffered" else dict(server.env)
    if buffering == "buffered":
        env.pop("PYTHONUNBUFFERED", None)
    argv = ["grade", *SAMPLE]
    served_run, alone = _into_closed_pipe(argv, env), _into_closed_pipe(argv, in_process(env))
    assert server.gradings() == 1
    assert alone.returncode == (120 if buffering == "buffered" else 2), alone.stderr
    assert "Broken pipe" in alone.stderr
    assert (served_run.returncode, served_run.stderr) == (alone.returncode, alone.stderr)


def test_debug_shows_the_traceback_when_served(server):
    """`--debug` re-raises a grader fault (here the report's write into a closed pipe): a traceback
    and status 1, served or not."""
    env = {**server.env, "PYTHONUNBUFFERED": "1"}
    argv = ["--debug", "grade", *SAMPLE]
    served_run, alone = _into_closed_pipe(argv, env), _into_closed_pipe(argv, in_process(env))
    assert server.gradings() == 1
    assert alone.returncode == 1 and "Traceback" in alone.stderr and "BrokenPipeError" in alone.stderr
    assert served_run.returncode == 1 and "Traceback" in served_run.stderr, served_run.stderr
    assert "BrokenPipeError" in served_run.stderr


# --- the standing check itself (grader/cli/server_peer.py), on processes of this test ----------------


def _standing_of(cmd: list[str], python: object | None = None, preexec=None) -> str | None:
    proc = subprocess.Popen(cmd, preexec_fn=preexec)  # the process is as preexec made it once Popen returns
    pidfd = os.pidfd_open(proc.pid)
    try:
        return difference(proc.pid, pidfd, served.python_options() if python is None else python)
    finally:
        os.close(pidfd)
        proc.kill()
        proc.wait()


def test_a_process_like_this_one_stands_where_it_stands():
    assert _standing_of(["sleep", "30"]) is None


def test_other_limits_are_another_standing():
    def fewer_files() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    assert "resource limits" in (_standing_of(["sleep", "30"], preexec=fewer_files) or "")


@pytest.mark.parametrize(
    "change, why",
    [
        ({"flags": [9] * len(sys.flags)}, "flags"),
        ({"warnoptions": ["error"]}, "warnoptions"),
        ({"xoptions": {"dev": "True"}}, "xoptions"),
        ({"path": []}, "sys.path"),
        ({"path": "/x"}, "sys.path"),
        ({"path": ["/x", "/elsewhere"]}, "sys.path differs"),
    ],
)
def test_other_python_options_are_another_standing(change, why):
    assert why in (_standing_of(["sleep", "30"], {**served.python_options(), **change}) or "")
    assert "Python options" in (_standing_of(["sleep", "30"], "not a record") or "")


def test_a_first_path_folder_that_shadows_a_loaded_module_is_another_standing(tmp_path):
    mine = served.python_options()
    assert isinstance(mine["path"], list)
    record = {**mine, "path": [str(tmp_path), *mine["path"][1:]]}
    assert _standing_of(["sleep", "30"], record) is None  # an empty folder shadows nothing
    (tmp_path / "json.py").write_text("")
    assert "json.py" in (_standing_of(["sleep", "30"], record) or "")
