"""grader/batch/runner.py without a sandbox: results, crashes, timeouts, and what a stop kills."""

from __future__ import annotations

import os
import sys
import time

from grader.batch.runner import run_parallel, stop_children


def _work(task):
    kind, value = task
    if kind == "ok":
        return {"value": value, "pid": os.getpid()}
    if kind == "die":
        os._exit(3)
    if kind == "raise":
        raise ValueError("boom")
    if kind == "hang":
        time.sleep(60)
    return {}


def test_results_crashes_and_timeouts_are_all_reported():
    tasks = [("ok", 1), ("die", 0), ("raise", 0), ("hang", 0), ("ok", 2)]
    results = {}
    started = time.monotonic()
    run_parallel(tasks, _work, jobs=3, timeout_s=2.0, on_done=lambda i, r: results.__setitem__(i, r))
    assert time.monotonic() - started < 30
    assert results[0]["value"] == 1 and results[4]["value"] == 2
    assert results[0]["pid"] != os.getpid()  # each task in its own process
    assert "without a result" in results[1]["error"]
    assert "ValueError: boom" in results[2]["error"]
    assert "longer than 2 s" in results[3]["error"]


def test_stop_children_kills_a_child_and_the_sessions_it_started():
    # a child that ignores SIGTERM and starts a grandchild in a session of its own (like a zygote)
    code = (
        "import os, signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], start_new_session=True)\n"
        "print(p.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        os.execv(sys.executable, [sys.executable, "-c", code])
    time.sleep(1.5)
    grandchildren = [int(n) for n in os.listdir("/proc") if n.isdigit() and _ppid(int(n)) == pid]
    assert grandchildren, "the child started its grandchild"
    stop_children([pid], grace_s=0.5)
    time.sleep(0.3)
    for g in grandchildren:
        assert not _running(g), f"grandchild {g} survived"
    assert not _running(pid)


def _ppid(pid: int) -> int:
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return -1
    return int(stat[stat.rfind(")") + 2 :].split()[1])


def _running(pid: int) -> bool:
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split()[0] != "Z"
