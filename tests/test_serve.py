"""`serve` and `grade` through it (grader/served.py, grader/cli/server.py, grader/cli/server_grading.py).

End to end: a real server in a private folder of the test's own, real `grade`
commands beside it, each compared with the same command graded in its own
process (GRADER_SERVER=off). Then the edges: a folder others may enter, a
stale grader, a caller that is not a request, Ctrl-C, a caller or server that
dies, idle exit, and nothing left running afterwards.
"""

from __future__ import annotations

import json
import os
import pty
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from golden import difference
from grader import served
from grader.cli.server_grading import well_formed
from own_processes import left_behind, reaped

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="serve needs Linux (pidfd, SO_PEERCRED)")


class Server:
    """A `python -m grader serve` in `directory`, under the process-tree wrapper, logging to a file."""

    def __init__(self, directory: Path, tmp: Path, *extra: str, cwd: Path = ROOT, env_extra: dict | None = None):
        self.directory, self.report, self.log = directory, tmp / "left.json", tmp / "serve.log"
        self.env = {**os.environ, served.ENV_DIR: str(directory), **(env_extra or {})}
        self.env.pop(served.ENV_SWITCH, None)
        self.killed = False
        cmd = reaped(self.report, [sys.executable, "-m", "grader", "serve", *extra], grace_s=10.0)
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(cmd, cwd=cwd, env=self.env, stdout=subprocess.DEVNULL, stderr=log)

    def wait_ready(self, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        while "serving `grade` at" not in self.log.read_text():
            assert self.proc.poll() is None, f"serve ended early: {self.log.read_text()}"
            assert time.monotonic() < end, "serve did not start"
            time.sleep(0.05)

    def gradings(self) -> int:
        return self.log.read_text().count("grader serve: grading: ")

    def stop(self) -> dict[int, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)
        return left_behind(self.report)


@pytest.fixture
def server(tmp_path):
    directory = tmp_path / "srv"
    directory.mkdir(mode=0o700)
    s = Server(directory, tmp_path)
    s.wait_ready()
    yield s
    assert s.stop() == {}, "serve left processes running"
    if not s.killed:  # a SIGKILLed server cannot remove its socket; the next server replaces it
        assert not os.path.exists(served.socket_path(str(directory))), "serve left its socket"


def grade(*args: str, env: dict, cwd: Path = ROOT, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", "grade", *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=timeout, **kw,
    )  # fmt: skip


def in_process(env: dict) -> dict:
    return {**env, served.ENV_SWITCH: "off"}


def assert_same(a: subprocess.CompletedProcess, b: subprocess.CompletedProcess) -> None:
    """Same status, and the same text apart from a machine's last digits (timings)."""
    assert a.returncode == b.returncode, (a.stderr, b.stderr)
    for mine, theirs in ((a.stdout, b.stdout), (a.stderr, b.stderr)):
        assert difference(theirs, mine) is None, difference(theirs, mine)


@pytest.mark.parametrize(
    "args",
    [
        ("reference/solution.py", "--tests", "sample"),
        ("submissions/wrong_answer/" + sorted(os.listdir(ROOT / "submissions/wrong_answer"))[0],),
        ("submissions/compile_error/" + sorted(os.listdir(ROOT / "submissions/compile_error"))[0],),
        ("submissions/run_time_error/" + sorted(os.listdir(ROOT / "submissions/run_time_error"))[0],),
        ("reference/solution.py", "--tests", "practice", "--verbose"),
        ("no/such/file.py",),
        ("reference/solution.py", "--tests", "bogus"),
        ("--help",),
        ("reference/solution.py", "--isolation", "plain", "--tests", "sample"),
    ],
    ids=["ac", "wa", "ce", "re", "verbose", "missing", "bad-option", "help", "plain"],
)
def test_a_served_grading_prints_what_grading_in_process_prints(server, args):
    before = server.gradings()
    served_run = grade(*args, env=server.env)
    assert server.gradings() == before + 1, "the server did not take the grading"
    assert_same(served_run, grade(*args, env=in_process(server.env)))


def test_the_callers_folder_environment_and_report_file_are_the_callers(server, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(ROOT / "reference" / "solution.py", work / "mine.py")
    env = {**server.env, "COLUMNS": "61"}
    args = ("mine.py", "--bundle", str(ROOT), "--tests", "sample", "--json", "out.json")
    got = grade(*args, env=env, cwd=work)
    assert got.returncode == 0, got.stderr
    report = json.loads((work / "out.json").read_text())
    assert report["verdict"] == "AC"
    assert max(len(line) for line in got.stdout.splitlines()) <= 61
    (work / "out.json").unlink()
    assert_same(got, grade(*args, env=in_process(env), cwd=work))
    assert server.gradings() == 1


def test_a_terminal_gets_the_same_colours_as_in_process(server):
    def on_terminal(env: dict) -> bytes:
        pid, fd = pty.fork()
        if pid == 0:
            os.chdir(ROOT)
            os.execve(sys.executable, [sys.executable, "-m", "grader", "grade", "reference/solution.py",
                                       "--tests", "sample"], env)  # fmt: skip
        out = b""
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.waitpid(pid, 0)
        os.close(fd)
        return out

    env = {k: v for k, v in server.env.items() if k not in ("NO_COLOR", "COLUMNS")} | {"TERM": "xterm"}
    mine = on_terminal(env)
    assert b"\x1b[" in mine, "no colour on a terminal"
    assert mine == on_terminal(in_process(env))
    assert server.gradings() == 1


def test_two_gradings_at_once_both_get_their_own_answer(server):
    wa = "submissions/wrong_answer/" + sorted(os.listdir(ROOT / "submissions/wrong_answer"))[0]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "grader", "grade", f, "--tests", "sample"],
            cwd=ROOT,
            env=server.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for f in ("reference/solution.py", wa)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 1], outs
    assert "AC  Accepted" in outs[0][0] and "Accepted" not in outs[1][0].splitlines()[0]
    assert server.gradings() == 2


