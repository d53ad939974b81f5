#!/usr/bin/env python3
"""Benchmark `batch`: --jobs 1 against --jobs 2 on a 40-submission class, against `grade` per file
and against a bare process per file.

    python scripts/bench_batch.py [--tests all|sample] [--repeats 3] [--keep DIR] [--no-grade]

The class (tests/batch_class.py): every accepted file, every catalogue
mistake, a syntax error, a crash, an infinite loop, a memory bomb, a notebook
and an unreadable (binary) file, 40 in all, split over three LMS layouts (a
Moodle zip, a Canvas folder, a Gradescope export). The script runs, in one
go: the batch with --jobs 1 and with --jobs 2, alternately, REPEATS times
each (a fresh output folder every time), and `python -m grader grade --json -`
once per file; then prints the median wall time (and range), CPU time per submission
(this process's children: the batch, its grading processes and every sandbox)
and the speed-up side by side, with the machine's own speed-up for two
CPU-bound processes measured before each pair (a rough gauge, from a 1 s
loop, of how the shared host lets two processes run at that moment: it
swings between about 1.5 and 2.0 here), checks that every student's verdict JSON
equals `grade`'s on the same file (apart from timings and the sandbox's
random uid), and that grades.csv parses with one row per student.

Then the two bars of issue 29 side by side: the batch's CPU time per
submission (the whole process tree: the batch, its grading processes, the
master, every zygote and worker) against a bare process's on the same files
(one process per file that imports NumPy, reads the cases through the
grader's case cache and runs the file's function on each case, in-process,
stopped at the first case over the grader's scaled CPU limit, as the
grader skips the rest after a TLE; BLAS single-threaded, as in the sandbox,
and, printed beside it, with the library's default threads), measured right after each pair of
batches and compared pair by pair (the median of the pairs' ratios: a shared
host's speed drifts over minutes), the bar being 1.0x; and the --jobs 2
speed-up as a share of the host's own two-process speed-up measured beside
it, the bar being 0.9x. The host is shared: the figures are indicative.

Beside the first bar, what the bar leaves room for: scripts/fork_floor.py's
fork-per-test floor (one process that imports NumPy once, then a fork per
test, no isolation at all, the results checked in pure Python) judging the
reference ROUNDS times over, its CPU per extra round being what one more
student costs such a design; then the same floor with each worker applying
the sandbox's own lock-down and nothing else of it (--lock-down: rlimits, a
uid of its own as root, Landlock, seccomp); both against the bare process on
the reference, all measured right after each pair of batches.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Every `grade` measured here runs in its own process tree, never in a `serve` the developer left running.
os.environ["GRADER_SERVER"] = "off"
sys.path.insert(0, str(ROOT / "tests"))
import batch_class as bc  # noqa: E402 - tests/ on sys.path first
from bar_record import record_bar  # noqa: E402 - scripts/ is on sys.path (this script's folder)
from batch_class import normalised  # noqa: E402 - tests/ on sys.path first
from cpu_meter import CpuMeter  # noqa: E402 - tests/ on sys.path first

sys.path.insert(0, str(ROOT))
from grader.sandbox.layers import MASTER_DETAIL  # noqa: E402 - the checkout first on sys.path
from grader.sandbox.startup import BLAS_THREAD_VARS  # noqa: E402 - the checkout first on sys.path

# The bare process's two environments: BLAS single-threaded, as in the sandbox (and as every
# grader process pins it), the bar's; and the library's default, a thread per core, which is how
# the first figure (0.27 s) was measured: OpenBLAS's idle threads spin on CPU time, about
# 0.12 s of a 0.28 s process here, so that baseline flatters the batch by about 1.7x.
ONE_THREAD = {**os.environ, **{v: "1" for v in BLAS_THREAD_VARS}}
DEFAULT_THREADS = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARS}
Timed = Callable[..., tuple[float, float, subprocess.CompletedProcess[str]]]

FLOOR = ROOT / "scripts" / "fork_floor.py"
FLOOR_ROUNDS = 11  # the floor's CPU per student: (11 rounds - 1 round) / 10
SPIN = "s = 0\nfor i in range(12_000_000):\n    s += i\n"  # about 1 s of one core, no I/O

# A bare process for one file: argv = FILE CPU_CAP_S TESTS. Nothing is isolated: trusted files only.
BARE = """
import os, resource, signal, sys
sys.path.insert(0, ".")
import numpy as np
from grader.problem.bundle import open_bundle
from grader.problem.case_cache import load_cases_cached

