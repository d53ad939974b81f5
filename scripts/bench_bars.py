#!/usr/bin/env python3
"""Every performance bar of a class graded at the cost of running it, side by side, in one run.

Runs, one after the other on this machine, scripts/bench_batch.py (a
40-submission class: CPU per submission against a bare process, and the
--jobs 2 speed-up against the host's own), scripts/bench_grade.py (`grade`
against the bare in-process loop, median of 9 alternating runs, and
`--tests sample` against `python3 -c "import numpy"`) and
scripts/bench_limits.py (the probe-scaled limit's steadiness over gradings
idle and beside busy processes, and its prediction of the submissions' own
speed-up), each printing its own figures as it goes, then the bars in one
table. Each script leaves its bars through scripts/bar_record.py. The host's
load average is printed at the start and the end: the figures are
indicative on a shared machine, and no test asserts them.

    python3 scripts/bench_bars.py [--repeats 9] [--batch-repeats 3] [--runs 6]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bar_record import ENV

HERE = Path(__file__).resolve().parent


def _run(script: str, *args: str, bars: Path) -> int:
    print(f"\n=== {script} {' '.join(args)}", flush=True)
    env = {**os.environ, ENV: str(bars)}
    return subprocess.run([sys.executable, str(HERE / script), *args], env=env, check=False).returncode


def table(rows: list[dict[str, Any]]) -> str:
    """The bars as a Markdown table: the figure, its bound, and whether it is met."""
    width = max([len(r["name"]) for r in rows] + [3])
    lines = [
        f"| {'bar':{width}} | {'figure':>8} | {'bar':>9} | met |",
        f"|{'-' * (width + 2)}|{'-' * 10}|{'-' * 11}|-----|",
    ]
    for r in rows:
        bound = f"{'<=' if r['at_most'] else '>='} {r['bar']:g}"
        lines.append(f"| {r['name']:{width}} | {r['value']:8.3f} | {bound:>9} | {'yes' if r['met'] else 'NO':>3} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9, help="bench_grade.py's alternating runs (default 9)")
    parser.add_argument("--batch-repeats", type=int, default=3, help="bench_batch.py's runs of each --jobs")
    parser.add_argument("--runs", type=int, default=6, help="bench_limits.py's gradings per condition")
    args = parser.parse_args()
    print(f"load average at the start: {os.getloadavg()[0]:.2f}; {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        bars = Path(tmp) / "bars.jsonl"
        bars.touch()
        statuses = [
            _run("bench_batch.py", "--repeats", str(args.batch_repeats), bars=bars),
            _run("bench_grade.py", "--repeats", str(args.repeats), "--worst-repeats", "1", bars=bars),
            _run("bench_limits.py", "--runs", str(args.runs), "--busy", "2", bars=bars),
        ]
        rows = [json.loads(line) for line in bars.read_text(encoding="utf-8").splitlines() if line]
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}\n")
    print(table(rows))
    failed = [s for s in statuses if s not in (0, 1)]
    if failed:
        print(f"a benchmark script failed (exit {failed[0]}): its bars are missing above")
        return 2
    return 0 if rows and all(r["met"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
