#!/usr/bin/env python3
"""Where one `grade` spends its wall time, phase by phase.

    python3 scripts/grade_phases.py [FILE] [--tests all|sample] [--repeats 5]

Runs `python -m grader grade FILE --json /dev/null` in a fresh process per
repetition, with the judging steps and the sandbox's calls wrapped by a
timer (wall clock, and this process's CPU time: the zygote's and workers' CPU
is not in that column), and prints the median of each phase. The grader's own
import time is measured first, in its own process. The wrapping adds a few
microseconds per call; no figure here is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

# Runs in the measured process: wraps the phases, runs the CLI, prints one JSON line.
PROBE = r"""
import json, sys, time
t0 = time.perf_counter()
from grader.sandbox.early import early_zygote   # as grader/__main__.py does, before the rest
zygote = early_zygote(["grade"])
spawned = time.perf_counter() - t0
from grader import cli
from grader.sandbox import launcher
from grader.judging import judge as J
from grader.judging import case_steps as S
from grader.feedback import diagnose as D
imported = time.perf_counter() - t0
T = {}
def wrap(obj, name, key):
    f = getattr(obj, name)
    def w(*a, **k):
        t, c = time.perf_counter(), time.process_time()
        try:
            return f(*a, **k)
        finally:
            d = T.setdefault(key, [0, 0.0, 0.0])
            d[0] += 1; d[1] += time.perf_counter() - t; d[2] += time.process_time() - c
    setattr(obj, name, w)
for obj, name, key in ((launcher.Sandbox, "begin", "launch the zygote (begin)"),
                       (J, "cases_step", "read the test cases"),
                       (launcher.Sandbox, "__enter__", "wait for the zygote (its start-up)"),
                       (J, "load_run", "load the submission (import it once in a worker)"),
                       (S, "probe_now_step", "read the speed probe (only when a run needed it)"),
                       (launcher.Sandbox, "run", "sandbox runs: the load + each case (fork, lock-down, run, transfer)"),
                       (S, "check_step", "check the results"),
                       (D, "diagnose", "diagnose (not for an AC)"),
                       (launcher.Sandbox, "close", "close the sandbox")):
    wrap(obj, name, key)
sys.argv = ["grader", "grade", sys.argv[1], "--tests", sys.argv[2], "--json", "/dev/null"]
t1 = time.perf_counter()
try:
    cli.main(zygote=zygote)
except SystemExit:
    pass
finally:
    if zygote is not None:
        zygote.close()
T["(total after the imports)"] = [1, time.perf_counter() - t1, 0.0]
T["(grader imports, the zygote starting meanwhile)"] = [1, imported - spawned, 0.0]
T["(start the zygote's process: sandbox/early.py)"] = [1, spawned, 0.0]
sys.stderr.write("PHASES " + json.dumps(T) + "\n")
"""


def one_run(path: str, tests: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, path, tests], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600
    )
    line = next((ln for ln in proc.stderr.splitlines() if ln.startswith("PHASES ")), None)
    if line is None:
        raise SystemExit(f"the measured run printed no phases:\n{proc.stderr[-2000:]}")
    return json.loads(line[len("PHASES ") :])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", default="reference/solution.py")
    ap.add_argument("--tests", choices=("all", "sample"), default="all")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    runs = [one_run(args.file, args.tests) for _ in range(max(1, args.repeats))]
    print(
        f"{args.file}, --tests {args.tests}: medians of {len(runs)} runs; load average "
        f"{os.getloadavg()[0]:.1f} at the end"
    )
    print()
    print(f"| {'phase':68} | {'calls':>5} | {'wall (s)':>8} | {'parent CPU (s)':>14} |")
    print(f"|{'-' * 70}|{'-' * 7}|{'-' * 10}|{'-' * 16}|")
    for key in runs[0]:
        got = [r[key] for r in runs if key in r]
        calls = got[0][0]
        wall = statistics.median(g[1] for g in got)
        cpu = statistics.median(g[2] for g in got)
        print(f"| {key:68} | {calls:5d} | {wall:8.3f} | {cpu:14.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
