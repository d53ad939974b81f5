"""sandbox/early.py: the zygote's process started at the command's start, before the grader's imports.

The early process must change nothing that is reported (same layers, same
verdict), be used at most once and only if started the way the Sandbox would
start it, and never outlive the command: not when it is unused, not when the
command fails, not when the grader dies without cleaning up.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from grader.feedback.grade import grade
from grader.judging.judge import GradeOptions
from grader.sandbox import early
from grader.sandbox.launcher import PROBE_REPEATS, Sandbox, make_parent_nondumpable, strategies
from own_processes import alive, left_behind, reaped
from test_launcher_start import sandbox  # the same small sandbox as the begin() tests

ROOT = Path(__file__).resolve().parent.parent
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the early start is Linux-only")


def gone_within(pids, seconds: float = 30.0) -> bool:
    """Every pid ends within `seconds` (a liveness bound, generous: not a speed figure)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def layers_of(sb: Sandbox) -> list[tuple[str, str, str]]:
    """The reported layers, in full but for the random uid."""
    return [(layer.name, layer.status, "" if layer.name == "uid_drop" else layer.detail) for layer in sb.info().layers]


@pytest.mark.parametrize(
    "argv, command",
    [
        (["grade", "a.py"], "grade"),
        (["--bundle", "b", "grade", "a.py"], "grade"),
        (["--bundle=b", "--debug", "batch", "x"], "batch"),
        (["--debug"], None),
        ([], None),
        (["--bundle"], None),
        (["--version"], None),
        (["verify"], "verify"),
    ],
)
def test_command_of_finds_the_subcommand_after_the_global_options(argv, command):
    assert early.command_of(argv) == command


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["verify"],
        ["watch", "a.py"],
        ["grade", "a.py", "--isolation", "plain"],
        ["grade", "--isolation=plain", "a.py"],
        ["grade", "--iso", "plain", "a.py"],
        ["grade", "--isol=plain"],
        ["grade", "--help"],
        ["batch", "-h"],
        ["--version"],
    ],
)
def test_nothing_starts_early_for_other_commands_or_options(argv):
    assert early.early_zygote(argv) is None


@linux_only
def test_a_sandbox_takes_the_early_process_once_and_reports_the_same_layers(spec):
    make_parent_nondumpable()  # as judge() does before its Sandbox, and early_zygote() before its spawn
    with sandbox(spec) as fresh:
        fresh.run([0] * len(spec.parameters), None, mode="load")
        expected = layers_of(fresh)
    spawned = early.early_zygote(["grade", "a.py"])
    assert spawned is not None
    try:
        sb = sandbox(spec, prelaunched=spawned)
        with sb:
            assert sb.proc is spawned.proc and spawned.taken
            out = sb.run([0] * len(spec.parameters), None, mode="load")
            layers = layers_of(sb)  # the early probe's worker had other limits: they must not show here
            assert spawned.take(sb.strategy, sys.executable) is None  # never a second time
        assert out.status == "loaded" and layers == expected
        assert gone_within([spawned.proc.pid])  # the Sandbox ended it
    finally:
        spawned.close()


@linux_only
def test_only_batch_queues_the_probe_at_the_start():
    # batch reads the probe first (judge.probe_step); grade reads it only if a run needs it.
    for argv, repeats in ((["grade", "a.py"], 0), (["batch", "subs/"], PROBE_REPEATS)):
        spawned = early.early_zygote(argv)
        try:
            assert spawned is not None and spawned.probe_repeats == repeats
            assert (spawned.probe_fds is not None) is bool(repeats)
        finally:
            spawned.close()


@linux_only
def test_the_probe_queued_at_the_start_is_the_reading_the_sandbox_returns(spec):
    spawned = early.early_zygote(["batch", "subs/"])
    assert spawned is not None and spawned.probe_repeats == PROBE_REPEATS
    try:
        with sandbox(spec, prelaunched=spawned) as sb:
            assert sb._early_probe is not None and len(sb._early_probe) == PROBE_REPEATS
            early_runs = sb.probe_runs()
            fresh = sb.probe_runs()  # measured now, in a new worker
            out = sb.run([0] * len(spec.parameters), None, mode="load")
        assert early_runs is not fresh and len(fresh) == PROBE_REPEATS
        assert all(0 < r < 5 for r in (*early_runs, *fresh)) and out.status == "loaded"
    finally:
        spawned.close()


