"""`python -m grader serve`: a warm grader that `grade` hands its command to (grader/served.py).

The server imports what a grading needs (the grader, NumPy) and keeps one
spare zygote started (sandbox/early.py), then waits. For each `grade` that
connects it checks the caller (same uid, same interpreter and grader copy,
the grader's files unchanged since it started), then forks a process for that
one command: the process takes the caller's folder, environment and
standard streams, runs `cli.main` with the spare zygote, sends the exit
status back and exits. The server itself never opens a bundle, reads a case
or sees a submission, so every grading starts from the same state: the
imports and a fresh zygote, as a cold `grade` does (docs/threat-model.md,
"The grading server").

It exits after `--idle` seconds without a request, on SIGINT or SIGTERM, and
when its grader's files change (it refuses that request first; `grade` then
grades in its own process), removing its socket.
"""

from __future__ import annotations

import os
import select
import shlex
import signal
import socket
import subprocess
import sys
import time
from argparse import Namespace
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from .. import served
from ..sandbox.early import spawn
from ..sandbox.startup import clean_environment, make_parent_nondumpable, pin_single_threaded_blas, strategies
from ..sandbox.untrusted import clean
from .commands import CannotJudge
from .server_grading import Request, Spare, grade_here
from .server_intake import Incoming, accept, expire, feed, next_deadline
from .server_peer import difference

LOG_CAP = 500  # characters of a logged command line
# What a grading imports (its report's modules, the diagnosis's): imported once, here.
WARM_MODULES = (
    "numpy",
    "grader.cli",
    "grader.problem.case_cache",
    "grader.feedback.grade",
    "grader.feedback.diagnose",
    "grader.report.text_report",
    "grader.report.json_report",
    "grader.authoring",
)


class ServerError(Exception):
    """The server cannot start (its folder is not private, another server listens there)."""


@dataclass
class ServerState:
    """What the accept loop keeps between requests."""

    listener: socket.socket
    path: str
    inode: int
    files: dict[str, tuple[int, ...]]
    spare: Spare | None = None
    gradings: dict[int, int] = field(default_factory=dict)  # pid -> pidfd of each grading process
    incoming: list[Incoming] = field(default_factory=list)  # connections whose request is arriving
    log: TextIO | None = None  # where each grading is announced (the server's stderr)


def grader_files() -> dict[str, tuple[int, ...]]:
    """(mtime_ns, ctime_ns, inode, size) of every file of the grader's copy and of every module loaded: what a
    grading runs. Any change means this server would grade with code other than the disk's."""
    paths = {str(p) for p in Path(served.__file__).resolve().parent.rglob("*.py")}
    for module in list(sys.modules.values()):
        name = getattr(module, "__file__", None)
        if isinstance(name, str):
            paths.add(name)
    out = {}
    for p in sorted(paths):
        try:
            st = os.stat(p)
        except OSError:
            continue
        out[p] = _signature(st)
    return out


def _signature(st: os.stat_result) -> tuple[int, ...]:
    """What changes with any write or replacement of a file: its change time too, which an edit
    that keeps the size and restores the modification time (`cp -p`, `touch -r`) cannot keep."""
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_size)


def unchanged(files: dict[str, tuple[int, ...]]) -> bool:
    """Whether every file `grader_files` recorded is still there, as it was."""
    for p, sig in files.items():
        try:
            st = os.stat(p)
        except OSError:
            return False
        if _signature(st) != sig:
            return False
    return True


