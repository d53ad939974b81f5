#!/usr/bin/env python3
"""Does the probe-scaled time limit stay put, and does it follow the submissions' own speed?

The issue's two bars, in one run:

1. steadiness: one submission that needs the probe (by default
   time_limit_exceeded/element_loops.py, beyond the least limit on every
   machine) is graded --runs times as the machine is and --runs times beside
   --busy busy processes (alternating, so that the host's slow and fast phases
   fall on both alike). Each grading is a real one (`grade`'s library call, a
   fresh zygote as `python -m grader grade` starts it, the probe read in the
   sandbox when the run goes beyond the least limit). Prints every effective
   CPU limit and the max/min over all of them: bar 1.15. Also the max/min of
   the probe readings themselves, which is what the limit's would be on a
   machine outside the noise band (where the limit follows the reading);
2. the probe's prediction: the slowest accepted submission and the fastest
   finite too-slow one (calibration.yaml's T_ac and fastest TLE) are timed here
   on their slowest case; their time here over the calibration record's is the
   speed-up they really see, and time_per_test_s x that ratio the limit it
   implies. Prints it beside the probe-scaled limit (the median of part 1's):
   bar within 25 %.

With --calibrate, a calibration is measured first, in memory (nothing is
written), and both parts use its probe_time_s and its submission times
instead of the bundle's: how the bars will look once `calibrate --write`
has been run on this machine. Usage:

    python3 scripts/bench_limits.py [--runs 6] [--busy 2] [--calibrate] [--bundle DIR]

A figure-printing script, not a test; its figures depend on the machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import yaml  # noqa: E402 - one BLAS thread set first

from bar_record import record_bar  # noqa: E402 - scripts/ is on sys.path (this script's folder)
from grader.feedback.grade import grade  # noqa: E402 - one BLAS thread set first
from grader.judging.judge import GradeOptions, cases_step  # noqa: E402 - one BLAS thread set first
from grader.maintain.calibrate import calibrate  # noqa: E402 - one BLAS thread set first
from grader.maintain.measure import measure_submission  # noqa: E402 - one BLAS thread set first
from grader.maintain.verify import find_submissions  # noqa: E402 - one BLAS thread set first
from grader.problem.bundle import Bundle, open_bundle  # noqa: E402 - one BLAS thread set first
from grader.sandbox.early import early_zygote  # noqa: E402 - one BLAS thread set first

STEADY_BAR = 1.15
PREDICTION_BAR = 0.25


class Busy:
    """`n` busy-looping processes, ended by PID."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.procs: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> Busy:
        self.procs = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"], stdout=subprocess.DEVNULL)
            for _ in range(self.n)
        ]
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self.procs:
            p.kill()
            p.wait()


def one_grading(bundle: Bundle, path: Path, cases: list[Any]) -> tuple[float, float] | None:
    """(effective CPU limit, probe reading) of one grading that read the probe; None if it did not."""
    zygote = early_zygote(["grade"])  # started as `python -m grader grade` does
    try:
        r = grade(bundle, path, GradeOptions(diagnose=False), cases, zygote)
    finally:
        if zygote is not None:
            zygote.close()
    if r.limits is None or r.limits.probe != "measured" or r.limits.probe_s is None:
        return None
    return r.limits.cpu_s, r.limits.probe_s


def steadiness(bundle: Bundle, path: Path, runs: int, busy: int) -> tuple[list[float], list[float]]:
    """Every limit and reading of `runs` gradings per condition, printed; (limits, readings)."""
    cases = cases_step(bundle, GradeOptions(tests="all"))
    labels = ("as found", f"beside {busy} busy processes")
    got: dict[str, list[tuple[float, float]]] = {label: [] for label in labels}
    missed = 0
    for _ in range(runs):
        for label in labels:
            if label == labels[0]:
                one = one_grading(bundle, path, cases)
            else:
                with Busy(busy):
                    one = one_grading(bundle, path, cases)
            if one is None:
                missed += 1
            else:
                got[label].append(one)
    limits, readings = [], []
    for label, rows in got.items():
        print(
            f"  {label} (load average {os.getloadavg()[0]:.1f} now): limits "
            + ", ".join(f"{lim:.3f}" for lim, _ in rows)
            + " s; readings "
            + ", ".join(f"{p * 1000:.2f}" for _, p in rows)
            + " ms"
        )
        limits += [lim for lim, _ in rows]
        readings += [p for _, p in rows]
    if missed:
        print(f"  {missed} grading(s) did not read the probe (within the least limit): not counted")
    return limits, readings


