"""The processes a test started, and only those: other graders may run on the same machine.

A test looks at the tree below a process it started (pid/ppid chains read from
/proc), never at every process of the machine. A process the command under test
leaves behind is orphaned when the command exits and would leave that tree, so
such commands run under this file as a small wrapper:

    python tests/own_processes.py REPORT GRACE_S -- COMMAND...

The wrapper becomes a child subreaper (prctl PR_SET_CHILD_SUBREAPER): every
orphan of the command's tree is re-parented to it, not to init. It runs the
command, passes SIGINT and SIGTERM on to it, waits for it, then gives whatever
is still alive below it GRACE_S seconds to end, writes those still alive to
REPORT (JSON: pid -> command line), kills them, waits for them to end and
exits with the command's status (128 + N for a command ended by signal N).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
ZYGOTE_MARK = b"zygote_main(int(sys.argv[1])"  # the sandbox's script is on its command line


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
    except OSError:
        return None
    return stat[stat.rfind(")") + 2 :].split()


def alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def descendants(root: int) -> set[int]:
    """Every live process below `root` (not `root` itself), found by following ppids."""
    parent = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (fields := _stat_fields(int(name))) and fields[0] != "Z":
            parent[int(name)] = int(fields[1])
    tree: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, ppid in parent.items() if ppid in frontier} - tree
        tree |= frontier
    return tree


def cmdline(pid: int) -> bytes:
    """The command line of `pid`, b"" if it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def zygotes_below(root: int) -> set[int]:
    """The sandbox zygotes in the tree below `root`."""
    return {pid for pid in descendants(root) if ZYGOTE_MARK in cmdline(pid)}


def aio_rings_below(root: int) -> tuple[set[int], set[int], dict[int, str]]:
    """One look at the processes below `root`: those with an AIO context (its ring is mapped as
    /[aio]), those whose memory map was read, and those whose map could not be read (pid -> the
    error; a non-dumpable process's may not be). A process that ended meanwhile is in none."""
    found, read, failed = set(), set(), {}
    for pid in descendants(root):
        try:
            with open(f"/proc/{pid}/maps", "rb") as f:
                maps = f.read()
        except (FileNotFoundError, ProcessLookupError):
            continue
        except OSError as exc:
            failed[pid] = type(exc).__name__
            continue
        read.add(pid)
        if b"/[aio]" in maps:
            found.add(pid)
    return found, read, failed


def reaped(report: Path, command: list[str], grace_s: float = 30.0) -> list[str]:
    """`command` run under this wrapper, which writes what it leaves behind to `report`."""
    return [sys.executable, str(Path(__file__).resolve()), str(report), str(grace_s), "--", *command]


def left_behind(report: Path) -> dict[int, str]:
    """What the wrapped command left alive (pid -> command line), from its report."""
    return {int(pid): line for pid, line in json.loads(report.read_text()).items()}


def _reap_zombies() -> None:
    """Collect the exit status of every orphan that has ended (the wrapper is their parent now)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def _survivors(grace_s: float) -> set[int]:
    """What is still alive below the wrapper after at most `grace_s` seconds."""
    deadline = time.monotonic() + grace_s
    while True:
        _reap_zombies()
        left = descendants(os.getpid())
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.05)


def main(argv: list[str]) -> int:
    """Run the command as the module docstring says; its exit status."""
    report, grace_s, command = Path(argv[0]), float(argv[1]), argv[argv.index("--") + 1 :]
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    child = subprocess.Popen(command)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda s, _: child.send_signal(s))
    status = child.wait()
    left = _survivors(grace_s)
    report.write_text(
        json.dumps({pid: cmdline(pid).replace(b"\0", b" ").decode("utf-8", "replace") for pid in sorted(left)})
    )
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    _survivors(5.0)  # reaped: gone when the wrapper has ended
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
