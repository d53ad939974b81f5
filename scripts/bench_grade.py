#!/usr/bin/env python3
"""What the sandboxed grader costs, measured side by side.

In each repetition, alternately: the wall time of the real CLI grading the
reference on all tests (`python -m grader grade reference/solution.py --json
OUT`), the wall time of a bare in-process loop calling the reference on the
same cases (with the cases already in memory, and including reading the case
files), and the CLI on the samples only. Prints medians, the spread, and the
ratios of the medians. Usage:

    python3 scripts/bench_grade.py [--repeats 5]

The machine is shared: the load average is printed with the figures, and the
spread says how noisy the run was. No figure here is asserted anywhere.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# The sandbox runs BLAS single-threaded; so does the bare loop, for a like-for-like
# comparison (set before NumPy is imported; the CLI subprocesses are unaffected).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402

from grader.problem.bundle import open_bundle  # noqa: E402
from grader.problem.cases import load_cases  # noqa: E402


def cli_grade(tests: str, out: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "grader", "grade", "reference/solution.py", "--tests", tests,
                           "--json", str(out)], cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"grading the reference failed ({proc.returncode}): {proc.stderr.strip()}")
    return elapsed


def bare_loop(bundle, reference, cases=None) -> float:
    """Call the reference on every case and compare, in this process; read the files if `cases` is None."""
    start = time.perf_counter()
    if cases is None:
        cases = load_cases(bundle.testcases, bundle.group_names("all"))
    rtol, atol = bundle.spec.comparison.rtol, bundle.spec.comparison.atol
    for c in cases:
        got = reference.vit_encoder_block(*c.args())
        if not np.all(np.abs(got - c.expected) <= atol + rtol * np.abs(c.expected)):
            raise SystemExit(f"the reference fails {c.name}")
    return time.perf_counter() - start


def describe(name: str, values: list[float]) -> str:
    med = statistics.median(values)
    return (f"| {name} | {med:.3f} s | {min(values):.3f}-{max(values):.3f} s | "
            f"{(max(values) - min(values)) / med:.0%} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    bundle = open_bundle(ROOT)
    reference = bundle.load_reference_module()
    cases = load_cases(bundle.testcases, bundle.group_names("all"))
    times: dict[str, list[float]] = {"all": [], "bare": [], "bare_read": [], "sample": []}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "verdict.json"
        cli_grade("sample", out)                 # warm the page cache once, not measured
        for _ in range(args.repeats):
            times["all"].append(cli_grade("all", out))
            times["bare"].append(bare_loop(bundle, reference, cases))
            times["bare_read"].append(bare_loop(bundle, reference))
            times["sample"].append(cli_grade("sample", out))
    load_after = os.getloadavg()[0]
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"NumPy {np.__version__}; load average {load_before:.2f} before, {load_after:.2f} after")
    print(f"{args.repeats} repetitions, each: CLI all, bare loop, bare loop reading the files, CLI sample "
          f"({len(cases)} cases)")
    print()
    print("| what | median | range | spread |")
    print("|---|---|---|---|")
    print(describe(f"`grade reference/solution.py` (all {len(cases)} tests, CLI, sandboxed)", times["all"]))
    print(describe("bare in-process loop over the same cases (cases in memory)", times["bare"]))
    print(describe("bare in-process loop, reading the case files too", times["bare_read"]))
    print(describe("`grade reference/solution.py --tests sample` (CLI, sandboxed)", times["sample"]))
    print()
    print(f"ratio, sandboxed CLI (all) / bare loop: {med['all'] / med['bare']:.0f}x "
          f"({med['all'] / med['bare_read']:.1f}x against the loop that reads the files)")
    print(f"overhead of the CLI over the bare loop: {med['all'] - med['bare']:.2f} s for {len(cases)} tests, "
          f"{(med['all'] - med['bare_read']) / len(cases) * 1000:.0f} ms per test beyond reading the files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
