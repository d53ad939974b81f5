#!/usr/bin/env python3
"""Where one grading's CPU time goes, process by process: the parent, the zygote, the workers.

Runs `python -m grader grade reference/solution.py` (or the file given) under
`perf record` twice: once sampling CPU time at 4 kHz, once tracing every user
page fault (`exceptions:page_fault_user`). perf records that command and the
processes it forks, nothing else; the fork events give the tree (the parent, the
process that forks the workers, its workers), so other programs on the machine,
other graders among them, are never counted. Prints the CPU milliseconds of the
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
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Every `grade` measured here runs in its own process tree, never in a `serve` the developer left running.
os.environ["GRADER_SERVER"] = "off"
HZ = 4000
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
LINE = re.compile(r"^\s*(\S+)\s+(\d+)\s+([\d.]+):\s*(.*)$")
FAULT = re.compile(r"address=0x[0-9a-f]+ ip=0x[0-9a-f]+ error_code=0x([0-9a-f]+)")
FORK = re.compile(r"PERF_RECORD_FORK\((\d+):\d+\):\((\d+):\d+\)")
WORKLOAD = re.compile(r"PERF_RECORD_COMM: perf-exec:(\d+)/")
EXEC = re.compile(r"PERF_RECORD_COMM exec: \S+:(\d+)/")
Row = tuple[int, float, str]


@dataclass
class Recording:
    """One `perf script --show-task-events` of a recorded command: its pid (perf names the
    process it starts `perf-exec` until the exec), which process forked which, which ran a
    new program, and the events."""

    root: int | None = None
    parent_of: dict[int, int] = field(default_factory=dict)
    execed: set[int] = field(default_factory=set)
    rows: list[Row] = field(default_factory=list)


def record(perf: str, events: list[str], grade: list[str], out: Path) -> str:
    """`perf script` of `grade` recorded on its own: perf follows the command's children and
    records no other process, so other programs on the machine are never counted."""
    subprocess.run(
        [perf, "record", "-q", *events, "-o", str(out), "--", *grade],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return subprocess.run(
        [perf, "script", "--show-task-events", "-i", str(out), "-F", "comm,pid,time,trace"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout


def parse(text: str) -> Recording:
    """The workload's pid, the forks (a new thread is not a new process), the execs and every event."""
    rec = Recording()
    for line in text.splitlines():
        if (m := WORKLOAD.search(line)) and rec.root is None:
            rec.root = int(m.group(1))
        elif m := EXEC.search(line):
            rec.execed.add(int(m.group(1)))
        elif m := FORK.search(line):
            child, parent = int(m.group(1)), int(m.group(2))
            if child != parent:
                rec.parent_of[child] = parent
        elif (m := LINE.match(line)) and not m.group(4).startswith("PERF_RECORD_"):
            rec.rows.append((int(m.group(2)), float(m.group(3)), m.group(4)))
    return rec


def descendants(parent_of: dict[int, int], root: int) -> set[int]:
    """`root` and every process forked, directly or not, from it."""
    tree, grew = {root}, True
    while grew:
        more = {child for child, parent in parent_of.items() if parent in tree}
        grew = not more <= tree
        tree |= more
    return tree


def roles(rec: Recording) -> tuple[int, int, list[int], list[Row]] | None:
    """The parent (the recorded command), the zygote (the process of its tree that forked the
    most workers), its workers (children that ran no new program: forks of the zygote's
    interpreter) and the events of the tree alone; None if the grading forked no worker."""
    if rec.root is None:
        return None
    tree = descendants(rec.parent_of, rec.root)
    forks = {
        child: parent
        for child, parent in rec.parent_of.items()
        if child in tree and child not in rec.execed and parent != rec.root
    }
    if not forks:
        return None
    zygote = Counter(forks.values()).most_common(1)[0][0]
    workers = sorted(child for child, parent in forks.items() if parent == zygote)
    return rec.root, zygote, workers, [row for row in rec.rows if row[0] in tree]


def after_first_worker(rows: list[Row], zygote: int, workers: list[int]) -> int:
    """The zygote's events from its first worker's first event on."""
    first = min((t for pid, t, _ in rows if pid in workers), default=float("inf"))
    return sum(1 for pid, t, _ in rows if pid == zygote and t >= first)


def print_cpu(title: str, found: tuple[int, int, list[int], list[Row]]) -> None:
    """CPU milliseconds of the parent, the zygote (before and after its first worker), the workers."""
    parent, zygote, workers, rows = found
    ms = Counter(pid for pid, _, _ in rows)
    z_before = ms[zygote] - after_first_worker(rows, zygote, workers)
    per_worker = [ms[p] * 1000 / HZ for p in workers]
    print(f"{title}: one grading, CPU time sampled at {HZ} Hz")
    print(f"  parent   {ms[parent] * 1000 / HZ:6.0f} ms")
    print(
        f"  zygote   {ms[zygote] * 1000 / HZ:6.0f} ms: {z_before * 1000 / HZ:.0f} ms before its first worker, "
        f"then {(ms[zygote] - z_before) * 1000 / HZ / len(workers):.1f} ms per run"
    )
    print(f"  workers  {sum(per_worker):6.0f} ms: {len(workers)} runs, median {statistics.median(per_worker):.1f} ms")
    print(f"  all      {sum(ms.values()) * 1000 / HZ:6.0f} ms")


def print_faults(found: tuple[int, int, list[int], list[Row]]) -> None:
    """Page faults of the parent, the zygote and the workers (writes and reads)."""
    parent, zygote, workers, rows = found
    kinds: dict[int, Counter] = defaultdict(Counter)
    for pid, _, rest in rows:
        if m := FAULT.search(rest):
            kinds[pid]["write" if int(m.group(1), 16) & 2 else "read"] += 1
    z_after = after_first_worker(rows, zygote, workers)
    w = [sum(kinds[p].values()) for p in workers]
    ww = [kinds[p]["write"] for p in workers]
    print("page faults (a second grading, traced)")
    print(f"  parent   {sum(kinds[parent].values()):6d}")
    print(
        f"  zygote   {sum(kinds[zygote].values()):6d}: {z_after / len(workers):.0f} per run after its first "
        "worker (each fork write-protects its memory again)"
    )
    print(
        f"  workers  median {statistics.median(w):.0f} per run, of which {statistics.median(ww):.0f} "
        "writes (copies of the zygote's pages, first touches of new memory)"
    )


def main() -> int:
    args = sys.argv[1:]
    extra = args[args.index("--") + 1 :] if "--" in args else []
    args = args[: args.index("--")] if "--" in args else args
    perf = shutil.which("perf")
    if perf is None or os.geteuid() != 0:
        print(
            "cpu_split: needs root and the `perf` tool (linux-perf); "
            f"{'perf is not installed' if perf is None else 'not running as root'}",
            file=sys.stderr,
        )
        return 2
    target = args[0] if args else "reference/solution.py"
    grade = [sys.executable, "-m", "grader", "grade", target, "--json", os.devnull, *extra]
    with tempfile.TemporaryDirectory() as tmp:
        cpu = roles(parse(record(perf, ["-F", str(HZ)], grade, Path(tmp) / "cpu.data")))
        faults = roles(parse(record(perf, ["-e", "exceptions:page_fault_user"], grade, Path(tmp) / "faults.data")))
    if cpu is None or faults is None:
        print(
            f"cpu_split: the grading ran no test in the sandbox (see `python -m grader grade {target}`)",
            file=sys.stderr,
        )
        return 1
    print_cpu(f"{target} {' '.join(extra)}", cpu)
    print_faults(faults)
    return 0


if __name__ == "__main__":
    sys.exit(main())
