#!/usr/bin/env python3
"""How well does the speed probe predict the submissions' own change of speed?

For every accepted and too-slow submission of the root bundle and of
track/patch-embedding that finishes within --cap seconds, times its slowest case
(calibration.yaml's) and reads the probe, in a fresh interpreter per condition:

    default       as the machine is
    again         the same once more: the method's own noise, the floor of every error below
    nehalem       OPENBLAS_CORETYPE=Nehalem (OpenBLAS's SSE kernels: slower BLAS)
    sandybridge   OPENBLAS_CORETYPE=Sandybridge (AVX kernels)
    busy          pinned to CPU 0 (taskset), beside a busy process on each CPU
    busy-memory   the same, the busy processes copying 64 MiB arrays (caches and memory
                  bus shared, as other containers share them)

A submission's ratio is its time in a condition over its time in `default`
(the minimum of --repeats calls each), the probe's ratio is the same for a
reading (the minimum of PROBE_REPEATS calls, as grading reads it; the median
of READINGS readings); the error is probe ratio / submission ratio - 1: what a
limit scaled by the probe gives the submission, over what it needs. Prints the
current probe (child.probe_workload) and the one it replaced (OLD_PROBE, kept
here for the comparison) side by side, then per condition the median and
largest |error| of each, over every submission and over those near the limit
(calibrated at NEAR_S seconds or more: the ones whose verdict a limit could
change). Usage:

    python3 scripts/probe_fit.py [--repeats 3] [--cap 6] [--conditions nehalem,busy]

Outside the sandbox (the ratios between conditions are what matters, and the
sandbox's costs are the same in each). Figures depend on the machine;
docs/time-limits.md quotes them.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BUNDLES = (ROOT, ROOT / "track" / "patch-embedding")
CONDITIONS: dict[str, dict[str, str]] = {
    "again": {},
    "nehalem": {"OPENBLAS_CORETYPE": "Nehalem"},
    "sandybridge": {"OPENBLAS_CORETYPE": "Sandybridge"},
    "busy": {},
    "busy-memory": {},
}

READINGS = 5  # probe readings per condition; their median is the probe's figure
NEAR_S = 0.1  # calibrated time from which a submission is "near the limit" in the summary

BUSY = {
    "busy": "while True: pass",
    "busy-memory": "import numpy as np\na = np.ones(1 << 23)\nwhile True: b = a.copy(); a[:] = b",
}

# The probe before the mix (one 96x96 matmul with tanh/exp 16 times, then an integer loop).
OLD_PROBE = """
def old_probe(np):
    import time
    rng = np.random.default_rng(12345)
    a = rng.standard_normal((96, 96))
    start = time.thread_time()
    acc = 0.0
    for _ in range(16):
        b = np.tanh(a @ a.T / 96.0)
        acc += float(np.exp(b - b.max(axis=-1, keepdims=True)).sum())
    for i in range(25000):
        acc += (i % 7) * 0.5
    return time.thread_time() - start, acc
"""


def worker(job: dict[str, Any]) -> dict[str, Any]:
    """In the condition's interpreter: the probes' readings and each submission's time."""
    import numpy as np

    from grader.judging.judge import GradeOptions, cases_step
    from grader.problem.bundle import open_bundle
    from grader.sandbox.child import probe_workload
    from grader.sandbox.startup import PROBE_REPEATS

    space: dict[str, Any] = {}
    exec(OLD_PROBE, space)
    out: dict[str, Any] = {"subs": {}}
    old: list[float] = []
    new: list[float] = []
    for _ in range(1 + READINGS):  # the first pass warms the caches and is dropped
        old.append(min(space["old_probe"](np)[0] for _ in range(PROBE_REPEATS)))
        new.append(min(probe_workload(np)[0] for _ in range(PROBE_REPEATS)))
    out["old"], out["new"] = statistics.median(old[1:]), statistics.median(new[1:])
    for root, entries in job["bundles"].items():
        bundle = open_bundle(Path(root))
        cases = {c.name: c for c in cases_step(bundle, GradeOptions(tests="all"))}
        for path, case in entries:
            spec = importlib.util.spec_from_file_location("solution", path)
            assert spec is not None and spec.loader is not None
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            fn = getattr(mod, bundle.spec.function)
            args = list(cases[case].inputs.values())
            runs = []
            for _ in range(job["repeats"]):
                fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
                start = time.thread_time()
                fn(*fresh)
                runs.append(time.thread_time() - start)
            out["subs"][path] = min(runs)
    return out


