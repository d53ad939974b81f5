"""`vit-grader watch FILE`: re-grades at every save, clears between runs on a terminal, Ctrl-C ends it.

The end-to-end tests run the real CLI in a subprocess, edit the watched file
like an editor would and send a real SIGINT.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from grader.report.watch import CLEAR, file_state, watch
from own_processes import descendants, left_behind, reaped, zygotes_below
from watching import PATIENCE_S
from watching import read_until as _read_until
from watching import save as _save

ACCEPTED = ROOT / "submissions" / "accepted" / "vectorised_matmul.py"
STARTER = ROOT / "starter" / "solution.py"


def _default_sigint() -> None:
    # A test runner started in the background of a script inherits SIGINT ignored, and so would
    # the watch: the real Ctrl-C of a terminal is the default disposition, so test that.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def started(tmp_path):
    """Start `watch` subprocesses, each under own_processes' subreaper, which writes what the
    watch left alive 5 s after it ended to `proc.left` (a JSON file); none outlives the test."""
    procs: list[subprocess.Popen] = []

    def start(path: Path, *extra: str) -> subprocess.Popen:
        left = tmp_path / f"left-{len(procs)}.json"
        command = [sys.executable, "-m", "grader", "watch", str(path), "--interval", "0.1", *extra]
        proc = subprocess.Popen(
            reaped(left, command, grace_s=5),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "COLUMNS": "80"},
            preexec_fn=_default_sigint,
        )
        proc.left = left  # type: ignore[attr-defined]  # where this process's reaper writes what it left
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            for pid in descendants(proc.pid):  # the wrapper's tree first: killed, it orphans them
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            proc.kill()
        proc.communicate()


def _stop(proc: subprocess.Popen) -> tuple[int, str, str]:
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=PATIENCE_S)
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def test_watch_regrades_on_save_and_ctrl_c_ends_it_cleanly(tmp_path, started):
    path = tmp_path / "my_block.py"
    path.write_text(STARTER.read_text(encoding="utf-8"), encoding="utf-8")
    proc = started(path)
    seen: list[str] = []
    first = _read_until(proc, "Ctrl-C to stop", seen)
    assert zygotes_below(proc.pid), "no sandbox started ahead for the next save"
    assert "RE  Run-Time Error" in first and "practice tests" in first
    _save(path, ACCEPTED.read_text(encoding="utf-8"))
    second = _read_until(proc, "Ctrl-C to stop", seen)[len(first) :]
    assert "AC  Accepted" in second and "practice tests" in second
    assert "=" * 40 in second, "not a terminal: runs are separated by a rule, never cleared"
    code, out, err = _stop(proc)
    assert code == 0, err
    assert "watch: stopped" in out
    assert "Traceback" not in err + out and "KeyboardInterrupt" not in err
    assert left_behind(proc.left) == {}, "the sandbox started ahead outlived the watch"


def test_watch_waits_for_a_missing_file_then_grades_it(tmp_path, started):
    path = tmp_path / "later.py"
    proc = started(path, "--tests", "sample")
    seen: list[str] = []
    assert "does not exist (yet)" in _read_until(proc, "Ctrl-C to stop", seen)
    _save(path, ACCEPTED.read_text(encoding="utf-8"))
    assert "AC  Accepted" in _read_until(proc, "Ctrl-C to stop", seen)
    code, _, err = _stop(proc)
    assert code == 0 and "Traceback" not in err


def test_watch_refuses_a_directory(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "watch", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
    )
    assert proc.returncode == 2 and "not a regular file" in proc.stderr and "Traceback" not in proc.stderr


def test_watch_loop_clears_between_runs_on_a_terminal_and_only_runs_on_change(tmp_path):
    path = tmp_path / "f.py"
    path.write_text("a", encoding="utf-8")
    calls: list[int] = []
    sleeps: list[float] = []

    def run() -> str:
        calls.append(1)
        return f"report {len(calls)}\n"

    def sleep(s: float) -> None:
        sleeps.append(s)
        if len(sleeps) == 4:  # after the first run and two idle polls: a save
            path.write_text("bb", encoding="utf-8")
        if len(sleeps) > 12:
            raise KeyboardInterrupt

    out = io.StringIO()
    assert watch(path, run, out, clear=True, poll_s=0.01, sleep=sleep) == 0
    text = out.getvalue()
    assert len(calls) == 2 and text.count(CLEAR) == 2
    assert text.endswith("watch: stopped\n")
    assert file_state(tmp_path / "missing.py") is None