@pytest.mark.parametrize("fd", [0, 1, 2])
@pytest.mark.parametrize("switch", ["on", "off"])
def test_a_closed_standard_stream_is_dev_null_served_or_not(server, tmp_path, fd, switch):
    out = tmp_path / "v.json"
    env = server.env if switch == "on" else in_process(server.env)
    got = subprocess.run(
        [sys.executable, "-m", "grader", "grade", "reference/solution.py", "--tests", "sample", "--json", str(out)],
        cwd=ROOT, env=env, capture_output=True, preexec_fn=lambda: os.close(fd), timeout=120,
    )  # fmt: skip
    assert got.returncode == 0, got.stderr
    assert json.loads(out.read_text())["verdict"] == "AC"
    assert got.stdout == (b"" if fd == 1 else got.stdout) and (fd == 1 or b"AC  Accepted" in got.stdout)
    assert got.stderr == b""
    assert server.gradings() == (1 if switch == "on" else 0)


LOOP = "submissions/time_limit_exceeded/infinite_loop.py"


def _started_grading(server: Server, p: subprocess.Popen) -> None:
    """Wait until the server took `p`'s grading, and a little more: into its runs."""
    deadline = time.monotonic() + 60
    while server.gradings() == 0:
        assert time.monotonic() < deadline and p.poll() is None
        time.sleep(0.05)
    time.sleep(0.5)


