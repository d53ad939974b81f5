#!/usr/bin/env python3
"""What the sandboxed grader costs, measured side by side with bare processes and the worst cases.

In each repetition, alternately, as whole processes (wall clock, and CPU time
of the process and everything it started):

* `python -m grader grade reference/solution.py --json OUT` (all 34 tests; also with
  `--one-worker`, the tests strictly one after another), and a bare process that imports
  NumPy, reads testcases/ and runs the reference on every case (BLAS single-threaded, as in the sandbox);
* `grade ... --tests sample`, cold (GRADER_SERVER=off, as every other `grade` here) and with a
  `python -m grader serve` running (started in a private folder of its own before, and stopped
  after, each timed grading, which is the second it serves), and a bare `python3 -c "import numpy"`;
* a sandbox's own start: `python -I -S` importing the harness's modules (HARNESS_MODULES, what
  every zygote imports before it can take a submission), which a sample grading waits for;
* the grader's own start: its interpreter importing what a cold `grade` imports before its first
  test (NumPy and the grader's modules), no sandbox beside it: a sample grading's other path;
* a save graded by `watch` (the samples): in the running process, with the zygote it started
  while the learner edited, as every save after the first is (the wall time of that grading and
  its text report, the save's settling poll not counted);
* scripts/fork_floor.py: the same fresh interpreter and fork per test with no isolation, no
  probe, no report and a parent without NumPy (the least any fork-per-test design costs here);
* the worst cases: an infinite loop and a sleeper graded on all tests, and the
  Exercism runner (scripts/exercism-run.sh) on the slower of the two
  (`--worst-repeats`, default 3, since each costs seconds of waiting; 0 leaves them out).

Prints medians, ranges and spreads, and the ratios of the medians. Usage:

    python3 scripts/bench_grade.py [--repeats 5] [--worst-repeats 3]

The grader's modules are byte-compiled first (`compileall`), as in any
installation. The machine is shared: the load average is printed with the figures, and the
spread says how noisy the run was. No figure here is asserted anywhere.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bar_record import record_bar
from cpu_meter import CpuMeter

ROOT = Path(__file__).resolve().parent.parent
# GRADER_SERVER=off: every `grade` here is cold, in its own process, unless a row says it is served.
ENV = {
    **os.environ,
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "GRADER_SERVER": "off",
}
TLE = ROOT / "submissions" / "time_limit_exceeded"
FLOOR = str(ROOT / "scripts" / "fork_floor.py")

BARE = """
import sys
sys.path.insert(0, ".")
import numpy as np
from grader.problem.bundle import open_bundle
from grader.problem.cases import load_cases
b = open_bundle(".")
ref = b.load_reference_module()
rtol, atol = b.spec.comparison.rtol, b.spec.comparison.atol
for c in load_cases(b.testcases, b.group_names("all")):
    got = ref.vit_encoder_block(*c.args())
    assert np.all(np.abs(got - c.expected) <= atol + rtol * np.abs(c.expected)), c.name
"""


# A save graded by `watch`, after the first: the grader's modules and the cases are loaded, and the
# zygote (report/watch.py's spare) was started while the learner edited. Prints its wall seconds.
WATCH_SAVE = """
import sys, time
sys.path.insert(0, ".")
from pathlib import Path
from grader.sandbox.early import early_zygote
from grader.problem.bundle import open_bundle
from grader.feedback.grade import grade
from grader.judging.judge import GradeOptions
from grader.report.text_report import Invocation, render_text

b, path, options = open_bundle("."), Path("reference/solution.py"), GradeOptions(tests="sample")
grade(b, path, options)  # the first save: imports and the case cache
spare = early_zygote(["grade", str(path)])
time.sleep(1.0)  # the learner edits; the spare zygote imports NumPy meanwhile
start = time.perf_counter()
report = grade(b, path, options, zygote=spare)
render_text(report, invocation=Invocation(command="watch", path=str(path)))
print(time.perf_counter() - start)
if spare is not None:
    spare.close()
