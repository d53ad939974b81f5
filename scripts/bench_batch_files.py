#!/usr/bin/env python3
"""Where a batch's CPU goes, student by student: each file of the benchmark class in `batch`
against the bare process on the same file.

    python3 scripts/bench_batch_files.py [--copies 4] [--repeats 3] [KEY ...]

For each student of scripts/bench_batch.py's 40-submission class
(tests/batch_class.py; KEY picks some by name), `batch --jobs 1` grades a
folder of one copy of the file and a folder of COPIES copies; the difference
over COPIES - 1 is what one more such student costs a batch (the batch's own
start, its master and the class's summary cancel out). Beside it, the bare
process of bench_batch.py (NumPy, the cases from the grader's cache, the
function called on each case in-process, stopped at the first case over the
grader's CPU limit; the median of REPEATS) on the same file. Both run with
BLAS single-threaded and are measured over the whole process tree
(scripts/cpu_meter.py). Prints one row per student, then each verdict's
share of the difference: which kinds of submission make a batch cost more
than running the files. The host is shared: the figures are indicative.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ["GRADER_SERVER"] = "off"  # every batch in its own process tree, never in a `serve`
sys.path.insert(0, str(ROOT / "tests"))
import batch_class as bc  # noqa: E402 - tests/ on sys.path first
from bench_batch import BARE, ONE_THREAD  # noqa: E402 - scripts/ is on sys.path (this script's folder)
from cpu_meter import CpuMeter  # noqa: E402 - scripts/ is on sys.path


def _batch_cpu(meter: CpuMeter, student: bc.Student, copies: int, base: Path) -> tuple[float, dict]:
    """CPU seconds of `batch --jobs 1` on a folder of `copies` copies, and the first copy's verdict JSON."""
    folder, out = base / f"{student.key}-{copies}", base / f"out-{student.key}-{copies}"
    folder.mkdir()
    for i in range(copies):
        (folder / f"copy{i}{student.suffix}").write_bytes(student.content)
    cmd = [sys.executable, "-m", "grader", "batch", str(folder), "--out", str(out), "--jobs", "1"]
    _, cpu, proc = meter.run(cmd, ROOT, ONE_THREAD)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"batch failed on {student.key} (exit {proc.returncode}): {proc.stderr[-500:]}")
    return cpu, json.loads((out / "copy0.json").read_text(encoding="utf-8"))


def measure(meter: CpuMeter, student: bc.Student, copies: int, repeats: int, base: Path) -> tuple[str, float, float]:
    """(the verdict, one more such student's batch CPU, the bare process's CPU) in seconds."""
    one, report = _batch_cpu(meter, student, 1, base)
    many, _ = _batch_cpu(meter, student, copies, base)
    cap = float((report.get("limits") or {}).get("cpu_s_per_test") or 1.0)
    path = base / f"{student.key}-1" / f"copy0{student.suffix}"
    bare = [
        meter.run([sys.executable, "-c", BARE, str(path), str(cap), "all"], ROOT, ONE_THREAD)[1] for _ in range(repeats)
    ]
    return report["verdict"], (many - one) / (copies - 1), statistics.median(bare)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("keys", nargs="*", metavar="KEY", help="only these students (tests/batch_class.py's keys)")
    parser.add_argument("--copies", type=int, default=4, help="copies in the larger folder (default 4)")
    parser.add_argument("--repeats", type=int, default=3, help="bare runs per file, median (default 3)")
    args = parser.parse_args()
    students = [s for s in bc.full_class() if not args.keys or s.key in args.keys]
    if not students or args.copies < 2:
        print("no student to measure (unknown KEY?) or --copies below 2", file=sys.stderr)
        return 2
    meter = CpuMeter("bench-batch-files")
    print(f"CPU measured with {meter.method}; load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    by_verdict: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    try:
        with tempfile.TemporaryDirectory(prefix="bench-batch-files-") as tmp:
            print(f"| {'student':34} | verdict | batch (ms) | bare (ms) | ratio |")
            print(f"|{'-' * 36}|---------|------------|-----------|-------|")
            for s in students:
                verdict, batch, bare = measure(meter, s, args.copies, max(1, args.repeats), Path(tmp))
                by_verdict[verdict][0] += batch
                by_verdict[verdict][1] += bare
                print(
                    f"| {s.key:34} | {verdict:7} | {batch * 1000:10.1f} | {bare * 1000:9.1f} | {batch / bare:5.2f} |",
                    flush=True,
                )
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 2
    finally:
        meter.close()
    total_batch = sum(b for b, _ in by_verdict.values())
    total_bare = sum(r for _, r in by_verdict.values())
    excess = total_batch - total_bare
    print(f"\nall: batch {total_batch:.2f} s, bare {total_bare:.2f} s, {total_batch / total_bare:.2f}x")
    for verdict, (b, r) in sorted(by_verdict.items(), key=lambda kv: kv[1][1] - kv[1][0]):
        share = (b - r) / excess if excess else 0.0
        print(f"  {verdict:4} batch {b:6.2f} s, bare {r:6.2f} s: {share:5.0%} of the difference")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
