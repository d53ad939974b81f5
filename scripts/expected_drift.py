#!/usr/bin/env python3
"""How far did the expected outputs move? testcases/ at a git revision against the working tree.

    python3 scripts/expected_drift.py REVISION

For every case file present in both, with the same inputs, it counts the
expected values that differ, the largest difference in units in the last
place, and the largest difference as a fraction of the grading tolerance
(|old - new| / (atol + rtol |new|), problem.yaml's comparison). A fraction far
below 1 means the change cannot turn any verdict; docs/measurements.md keeps
the figures of each regeneration. Status 1 when a fraction reaches 1e-3.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.problem.bundle import open_bundle  # noqa: E402 - the repository on sys.path first
from grader.problem.cases import case_from_bytes  # noqa: E402 - the repository on sys.path first

ALARM = 1e-3


def _old_bytes(revision: str, rel: str) -> bytes | None:
    done = subprocess.run(["git", "-C", str(ROOT), "show", f"{revision}:{rel}"], capture_output=True)
    return done.stdout if done.returncode == 0 else None


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    def ordered(x: np.ndarray) -> np.ndarray:
        i = x.view(np.int64)
        return np.where(i < 0, np.int64(-(2**63)) - i, i)

    return np.abs(ordered(a) - ordered(b))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revision", help="a git revision holding the old testcases/")
    args = parser.parse_args()
    bundle = open_bundle(ROOT)
    rtol, atol = bundle.spec.comparison.rtol, bundle.spec.comparison.atol
    values = differing = 0
    worst_ulps = 0
    worst_fraction = 0.0
    for path in sorted(bundle.testcases.rglob("*.json")):
        rel = str(path.relative_to(ROOT))
        old_raw = _old_bytes(args.revision, rel)
        if old_raw is None or path.name == "mistakes-sample.json":
            continue
        old, new = case_from_bytes(old_raw, rel), case_from_bytes(path.read_bytes(), rel)
        if any(not np.array_equal(old.inputs[k], new.inputs[k]) for k in new.inputs):
            print(f"{rel}: inputs changed, not compared")
            continue
        before, after = old.expected_output, new.expected_output
        ulps = _ulps(before, after)
        fraction = float(np.max(np.abs(before - after) / (atol + rtol * np.abs(after))))
        values += after.size
        differing += int(np.count_nonzero(ulps))
        worst_ulps = max(worst_ulps, int(ulps.max()))
        worst_fraction = max(worst_fraction, fraction)
    print(
        f"{values} expected values compared, {differing} differ "
        f"({100 * differing / max(values, 1):.2f} %); largest difference {worst_ulps} ulp, "
        f"{worst_fraction:.2e} of the tolerance (atol {atol:g}, rtol {rtol:g})"
    )
    return 1 if worst_fraction >= ALARM else 0


if __name__ == "__main__":
    sys.exit(main())
