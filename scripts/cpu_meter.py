"""CPU time of a command and of every process it starts, for the benchmark scripts.

getrusage(RUSAGE_CHILDREN) misses a sandbox's zygote: it is SIGKILLed together
with the `unshare` above it and reaped by init, not by us. A cgroup-v1 cpuacct
group (when we may make one, as root) counts every process started inside it,
reaped by whoever; without one the rusage figure is a lower bound, and
`method` says which was used.
"""

from __future__ import annotations

import os
import resource
import subprocess
import time
from pathlib import Path

CPUACCT = Path("/sys/fs/cgroup/cpuacct")


class CpuMeter:
    def __init__(self, name: str) -> None:
        self.group: Path | None = None
        try:
            group = CPUACCT / f"{name}-{os.getpid()}"
            group.mkdir()
            self.group = group
        except OSError:
            pass

    @property
    def method(self) -> str:
        return (
            "cgroup cpuacct (whole process tree)"
            if self.group
            else "getrusage(RUSAGE_CHILDREN): waited-for processes only, a lower bound"
        )

    def read(self) -> float:
        """CPU seconds used so far by everything started through `enter`."""
        if self.group:
            return int((self.group / "cpuacct.usage").read_text()) / 1e9
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return ru.ru_utime + ru.ru_stime

    def enter(self) -> None:
        """preexec_fn: runs in the child between fork and exec."""
        if self.group:
            (self.group / "cgroup.procs").write_text(str(os.getpid()))

    def run(
        self, cmd: list[str], cwd: Path, env: dict[str, str] | None = None
    ) -> tuple[float, float, subprocess.CompletedProcess]:
        """(wall seconds, CPU seconds, the finished process) of `cmd` (in `env`, else this one's)."""
        cpu0, t0 = self.read(), time.monotonic()
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, preexec_fn=self.enter)
        wall = time.monotonic() - t0
        time.sleep(0.2)  # a killed zygote's last tick
        return wall, self.read() - cpu0, proc

    def close(self) -> None:
        if self.group:
            try:
                self.group.rmdir()
            except OSError:
                pass
