"""The measuring scripts still run and say what they measured (never how fast: no figure is asserted)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


def _perf_cannot_record() -> str | None:
    """Why perf cannot sample the whole machine here, or None."""
    if shutil.which("perf") is None:
        return "the perf tool (linux-perf) is not installed"
    if os.geteuid() != 0:
        return "not running as root"
    proc = subprocess.run(["perf", "record", "-q", "-a", "-o", os.devnull, "--", "true"],
                          capture_output=True, text=True, timeout=60)
    return None if proc.returncode == 0 else f"perf cannot record here: {proc.stderr.strip()[:200]}"


def test_cpu_split_names_every_process_of_one_grading():
    why = _perf_cannot_record()
    if why:
        pytest.skip(f"scripts/cpu_split.py needs root and perf: {why}")
    proc = subprocess.run([sys.executable, "scripts/cpu_split.py"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for label in ("parent", "zygote", "workers", "all", "page faults"):
        assert re.search(rf"^\s*{label}", out, re.M), out
    # 34 tests and the load run, each in its own worker (more if a shared run was judged again alone)
    runs = int(re.search(r"workers\s+\d+ ms: (\d+) runs", out).group(1))
    assert runs >= 35, out


def test_cpu_split_says_what_it_needs_when_it_cannot_run(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}      # no perf on this PATH
    proc = subprocess.run([sys.executable, str(ROOT / "scripts/cpu_split.py")], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=60)
    assert proc.returncode == 2
    assert "perf" in proc.stderr and "Traceback" not in proc.stderr


def test_cpu_split_says_so_when_the_grading_runs_no_test():
    if _perf_cannot_record():
        pytest.skip(f"scripts/cpu_split.py needs root and perf: {_perf_cannot_record()}")
    proc = subprocess.run([sys.executable, "scripts/cpu_split.py", "no/such/file.py"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "ran no test in the sandbox" in proc.stderr and "Traceback" not in proc.stderr


def test_fork_floor_judges_the_reference_and_fails_a_wrong_answer(tmp_path):
    """The floor bench_grade.py compares against really runs and checks every case: a wrong answer fails it."""
    cases = tmp_path / "cases.bin"
    script = str(ROOT / "scripts/fork_floor.py")
    prep = subprocess.run([sys.executable, script, "--prepare", str(cases)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert prep.returncode == 0, prep.stderr
    ok = subprocess.run([sys.executable, script, str(cases)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    every = re.search(r"(\d+) of \1 cases within tolerance", ok.stdout)
    assert every and int(every.group(1)) > 0, ok.stdout
    wrong = subprocess.run([sys.executable, script, str(cases), "--solution",
                            str(ROOT / "submissions/wrong_answer/erf_gelu.py")],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert wrong.returncode == 1 and "not:" in wrong.stdout, wrong.stdout + wrong.stderr


def test_fork_floor_says_what_is_missing_without_a_traceback(tmp_path):
    for content in (None, b"not a prepared file", b'{"cases": [{"name": "x"}]}\n'):
        path = tmp_path / "cases.bin"
        if content is not None:
            path.write_bytes(content)
        proc = subprocess.run([sys.executable, str(ROOT / "scripts/fork_floor.py"), str(path)], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, (content, proc.stdout, proc.stderr)
        assert "--prepare" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
