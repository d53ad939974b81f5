"""Running test cases in sandbox workers: one at a time, or a test's case and later ones'
(the largest first: ahead_step) beside it in more workers (up to the zygote's MAX_WORKERS,
three) where that is sound.

Workers at once slow each other a little (caches, memory bandwidth, the
zygote forking for all), never speed each other up. So a run that shared the
machine and still stayed within the least limits (timing.least_limits: no
machine's limit is lower) is within the limit on every machine, and would
have ended exactly so alone: it counts. Any other run that shared the machine
(more CPU time than the least limit, or ended by a limit or a kill) is thrown
away and run again alone, and that run is judged as a run with one worker is.
The speed probe and the second run near the limit are always taken alone.

Three workers on a 2-core machine: a test's run is a chain of steps in three
processes (the grader sends the case, the zygote forks, the worker runs, the
zygote reaps it, the grader reads and checks the result), and with two runs in
flight a core waits while the chain passes through the others; a third keeps
both cores at work (docs/measurements.md).

More than one worker runs only where it cannot change what a run may do:
- two cores or more for this process;
- a PID namespace and seccomp in force (the zygote then sweeps one worker's
  leftovers without touching the others', and no worker can start a process
  or signal another one);
- memory for all of them at their full limit (Docker's `--memory 1g` has room
  for one 512 MiB worker only: there, the tests run one after another).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from pathlib import Path

from ..problem.cases import TestCase
from ..sandbox.channel import Run
from ..sandbox.child import MAX_WORKERS
from ..sandbox.launcher import Sandbox
from ..sandbox.records import RunOutcome
from .timing import EffectiveLimits, within_least_limits

# Beside the workers at their memory limit: the grader, the zygote and what the kernel needs.
MEMORY_SPARE = 256 << 20


def ended_by_a_limit(out: RunOutcome) -> bool:
    """A wall-clock kill, SIGXCPU or SIGKILL: the run did not end on its own."""
    return out.killed_by == "wall" or out.signal in (signal.SIGXCPU, signal.SIGKILL)


def counts(out: RunOutcome, least: EffectiveLimits) -> bool:
    """May this run decide its test? Always if it ran alone; if it shared the machine, only
    within the least limits."""
    return out.alone or within_least_limits(out.cpu_s, ended_by_a_limit(out), least)


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().split()[0]
    except (OSError, IndexError):
        return None
    return int(text) if text.isdigit() else None


def _limit_in(folder: Path, v1: bool) -> int | None:
    """Bytes a memory cgroup folder still allows; None if it sets no limit (or has no such file)."""
    limit = _read_int(folder / ("memory.limit_in_bytes" if v1 else "memory.max"))  # v2 "max": None
    if limit is None or limit >= (1 << 60):  # v1's "no limit"
        return None
    return limit - (_read_int(folder / ("memory.usage_in_bytes" if v1 else "memory.current")) or 0)


def _cgroup_room(proc_cgroup: Path = Path("/proc/self/cgroup"), root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """Bytes this process's memory cgroups (v2, or v1's memory controller) still allow: the least
    over its own group, every group above it (a pod's limit) and the mount's root (the container's
    own group, where a container has no cgroup namespace and its path is not visible); None where
    none sets a limit."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return None
    rooms = []
    for line in lines:
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if controllers == "":
            v1, base = False, root / "unified" if (root / "unified").is_dir() else root
        elif "memory" in controllers.split(","):
            v1, base = True, root / "memory"
        else:
            continue
        parts = [p for p in path.strip().split("/") if p and p != ".."]
        for folder in {base.joinpath(*parts[:n]) for n in range(len(parts) + 1)}:
            room = _limit_in(folder, v1)
            if room is not None:
                rooms.append(room)
    return max(0, min(rooms)) if rooms else None


def memory_room(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """Bytes of memory available to this process now (the least of the machine's and its
    cgroup's); None where neither can be read."""
    rooms = []
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                rooms.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    cgroup = _cgroup_room()
    if cgroup is not None:
        rooms.append(cgroup)
    return min(rooms) if rooms else None


def workers_at_once(sb: Sandbox, memory_bytes: int) -> int:
    """How many workers this sandbox may run at once (see the module's docstring): 1, or up to
    the zygote's MAX_WORKERS where memory holds them all at `memory_bytes` each, beside
    MEMORY_SPARE; a third one only with one more worker's room besides (the grader keeps what
    the runs return, each up to the output limit, and grows with them). Asked after the first
    run, whose layers are then known."""
    if cores() < 2:
        return 1
    layers = {layer.name: layer.status for layer in sb.info().layers}
    if layers.get("pid_namespace") != "active" or layers.get("seccomp") != "active":
        return 1
    room = memory_room()
    fit = (room - MEMORY_SPARE) // memory_bytes if room is not None and memory_bytes > 0 else 1
    return max(1, min(MAX_WORKERS, fit if fit <= 2 else fit - 1))


def run_step(sb: Sandbox, case: TestCase) -> RunOutcome:
    """Run one case in a fresh worker. The sandbox encodes the case's inputs into the request's
    bytes (sandbox/wire.py) and the worker builds its own arrays from them, so nothing of the
    case is shared with the run and the inputs need no copy here."""
    return sb.run(list(case.inputs.values()), case.expected_output.shape)


def start_step(sb: Sandbox, case: TestCase) -> Run:
    """run_step, started and not waited for."""
    return sb.submit(list(case.inputs.values()), case.expected_output.shape)


def drop_ahead(sb: Sandbox, ahead: dict[int, Run], index: int | None = None) -> None:
    """End the runs started ahead (or only test `index`'s) and forget what they did."""
    for i in [index] if index is not None else list(ahead):
        run = ahead.pop(i, None)
        if run is not None:
            sb.cancel(run)


# Runs started ahead that may wait for their tests' turns, ended or not: each holds three pipes
# and its result until then, so however the tests are ordered, a grading holds only a few.
AHEAD_MOST = MAX_WORKERS + 1


def ahead_plan(kinds: Sequence[tuple[bool, bool]], work: Sequence[int | None]) -> list[tuple[int, int]]:
    """Per test: the last test of its block (the tests of its kind around it, up to the first
    test of another kind: `kinds`) and the block's largest test (the most work, the problem's
    case_work, None counting as 0; the earliest on a tie). Found once per grading, so that
    ahead_step costs the same at every test however many tests there are."""
    plan: list[tuple[int, int]] = []
    start = 0
    for end in range(1, len(kinds) + 1):
        if end == len(kinds) or kinds[end] != kinds[start]:
            largest = max(range(start, end), key=lambda j: (work[j] or 0, -j))
            plan += [(end - 1, largest)] * (end - start)
            start = end
    return plan


def ahead_step(index: int, ahead: dict[int, Run], plan: Sequence[tuple[int, int]], workers: int = 2) -> int | None:
    """The test whose run starts beside test `index`'s, or None. None while `workers` - 1 runs
    started ahead earlier are still running (with `index`'s, as many workers as may run at
    once), or while AHEAD_MOST runs started ahead wait for their turns. Otherwise, in `index`'s
    block (`plan`, from ahead_plan): the block's largest test, if it comes later and has not
    started; else the next later test of the block that has not started.

    The largest first: a grading's last test is often its largest (the timing case), and run in
    its turn it would end the grading alone on one core while the other waits. Started early, it
    runs beside the small ones. Only that one: the rest go in their order, so a run started
    ahead waits, ended, for a test or two at most (all of them largest-first would keep ended
    runs, their pipes and results, for half the tests). Tests are still decided in their order."""
    if len(ahead) >= AHEAD_MOST or sum(run.finished is None for run in ahead.values()) >= workers - 1:
        return None
    last, largest = plan[index]
    if largest > index and largest not in ahead:
        return largest
    return next((j for j in range(index + 1, last + 1) if j not in ahead), None)


def shared_run_step(
    sb: Sandbox,
    cases: list[TestCase],
    index: int,
    ahead: dict[int, Run],
    workers: int,
    least: EffectiveLimits,
    plan: Sequence[tuple[int, int]],
) -> tuple[RunOutcome, bool]:
    """Test `index`'s run: the one started ahead, or a new one; with `workers` above 1, another
    test's run (`ahead_step`, in `plan`: ahead_plan's, of the tests' kinds and work) starts beside it. Returns
    the outcome and whether it counts (`counts`). When it does not, every run in flight has been
    ended: the caller runs the test again alone.

    Never a hidden test beside a visible one (a block of `plan` holds tests of one kind only):
    workers can signal each other through the time they take from each other (one pinned to the
    other's core, busy or not), and a visible test's report would carry what it read of the
    hidden inputs."""
    run = ahead.pop(index, None) or start_step(sb, cases[index])
    chosen = ahead_step(index, ahead, plan, workers) if workers > 1 else None
    if chosen is not None:
        ahead[chosen] = start_step(sb, cases[chosen])
    out = sb.collect(run)
    if counts(out, least):
        return out, True
    drop_ahead(sb, ahead)
    return out, False