def record_times(record: dict[str, Any]) -> list[tuple[str, float]]:
    """(submission, its calibrated time) of T_ac's submission and of the fastest finite TLE one."""
    out = []
    acc = [a for a in record["accepted"] if a.get("time_s") is not None]
    tle = [t for t in record["time_limit_exceeded"] if t.get("time_s") is not None]
    if acc:
        slowest = max(acc, key=lambda a: a["time_s"])
        out.append((slowest["submission"], slowest["time_s"]))
    if tle:
        fastest = min(tle, key=lambda t: t["time_s"])
        out.append((fastest["submission"], fastest["time_s"]))
    return out


def prediction(bundle: Bundle, record: dict[str, Any], probe_limit: float) -> bool:
    """The limit each reference submission's own speed-up implies vs the probe-scaled one, printed."""
    subs = {f"{s.folder}/{s.path.name}": s for s in find_submissions(bundle)[0]}
    nominal = bundle.spec.limits.time_per_test_s
    ok = True
    for name, then in record_times(record):
        if name not in subs:
            print(f"  {name}: not in submissions/ any more; skipped")
            continue
        here = measure_submission(bundle, subs[name], max(10.0, 3 * then), 3).time_s
        implied = nominal * here / then
        off = probe_limit / implied - 1
        ok &= abs(off) <= PREDICTION_BAR
        record_bar(f"probe-scaled limit vs the one {name}'s own speed-up implies, |off|", abs(off), PREDICTION_BAR)
        print(
            f"  {name}: {here:.3f} s here vs {then:.3f} s calibrated: speed ratio {here / then:.2f}, "
            f"implied limit {implied:.3f} s; probe-scaled {probe_limit:.3f} s ({off:+.0%}, bar "
            f"{PREDICTION_BAR:.0%})"
        )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=6, help="gradings per condition (default 6)")
    parser.add_argument("--busy", type=int, default=2, help="busy processes in the loaded condition")
    parser.add_argument("--submission", default="time_limit_exceeded/element_loops.py")
    parser.add_argument("--calibrate", action="store_true", help="calibrate in memory first, and use that")
    parser.add_argument("--bundle", type=Path, default=ROOT)
    args = parser.parse_args()
    bundle = open_bundle(args.bundle.resolve())
    path = bundle.submissions / args.submission
    if args.runs < 1 or not path.is_file():
        print(f"bench_limits: need --runs >= 1 and an existing submission ({path})", file=sys.stderr)
        return 2
    if args.calibrate:
        start = time.monotonic()
        cal = calibrate(bundle, allow_busy=True)
        record = cal.data
        spec = bundle.spec
        calibrated = dataclasses.replace(
            spec,
            time_calibration=dataclasses.replace(spec.time_calibration, probe_time_s=record["derived"]["probe_time_s"]),
        )
        bundle = Bundle(bundle.root, calibrated)
        print(
            f"calibrated in memory ({time.monotonic() - start:.0f} s): probe_time_s "
            f"{record['derived']['probe_time_s']:g}, time_per_test_s {record['derived']['time_per_test_s']:g}"
            + (f"; warnings: {'; '.join(record['warnings'])}" if record.get("warnings") else "")
        )
    else:
        record = yaml.safe_load(bundle.calibration_file.read_text(encoding="utf-8"))
    print(f"1. steadiness: {args.submission}, {args.runs} gradings per condition")
    limits, readings = steadiness(bundle, path, args.runs, args.busy)
    if not limits:
        print("no grading read the probe: pick a slower --submission")
        return 1
    steady = max(limits) / min(limits)
    spread = max(readings) / min(readings)
    print(
        f"  effective limit max/min {steady:.3f} (bar {STEADY_BAR}); probe readings max/min {spread:.3f} "
        f"(the limit's, outside the noise band); probe_time_s {bundle.spec.time_calibration.probe_time_s:g}"
    )
    record_bar(
        f"effective limit max/min over {len(limits)} gradings, idle and beside {args.busy} busy", steady, STEADY_BAR
    )
    print("2. the probe's prediction")
    predicted = prediction(bundle, record, statistics.median(limits))
    ok = steady <= STEADY_BAR and predicted
    print("bench_limits: OK" if ok else "bench_limits: NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