def test_ctrl_c_interrupts_the_served_grading_and_ends_its_sandbox(server):
    p = subprocess.Popen([sys.executable, "-m", "grader", "grade", LOOP], cwd=ROOT, env=server.env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    _started_grading(server, p)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 2, (out, err)
    assert err == "grader: interrupted\n"
    _no_grading_left(server)


def test_a_caller_that_dies_takes_its_grading_with_it(server):
    p = subprocess.Popen([sys.executable, "-m", "grader", "grade", LOOP], cwd=ROOT, env=server.env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    _started_grading(server, p)
    p.kill()
    p.wait()
    _no_grading_left(server)


def _no_grading_left(server: Server) -> None:
    """Within 30 s, nothing below the server but itself and its spare zygote."""
    deadline = time.monotonic() + 30
    while _grading_processes(server.proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _grading_processes(server.proc.pid)


def _server_pid(wrapper: int) -> int:
    """The server: the wrapper's child that runs `serve` (the gradings it forks run the same command
    line, one level down; an orphaned zygote the wrapper adopted as a subreaper runs another)."""
    from own_processes import cmdline

    with open(f"/proc/{wrapper}/task/{wrapper}/children") as f:
        kids = [int(p) for p in f.read().split() if b"grader\0serve" in cmdline(int(p))]
    assert len(kids) == 1, kids
    return kids[0]


def _grading_processes(wrapper: int) -> set[int]:
    """What runs below the server beyond its spare zygote's process (`unshare`) and the zygote in it."""
    from own_processes import cmdline, descendants

    below = descendants(_server_pid(wrapper))
    forked = {p for p in below if b"grader\0serve" in cmdline(p)}
    unshares = {p for p in below if cmdline(p).startswith(b"/usr/bin/unshare")}
    return forked | (unshares if len(unshares) > 1 else set())


def test_a_stale_grader_is_refused_and_the_server_exits(tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "grader", copy / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    directory = tmp_path / "srv"
    directory.mkdir(mode=0o700)
    s = Server(directory, tmp_path, cwd=copy, env_extra={"PYTHONPATH": str(copy)})
    s.wait_ready()
    env = {**s.env}
    args = ("reference/solution.py", "--bundle", str(ROOT), "--tests", "sample")
    assert grade(*args, env=env, cwd=ROOT / "..").returncode in (0, 2)  # cwd outside the checkout: the copy runs
    first = s.gradings()
    assert first == 1, s.log.read_text()
    target = copy / "grader" / "judging" / "verdict.py"
    target.write_text(target.read_text() + "\n# changed\n")
    again = grade(*args, env=env, cwd=ROOT / "..")
    assert again.returncode in (0, 2)
    s.proc.wait(timeout=60)
    assert "files changed" in s.log.read_text()
    assert s.gradings() == 1
    assert s.stop() == {}
    assert not os.path.exists(served.socket_path(str(directory)))


def test_a_folder_others_may_enter_is_never_used(tmp_path):
    directory = tmp_path / "open"
    directory.mkdir()
    directory.chmod(0o755)
    s = Server(directory, tmp_path)
    assert s.proc.wait(timeout=60) == 2
    assert "may be entered by other users" in s.log.read_text()
    assert served.private_dir(str(directory)) is not None
    link = tmp_path / "link"
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    link.symlink_to(private)
    assert "not a folder" in (served.private_dir(str(link)) or "")
    assert served.connect(str(link)) is None


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to make a folder another user's")
def test_a_folder_of_another_user_is_never_used(tmp_path):
    directory = tmp_path / "theirs"
    directory.mkdir(mode=0o700)
    os.chown(directory, 65534, 65534)
    assert "another user" in (served.private_dir(str(directory)) or "")
    s = Server(directory, tmp_path)
    assert s.proc.wait(timeout=60) == 2


def test_a_second_server_is_refused(server, tmp_path):
    (tmp_path / "second").mkdir()
    second = Server(server.directory, tmp_path / "second")
    assert second.proc.wait(timeout=60) == 2
    assert "already running" in second.log.read_text()
    assert grade("reference/solution.py", "--tests", "sample", env=server.env).returncode == 0
    assert server.gradings() == 1


def test_a_dead_servers_socket_is_replaced(tmp_path):
    directory = tmp_path / "srv"
    directory.mkdir(mode=0o700)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(served.socket_path(str(directory)))
    dead.close()  # the file stays; nothing listens
    env = {**os.environ, served.ENV_DIR: str(directory)}
    assert grade("reference/solution.py", "--tests", "sample", env=env).returncode == 0
    s = Server(directory, tmp_path)
    s.wait_ready()
    assert grade("reference/solution.py", "--tests", "sample", env=s.env).returncode == 0
    assert s.gradings() == 1
    assert s.stop() == {}


@pytest.mark.parametrize(
    "payload",
    [b"", b"garbage", b"\xff\xff\xff\xff", served.PREFIX.pack(10) + b'{"a": 1}xx', served.PREFIX.pack(1 << 30)],
    ids=["nothing", "garbage", "huge-length", "not-a-request", "claims-1GB"],
)
def test_a_connection_that_is_not_a_request_is_dropped_and_the_server_goes_on(server, payload):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(served.socket_path(str(server.directory)))
        if payload:
            fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(4)]
            socket.send_fds(s, [payload], fds)
            for fd in fds:
                os.close(fd)
        s.shutdown(socket.SHUT_WR)
        s.settimeout(30)
        try:
            assert s.recv(1) == b""  # closed without a word
        except ConnectionResetError:  # closed with bytes of ours unread
            pass
    assert grade("reference/solution.py", "--tests", "sample", env=server.env).returncode == 0
    assert server.gradings() == 1


def test_another_installation_is_refused(server, monkeypatch):
    path = served.socket_path(str(server.directory))
    monkeypatch.setattr(served, "installation", lambda: "/elsewhere/python\0/elsewhere/grader")
    data = served.request(["grade", "reference/solution.py"])
    assert data is not None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        sock.sendall(data)
        sock.settimeout(30)
        assert sock.recv(1) == served.REFUSED
    assert server.gradings() == 0
    assert grade("reference/solution.py", "--tests", "sample", env=server.env).returncode == 0
    assert server.gradings() == 1, "a refused caller stops nothing"


def test_the_server_exits_when_idle_and_removes_its_socket(tmp_path):
    directory = tmp_path / "srv"
    directory.mkdir(mode=0o700)
    s = Server(directory, tmp_path, "--idle", "1")
    s.wait_ready()
    assert s.proc.wait(timeout=60) == 0
    assert s.stop() == {}
    assert not os.path.exists(served.socket_path(str(directory)))
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700


@pytest.mark.parametrize("idle", ["-1", "nan", "inf", "soon"])
def test_a_bad_idle_is_a_usage_error(idle, tmp_path):
    got = subprocess.run([sys.executable, "-m", "grader", "serve", "--idle", idle], capture_output=True, text=True,
                         env={**os.environ, served.ENV_DIR: str(tmp_path)}, timeout=60)  # fmt: skip
    assert got.returncode == 2 and "--idle" in got.stderr and got.stderr.count("\n") == 1


def test_a_killed_server_lets_the_grading_it_forked_finish(server, tmp_path):
    p = subprocess.Popen([sys.executable, "-m", "grader", "grade", "reference/solution.py"], cwd=ROOT,
                         env=server.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while server.gradings() == 0:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.kill(_server_pid(server.proc.pid), signal.SIGKILL)
    server.killed = True
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0 and "AC  Accepted" in out, err
    after = grade("reference/solution.py", "--tests", "sample", env=server.env)  # its socket is still there
    assert after.returncode == 0 and "AC  Accepted" in after.stdout and after.stderr == ""


GOOD = {"umask": 0o022, "argv": ["grade"], "argv0": "g", "env": {"A": "1"},
        "streams": {"stdout": ["utf-8", "strict", False, False],
                    "stderr": ["utf-8", "replace", True, True]}}  # fmt: skip


@pytest.mark.parametrize(
    "change",
    [
        {"argv": "grade"},
        {"argv": ["grade", 1]},
        {"argv0": None},
        {"env": {"A=B": "1"}},
        {"env": {"": "1"}},
        {"env": {"A": 1}},
        {"env": []},
        {"streams": {"stdout": ["u"], "stderr": ["a", "b"]}},
        {"streams": {"stdout": ["u", "s"]}},
        {"streams": {"stdout": ["utf-8", "strict"], "stderr": ["utf-8", "strict"]}},
        {"streams": {"stdout": ["utf-8", "strict", 0, False], "stderr": ["utf-8", "strict", True, True]}},
        {"streams": {"stdout": ["no-such-codec", "strict", False, False], "stderr": ["utf-8", "strict", True, True]}},
        {"streams": {"stdout": ["utf-8", "no-such-handler", False, False], "stderr": ["utf-8", "strict", True, True]}},
        {"umask": -1},
        {"umask": 0o1000},
        {"umask": True},
        {"umask": "022"},
    ],
)
def test_a_malformed_header_is_not_a_request(change):
    assert well_formed(GOOD)
    assert not well_formed({**GOOD, **change})
    assert not well_formed([GOOD])


def test_a_well_formed_header_is_a_request():
    data = served.request(["grade", "x.py"])
    assert data is not None
    assert well_formed(json.loads(data[served.PREFIX.size :]))


def test_the_server_folder_follows_the_environment():
    assert served.server_dir({served.ENV_DIR: "/x/y"}) == "/x/y"
    assert served.server_dir({"XDG_RUNTIME_DIR": "/run/user/7"}) == "/run/user/7/vit-grader"
    assert served.server_dir({"XDG_RUNTIME_DIR": "relative"}) == f"/tmp/vit-grader-{os.getuid()}"
    assert served.server_dir({}) == f"/tmp/vit-grader-{os.getuid()}"


def test_the_callers_umask_is_the_grading_s(server, tmp_path):
    for mode in (0o077, 0o002):
        out = tmp_path / f"v{mode:o}.json"
        got = subprocess.run(
            [sys.executable, "-m", "grader", "grade", "reference/solution.py", "--tests", "sample", "--json", str(out)],
            cwd=ROOT, env=server.env, capture_output=True, preexec_fn=lambda m=mode: os.umask(m), timeout=120,
        )  # fmt: skip
        assert got.returncode == 0, got.stderr
        mine = stat.S_IMODE(os.stat(out).st_mode)
        out.unlink()
        alone = subprocess.run(
            [sys.executable, "-m", "grader", "grade", "reference/solution.py", "--tests", "sample", "--json", str(out)],
            cwd=ROOT, env=in_process(server.env), preexec_fn=lambda m=mode: os.umask(m), timeout=120,
        )  # fmt: skip
        assert alone.returncode == 0
        assert mine == stat.S_IMODE(os.stat(out).st_mode)
        assert mine & mode == 0
    assert server.gradings() == 2


def _session(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[3])  # state, ppid, pgrp, session


def test_a_grading_is_out_of_reach_of_the_servers_terminal(server):
    p = subprocess.Popen([sys.executable, "-m", "grader", "grade", LOOP], cwd=ROOT, env=server.env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    _started_grading(server, p)
    from own_processes import cmdline, descendants

    server_pid = _server_pid(server.proc.pid)
    gradings = [q for q in descendants(server_pid) if b"grader\0serve" in cmdline(q)]
    assert gradings, "no grading process"
    assert all(_session(q) != _session(server_pid) for q in gradings)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 1 and "TLE" in out, err


def test_a_stopped_server_is_given_up_on_and_never_prints_twice(server, tmp_path):
    server_pid = _server_pid(server.proc.pid)
    os.kill(server_pid, signal.SIGSTOP)
    try:
        with open(tmp_path / "out", "w") as out:
            started = time.monotonic()
            got = subprocess.run(
                [sys.executable, "-m", "grader", "grade", "reference/solution.py", "--tests", "sample"],
                cwd=ROOT, env=server.env, stdout=out, stderr=subprocess.PIPE, text=True, timeout=120,
            )  # fmt: skip
        assert got.returncode == 0 and got.stderr == ""
        assert time.monotonic() - started >= served.HANDSHAKE_S
    finally:
        os.kill(server_pid, signal.SIGCONT)
    deadline = time.monotonic() + 30
    while server.gradings() == 0 and time.monotonic() < deadline:  # it takes the queued request now
        time.sleep(0.1)
    time.sleep(2.0)  # time enough for a grading it should not run
    assert (tmp_path / "out").read_text().count("AC  Accepted") == 1


@pytest.mark.parametrize("option", [["--bundle", "."], ["--step", "1"]])
def test_serve_names_no_bundle(option, tmp_path):
    got = subprocess.run([sys.executable, "-m", "grader", "serve", *option], capture_output=True, text=True,
                         env={**os.environ, served.ENV_DIR: str(tmp_path)}, timeout=60)  # fmt: skip
    assert got.returncode == 2 and "serves every bundle" in got.stderr and got.stderr.count("\n") == 1
    assert not os.listdir(tmp_path)


def test_a_spare_that_died_is_not_handed_over(tmp_path):
    from grader.cli import server as srv

    spare = srv.new_spare()
    assert spare is not None
    proc = spare.spawned.proc
    assert isinstance(proc, subprocess.Popen)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    state = srv.ServerState(listener, str(tmp_path / "s"), 0, {}, spare=spare)
    assert srv._hand_over(state) == (None, None)
    assert state.spare is None and spare.spawned.sock.fileno() == -1
    live = srv.new_spare()
    assert live is not None
    state.spare = live
    handed, pidfd = srv._hand_over(state)
    assert handed is live and isinstance(pidfd, int) and state.spare is None
    os.close(pidfd)
    live.spawned.close()
    listener.close()
