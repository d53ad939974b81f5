#!/usr/bin/env python3
"""Do verdicts and the effective time limit stay put, idle and under load?

Grades every file under submissions/ (on all tests) and the sandbox's memory,
fork and time bombs from tests/test_sandbox_adversarial.py (on the samples)
RUNS times each, as the machine is and with two busy processes (`yes >
/dev/null`, started and stopped by this script, by PID), the two conditions
alternating run by run. Each grading
is a real one (library call, fresh zygote started as `python -m grader
grade` does it, grader/sandbox/early.py, the problem's limits; the probe
read when a run needs it; a second worker where `grade` would use one). Prints, per condition, every file whose verdicts
were not all the same, and the effective CPU limit (median, range) of the
gradings that read the probe (the others stayed within the least limit), then
the bars: identical verdicts everywhere; the limits of the two conditions
within 15 % of each other and of time_per_test_s. Usage:

    python3 scripts/stability.py [--runs 10] [--only SUBSTRING] [--busy 2]

A figure-printing script, not a test: it takes a long time (RUNS x 2 x about
55 gradings) and its figures depend on the machine. docs/time-limits.md
quotes its output.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import test_sandbox_adversarial as adversarial  # noqa: E402 - the repository, tests/ and one BLAS thread set first
from grader.feedback.grade import grade  # noqa: E402 - the repository, tests/ and one BLAS thread set first
from grader.judging.judge import GradeOptions, cases_step  # noqa: E402 - the repository, tests/ and one BLAS thread set first
from grader.maintain.verify import find_submissions  # noqa: E402 - the repository, tests/ and one BLAS thread set first
from grader.problem.bundle import open_bundle  # noqa: E402 - the repository, tests/ and one BLAS thread set first
from grader.sandbox.early import early_zygote  # noqa: E402 - the repository, tests/ and one BLAS thread set first

BAR = 0.15


def bombs() -> dict[str, str]:
    """The adversarial suite's memory, fork and time bombs, by name."""
    out = {
        f"memory_bomb/{name}": "import numpy as np\n" + adversarial.SIGNATURE + adversarial.body(code)
        for name, code in adversarial.MEMORY_BOMBS.items()
    }
    out["fork_bomb"] = adversarial.RUN_TIME_ERRORS["fork_bomb"][0]
    out.update({f"time_bomb/{name}": source for name, (source, _) in adversarial.TLE_ATTACKS.items()})
    return out


class Busy:
    """`n` `yes > /dev/null` processes for the loaded condition, ended by PID."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.procs: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> Busy:
        self.procs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(self.n)]
        return self

    def __exit__(self, *exc) -> None:
        for p in self.procs:
            p.kill()
            p.wait()


def run_condition(bundle, jobs: list[tuple[str, Path, GradeOptions, list]], runs: int) -> dict:
    verdicts: dict[str, list[str]] = {}
    per_test: dict[str, list[tuple[str, ...]]] = {}  # every test's verdict, in order
    limits: list[float] = []
    for _ in range(runs):
        for name, path, options, cases in jobs:
            zygote = early_zygote(["grade"])  # started as `python -m grader grade` does
            try:
                r = grade(bundle, path, options, cases, zygote)
            finally:
                if zygote is not None:
                    zygote.close()
            verdicts.setdefault(name, []).append(r.verdict)
            per_test.setdefault(name, []).append(tuple(t.verdict for t in r.tests))
            if r.limits is not None and r.limits.probe == "measured":  # not the least limits
                limits.append(r.limits.cpu_s)
    return {"verdicts": verdicts, "per_test": per_test, "limits": limits}


def measure(bundle: Any, jobs: list[tuple[str, Path, GradeOptions, Any]], runs: int, busy: int) -> dict[str, dict]:
    """Each condition's verdicts, per-test verdicts, limits, seconds and load averages over `runs` runs."""
    labels = ("as found", f"with {busy} busy processes")
    results: dict[str, dict] = {
        label: {"verdicts": {}, "per_test": {}, "limits": [], "seconds": 0.0, "loads": []} for label in labels
    }
    # Alternating, one run of every file per condition at a time: the host's own slow and fast
    # phases (minutes long here) then fall on both conditions alike instead of on one of them.
    for _ in range(runs):
        for label in labels:
            res = results[label]
            start = time.monotonic()
            res["loads"].append(os.getloadavg()[0])
            if label == labels[0]:
                one = run_condition(bundle, jobs, 1)
            else:
                with Busy(busy):
                    one = run_condition(bundle, jobs, 1)
            for name, verdicts in one["verdicts"].items():
                res["verdicts"].setdefault(name, []).extend(verdicts)
            for name, rows in one["per_test"].items():
                res["per_test"].setdefault(name, []).extend(rows)
            res["limits"] += one["limits"]
            res["seconds"] += time.monotonic() - start
    for res in results.values():
        res["load"] = (min(res["loads"]), max(res["loads"]))
    return results


