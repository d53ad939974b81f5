"""Supervising workers: the control channel's framing, the wall-clock limit, reaping and sweeping.

The zygote (zygote.py) forks each worker through `_start_worker` and serves the
grader's requests in `_serve`: up to MAX_WORKERS at once, each with its own
wall-clock deadline; an ended worker is reaped (its rusage is the trusted CPU
time and memory figure) and whatever it left behind is killed. Part of the
code that runs inside the sandbox (grader/sandbox/child.py).

The frames between the script's start and a worker's run_worker (zygote_main,
_serve, _start_worker) are part of every deep recursion's report (worker.py,
run_worker): _serve forks the worker itself, not through a helper.
"""

import json
import os
import struct

from .worker import run_worker

# Names for the type checker only, which the script leaves out (script.py); typing is not imported.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import select  # noqa: F401 - used in type comments
    import socket  # noqa: F401 - used in type comments
    from collections.abc import Collection  # noqa: F401 - used in type comments
    from types import CodeType, ModuleType  # noqa: F401 - used in type comments
    from typing import Any, TypedDict

    from .seccomp import Prepared  # noqa: F401 - used in type comments
    from .worker import Job

    Message = dict[str, Any]  # a control message, either way
    Held = tuple[Message, bytes, list[int]]  # a request received while the probe ran: (header, payload, fds)

    class Worker(TypedDict):
        """A worker being supervised."""

        pid: int
        id: int | None  # the request's id, repeated in "started" and "finished"
        job: Job
        start: float  # time.monotonic() when it was forked
        deadline: float  # of the wall-clock limit
        killed_by: str | None  # "wall", "output", "parent", "parent_gone"


SWEEP_ROUNDS = 100


def _send(sock, msg):
    # type: (socket.socket, Message) -> None
    # One message: its length (u32, little-endian), then JSON.
    data = json.dumps(msg, separators=(",", ":")).encode("utf-8")
    sock.sendall(struct.pack("<I", len(data)) + data)


def _recv_exact(sock, n):
    # type: (socket.socket, int) -> bytes | None
    # Exactly `n` bytes, or None at EOF.
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _recv(sock):
    # type: (socket.socket) -> tuple[Message | None, bytes, list[int]]
    """One message: (header dict, payload bytes, fds); (None, b"", []) at EOF."""
    import socket as _socket

    head, fds, _flags, _addr = _socket.recv_fds(sock, 8, 8)
    if not head:
        return None, b"", []
    if len(head) < 8:
        rest = _recv_exact(sock, 8 - len(head))
        if rest is None:
            return None, b"", []
        head += rest
    hlen, plen = struct.unpack("<II", head)
    # EOF within a message (the grader died mid-send) is not reported as EOF: json.loads(None)
    # raises TypeError, which ends the zygote, and a payload of None fails a worker's setup (112).
    header = json.loads(_recv_exact(sock, hlen))  # type: ignore[arg-type]  # None at EOF: see above
    payload = _recv_exact(sock, plen) if plen else b""
    return header, payload, fds  # type: ignore[return-value]  # payload None at EOF: see above


