#!/usr/bin/env python3
"""Where one grading's CPU time goes, process by process: the parent, the zygote, the workers.

Runs `python -m grader grade reference/solution.py` (or the file given) under
`perf record -a` twice: once sampling CPU time at 4 kHz, once tracing every user
page fault (`exceptions:page_fault_user`). Prints the CPU milliseconds of the
parent, of the zygote (before the first worker, and per run after it) and of each
worker (median), and the page faults of each (writes, that is copy-on-write or
first touches, and reads). Needs root and `perf` (linux-perf / linux-tools); it
says so and stops otherwise. Sampling adds 5-10 % to every figure; the ratios
between the processes are what it is for. docs/cli.md, "Performance", quotes it.

    python3 scripts/cpu_split.py [FILE] [-- EXTRA GRADE ARGS]
"""
from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HZ = 4000
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
LINE = re.compile(r"^\s*(\S+)\s+(\d+)\s+([\d.]+):\s*(.*)$")
FAULT = re.compile(r"address=0x[0-9a-f]+ ip=0x[0-9a-f]+ error_code=0x([0-9a-f]+)")


def record(perf: str, events: list[str], grade: list[str], out: Path) -> list[tuple[int, float, str]]:
    """(pid, time, rest of the line) of every event in processes called python."""
    subprocess.run([perf, "record", "-q", "-a", *events, "-o", str(out), "--", *grade],
                   cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    text = subprocess.run([perf, "script", "-i", str(out), "-F", "comm,pid,time,trace"],
                          capture_output=True, text=True, check=False).stdout
    rows = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m and m.group(1) == "python":
            rows.append((int(m.group(2)), float(m.group(3)), m.group(4)))
    return rows


def roles(rows: list[tuple[int, float, str]]) -> tuple[int, int, list[int]] | None:
    """The parent (first pid), the zygote (the busiest after it) and the workers (its later
    pids); None if the grading started no sandbox."""
    count = Counter(pid for pid, _, _ in rows)
    pids = sorted(count)
    if len(pids) < 2:
        return None
    zygote = max(pids[1:], key=lambda p: count[p])
    return pids[0], zygote, [p for p in pids if p > zygote]


def after_first_worker(rows: list[tuple[int, float, str]], zygote: int, workers: list[int]) -> int:
    """The zygote's events from its first worker's first event on."""
    first = min((t for pid, t, _ in rows if pid in workers), default=float("inf"))
    return sum(1 for pid, t, _ in rows if pid == zygote and t >= first)


def main() -> int:
    args = sys.argv[1:]
    extra = args[args.index("--") + 1:] if "--" in args else []
    args = args[:args.index("--")] if "--" in args else args
    perf = shutil.which("perf")
    if perf is None or os.geteuid() != 0:
        print("cpu_split: needs root and the `perf` tool (linux-perf); "
              f"{'perf is not installed' if perf is None else 'not running as root'}", file=sys.stderr)
        return 2
    target = args[0] if args else "reference/solution.py"
    grade = [sys.executable, "-m", "grader", "grade", target, "--json", os.devnull, *extra]
    with tempfile.TemporaryDirectory() as tmp:
        cpu = record(perf, ["-F", str(HZ)], grade, Path(tmp) / "cpu.data")
        faults = record(perf, ["-e", "exceptions:page_fault_user"], grade, Path(tmp) / "faults.data")
    cpu_roles, fault_roles = roles(cpu), roles(faults)
    if any(r is None or not r[2] for r in (cpu_roles, fault_roles)):
        print(f"cpu_split: the grading ran no test in the sandbox (see `python -m grader grade {target}`)",
              file=sys.stderr)
        return 1

    parent, zygote, workers = cpu_roles
    ms = Counter(pid for pid, _, _ in cpu)
    z_before = ms[zygote] - after_first_worker(cpu, zygote, workers)
    runs = len(workers)
    per_worker = [ms[p] * 1000 / HZ for p in workers]
    print(f"{target} {' '.join(extra)}: one grading, CPU time sampled at {HZ} Hz")
    print(f"  parent   {ms[parent] * 1000 / HZ:6.0f} ms")
    print(f"  zygote   {ms[zygote] * 1000 / HZ:6.0f} ms: {z_before * 1000 / HZ:.0f} ms before its first worker, "
          f"then {(ms[zygote] - z_before) * 1000 / HZ / runs:.1f} ms per run")
    print(f"  workers  {sum(per_worker):6.0f} ms: {len(workers)} runs, median {statistics.median(per_worker):.1f} ms")
    print(f"  all      {sum(ms.values()) * 1000 / HZ:6.0f} ms")

    fparent, fzygote, fworkers = fault_roles
    kinds: dict[int, Counter] = defaultdict(Counter)
    for pid, _, rest in faults:
        m = FAULT.search(rest)
        if m:
            kinds[pid]["write" if int(m.group(1), 16) & 2 else "read"] += 1
    z_after = after_first_worker(faults, fzygote, fworkers)
    w = [sum(kinds[p].values()) for p in fworkers]
    ww = [kinds[p]["write"] for p in fworkers]
    print("page faults (a second grading, traced)")
    print(f"  parent   {sum(kinds[fparent].values()):6d}")
    print(f"  zygote   {sum(kinds[fzygote].values()):6d}: {z_after / len(fworkers):.0f} per run after its first "
          "worker (each fork write-protects its memory again)")
    print(f"  workers  median {statistics.median(w):.0f} per run, of which {statistics.median(ww):.0f} "
          "writes (copies of the zygote's pages, first touches of new memory)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
