#!/usr/bin/env python3
"""Where one `grade` spends its wall time: its phases, and when each milestone of its critical path is reached.

    python3 scripts/grade_phases.py [FILE] [--tests all|sample] [--repeats 5]

Runs `python -m grader grade FILE --json /dev/null` in a fresh process per
repetition, with the judging steps and the sandbox's calls wrapped by a
timer (wall clock, and this process's CPU time: the zygote's and workers' CPU
is not in that column), and prints the median of each phase, then the median
time since the measured script started at which each milestone was reached.
Two paths meet at the load: the parent's (imports, cases, work) and the
zygote's start-up beside it; "waited for the zygote" says which was longer
(near 0: the parent's). The wrapping adds a few microseconds per call; no
figure here is asserted anywhere.
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
ENV = {
    **os.environ,
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "GRADER_SERVER": "off",  # a cold grading in its own process, never a running server's
}

# Runs in the measured process: wraps the phases, runs the CLI, prints one JSON line.
PROBE = r"""
import json, sys, time
t0 = time.perf_counter()
M = {}
def mark(name):
    M.setdefault(name, time.perf_counter() - t0)
from grader.sandbox.early import early_zygote   # as grader/__main__.py does, before the rest
zygote = early_zygote(["grade"])
mark("zygote spawned (sandbox/early.py)")
from grader import cli
from grader.sandbox import launcher
from grader.judging import judge as J
from grader.judging import case_steps as S
from grader.feedback import diagnose as D
mark("grader imported")
T = {}
def wrap(obj, name, key, before=None, after=None):
    f = getattr(obj, name)
    def w(*a, **k):
        if before:
            mark(before)
        t, c = time.perf_counter(), time.process_time()
        try:
            return f(*a, **k)
        finally:
            d = T.setdefault(key, [0, 0.0, 0.0])
            d[0] += 1; d[1] += time.perf_counter() - t; d[2] += time.process_time() - c
            if after:
                M[after] = time.perf_counter() - t0  # the last call's end
    setattr(obj, name, w)
for obj, name, key, before, after in (
    (J, "cases_step", "read the test cases", "cases: begin", "cases: end"),
    (J, "work_step", "each case's work (imports problem.py)", None, "work: end"),
    (launcher.Sandbox, "__enter__", "waited for the zygote (its start-up)", None, None),
    (J, "load_run", "load the submission (import it in a worker; work meanwhile)", "load: submitted", "load: ended"),
    (S, "probe_now_step", "read the speed probe (only when a run needed it)", None, None),
    (launcher.Sandbox, "submit", "submit runs (encode the case, send it)", None, "last run submitted"),
    (launcher.Sandbox, "collect", "collect runs (wait for them, read the results)", None, "last run collected"),
    (S, "check_step", "check the results", None, None),
    (D, "diagnose", "diagnose (not for an AC)", None, None),
    (launcher.Sandbox, "close", "close the sandbox", None, None),
):
    wrap(obj, name, key, before, after)
sys.argv = ["grader", "grade", sys.argv[1], "--tests", sys.argv[2], "--json", "/dev/null"]
try:
    cli.main(zygote=zygote)
except SystemExit:
    pass
finally:
    if zygote is not None:
        zygote.close()
mark("done")
sys.stderr.write("PHASES " + json.dumps({"phases": T, "milestones": M}) + "\n")
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
    print(f"| {'phase':58} | {'calls':>5} | {'wall (s)':>8} | {'parent CPU (s)':>14} |")
    print(f"|{'-' * 60}|{'-' * 7}|{'-' * 10}|{'-' * 16}|")
    for key in runs[0]["phases"]:
        got = [r["phases"][key] for r in runs if key in r["phases"]]
        calls = got[0][0]
        wall = statistics.median(g[1] for g in got)
        cpu = statistics.median(g[2] for g in got)
        print(f"| {key:58} | {calls:5d} | {wall:8.3f} | {cpu:14.3f} |")
    print()
    print(f"| {'milestone (since the script started, after the interpreter)':58} | {'at (ms)':>8} |")
    print(f"|{'-' * 60}|{'-' * 10}|")
    for key in sorted(runs[0]["milestones"], key=runs[0]["milestones"].get):
        at = statistics.median(r["milestones"][key] for r in runs if key in r["milestones"])
        print(f"| {key:58} | {at * 1000:8.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