path, cap, tests = sys.argv[1], float(sys.argv[2]), sys.argv[3]
b = open_bundle(".")
cases = load_cases_cached(b.testcases, b.group_names(tests))
with open("/proc/self/statm") as f:
    base = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
resource.setrlimit(resource.RLIMIT_AS, (base + (b.spec.limits.memory_mib << 20),) * 2)


class Stop(BaseException):
    pass


def stop(*_):
    raise Stop


signal.signal(signal.SIGPROF, stop)
signal.signal(signal.SIGALRM, stop)
ns = {"__name__": "solution"}
try:
    with open(path, "rb") as f:
        exec(compile(f.read(), path, "exec"), ns)
    fn = ns[b.spec.function]
except BaseException:
    sys.exit(0)
for c in cases:
    signal.setitimer(signal.ITIMER_PROF, cap)
    signal.setitimer(signal.ITIMER_REAL, 5 * cap)
    try:
        fn(*c.args())
    except Stop:
        break
    except BaseException:
        pass
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
"""


def machine_ceiling() -> float:
    """This machine's own speed-up for two CPU-bound processes at once, right now:
    2 x (one alone) / (two side by side). A rough gauge: one short sample of a noisy host."""

    def spin(n: int) -> float:
        start = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(n)]
        for proc in procs:
            proc.wait()
        return time.perf_counter() - start

    return 2 * spin(1) / spin(2)


def build(base: Path) -> tuple[list[Path], dict[str, Path]]:
    """The class in three layouts; returns the inputs and, per file, a copy to give `grade`."""
    students = bc.full_class()
    assert len(students) == 40, len(students)
    thirds = [students[0::3], students[1::3], students[2::3]]  # each layout gets a mix
    bc.write_moodle_zip(base / "moodle.zip", thirds[0])
    bc.write_canvas(base / "canvas", thirds[1])
    bc.write_gradescope(base / "gradescope", thirds[2])
    return [base / "moodle.zip", base / "canvas", base / "gradescope"], {}


Runs = dict[int, tuple[float, float, Path, list[float]]]


def _batch_runs(
    timed: Timed,
    py: list[str],
    inputs: list[Path],
    base: Path,
    args: argparse.Namespace,
) -> (
    tuple[dict[int, list[tuple[float, float]]], Runs, list[float], list[tuple[float, float, float, float, float]]]
    | None
):
    """`batch --jobs 1` and `--jobs 2`, back to back, then the bare process on every file,
    `--repeats` times: each run's (wall, CPU), each --jobs value's medians and output folder, the
    machine's own speed-up before each pair, the bare processes' CPU after each (BLAS
    single-threaded, then with the library's default threads) and the two floors' per student
    with the bare process's on the reference (_floor_per_student); None if a batch failed."""
    samples: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
    outs: dict[int, Path] = {}
    ceilings = []
    bare = []
    for rep in range(max(1, args.repeats)):
        ceilings.append(machine_ceiling())
        print(f"  the machine's own 2-process speed-up (run {rep + 1}): {ceilings[-1]:.2f}", flush=True)
        for jobs in (1, 2):
            out = base / f"jobs{jobs}-{rep}"
            wall, cpu, proc = timed(
                [*py, "batch", *map(str, inputs), "--out", str(out), "--jobs", str(jobs), "--tests", args.tests]
            )
            if proc.returncode not in (0, 1):
                print(proc.stderr, file=sys.stderr)
                return None
            samples[jobs].append((wall, cpu))
            outs[jobs] = out
            print(f"  batch --jobs {jobs} (run {rep + 1}): {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
        files = _graded_files(base, outs[1])
        one, default = (_bare_each(timed, files, outs[1], args.tests, env) for env in (ONE_THREAD, DEFAULT_THREADS))
        bare.append((one, default, *_floor_per_student(timed, base)))
    runs: Runs = {}
    for jobs in (1, 2):
        walls = sorted(w for w, _ in samples[jobs])
        cpus = sorted(c for _, c in samples[jobs])
        runs[jobs] = (statistics.median(walls), statistics.median(cpus), outs[jobs], walls)
    return samples, runs, ceilings, bare


def _graded_files(base: Path, out1: Path) -> list[tuple[str, Path]]:
    """Every graded file, from the batch's own record of where each came from."""
    files = []
    for rec in sorted((out1 / ".batch").glob("*.json")):
        if rec.name.startswith("_"):  # _run.json, not a student's record
            continue
        r = json.loads(rec.read_text())
        label, rel = r["source"].split(":", 1)
        path = (base / label / rel) if label != "moodle.zip" else out1 / ".batch" / "unpacked" / "1" / rel
        files.append((r["student"], path))
    return files


def _grade_each(
    timed: Timed,
    py: list[str],
    files: list[tuple[str, Path]],
    runs: Runs,
    tests: str,
) -> tuple[float, float, int, list[str]]:
    """`grade` on every file: the wall and CPU time in all, how many verdict JSONs equal both
    batches' ones, and the students whose do not."""
    cpu_grade = wall_grade = 0.0
    same = 0
    different = []
    for student, path in files:
        wall, cpu, proc = timed([*py, "grade", str(path), "--tests", tests, "--json", "-"])
        wall_grade += wall
        cpu_grade += cpu
        # A batch's zygote is a fork of its master, and its sandbox block says so: `grade`'s does not.
        mine = json.loads((runs[1][2] / f"{student}.json").read_text().replace(MASTER_DETAIL, ""))
        theirs = json.loads(proc.stdout) if proc.stdout.strip() else None
        if (
            theirs is not None
            and normalised(mine) == normalised(theirs)
            and normalised(json.loads((runs[2][2] / f"{student}.json").read_text().replace(MASTER_DETAIL, "")))
            == normalised(theirs)
        ):
            same += 1
        else:
            different.append(student)
    print(f"  grade, once per file: {wall_grade:.1f} s wall, {cpu_grade:.1f} s CPU", flush=True)
    return wall_grade, cpu_grade, same, different


def _floor_per_student(timed: Timed, base: Path) -> tuple[float, float, float]:
    """CPU seconds of one more student in the fork-per-test floor (FLOOR: no isolation at all), in
    the same floor with each worker applying the sandbox's own lock-down (--lock-down), and of the
    bare process (BLAS single-threaded), all on the reference; NaN where the floor failed."""
    prepared = base / "floor-cases.bin"
    if not prepared.exists():
        timed([sys.executable, str(FLOOR), "--prepare", str(prepared)])
    per_student = []
    for extra in ([], ["--lock-down"]):
        once, many = (
            timed([sys.executable, str(FLOOR), str(prepared), "--rounds", str(r), *extra], ONE_THREAD)
            for r in (1, FLOOR_ROUNDS)
        )
        failed = once[2].returncode or many[2].returncode
        if failed:
            print(once[2].stderr + many[2].stderr, file=sys.stderr)
        per_student.append(float("nan") if failed else (many[1] - once[1]) / (FLOOR_ROUNDS - 1))
    reference = str(ROOT / "reference" / "solution.py")
    bare = timed([sys.executable, "-c", BARE, reference, "1.0", "all"], ONE_THREAD)[1]
    print(
        f"  the fork-per-test floor, per student: {per_student[0] * 1000:.0f} ms CPU, with the lock-down "
        f"{per_student[1] * 1000:.0f} ms (the bare process: {bare * 1000:.0f} ms)",
        flush=True,
    )
    return per_student[0], per_student[1], bare


def _bare_each(
    timed: Timed,
    files: list[tuple[str, Path]],
    out: Path,
    tests: str,
    env: dict[str, str],
) -> float:
    """CPU seconds of a bare process (BARE) on every file, in all, in `env`."""
    cpu = 0.0
    for student, path in files:
        limits = json.loads((out / f"{student}.json").read_text()).get("limits") or {}
        cap = float(limits.get("cpu_s_per_test") or 1.0)
        cpu += timed([sys.executable, "-c", BARE, str(path), str(cap), tests], env)[1]
    blas = "BLAS single-threaded" if env is ONE_THREAD else "BLAS default threads"
    print(f"  a bare process per file ({blas}): {cpu:.1f} s CPU", flush=True)
    return cpu


def _print_bars(
    bare: list[tuple[float, float, float, float, float]],
    n: int,
    samples: dict[int, list[tuple[float, float]]],
    ceilings: list[float],
) -> None:
    """Issue 29's two bars: CPU per submission against the bare processes' measured right after the
    same pair of batches (the median of the pairs' ratios: a shared host's speed drifts between
    pairs), and the speed-up's share of the host's own. The bar's bare process runs BLAS
    single-threaded, as the sandbox does; the one with the library's default threads (how the
    issue's first figure was measured) is printed beside it, never as the bar."""
    print()
    print(f"| {'per submission':36} | {'CPU (s)':>9} | {'/ bare, median':>14} | {'range':>11} | {'bar':>5} |")
    print(f"|{'-' * 38}|{'-' * 11}|{'-' * 16}|{'-' * 13}|{'-' * 7}|")
    for k, label in ((0, "bare process, BLAS 1 thread"), (1, "bare process, BLAS default threads")):
        cpu = statistics.median(b[k] for b in bare) / n
        ratio = statistics.median(b[k] / b[0] for b in bare)
        print(f"| {label:36} | {cpu:9.3f} | {ratio:13.2f}x | {'':>11} | {'':>5} |")
    for k, label in ((2, "floor, no isolation (the reference)"), (3, "  the same, each worker locked down")):
        floor = statistics.median(b[k] / b[4] for b in bare)
        print(f"| {label:36} | {statistics.median(b[k] for b in bare):9.3f} | {floor:13.2f}x | {'':>11} | {'':>5} |")
    for jobs in (1, 2):
        ratios = sorted(cpu / b[0] for (_, cpu), b in zip(samples[jobs], bare))
        ratio = statistics.median(ratios)
        lenient = statistics.median(cpu / b[1] for (_, cpu), b in zip(samples[jobs], bare))
        c = statistics.median(cpu for _, cpu in samples[jobs]) / n
        span = f"{ratios[0]:.2f}-{ratios[-1]:.2f}"
        print(f"| {f'batch --jobs {jobs}':36} | {c:9.3f} | {ratio:13.2f}x | {span:>11} | {'1.0x':>5} |")
        print(f"| {'  (/ the default-threads bare)':36} | {'':>9} | {lenient:13.2f}x | {'':>11} | {'':>5} |")
        record_bar(f"batch --jobs {jobs}: CPU per submission / a bare process's (BLAS 1 thread)", ratio, 1.0)
    pairs = [a / b for (a, _), (b, _) in zip(samples[1], samples[2])]
    share = statistics.median([p / c for p, c in zip(pairs, ceilings)])
    print(
        f"--jobs 2 / --jobs 1 speed-up {statistics.median(pairs):.2f}, the host's own two-process speed-up "
        f"{statistics.median(ceilings):.2f}: {share:.2f}x of the host's (bar 0.9x)"
    )
    record_bar("batch --jobs 2 / --jobs 1 speed-up, as a share of the host's own", share, 0.9, at_most=False)


def _span(r: list[float]) -> str:
    return f"{r[0]:.1f}-{r[-1]:.1f}"


def _print_table(runs: Runs, wall_grade: float, cpu_grade: float, n: int) -> None:
    (w1, c1, _, r1), (w2, c2, _, r2) = runs[1], runs[2]
    print()
    print(f"| {'':28} | {'batch --jobs 1':>15} | {'batch --jobs 2':>15} | {'grade per file':>15} |")
    print(f"|{'-' * 30}|{'-' * 17}|{'-' * 17}|{'-' * 17}|")
    print(f"| {'wall time, median (s)':28} | {w1:15.1f} | {w2:15.1f} | {wall_grade:15.1f} |")
    print(f"| {'wall time, range (s)':28} | {_span(r1):>15} | {_span(r2):>15} | {'(one run)':>15} |")
    print(f"| {'speed-up over --jobs 1':28} | {1.0:15.2f} | {w1 / w2:15.2f} | {w1 / wall_grade:15.2f} |")
    print(f"| {'CPU per submission (s)':28} | {c1 / n:15.2f} | {c2 / n:15.2f} | {cpu_grade / n:15.2f} |")


def _print_pairs(samples: dict[int, list[tuple[float, float]]], ceilings: list[float]) -> None:
    pairs = [a / b for (a, _), (b, _) in zip(samples[1], samples[2])]
    paired = sorted(pairs)
    print()
    print(
        "speed-up of each run pair (--jobs 1 then --jobs 2, back to back): "
        + ", ".join(f"{x:.2f}" for x in paired)
        + f"; median {statistics.median(paired):.2f}"
    )
    print(
        "the machine's own 2-process speed-up before each pair: "
        + ", ".join(f"{x:.2f}" for x in sorted(ceilings))
        + f"; median {statistics.median(ceilings):.2f}"
    )
    share = sorted(p / c for p, c in zip(pairs, ceilings))
    print(
        "each pair's speed-up as a share of the machine's: "
        + ", ".join(f"{x:.0%}" for x in share)
        + f"; median {statistics.median(share):.0%}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tests", choices=("all", "sample"), default="all")
    ap.add_argument("--repeats", type=int, default=3, metavar="N", help="batch runs per --jobs value (median)")
    ap.add_argument("--keep", metavar="DIR", help="keep the class and the outputs in DIR")
    ap.add_argument("--no-grade", action="store_true", help="skip `grade` once per file (and the comparison)")
    args = ap.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-batch-"))
    if base.exists() and args.keep:
        shutil.rmtree(base)
    base.mkdir(parents=True, exist_ok=True)
    inputs, _ = build(base)
    py = [sys.executable, "-m", "grader"]
    print(
        f"40 submissions in 3 layouts, --tests {args.tests}; {os.cpu_count()} cores; "
        f"load average {os.getloadavg()[0]:.1f} at the start",
        flush=True,
    )
    meter = CpuMeter("bench-batch")

    def timed(
        cmd: list[str], env: dict[str, str] | None = None
    ) -> tuple[float, float, subprocess.CompletedProcess[str]]:
        return meter.run(cmd, cwd=ROOT, env=env)

    print(f"CPU measured with {meter.method}", flush=True)
    measured = _batch_runs(timed, py, inputs, base, args)
    if measured is None:
        return 2
    samples, runs, ceilings, bare = measured
    files = _graded_files(base, runs[1][2])
    n = len(files)
    different: list[str] = []
    if args.no_grade:
        wall_grade, cpu_grade, same = float("nan"), float("nan"), n
    else:
        wall_grade, cpu_grade, same, different = _grade_each(timed, py, files, runs, args.tests)
    rows = list(csv.DictReader((runs[2][2] / "grades.csv").read_text(encoding="utf-8-sig").splitlines()))
    _print_table(runs, wall_grade, cpu_grade, n)
    _print_pairs(samples, ceilings)
    _print_bars(bare, n, samples, ceilings)
    print()
    if not args.no_grade:
        print(
            f"verdict JSON equal to `grade` on the same file (both batches): {same}/{n}"
            + (f" (different: {', '.join(different)})" if different else "")
        )
    print(
        f"grades.csv: {len(rows)} rows for {n} students; verdicts: "
        + ", ".join(f"{v} {sum(r['verdict'] == v for r in rows)}" for v in sorted({r["verdict"] for r in rows}))
    )
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    meter.close()
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 0 if same == n and len(rows) == n else 1


if __name__ == "__main__":
    sys.exit(main())
