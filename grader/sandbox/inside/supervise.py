"""Supervising workers: the control channel's framing, the wall-clock limit, reaping and sweeping.

The zygote (zygote.py) forks each worker through `_start_worker` and serves the
grader's requests in `_serve`: up to MAX_WORKERS at once, each with its own
wall-clock deadline; an ended worker is reaped (its rusage is the trusted CPU
time and memory figure) and whatever it left behind is killed. Part of the
code that runs inside the sandbox (grader/sandbox/child.py).
"""
import json
import os
import struct

from .worker import run_worker

SWEEP_ROUNDS = 100


def _send(sock, msg):
    data = json.dumps(msg, separators=(",", ":")).encode("utf-8")
    sock.sendall(struct.pack("<I", len(data)) + data)


def _recv_exact(sock, n):
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _recv(sock):
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
    header = json.loads(_recv_exact(sock, hlen))
    payload = _recv_exact(sock, plen) if plen else b""
    return header, payload, fds


def _reap_all():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return



def _children():
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
    """Kill whatever the worker left behind, when this can be done safely. While workers in
    `spare` still run, only our other children are killed (the grader runs two at once only
    in a PID namespace, with seccomp refusing fork, so the namespace-wide kill of the next
    sweep with none running covers the rest)."""
    import signal
    _kill_descendants(spare)
    if spare:
        return
    if os.getpid() == 1:                     # PID 1 of our own namespace: kill the rest
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
    elif job.get("drop_uid") is not None:    # a uid used by nothing else: kill it all
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
    """Wait for one worker under the wall-clock limit (the zygote runs nothing else meanwhile:
    the probe before the submission has arrived); return its outcome. Requests other than
    "kill" that arrive meanwhile go to `held` if given (else they are dropped)."""
    import select
    import time
    start = time.monotonic()
    worker = {"pid": pid, "id": None, "job": job, "start": start,
              "deadline": start + job["wall_limit_s"], "killed_by": None}
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
    """Fork one worker for `job`, say it started, supervise it alone and send its outcome."""
    pid = _start_worker(job, code, source_lines, payload, fds, sock, np, None)
    _send(sock, {"event": "started"})
    _send(sock, _supervise(pid, job, sock, held))


MAX_WORKERS = 2   # at once; more than one only as PID 1 of our own namespace (see _sweep)


def _start_worker(job, code, source_lines, payload, fds, sock, np, prepared):
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
    import signal
    if worker["killed_by"] is None:
        worker["killed_by"] = why
    for kill, target in ((os.killpg, worker["pid"]), (os.kill, worker["pid"])):
        try:
            kill(target, signal.SIGKILL)
        except OSError:
            pass


def _ended(worker, active):
    """Reap an ended worker, sweep what it left, and say how it ended."""
    import time
    _, status, ru = os.wait4(worker["pid"], 0)
    wall = time.monotonic() - worker["start"]
    _sweep(worker["job"], spare={w["pid"] for w in active.values()})
    return {
        "event": "finished", "id": worker["id"],
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "wall_s": wall,
        "maxrss_kib": ru.ru_maxrss,
        "killed_by": worker["killed_by"],
    }


def _serve(sock, init, code, source_lines, np, prepared):
    """The control loop once the submission is here: a "run" request forks a worker at once
    (up to MAX_WORKERS at a time; each request's "id" comes back with its "started" and
    "finished"), a "kill" ends one (by id) or all, each worker's wall-clock limit is enforced
    here, and an ended worker is reaped and swept."""
    import select
    import time
    active = {}   # pidfd -> the worker's pid, id, job, start, deadline, killed_by
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    try:
        while True:
            now = time.monotonic()
            for worker in active.values():
                if worker["killed_by"] is None and now >= worker["deadline"]:
                    _kill_worker(worker, "wall")
            waits = [w["deadline"] - now for w in active.values() if w["killed_by"] is None]
            events = poller.poll(max(0.0, min(waits)) * 1000 if waits else None)
            for fd, _ in events:
                if fd in active:
                    worker = active.pop(fd)
                    poller.unregister(fd)
                    os.close(fd)
                    _send(sock, _ended(worker, active))
                    continue
                msg, payload, fds = _recv(sock)
                if msg is None or msg.get("op") == "quit":
                    return
                if msg.get("op") == "kill":
                    for fd in fds:
                        os.close(fd)
                    for worker in active.values():
                        if msg.get("id") is None or worker["id"] == msg.get("id"):
                            _kill_worker(worker, msg.get("reason", "parent"))
                    continue
                room = MAX_WORKERS if os.getpid() == 1 else 1
                if msg.get("op") != "run" or len(fds) != 3 or len(active) >= room:
                    for fd in fds:
                        os.close(fd)
                    _send(sock, {"event": "error", "id": msg.get("id"),
                                 "message": "busy" if msg.get("op") == "run" and len(fds) == 3 else "bad request"})
                    continue
                job = dict(init["job"], **msg["job"], zygote_pid=os.getpid())
                job["allowed"] = init["allowed"]
                pid = _start_worker(job, code, source_lines, payload, fds, sock, np, prepared)
                start = time.monotonic()
                pidfd = os.pidfd_open(pid)
                poller.register(pidfd, select.POLLIN)
                active[pidfd] = {"pid": pid, "id": msg.get("id"), "job": job, "start": start,
                                 "deadline": start + job["wall_limit_s"], "killed_by": None}
                _send(sock, {"event": "started", "id": msg.get("id")})
    finally:
        # The grader went away (or this loop failed): end the workers, reap them and sweep what
        # they left, as after every run, before this process ends.
        for worker in active.values():
            _kill_worker(worker, "parent_gone")
        for worker in active.values():
            try:
                os.waitpid(worker["pid"], 0)
            except ChildProcessError:
                pass
        for worker in active.values():
            _sweep(worker["job"])