def print_condition(label: str, res: dict) -> tuple[float | None, bool]:
    """One condition's verdicts and limits, printed: (its median limit, whether no verdict flipped)."""
    flips = {n: Counter(v) for n, v in res["verdicts"].items() if len(set(v)) > 1}
    lim = res["limits"]
    median = statistics.median(lim) if lim else None  # None: no grading needed the probe
    print(
        f"\n{label} (load average {res['load'][0]:.1f}-{res['load'][1]:.1f} at the starts of its runs; "
        f"{res['seconds']:.0f} s)"
    )
    print(f"  verdicts: {'identical in every run' if not flips else f'{len(flips)} files flipped'}")
    for n, c in sorted(flips.items()):
        print(f"    {n}: " + ", ".join(f"{v} x{k}" for v, k in c.most_common()))
    # Stricter than the bar: a test-level verdict that changed while the overall one held.
    inner = {n: rows for n, rows in res["per_test"].items() if len(set(rows)) > 1 and n not in flips}
    print(f"  every test's verdict: {'identical in every run' if not inner else f'{len(inner)} files differ'}")
    for n, rows in sorted(inner.items()):
        changed = sorted({i for i in range(len(rows[0])) if len({r[i] for r in rows}) > 1})
        print(
            f"    {n}: test {', '.join(str(i + 1) for i in changed)}: "
            + ", ".join(f"{'/'.join(sorted({r[i] for r in rows}))}" for i in changed)
        )
    of = sum(map(len, res["verdicts"].values()))
    if lim:
        print(
            f"  effective CPU limit: median {median:.3f} s, range {min(lim):.3f}-{max(lim):.3f} s "
            f"over the {len(lim)} gradings that needed the probe (of {of})"
        )
    else:
        print(f"  effective CPU limit: none of the {of} gradings needed the probe")
    return median, not flips


def limits_met(a: float | None, b: float | None, nominal: float) -> bool:
    """Are the two conditions' median limits within BAR of each other and of the nominal one (printed)?"""
    if a is None or b is None:
        print(
            "limits: not compared (a condition had no grading that needed the probe; "
            "run more files, e.g. without --only)"
        )
        return True
    print(
        f"limits: {abs(a - b) / min(a, b):.1%} apart (bar {BAR:.0%}); "
        f"{abs(a - nominal) / nominal:.1%} and {abs(b - nominal) / nominal:.1%} from time_per_test_s "
        f"= {nominal:g} s (bar {BAR:.0%})"
    )
    return abs(a - b) / min(a, b) <= BAR and all(abs(m - nominal) / nominal <= BAR for m in (a, b))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--only", default="", help="only files/bombs whose name contains this")
    parser.add_argument("--busy", type=int, default=2, help="busy processes in the loaded condition")
    args = parser.parse_args()
    bundle = open_bundle(ROOT)
    all_cases = cases_step(bundle, GradeOptions(tests="all"))
    samples = cases_step(bundle, GradeOptions(tests="sample"))
    subs, _ = find_submissions(bundle)
    with tempfile.TemporaryDirectory() as tmp:
        jobs = [(f"{s.folder}/{s.path.name}", s.path, GradeOptions(diagnose=False), all_cases) for s in subs]
        for name, source in bombs().items():
            path = Path(tmp) / (name.replace("/", "_") + ".py")
            path.write_text(source, encoding="utf-8")
            jobs.append((name, path, GradeOptions(tests="sample", diagnose=False), samples))
        jobs = [j for j in jobs if args.only in j[0]]
        results = measure(bundle, jobs, args.runs, args.busy)

    n_subs = sum(j[3] is all_cases for j in jobs)
    print(
        f"{len(jobs)} files x {args.runs} runs per condition ({n_subs} from submissions/ on all tests, "
        f"{len(jobs) - n_subs} bombs on the samples)"
    )
    medians, all_same = [], True
    for label, res in results.items():
        median, same = print_condition(label, res)
        medians.append(median)
        all_same &= same
    first = {n: v[0] for n, v in next(iter(results.values()))["verdicts"].items()}
    across = [n for n in first if any(res["verdicts"][n][0] != first[n] for res in results.values())]
    print()
    print(f"same verdicts in both conditions: {'yes' if not across else 'no: ' + ', '.join(across)}")
    ok = limits_met(medians[0], medians[1], bundle.spec.limits.time_per_test_s) and all_same and not across
    print("stability: OK" if ok else "stability: NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