def _reap_all():
    # type: () -> None
    # Reap every child that has ended, without waiting for the others.
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _children():
    # type: () -> list[int]
    """PIDs of this process's children (orphans re-parent here: we are a subreaper)."""
    pids = []
    try:
        for tid in os.listdir(f"/proc/{os.getpid()}/task"):
            with open(f"/proc/{os.getpid()}/task/{tid}/children", "rb") as f:
                pids += [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        pass
    return pids


def _kill_descendants(spare=()):
    # type: (Collection[int]) -> None
    """SIGKILL every descendant but the workers in `spare` (still running), round after
    round, until none is left.

    Needed where neither a PID namespace nor a private uid can sweep (plain
    mode as an ordinary user), and while another worker runs (then nothing
    wider may be killed): a setsid()'d grandchild leaves our process group,
    but as a subreaper we still inherit it when its parent dies.
    """
    import signal

    for _ in range(SWEEP_ROUNDS):
        pids = [pid for pid in _children() if pid not in spare]
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in pids:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _sweep(job, spare=()):
    # type: (Job, Collection[int]) -> None
    """Kill whatever the worker left behind, when this can be done safely. While workers in
    `spare` still run, only our other children are killed (the grader runs several at once only
    in a PID namespace, with seccomp refusing fork, so the namespace-wide kill of the next
    sweep with none running covers the rest)."""
    import signal

    _kill_descendants(spare)
    if spare:
        return
    if os.getpid() == 1:  # PID 1 of our own namespace: kill the rest
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
    elif job.get("drop_uid") is not None:  # a uid used by nothing else: kill it all
        pid = os.fork()
        if pid == 0:
            try:
                os.setresuid(job["drop_uid"], job["drop_uid"], job["drop_uid"])
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
            os._exit(0)
        os.waitpid(pid, 0)
    _reap_all()


def _supervise(pid, job, sock, held=None):
    # type: (int, Job, socket.socket, list[Held] | None) -> Message
    """Wait for one worker under the wall-clock limit (the zygote runs nothing else meanwhile:
    the probe before the submission has arrived); return its outcome. Requests other than
    "kill" that arrive meanwhile go to `held` if given (else they are dropped)."""
    import select
    import time

    start = time.monotonic()
    worker = {
        "pid": pid,
        "id": None,
        "job": job,
        "start": start,
        "deadline": start + job["wall_limit_s"],
        "killed_by": None,
    }  # type: Worker
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    poller.register(sock.fileno(), select.POLLIN)
    try:
        while True:
            remaining = worker["deadline"] - time.monotonic()
            if remaining <= 0:
                _kill_worker(worker, "wall")
                break
            events = poller.poll(remaining * 1000)
            if any(fd == pidfd for fd, _ in events):
                break
            if any(fd == sock.fileno() for fd, _ in events):
                msg, payload, fds = _recv(sock)
                if msg is not None and msg.get("op") != "kill" and held is not None:
                    held.append((msg, payload, fds))
                    continue
                for fd in fds:
                    os.close(fd)
                _kill_worker(worker, "parent_gone" if msg is None else msg.get("reason", "parent"))
                break
    finally:
        os.close(pidfd)
    return _ended(worker, {})


def _run_job(job, code, source_lines, payload, fds, sock, np, held=None):
    # type: (Job, CodeType | None, list[str], bytes, list[int], socket.socket, ModuleType, list[Held] | None) -> None
    """Fork one worker for `job`, say it started, supervise it alone and send its outcome."""
    pid = _start_worker(job, code, source_lines, payload, fds, sock, np, None)
    _send(sock, {"event": "started"})
    _send(sock, _supervise(pid, job, sock, held))


MAX_WORKERS = 3  # at once; more than one only as PID 1 of our own namespace (see _sweep)


def _start_worker(job, code, source_lines, payload, fds, sock, np, prepared):
    # type: (Job, CodeType | None, list[str], bytes, list[int], socket.socket, ModuleType, Prepared | None) -> int
    """Fork one worker for `job`; our copies of its pipe ends are closed. Its pid."""
    pid = os.fork()
    if pid == 0:
        try:
            sock.close()
            run_worker(job, code, source_lines, payload, fds, np, prepared)
        finally:
            os._exit(114)  # whatever escapes (a signal handler raising in harness code): never the zygote loop
    for fd in fds:
        os.close(fd)
    return pid


def _kill_worker(worker, why):
    # type: (Worker, str) -> None
    # SIGKILL a worker and its process group; the first reason given is the one reported.
    import signal

    if worker["killed_by"] is None:
        worker["killed_by"] = why
    for kill, target in ((os.killpg, worker["pid"]), (os.kill, worker["pid"])):
        try:
            kill(target, signal.SIGKILL)
        except OSError:
            pass


def _ended(worker, active):
    # type: (Worker, dict[int, Worker]) -> Message
    """Reap an ended worker, sweep what it left, and say how it ended."""
    import time

    _, status, ru = os.wait4(worker["pid"], 0)
    wall = time.monotonic() - worker["start"]
    _sweep(worker["job"], spare={w["pid"] for w in active.values()})
    return {
        "event": "finished",
        "id": worker["id"],
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "wall_s": wall,
        "maxrss_kib": ru.ru_maxrss,
        "killed_by": worker["killed_by"],
    }


def _serve(sock, init, code, source_lines, np, prepared):
    # type: (socket.socket, Message, CodeType, list[str], ModuleType, Prepared | None) -> None
    """The control loop once the submission is here: a "run" request forks a worker at once
    (up to MAX_WORKERS at a time; each request's "id" comes back with its "started" and
    "finished"), a "kill" ends one (by id) or all, each worker's wall-clock limit is enforced
    here, and an ended worker is reaped and swept."""
    import select

    active = {}  # type: dict[int, Worker]  # by pidfd
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    try:
        while True:
            for fd, _ in _wait(poller, active):
                if fd in active:
                    _send(sock, _reap(poller, active, fd))
                    continue
                msg, payload, fds = _recv(sock)
                if msg is None or msg.get("op") == "quit":
                    return
                job = _admit(sock, init, msg, fds, active)
                if job is not None:
                    pid = _start_worker(job, code, source_lines, payload, fds, sock, np, prepared)
                    _watch(poller, active, pid, msg.get("id"), job)
                    _send(sock, {"event": "started", "id": msg.get("id")})
    finally:
        _end_all(active)


def _wait(poller, active):
    # type: (select.poll, dict[int, Worker]) -> list[tuple[int, int]]
    # Kill every worker past its wall-clock deadline, then wait for the next event, at most
    # until the next deadline.
    import time

    now = time.monotonic()
    for worker in active.values():
        if worker["killed_by"] is None and now >= worker["deadline"]:
            _kill_worker(worker, "wall")
    waits = [w["deadline"] - now for w in active.values() if w["killed_by"] is None]
    return poller.poll(max(0.0, min(waits)) * 1000 if waits else None)


def _reap(poller, active, pidfd):
    # type: (select.poll, dict[int, Worker], int) -> Message
    # The "finished" report of the worker whose pidfd is readable, which is no longer supervised.
    worker = active.pop(pidfd)
    poller.unregister(pidfd)
    os.close(pidfd)
    return _ended(worker, active)


def _admit(sock, init, msg, fds, active):
    # type: (socket.socket, Message, Message, list[int], dict[int, Worker]) -> Job | None
    # The job of a "run" request that may start now. Any other request is served here
    # (None): a "kill", or a refusal ("busy" beyond the workers allowed at once, "bad request").
    if msg.get("op") == "kill":
        for fd in fds:
            os.close(fd)
        for worker in active.values():
            if msg.get("id") is None or worker["id"] == msg.get("id"):
                _kill_worker(worker, msg.get("reason", "parent"))
        return None
    room = MAX_WORKERS if os.getpid() == 1 else 1
    passed = len(fds) in (3, 4)  # the worker's three pipe ends, and a large case's bytes (wire.py)
    if msg.get("op") != "run" or not passed or len(active) >= room:
        for fd in fds:
            os.close(fd)
        _send(
            sock,
            {
                "event": "error",
                "id": msg.get("id"),
                "message": "busy" if msg.get("op") == "run" and passed else "bad request",
            },
        )
        return None
    job = dict(init["job"], **msg["job"], zygote_pid=os.getpid())
    job["allowed"] = init["allowed"]
    return job


def _watch(poller, active, pid, rid, job):
    # type: (select.poll, dict[int, Worker], int, int | None, Job) -> None
    # Supervise the worker just forked: its pidfd polled, its wall-clock deadline from now.
    import select
    import time

    start = time.monotonic()
    pidfd = os.pidfd_open(pid)
    poller.register(pidfd, select.POLLIN)
    active[pidfd] = {
        "pid": pid,
        "id": rid,
        "job": job,
        "start": start,
        "deadline": start + job["wall_limit_s"],
        "killed_by": None,
    }


def _end_all(active):
    # type: (dict[int, Worker]) -> None
    # The grader went away (or the control loop failed): end the workers, reap them and sweep
    # what they left, as after every run, before this process ends.
    for worker in active.values():
        _kill_worker(worker, "parent_gone")
    for worker in active.values():
        try:
            os.waitpid(worker["pid"], 0)
        except ChildProcessError:
            pass
    for worker in active.values():
        _sweep(worker["job"])
