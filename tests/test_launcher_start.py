"""sandbox/launcher.py: starting the zygote early (begin) and the probe queued behind it.

judge() calls begin() before it reads the test cases so that the zygote's start
overlaps the parsing; these tests check that the early start changes nothing
that is reported and leaves nothing behind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from grader.judging.sandbox_terms import sandbox_limits
from grader.sandbox import launcher
from grader.sandbox.launcher import PROBE_REPEATS, Sandbox, strategies

SOURCE = "def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n    return x\n"


def sandbox(spec, **kw) -> Sandbox:
    return Sandbox(
        SOURCE,
        function=spec.function,
        n_args=len(spec.parameters),
        limits=replace(sandbox_limits(spec), cpu_s=1.0, wall_s=3.0),
        allowed={"packages": ["numpy"], "exclude": [], "stdlib": ["math"]},
        preload=["math"],
        **kw,
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_queued_probe_reading_is_the_one_probe_returns(spec):
    with sandbox(spec) as sb:
        sb.run([0] * len(spec.parameters), None, mode="load")
    early = sandbox(spec)
    early.begin(PROBE_REPEATS)
    with early:
        runs = early.probe_runs()
        again = early.probe_runs()  # the queued reading is used once, then measured afresh
        load = early.run([0] * len(spec.parameters), None, mode="load")
        layers = [(layer.name, layer.status) for layer in early.info().layers]
    assert len(runs) == len(again) == PROBE_REPEATS and all(0 < r < 5 for r in runs)
    assert load.status == "loaded"
    assert layers == [(layer.name, layer.status) for layer in sb.info().layers]


def test_begin_then_close_leaves_no_process(spec):
    sb = sandbox(spec)
    sb.begin(PROBE_REPEATS)
    pid = sb.proc.pid
    sb.close()
    assert sb.proc is None and not alive(pid)


def test_run_after_begin_finishes_the_start(spec):
    sb = sandbox(spec)
    sb.begin()
    try:
        out = sb.run([0] * len(spec.parameters), None, mode="load")
        assert out.status == "loaded" and sb.strategy is not None
    finally:
        sb.close()


def test_a_failed_early_start_falls_back_to_the_next_strategy(spec, monkeypatch):
    real = strategies("auto")
    if len(real) < 2:
        pytest.skip("only one start-up strategy on this machine (no unshare): nothing to fall back to")
    broken = real[0]._replace(prefix=("/nonexistent/unshare",))
    monkeypatch.setattr(launcher, "strategies", lambda isolation="auto": [broken, *real[1:]])
    sb = sandbox(spec)
    sb.begin(PROBE_REPEATS)
    with sb:
        runs = sb.probe_runs()
    assert len(runs) == PROBE_REPEATS and sb.attempts and sb.attempts[0].startswith(broken.mode)
    assert sb.strategy == real[1]


# --- root that cannot change uid ------------------------------------------------------------------


def test_root_without_setuid_is_refused_with_the_reason(monkeypatch):
    """A worker never runs a submission as uid 0: where root cannot drop to another uid, starting
    says why, in words a platform owner can act on, instead of every worker failing (exit 112)."""
    from grader.sandbox import startup

    monkeypatch.setattr(startup, "strategies", lambda isolation="auto": [startup.Strategy("plain", (), True, ())])
    monkeypatch.setattr(startup, "_has_capabilities", lambda *caps: False)
    with pytest.raises(startup.SandboxError, match="CAP_SETUID and CAP_SETGID"):
        startup.usable_strategies()
    monkeypatch.setattr(startup, "_has_capabilities", lambda *caps: True)
    assert startup.usable_strategies()[0].mode == "plain"


def test_a_process_has_the_capabilities_its_status_says():
    from grader.sandbox.startup import CAP_SETUID, _has_capabilities

    with open("/proc/self/status") as f:
        eff = int(next(ln for ln in f if ln.startswith("CapEff:")).split(":")[1], 16)
    assert _has_capabilities(CAP_SETUID) == bool(eff >> CAP_SETUID & 1)
    assert _has_capabilities() is True


@pytest.mark.skipif(
    os.getuid() != 0 or shutil.which("setpriv") is None, reason="needs root (CI runs as root) and setpriv"
)
def test_grade_as_root_without_capabilities_says_why():
    root = Path(__file__).resolve().parent.parent
    cmd = ["setpriv", "--inh-caps=-all", "--bounding-set=-all", sys.executable, "-m", "grader", "grade",
           "reference/solution.py", "--tests", "sample"]  # fmt: skip
    got = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=300)
    assert got.returncode == 2 and "JE" in got.stdout, got.stdout + got.stderr
    assert "without CAP_SETUID and CAP_SETGID" in got.stderr and "Traceback" not in got.stderr