@linux_only
def test_a_submission_sent_while_the_early_probe_runs_is_kept(spec):
    # The zygote reads its control socket while it supervises the probe's worker: the submission
    # arriving then must be held for after the probe, not dropped as a request it does not expect.
    spawned, why = early.spawn(strategies("auto")[0], sys.executable, probe_repeats=64)  # ~0.5 s of probing
    assert spawned is not None, why
    try:
        spawned.sock.settimeout(60)
        assert spawned.sock.recv(1, socket.MSG_PEEK)  # "started": the probe's worker is running
        spawned.sock.settimeout(None)
        with sandbox(spec, prelaunched=spawned) as sb:  # sends the submission now, mid-probe
            out = sb.run([0] * len(spec.parameters), None, mode="load")
            runs = sb.probe_runs(64)
            assert sb.proc is spawned.proc and not sb.attempts  # no fallback to a fresh start
        assert out.status == "loaded" and len(runs) == 64
    finally:
        spawned.close()


@linux_only
def test_a_slow_start_keeps_the_strongest_isolation(spec):
    # The early probe's reading is collected before "ready": its wait must allow for a slow start-up
    # (READY_TIMEOUT_S), not only for one case's limits, or a stalled machine silently costs the
    # namespaces (the sandbox would fall back to a weaker strategy). Stalled here for 10 s, beyond
    # the 3 s + 5 s a case would get. (batch queues the probe at the start.)
    spawned = early.early_zygote(["batch", "subs/"])
    assert spawned is not None
    os.killpg(spawned.proc.pid, signal.SIGSTOP)
    timer = threading.Timer(10.0, os.killpg, (spawned.proc.pid, signal.SIGCONT))
    timer.start()
    try:
        with sandbox(spec, prelaunched=spawned) as sb:
            out = sb.run([0] * len(spec.parameters), None, mode="load")
            assert sb.proc is spawned.proc and not sb.attempts and sb.strategy == strategies("auto")[0]
        assert out.status == "loaded"
    finally:
        timer.cancel()
        try:
            os.killpg(spawned.proc.pid, signal.SIGCONT)
        except OSError:
            pass
        spawned.close()


@linux_only
def test_an_unused_early_process_is_killed_by_close():
    spawned = early.early_zygote(["grade", "a.py"])
    assert spawned is not None and alive(spawned.proc.pid)
    spawned.close()
    assert not alive(spawned.proc.pid) and spawned.sock.fileno() == -1


@linux_only
def test_a_process_started_another_way_is_not_taken(spec):
    spawned = early.early_zygote(["grade", "a.py"])
    assert spawned is not None
    try:
        sb = sandbox(spec, prelaunched=spawned, python=os.path.realpath(sys.executable) + "-other")
        assert spawned.take(strategies("auto")[0], "/usr/bin/python-other") is None
        assert not spawned.taken and sb.python != spawned.python
    finally:
        spawned.close()
    assert not alive(spawned.proc.pid)


@linux_only
def test_a_dead_early_process_is_replaced_by_a_fresh_one(spec):
    spawned = early.early_zygote(["grade", "a.py"])
    assert spawned is not None
    spawned.proc.kill()
    spawned.proc.wait()
    try:
        with sandbox(spec, prelaunched=spawned) as sb:
            out = sb.run([0] * len(spec.parameters), None, mode="load")
            assert sb.proc is not spawned.proc
        assert out.status == "loaded"
    finally:
        spawned.close()


