"""Running one process per submission, in parallel, and killing all of it on demand.

Each task runs in a forked child (so the test cases and the speed probe the
parent prepared are shared, not re-read), in its own process group, with
SIGINT ignored: Ctrl-C reaches the batch, which then ends every child
itself. A child's grading starts sandbox zygotes in sessions of their own,
out of reach of any signal sent to the child's group, so ending a child is:

1. SIGTERM to its group: the child's handler raises SystemExit, and every
   `with Sandbox` it is in kills its zygote's group on the way out;
2. after a grace period, SIGSTOP the child, SIGKILL the group of each of its
   direct children (the zygotes, or `unshare` holding them) and then the
   child's own group;
3. whatever was a child of a child when the batch began to stop (read from
   /proc) and still exists afterwards is killed too.

The result of a task travels back as one JSON object on a pipe; a child that
dies without writing one, or runs past `timeout_s`, yields an error result.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any, NoReturn

GRACE_S = 5.0
# A result carries the similarity fingerprint: about 0.5 MiB for the most varied 64 KiB source.
MAX_RESULT = 4 << 20


class Interrupted(Exception):
    """The batch was asked to stop (SIGINT, SIGTERM or SIGHUP)."""


@dataclass
class _Running:
    index: int
    pid: int
    fd: int
    started: float
    data: bytearray


def _children_of(pid: int) -> list[int]:
    """Direct children of `pid`, from /proc (Linux); empty elsewhere."""
    out: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and fields[1] == str(pid):
            out.append(int(name))
    return out


def _start_time(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except OSError:
        pass


def _reap(pid: int, timeout: float) -> bool:
    """Wait up to `timeout` for `pid` to end; True once it is reaped."""
    deadline = time.monotonic() + timeout
    pause = 0.0005  # a child that closed its pipe is usually gone within a millisecond
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return True
        if done:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(0.02, pause * 2)


def stop_children(pids: Sequence[int], grace_s: float = GRACE_S) -> None:
    """End each child, its process group and the sandboxes it started (see the module docstring)."""
    grandchildren = {(g, _start_time(g)) for p in pids for g in _children_of(p)}
    for p in pids:
        _killpg(p, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for p in pids:
        if _reap(p, max(0.0, deadline - time.monotonic())):
            continue
        _killpg(p, signal.SIGSTOP)
        for g in _children_of(p):
            grandchildren.add((g, _start_time(g)))
            _killpg(g, signal.SIGKILL)
            try:
                os.kill(g, signal.SIGKILL)
            except OSError:
                pass
        _killpg(p, signal.SIGKILL)
        _reap(p, 30.0)
    for g, started in grandchildren:
        if started is not None and _start_time(g) == started:  # still the same process, not a reused pid
            _killpg(g, signal.SIGKILL)
            try:
                os.kill(g, signal.SIGKILL)
            except OSError:
                pass


def _child(work: Callable[[Any], dict[str, Any]], task: Any, fd: int) -> None:
    """In the forked child: run the task, write its result, and never return."""
    status = 0
    try:
        os.setpgid(0, 0)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

        def on_term(signum: int, frame: FrameType | None) -> NoReturn:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            raise SystemExit(128 + signum)

        signal.signal(signal.SIGTERM, on_term)
        result = work(task)
        data = json.dumps(result).encode("utf-8")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # reported by the parent as this task's error
        status = 1
        try:
            os.write(fd, json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode("utf-8"))
        except BaseException:
            pass
    finally:
        os._exit(status)


@contextmanager
def interruptible() -> Iterator[None]:
    """While inside: SIGINT, SIGTERM and SIGHUP raise Interrupted (so `with Sandbox` blocks unwind)."""
    previous: dict[signal.Signals, Any] = {}

    def on_signal(signum: int, frame: FrameType | None) -> NoReturn:
        raise Interrupted(signal.Signals(signum).name)

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            previous[sig] = signal.signal(sig, on_signal)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run_parallel(
    tasks: Sequence[Any],
    work: Callable[[Any], dict[str, Any]],
    jobs: int,
    timeout_s: float,
    on_done: Callable[[int, dict[str, Any]], None],
    on_tick: Callable[[], None] = lambda: None,
) -> None:
    """Run work(task) for every task, at most `jobs` at once, each in its own forked process.

    on_done(index, result) runs in this process as each task ends; a task that
    crashed or timed out gives {"error": "..."}. Raises Interrupted on SIGINT,
    SIGTERM or SIGHUP, after every child and sandbox has been ended."""
    pending = list(range(len(tasks)))
    running: dict[int, _Running] = {}
    with interruptible():
        _loop(tasks, work, jobs, timeout_s, on_done, on_tick, pending, running)


def _loop(
    tasks: Sequence[Any],
    work: Callable[[Any], dict[str, Any]],
    jobs: int,
    timeout_s: float,
    on_done: Callable[[int, dict[str, Any]], None],
    on_tick: Callable[[], None],
    pending: list[int],
    running: dict[int, _Running],
) -> None:
    try:
        while pending or running:
            _fill(tasks, work, jobs, pending, running)
            finished: list[_Running] = []
            ready, _, _ = select.select(list(running), [], [], 0.25)
            for fd in ready:
                run = running[fd]
                chunk = os.read(fd, 1 << 16)
                if chunk and len(run.data) < MAX_RESULT:
                    run.data += chunk
                    continue
                if chunk:
                    continue
                os.close(fd)
                del running[fd]
                finished.append(run)
            # The free slots get their next task before this process does any bookkeeping.
            _fill(tasks, work, jobs, pending, running)
            for run in finished:
                _reap(run.pid, 60.0)
                on_done(run.index, _decode(run.data))
            now = time.monotonic()
            for fd, run in list(running.items()):
                if now - run.started > timeout_s:
                    stop_children([run.pid])
                    os.close(fd)
                    del running[fd]
                    on_done(run.index, {"error": f"the grading took longer than {timeout_s:g} s and was stopped"})
            on_tick()
    except BaseException:
        stop_children([run.pid for run in running.values()])
        for fd in list(running):
            os.close(fd)
        raise


def _fill(
    tasks: Sequence[Any],
    work: Callable[[Any], dict[str, Any]],
    jobs: int,
    pending: list[int],
    running: dict[int, _Running],
) -> None:
    """Start pending tasks until `jobs` are running."""
    while pending and len(running) < max(1, jobs):
        index = pending.pop(0)
        r, w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            _child(work, tasks[index], w)
        os.close(w)
        try:
            os.setpgid(pid, pid)  # also here: no window in which Ctrl-C reaches the child
        except OSError:
            pass
        running[r] = _Running(index, pid, r, time.monotonic(), bytearray())


def _decode(data: bytes | bytearray) -> dict[str, Any]:
    if not data:
        return {"error": "the grading process ended without a result"}
    try:
        out = json.loads(data.decode("utf-8"))
    except ValueError:
        return {"error": "the grading process sent a damaged result"}
    return out if isinstance(out, dict) else {"error": "the grading process sent a damaged result"}