def open_listener(directory: str) -> tuple[socket.socket, str, int]:
    """Bind this installation's socket in `directory` (created private if missing)."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise ServerError(f"cannot create {directory}: {exc.strerror}") from None
    why = served.private_dir(directory)
    if why:
        raise ServerError(f"will not listen there: {why}")
    path = served.socket_path(directory)
    if len(path.encode()) > 107:
        raise ServerError(f"the socket's path is too long for a Unix socket: {path} (set {served.ENV_DIR})")
    if served.connect(directory) is not None:
        raise ServerError(f"a server is already running at {path}")
    if os.path.lexists(path):
        os.unlink(path)  # a dead server's socket, in this user's private folder
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)
        listener.listen(16)
    except OSError as exc:
        listener.close()
        raise ServerError(f"cannot listen at {path}: {exc.strerror}") from None
    return listener, path, os.lstat(path).st_ino


def new_spare() -> Spare | None:
    """A freshly started zygote, or None (the grading then starts its own, and says why if it cannot)."""
    env = clean_environment()
    spawned, _ = spawn(strategies("auto")[0], sys.executable)
    return Spare(spawned, env) if spawned is not None else None


def cmd_serve(args: Namespace, bundle: object) -> int:
    """`serve`: the server in the foreground, announcing each grading on standard error."""
    if args.bundle or args.step:
        raise CannotJudge("serve takes no --bundle or --step: it serves every bundle, each `grade` names its own")
    try:
        return serve(served.server_dir(), args.idle, announce=sys.stderr)
    except ServerError as exc:
        raise CannotJudge(str(exc)) from None


def serve(directory: str, idle_s: float, announce: TextIO | None = None) -> int:
    """Run the server until it is idle for `idle_s` seconds (0: never), signalled, or stale."""
    pin_single_threaded_blas()
    for name in WARM_MODULES:
        __import__(name)
    listener, path, inode = open_listener(directory)
    make_parent_nondumpable()
    state = ServerState(listener, path, inode, grader_files(), log=announce)
    previous = {s: signal.signal(s, _stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        state.spare = new_spare()
        if announce is not None:
            limit = f"exits after {idle_s:g} s without a grading" if idle_s else "runs until stopped"
            _log(state, f"serving `grade` at {path} ({limit}; Ctrl-C stops it)")
        _loop(state, idle_s)
    except _Stop:
        pass
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        _shut(state)
    return 0


class _Stop(Exception):
    """SIGINT or SIGTERM reached the server."""


def _stop(_signum: int, _frame: object) -> None:
    raise _Stop


def _loop(state: ServerState, idle_s: float) -> None:
    """Accept gradings until idle, stale or stopped; reap each grading process when it ends."""
    last = time.monotonic()
    while True:
        now = time.monotonic()
        wait = 5.0 if not idle_s else max(0.0, idle_s - (now - last))
        if idle_s and wait == 0.0 and not state.gradings and not state.incoming:
            return
        deadline = next_deadline(state.incoming)
        if deadline is not None:
            wait = min(wait, max(0.0, deadline - now))
        watched: list[socket.socket | int | Incoming] = [state.listener, *state.gradings.values(), *state.incoming]
        ready, _, _ = select.select(watched, [], [], wait or 1.0)
        _reap(state)
        if state.spare is None:
            state.spare = new_spare()
        if state.listener in ready:
            last = time.monotonic()
            arrived = accept(state.listener)
            if arrived is not None:
                state.incoming.append(arrived)
        for incoming in [r for r in ready if isinstance(r, Incoming)]:
            if not _read(state, incoming):
                return
        state.incoming = expire(state.incoming, time.monotonic())


def _read(state: ServerState, incoming: Incoming) -> bool:
    """Read what `incoming` sent; once its request is complete, answer it. False: exit (stale)."""
    try:
        header = feed(incoming)
    except ValueError:  # not a request: closed unanswered
        header = None
    else:
        if header is None:  # more to come
            return True
    state.incoming.remove(incoming)
    try:
        return True if header is None else _answer(state, incoming, header)
    finally:
        incoming.close()


def _reap(state: ServerState) -> None:
    """Forget grading processes that ended, and every ended child (a handed-over zygote's too)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        pidfd = state.gradings.pop(pid, None)
        if pidfd is not None:
            os.close(pidfd)


def _answer(state: ServerState, incoming: Incoming, header: Request) -> bool:
    """Fork the grading of a complete request, or refuse it; False when the server must exit (stale)."""
    conn = incoming.conn
    try:
        if header.get("installation") != served.installation() or header.get("protocol") != served.PROTOCOL:
            conn.sendall(served.REFUSED)
            return True
        why = difference(incoming.pid, incoming.pidfd, header.get("python"))
        if why is not None:
            conn.sendall(served.REFUSED)
            _log(state, f"not serving a caller (it grades in its own process): {why}")
            return True
        if not unchanged(state.files):
            conn.sendall(served.REFUSED)
            _log(state, "the grader's files changed since this server started: exiting")
            return False
        _log(state, "grading: " + shlex.join(header["argv"]))
        _fork_grading(state, conn, header)
    except OSError:
        pass
    return True


def _log(state: ServerState, line: str) -> None:
    """One line on the server's own standard error (a caller's arguments made printable)."""
    if state.log is not None:
        print(f"grader serve: {clean(line, LOG_CAP)}", file=state.log, flush=True)


def _fork_grading(state: ServerState, conn: socket.socket, header: Request) -> None:
    """Fork the process that runs this one command; the server keeps only its pidfd."""
    spare, pidfd = _hand_over(state)
    try:
        pid = os.fork()
    except OSError:  # no process to be had: the spare stays unused, and the caller grades in its own
        if pidfd is not None:
            os.close(pidfd)
        state.spare = spare
        raise
    if pid == 0:
        status = 2
        try:
            state.listener.close()
            for other in state.gradings.values():
                os.close(other)
            for waiting in state.incoming:
                waiting.close()
            status = grade_here(conn, header, spare, pidfd)
        finally:
            os._exit(status)
    state.gradings[pid] = os.pidfd_open(pid)
    if spare is not None and pidfd is not None:  # the grading process owns the zygote; we only reap it
        os.close(pidfd)
        spare.spawned.sock.close()
        spare.spawned.errlog.close()
    state.spare = new_spare()  # the next grading's, starting while this one runs (on another core)


def _hand_over(state: ServerState) -> tuple[Spare | None, int | None]:
    """The spare zygote for the grading about to be forked, with a pidfd to know it by there (not
    being its parent); (None, None) when there is none or it has ended (then closed)."""
    spare, state.spare = state.spare, None
    if spare is None or not isinstance(spare.spawned.proc, subprocess.Popen):
        return None, None
    try:
        return spare, os.pidfd_open(spare.spawned.proc.pid)
    except OSError:  # reaped already: the grading starts its own
        spare.spawned.close()
        return None, None


def _shut(state: ServerState) -> None:
    """Close the socket (removing it if it is still ours) and the spare zygote."""
    state.listener.close()
    try:
        if os.lstat(state.path).st_ino == state.inode:
            os.unlink(state.path)
    except OSError:
        pass
    if state.spare is not None:
        state.spare.spawned.close()
        state.spare = None
    for pidfd in state.gradings.values():
        os.close(pidfd)
    for incoming in state.incoming:
        incoming.close()
    state.incoming.clear()
