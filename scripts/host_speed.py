#!/usr/bin/env python3
"""How steady is this machine's own speed? Three kinds of CPU work, in fresh processes.

    python3 scripts/host_speed.py [--processes 12]

Runs three kinds of work the submissions do (BLAS matmul, NumPy elementwise,
an interpreter loop; the speed probe, sandbox/inside/worker.py's
probe_workload, mixes these with others) in a fresh interpreter per line,
outside the sandbox, and prints each part's minimum of 8 runs in thread CPU
time (ms), then the spread of each column. If all three columns move
together from line to line, the machine itself ran at a different speed (its
host's doing), not the probe or the sandbox: docs/time-limits.md, "The host's
own speed".
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

PARTS = r"""
import numpy as np, time
rng = np.random.default_rng(12345); a = rng.standard_normal((96, 96))
def blas():
    for _ in range(16): a @ a.T
def elementwise():
    b = a @ a.T / 96.0
    for _ in range(16): np.exp(np.tanh(b) - b.max(axis=-1, keepdims=True)).sum()
def interpreter():
    acc = 0.0
    for i in range(25000): acc += (i % 7) * 0.5
out = []
for f in (blas, elementwise, interpreter):
    runs = []
    for _ in range(8):
        t = time.thread_time(); f(); runs.append(time.thread_time() - t)
    out.append(min(runs) * 1000)
print(" ".join(f"{x:.3f}" for x in out))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--processes", type=int, default=12)
    args = ap.parse_args()
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    rows = []
    print(f"{'blas (ms)':>10} {'elementwise':>12} {'interpreter':>12}")
    for _ in range(max(2, args.processes)):
        out = subprocess.run([sys.executable, "-c", PARTS], env=env, capture_output=True, text=True, check=True)
        row = [float(x) for x in out.stdout.split()]
        rows.append(row)
        print(f"{row[0]:10.3f} {row[1]:12.3f} {row[2]:12.3f}")
    print()
    for i, name in enumerate(("blas", "elementwise", "interpreter")):
        col = [r[i] for r in rows]
        print(f"{name:12} median {statistics.median(col):.3f} ms, slowest / fastest {max(col) / min(col):.2f}")
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