@linux_only
def test_the_early_process_ends_when_the_grader_dies_without_cleaning_up():
    # The grader is SIGKILLed: no finally runs. The zygote sees its control socket close and exits.
    script = (
        "import os, sys\nfrom grader.sandbox.early import early_zygote\n"
        "z = early_zygote(['grade', 'a.py'])\nprint(z.proc.pid, flush=True)\nsys.stdin.read()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    pid = int(proc.stdout.readline())
    assert alive(pid)
    proc.kill()
    proc.wait()
    assert gone_within([pid]), "the early zygote outlived the grader that started it"


@linux_only
@pytest.mark.parametrize(
    "args",
    [
        ["grade", "--no-such-option", "reference/solution.py"],  # argparse refuses: exit 2
        ["grade", "does/not/exist.py"],  # unreadable: exit 2
        ["grade", "reference/solution.py", "--tests", "sample", "--json", "/dev/null"],
    ],
)
def test_the_command_leaves_no_sandbox_process_behind(args, tmp_path):
    # Run under own_processes' subreaper: whatever the command orphans stays in its tree, and
    # only that tree is looked at (other graders' zygotes on the machine are none of its business).
    report = tmp_path / "left.json"
    proc = subprocess.run(
        reaped(report, [sys.executable, "-m", "grader", *args], grace_s=30),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode in (0, 2), proc.stderr
    assert "Traceback" not in proc.stderr
    assert left_behind(report) == {}, "alive 30 s after the command ended"


# Modules whose import the grading's first step must not wait for: NumPy (about 0.2 s), and what
# the standard library's conveniences would pull in (dataclasses -> inspect, tempfile, shutil,
# secrets -> hashlib), about 35 ms together.
COSTLY_FIRST_STEP = ("numpy", "dataclasses", "inspect", "tempfile", "shutil", "secrets", "hashlib")


def test_the_early_module_imports_nothing_costly():
    # -S: the site module's own imports are what this process already has, not early.py's.
    code = (
        "import sys; sys.path.insert(0, '.'); import grader.sandbox.early; "
        f"print([m for m in {COSTLY_FIRST_STEP!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-S", "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_zygote_starts_without_site_only_for_this_interpreter():
    strategy = strategies("auto")[0]
    mine = early.zygote_command(strategy, sys.executable, "SRC", 7)
    assert mine[mine.index(sys.executable) + 1 :][:2] == ["-I", "-S"]
    import site

    assert json.loads(mine[-1]) == [d for d in site.getsitepackages() if os.path.isdir(d)]
    other = early.zygote_command(strategy, "/usr/bin/python3", "SRC", 7)
    assert "-S" not in other and other[-1] == ",".join(early.HARNESS_MODULES)


SIGNATURE = "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n"


def grade_text(bundle, tmp_path, source: str):
    path = tmp_path / "solution.py"
    path.write_text(source, encoding="utf-8")
    report = grade(bundle, path, GradeOptions(tests="sample", scale_time=False))
    return next(c for c in report.tests if c.verdict != "AC")


def test_a_zygote_started_without_site_imports_numpy_and_hides_the_import_hooks(bundle, tmp_path):
    # What `site` would have run (.pth files: an editable install's import hook) is not in the sandbox.
    probe = (
        "import numpy as np\n" + SIGNATURE + "    sys = np._core._methods.os.sys\n"
        "    hooks = [getattr(f, '__name__', type(f).__name__) for f in sys.meta_path]\n"
        "    raise ValueError(repr((sys.flags.no_site, hooks, callable(exit), callable(help))))\n"
    )
    failed = grade_text(bundle, tmp_path, probe)
    assert failed.verdict == "RE", failed.message
    assert "(1, ['BuiltinImporter', 'FrozenImporter', 'PathFinder'], True, True)" in failed.message


# --- start-up details that early.py and startup.py do without the standard library's helpers ----


def test_the_unshare_lookup_searches_only_absolute_directories(tmp_path, monkeypatch):
    from grader.sandbox import startup

    fake = tmp_path / "unshare"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    for path in ("", ".", ":", "bin:."):  # all of them would mean this folder
        monkeypatch.setenv("PATH", path)
        assert startup._which("unshare") is None, path
    monkeypatch.setenv("PATH", f"/nonexistent:{tmp_path}")
    assert startup._which("unshare") == str(fake)
    monkeypatch.delenv("PATH")
    assert startup._which("sh") in ("/bin/sh", "/usr/bin/sh")  # the system's default path


def test_the_zygote_error_log_falls_back_when_memfd_is_refused(monkeypatch):
    def refused(*_):
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "memfd_create", refused)
    log = early.scratch_file()
    log.write(b"x")
    log.seek(0)
    assert log.read() == b"x"
    log.close()
    spawned, why = early.spawn(strategies("auto")[0], sys.executable)
    assert spawned is not None, why
    spawned.close()


@linux_only
def test_numpy_reachable_only_through_a_pth_file_still_grades(tmp_path):
    # A venv whose site-packages holds nothing but a .pth file naming another one (a shared
    # site-packages, an editable NumPy): the -S zygote finds NumPy after all, through `site`.
    import site
    import venv

    venv.create(tmp_path / "env", with_pip=False)
    env_python = tmp_path / "env" / "bin" / "python"
    purelib = subprocess.run(
        [str(env_python), "-c", "import site; print(site.getsitepackages()[0])"],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    ours = next(d for d in site.getsitepackages() if os.path.isdir(os.path.join(d, "numpy")))
    Path(purelib, "shared.pth").write_text(ours + "\n")
    proc = subprocess.run(
        [str(env_python), "-m", "grader", "grade", "reference/solution.py", "--tests", "sample", "--json", "-"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["verdict"] == "AC"
    # The report says that `site` ran after all (its .pth files: the zygote is not a -S one).
    (fresh,) = [la for la in report["sandbox"]["layers"] if la["name"] == "fresh_interpreter"]
    assert " -I started" in fresh["detail"], fresh


def test_the_report_says_when_the_zygote_ran_without_site(bundle, tmp_path):
    sb = sandbox(bundle.spec)
    with sb:
        sb.run([0] * len(bundle.spec.parameters), None, mode="load")
        (fresh,) = [la for la in sb.info().layers if la.name == "fresh_interpreter"]
    assert sb.ready.get("site") is False and " -I -S started" in fresh.detail
