"""Is this machine idle enough to calibrate on?

A calibration measured on a busy machine states a limit and a probe reading
that no idle machine reproduces (docs/time-limits.md, "Calibrating on an idle
machine"). The load average cannot tell: in a container it counts every
process of the host's other containers, which may or may not compete for this
one's CPUs. So the check measures what this process gets: a short busy loop's
CPU time over its wall time (1.0: the CPU was this process's all along; less:
other processes or the hypervisor took it) and the share of the machine's time
the hypervisor stole meanwhile (/proc/stat's `steal`). The load average is
recorded beside them, for the reader, but decides nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..problem.bundle import BundleError

MIN_CPU_SHARE = 0.9  # a busy loop must get at least this share of the wall-clock time
MAX_STEAL_SHARE = 0.05  # and the hypervisor may steal at most this share of the CPUs' time
CHECK_SECONDS = 0.5  # length of the busy loop


class MachineBusy(BundleError):
    """The machine is too busy to calibrate on (the CLI's exit status 2)."""


@dataclass(frozen=True)
class IdleReading:
    """One measure of how much of the CPU this process gets."""

    cpu_share: float  # CPU time / wall time of the busy loop
    steal_share: float | None  # stolen / all CPU time meanwhile; None where /proc/stat is missing
    load_average_1m: float
    seconds: float  # wall time of the loop

    def as_dict(self) -> dict[str, Any]:
        return {
            "cpu_share_of_a_busy_loop": round(self.cpu_share, 3),
            "steal_share": None if self.steal_share is None else round(self.steal_share, 3),
            "load_average_1m": round(self.load_average_1m, 2),
            "loop_s": round(self.seconds, 3),
        }


def busy_reasons(reading: IdleReading) -> list[str]:
    """Why `reading` says the machine is busy ([] when it is idle enough)."""
    reasons = []
    if reading.cpu_share < MIN_CPU_SHARE:
        reasons.append(
            f"a busy loop got {reading.cpu_share:.0%} of the CPU (at least {MIN_CPU_SHARE:.0%} needed): "
            "other processes compete for it"
        )
    if reading.steal_share is not None and reading.steal_share > MAX_STEAL_SHARE:
        reasons.append(
            f"the hypervisor stole {reading.steal_share:.0%} of the CPUs' time (at most {MAX_STEAL_SHARE:.0%} allowed)"
        )
    return reasons


def steal_counters(text: str) -> tuple[int, int] | None:
    """(steal, total) jiffies from the `cpu` line of /proc/stat's text; None if it has none."""
    for line in text.splitlines():
        fields = line.split()
        if fields[:1] == ["cpu"] and len(fields) >= 9:
            try:
                values = [int(v) for v in fields[1:]]
            except ValueError:
                return None
            # user nice system idle iowait irq softirq steal [guest guest_nice]; guest time is
            # already counted in user and nice.
            return values[7], sum(values[:8])
    return None


def _proc_stat() -> str | None:
    try:
        return Path("/proc/stat").read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return None


def measure_idle(
    seconds: float = CHECK_SECONDS,
    cpu_clock: Callable[[], float] = time.thread_time,
    wall_clock: Callable[[], float] = time.monotonic,
    proc_stat: Callable[[], str | None] = _proc_stat,
    load_average: Callable[[], float] = lambda: os.getloadavg()[0],
) -> IdleReading:
    """Busy-loop for `seconds` of wall time and say how much of it was CPU time for this thread."""
    before = steal_counters(proc_stat() or "")
    wall0, cpu0 = wall_clock(), cpu_clock()
    spins = 0
    while wall_clock() - wall0 < seconds:
        spins += 1
    wall, cpu = wall_clock() - wall0, cpu_clock() - cpu0
    after = steal_counters(proc_stat() or "")
    steal = None
    if before is not None and after is not None and after[1] > before[1]:
        steal = (after[0] - before[0]) / (after[1] - before[1])
    return IdleReading(min(1.0, cpu / wall) if wall > 0 else 0.0, steal, load_average(), wall)


def require_idle(reading: IdleReading, allow_busy: bool) -> list[str]:
    """The warnings to record: [] on an idle machine, the reasons with `allow_busy`; otherwise a
    busy machine raises MachineBusy."""
    reasons = busy_reasons(reading)
    if reasons and not allow_busy:
        raise MachineBusy(
            "the machine is too busy to calibrate on: "
            + "; ".join(reasons)
            + " (run it on a quiet machine, or pass --allow-busy to record the calibration with a warning)"
        )
    return reasons
