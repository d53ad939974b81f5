"""tests/own_processes.py: a test sees the processes it started, and every one of them, only them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from own_processes import alive, descendants, left_behind, reaped

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc, uses prctl")

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]
# A command that starts a daemon in a session of its own, prints its pid and exits: the daemon
# is orphaned at once, so it is no longer below the command (the way a leaked zygote would be).
ORPHANING = [
    sys.executable,
    "-c",
    "import subprocess, sys; print(subprocess.Popen(sys.argv[1:], start_new_session=True).pid, flush=True)",
    *SLEEPER,
]
# A parent that starts one child, prints its pid and waits for its standard input to close.
PARENT = [
    sys.executable,
    "-c",
    "import subprocess, sys; print(subprocess.Popen(sys.argv[1:]).pid, flush=True); sys.stdin.read()",
    *SLEEPER,
]


def test_the_wrapper_reports_and_ends_what_the_command_left_behind(tmp_path):
    report = tmp_path / "left.json"
    proc = subprocess.run(reaped(report, ORPHANING, grace_s=0.5), capture_output=True, text=True, timeout=60)
    daemon = int(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    assert list(left_behind(report)) == [daemon] and "time.sleep(120)" in left_behind(report)[daemon]
    assert not alive(daemon), "the wrapper kills what it reports"


def test_the_wrapper_reports_nothing_for_a_command_that_ends_its_children(tmp_path):
    report = tmp_path / "left.json"
    tidy = [sys.executable, "-c", "import subprocess, sys; subprocess.run([sys.executable, '-c', 'pass'])"]
    assert subprocess.run(reaped(report, tidy, grace_s=0.5), timeout=60).returncode == 0
    assert left_behind(report) == {}


def test_a_process_started_beside_the_command_is_not_counted(tmp_path):
    beside = subprocess.Popen(SLEEPER, start_new_session=True)  # as another grader's zygote would be
    try:
        report = tmp_path / "left.json"
        quick = reaped(report, [sys.executable, "-c", "pass"], grace_s=0.5)
        assert subprocess.run(quick, timeout=60).returncode == 0
        assert left_behind(report) == {} and alive(beside.pid)
    finally:
        beside.kill()
        beside.wait()


def test_descendants_follow_the_tree_and_nothing_else():
    beside = subprocess.Popen(SLEEPER)
    parent = subprocess.Popen(PARENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    try:
        assert descendants(parent.pid) == {child}  # not `beside`, a sibling
        assert {parent.pid, child, beside.pid} <= descendants(os.getpid())
    finally:
        os.kill(child, signal.SIGKILL)
        for p in (beside, parent):
            p.kill()
            p.wait()


def test_the_wrapper_passes_sigint_on_and_returns_the_status(tmp_path):
    report = tmp_path / "left.json"
    code = (
        "import signal, sys, time\nsignal.signal(signal.SIGINT, lambda *_: sys.exit(7))\n"
        "print('ready', flush=True)\ntime.sleep(60)"
    )
    proc = subprocess.Popen(
        reaped(report, [sys.executable, "-c", code], grace_s=0.5), stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 7 and left_behind(report) == {}
    killed = subprocess.run(reaped(report, [sys.executable, "-c", "import os; os.kill(os.getpid(), 9)"]), timeout=60)
    assert killed.returncode == 128 + signal.SIGKILL