"""

METER = CpuMeter("bench-grade")


# What a cold `grade` imports before its first test, in the order __main__ imports it (NumPy with
# the case cache): no sandbox, no case, no test. Its wall time is what the parent's own path costs
# however fast the sandbox starts beside it.
GRADER_IMPORTS = "import grader.served, grader.sandbox.early, grader.cli, grader.feedback.grade"


def sandbox_start() -> list[str]:
    """A fresh `python -I -S` importing what a zygote imports before it takes a submission (the
    harness's modules, from this interpreter's site-packages, as sandbox/early.py starts it)."""
    sys.path.insert(0, str(ROOT))
    import site

    from grader.sandbox.startup import HARNESS_MODULES

    dirs = [d for d in site.getsitepackages() if os.path.isdir(d)]
    code = f"import sys; sys.path[:0] = {dirs!r}; import {', '.join(HARNESS_MODULES)}"
    return [sys.executable, "-I", "-S", "-c", code]


def _waited_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def timed(cmd: list[str], ok=(0,), env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds of the process and everything it started, CPU seconds of the
    processes waited for: what getrusage sees, which misses the sandbox's zygote and workers)."""
    before, waited = METER.read(), _waited_cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env or ENV, capture_output=True, text=True, preexec_fn=METER.enter)
    wall = time.perf_counter() - start
    cpu = METER.read() - before
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return wall, cpu, _waited_cpu() - waited


def grade(path: Path | str, *extra: str, ok=(0,), env: dict[str, str] | None = None) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        return timed([sys.executable, "-m", "grader", "grade", str(path), "--json", f"{tmp}/v.json", *extra], ok, env)


@contextlib.contextmanager
def running_server() -> Iterator[dict[str, str]]:
    """A `python -m grader serve` in a private folder of its own; the environment of a `grade` it serves."""
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as folder:
        os.chmod(folder, 0o700)
        env = {**ENV, "GRADER_SERVER_DIR": folder}
        del env["GRADER_SERVER"]
        log = Path(folder) / "serve.log"
        with open(log, "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "grader", "serve", "--idle", "0"], cwd=ROOT, env=env, stderr=err
            )
        try:
            deadline = time.monotonic() + 60
            while "serving `grade` at" not in log.read_text():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"serve did not start: {log.read_text().strip()[-500:]}")
                time.sleep(0.05)
            yield env
            if log.read_text().count("grader serve: grading: ") < 1:
                raise SystemExit(f"serve took no grading: {log.read_text().strip()[-500:]}")
        finally:
            proc.terminate()
            proc.wait()


def exercism(path: Path) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "in").mkdir()
        (Path(tmp) / "in" / "solution.py").write_bytes(path.read_bytes())
        result = timed(["bash", "scripts/exercism-run.sh", "vit-encoder-block", f"{tmp}/in", f"{tmp}/out"], ok=(0,))
        status = json.loads((Path(tmp) / "out" / "results.json").read_text())["status"]
        if status != "fail":
            raise SystemExit(f"the Exercism runner said {status!r} for {path.name}")
        return result


def watch_save() -> float:
    """Wall seconds of one save graded by `watch` in its steady state (WATCH_SAVE)."""
    proc = subprocess.run(
        [sys.executable, "-c", WATCH_SAVE], cwd=ROOT, env=ENV, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"the watch measurement failed: {proc.stderr.strip()[-500:]}")
    return float(proc.stdout.split()[-1])