def run_condition(name: str, job: dict[str, Any]) -> dict[str, Any]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.update(CONDITIONS.get(name, {}))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(job)]
    busy: list[subprocess.Popen[bytes]] = []
    if name.startswith("busy"):
        if shutil.which("taskset") is None:
            raise SystemExit("probe_fit: the busy condition needs taskset (util-linux)")
        cmd = ["taskset", "-c", "0", *cmd]
        for cpu in range(min(2, os.cpu_count() or 1)):
            busy.append(
                subprocess.Popen(
                    ["taskset", "-c", str(cpu), sys.executable, "-c", BUSY[name]],
                    stdout=subprocess.DEVNULL,
                )
            )
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    finally:
        for p in busy:
            p.kill()
            p.wait()
    if done.returncode != 0:
        raise SystemExit(f"probe_fit: the {name} run failed: {done.stderr.strip().splitlines()[-1:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def slowest_cases(root: Path, cap: float) -> list[tuple[str, str, float]]:
    """(submission path, its slowest case, its calibrated seconds) of the finite accepted/TLE ones."""
    import yaml

    data = yaml.safe_load((root / "calibration.yaml").read_text(encoding="utf-8"))
    out = []
    for entry in (*data["accepted"], *data["time_limit_exceeded"]):
        if entry.get("time_s") is not None and entry["time_s"] <= cap:
            out.append((str(root / "submissions" / entry["submission"]), entry["slowest_case"], entry["time_s"]))
    return out


def summary(rows: list[tuple[str, str, float, float]]) -> str:
    """`old med/max  new med/max` of the rows' absolute errors."""
    if not rows:
        return "-"
    old = [abs(r[2]) for r in rows]
    new = [abs(r[3]) for r in rows]
    return f"old {statistics.median(old):.0%} / {max(old):.0%}   new {statistics.median(new):.0%} / {max(new):.0%}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cap", type=float, default=6.0, help="skip submissions calibrated above this (s)")
    parser.add_argument("--conditions", default=",".join(CONDITIONS))
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    wanted = [c for c in args.conditions.split(",") if c]
    unknown = [c for c in wanted if c not in CONDITIONS]
    if unknown or args.repeats < 1:
        print(f"probe_fit: unknown condition(s) {', '.join(unknown)}; known: {', '.join(CONDITIONS)}", file=sys.stderr)
        return 2
    bundles = {str(b): [(p, c) for p, c, _ in slowest_cases(b, args.cap)] for b in BUNDLES}
    job = {"bundles": bundles, "repeats": args.repeats}
    base = run_condition("default", job)
    print(
        f"default: old probe {base['old'] * 1000:.2f} ms, new probe {base['new'] * 1000:.2f} ms (readings, "
        f"min of the calls); load average {os.getloadavg()[0]:.1f}"
    )
    near = {p for b in BUNDLES for p, _, t in slowest_cases(b, args.cap) if t >= NEAR_S}
    rows: list[tuple[str, str, float, float]] = []  # (condition, submission, old error, new error)
    for name in wanted:
        got = run_condition(name, job)
        old_r, new_r = got["old"] / base["old"], got["new"] / base["new"]
        print(f"\n{name}: probe ratio old {old_r:.2f}, new {new_r:.2f}")
        print(f"  {'submission':<52} {'default':>8} {'ratio':>6} {'old err':>8} {'new err':>8}")
        for path, t0 in base["subs"].items():
            ratio = got["subs"][path] / t0
            e_old, e_new = old_r / ratio - 1, new_r / ratio - 1
            rows.append((name, path, e_old, e_new))
            short = str(Path(path).relative_to(ROOT))
            print(f"  {short:<52} {t0:>7.3f}s {ratio:>6.2f} {e_old:>+8.0%} {e_new:>+8.0%}")
    print("\nsummary: |error| median / max, old probe vs new probe")
    for name in wanted:
        for label, keep in (("all", lambda p: True), ("near the limit", lambda p: p in near)):
            sel = [r for r in rows if r[0] == name and keep(r[1])]
            if sel:
                print(f"  {name:<12} {label:<15} n={len(sel):<3} " + summary(sel))
    real = [r for r in rows if r[0] != "again"]  # `again` is the method's noise, not a condition
    if real:
        print(f"  {'every condition but again':<28} n={len(real):<3} " + summary(real))
        print(
            f"  {'... near the limit':<28} n={sum(r[1] in near for r in real):<3} "
            + summary([r for r in real if r[1] in near])
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
