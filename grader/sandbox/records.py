"""Records that cross the sandbox boundary (parent side)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class SandboxLimits:
    cpu_s: float  # per case, enforced by RLIMIT_CPU and checked from rusage
    wall_s: float  # per case, enforced by the zygote (sleeping counts)
    memory_bytes: int  # address space a worker may add to the zygote's
    result_bytes: int  # cap on the returned array
    capture_bytes: int  # stdout/stderr kept for the report
    flood_bytes: int  # more output than this is OLE


@dataclass(frozen=True)
class Layer:
    name: str
    status: str  # "active" or "unavailable"
    detail: str


@dataclass(frozen=True)
class SandboxInfo:
    mode: str  # "namespaces", "user-namespace" or "plain"
    layers: tuple[Layer, ...]

    @property
    def unavailable(self) -> tuple[str, ...]:
        return tuple(layer.name for layer in self.layers if layer.status != "active")


@dataclass(frozen=True)
class ErrorInfo:
    type: str
    message: str
    traceback: tuple[str, ...]
    line: int | None


@dataclass(frozen=True)
class ReturnedValue:
    """What the function returned, as described by the worker and checked here."""

    type: str  # "ndarray", "list", "0-d array", "masked array ...", ...
    dtype: str | None = None
    shape: tuple[int, ...] | None = None
    array: np.ndarray[Any, np.dtype[np.float64]] | None = None  # a float64 array's values (of any shape)


@dataclass(frozen=True)
class RunOutcome:
    """Everything the parent learned about one worker run."""

    status: str  # a child.STATUS_* value, or "no_result" / "protocol_error"
    exit_code: int | None
    signal: int | None
    cpu_s: float
    wall_s: float
    maxrss_kib: int
    killed_by: str | None  # "wall", "output" or None
    value: ReturnedValue | None
    error: ErrorInfo | None
    detail: str  # bad_signature / protocol messages
    stdout: str
    stderr: str
    output_bytes: int  # total stdout + stderr bytes written
    result_too_large: bool
    worker_layers: dict[str, list[str]] | None  # as the worker reported them (layers.merge_layers)
    probe_s: float | None = None  # CPU seconds of the speed probe (mode "probe" only)
    probe_runs: tuple[float, ...] = ()  # every run of the probe in that worker (probe_s is their minimum)
    alone: bool = True  # no other worker ran meanwhile; else its times are upper bounds only