def describe(name: str, values: list[float]) -> str:
    med = statistics.median(values)
    spread = (max(values) - min(values)) / med if med else 0.0
    return f"| {name} | {med:.3f} s | {min(values):.3f}-{max(values):.3f} s | {spread:.0%} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--worst-repeats", type=int, default=3)
    args = parser.parse_args()
    rows: dict[str, list[float]] = {}

    def add(key: str, measured: tuple[float, float, float]) -> None:
        rows.setdefault(key + " wall", []).append(measured[0])
        rows.setdefault(key + " cpu", []).append(measured[1])
        rows.setdefault(key + " waited", []).append(measured[2])

    load_before = os.getloadavg()[0]
    # Compiled modules, as any installation has (pip compiles on install, Python on first import, the
    # Docker image at build): where PYTHONDONTWRITEBYTECODE is set (as in CI, or this shell), an
    # editable checkout would otherwise recompile the grader's ~100 modules on every start (~70 ms).
    subprocess.run([sys.executable, "-m", "compileall", "-q", "grader", "reference"], cwd=ROOT, check=True)
    grade(ROOT / "reference" / "solution.py", "--tests", "sample")  # warm the page cache and the case cache
    start = sandbox_start()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
            floor_cases = str(Path(tmp) / "cases.bin")
            timed([sys.executable, FLOOR, "--prepare", floor_cases])
            for _ in range(args.repeats):
                add("grade", grade(ROOT / "reference" / "solution.py"))
                with running_server() as served_env:  # started and stopped outside the timed runs
                    grade(ROOT / "reference" / "solution.py", "--tests", "sample", env=served_env)  # the first
                    add("served", grade(ROOT / "reference" / "solution.py", "--tests", "sample", env=served_env))
                add("one", grade(ROOT / "reference" / "solution.py", "--one-worker"))
                add("bare", timed([sys.executable, "-c", BARE]))
                add("sample", grade(ROOT / "reference" / "solution.py", "--tests", "sample"))
                add("numpy", timed([sys.executable, "-c", "import numpy"]))
                add("imports", timed([sys.executable, "-c", GRADER_IMPORTS]))
                add("sandbox", timed(start))
                rows.setdefault("watch wall", []).append(watch_save())
                add("floor", timed([sys.executable, FLOOR, floor_cases]))
        for _ in range(args.worst_repeats):
            add("loop", grade(TLE / "infinite_loop.py", ok=(1,)))
            add("sleep", grade(TLE / "sleep.py", ok=(1,)))
            add("exercism", max(exercism(TLE / "infinite_loop.py"), exercism(TLE / "sleep.py")))
    finally:
        METER.close()
    load_after = os.getloadavg()[0]
    med = {k: statistics.median(v) for k, v in rows.items()}
    ratio = {k: [w / c for w, c in zip(rows[k + " wall"], rows[k + " cpu"])] for k in ("grade", "sample")}

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"load average {load_before:.2f} before, {load_after:.2f} after"
    )
    print(
        f"{args.repeats} repetitions of the first four, {args.worst_repeats} of the worst cases, alternating; "
        f"CPU time by {METER.method}"
    )
    print()
    print("| what | median | range | spread |")
    print("|---|---|---|---|")
    print(describe("`grade reference/solution.py` (all 34 tests), wall", rows["grade wall"]))
    print(
        describe(
            "bare process: import NumPy, read testcases/, run the reference on every case, wall", rows["bare wall"]
        )
    )
    print(describe("`grade reference/solution.py`, CPU", rows["grade cpu"]))
    print(describe("`grade reference/solution.py --one-worker`, wall", rows["one wall"]))
    print(describe("`grade reference/solution.py --one-worker`, CPU", rows["one cpu"]))
    print(describe("bare process, CPU", rows["bare cpu"]))
    print(describe("fork-per-test floor (scripts/fork_floor.py: no isolation, no report), CPU", rows["floor cpu"]))
    print(describe("`grade reference/solution.py --tests sample`, wall", rows["sample wall"]))
    print(describe("the same with `serve` running (a grading after its first), wall", rows["served wall"]))
    print(describe('bare `python3 -c "import numpy"`, wall', rows["numpy wall"]))
    print(describe("a sandbox's start: `python -I -S` importing the harness's modules, wall", rows["sandbox wall"]))
    print(describe("the grader's own start: an interpreter importing what `grade` imports, wall", rows["imports wall"]))
    print(describe("a save graded by `watch` (samples; zygote started while editing), wall", rows["watch wall"]))
    if args.worst_repeats > 0:
        print(describe("`infinite_loop.py` graded on all tests, wall", rows["loop wall"]))
        print(describe("`sleep.py` graded on all tests, wall", rows["sleep wall"]))
        print(describe("Exercism runner, worst of the two, wall", rows["exercism wall"]))
    print()
    print(
        f"grade all / bare process: {med['grade wall'] / med['bare wall']:.2f}x wall, "
        f"{med['grade cpu'] / med['bare cpu']:.2f}x CPU"
    )
    print(
        f"the same with --one-worker: {med['one wall'] / med['bare wall']:.2f}x wall, "
        f"{med['one cpu'] / med['bare cpu']:.2f}x CPU"
    )
    room = 1.2 * med["bare cpu"] - med["floor cpu"]
    print(
        f"fork-per-test floor / bare process: {med['floor cpu'] / med['bare cpu']:.2f}x CPU; grade all / floor: "
        f"{med['grade cpu'] / med['floor cpu']:.2f}x CPU. Under a 1.2x CPU bar, what the grader does beyond the "
        f"floor (isolation, the harness's modules, its own imports and case cache, supervision, report) would "
        f"have {room:.3f} s of CPU; it takes {med['grade cpu'] - med['floor cpu']:.3f} s"
    )
    print(
        f"counted as the issue's first figures were (getrusage: waited-for processes only, no zygote, no "
        f"worker): grade all {med['grade waited']:.3f} s, bare process {med['bare waited']:.3f} s of CPU"
    )
    print(
        f"wall / CPU of one grading: median {statistics.median(ratio['grade']):.2f} "
        f"(range {min(ratio['grade']):.2f}-{max(ratio['grade']):.2f}); of a sample grading "
        f"{statistics.median(ratio['sample']):.2f}"
    )
    print(f"grade --tests sample / import numpy: {med['sample wall'] / med['numpy wall']:.2f}x wall (cold)")
    print(
        f"grade --tests sample with `serve` running / import numpy: {med['served wall'] / med['numpy wall']:.2f}x "
        f"wall (its CPU is the server's, outside this measured tree: wall only)"
    )
    print(
        f"a sandbox's start alone / import numpy: {med['sandbox wall'] / med['numpy wall']:.2f}x wall (a sample "
        f"grading starts one, and waits for it, after its own interpreter has started)"
    )
    print(
        f"the grader's own start alone / import numpy: {med['imports wall'] / med['numpy wall']:.2f}x wall (a cold "
        f"sample grading's parent pays it before its first test, whatever the sandbox beside it does)"
    )
    print(
        f"a save graded by `watch` (the learner's edit-grade loop) / import numpy: "
        f"{med['watch wall'] / med['numpy wall']:.2f}x wall (context for the sample bar, not the bar: a cold "
        f"`grade` starts its own interpreter and sandbox)"
    )
    record_bar(
        f"grade (all tests) / the bare loop, wall, median of {args.repeats}", med["grade wall"] / med["bare wall"], 1.2
    )
    record_bar(
        "grade --tests sample / python3 -c 'import numpy', wall, cold", med["sample wall"] / med["numpy wall"], 1.5
    )
    record_bar(
        "grade --tests sample with `serve` running / python3 -c 'import numpy', wall",
        med["served wall"] / med["numpy wall"],
        1.5,
    )
    if args.worst_repeats > 0:
        print(
            f"worst cases: infinite loop {med['loop wall']:.1f} s, sleeper {med['sleep wall']:.1f} s, "
            f"Exercism runner {med['exercism wall']:.1f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
