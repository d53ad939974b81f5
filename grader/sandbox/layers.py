"""Which isolation layers are in force, as the verdict JSON's sandbox block reports them.

Launcher-level layers are known from the start-up strategy and the zygote's
"ready" message; worker-level ones only as the workers themselves declared
them before any submission code ran, merged over every run so that the report
never claims more than the weakest run had.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from . import child
from .records import Layer, SandboxInfo, SandboxLimits
from .startup import Strategy

if TYPE_CHECKING:
    from .wire import Message


class Started(Protocol):
    """What describe_layers reads of a launcher.Sandbox."""

    python: str
    limits: SandboxLimits
    strategy: Strategy | None
    ready: Message  # the zygote's "ready" message
    attempts: list[str]  # the stronger strategies that failed, and why
    worker_layers: dict[str, list[str]] | None  # merged over every run so far
    disable_layers: frozenset[str]
    from_master: bool  # the zygote is a fork of a batch's clean master


# How a zygote forked from a batch's master came to be (docs/threat-model.md says why it is one).
MASTER_DETAIL = " as a clean master (nothing of any student), forked for this submission into namespaces of its own"


def describe_layers(sb: Started) -> SandboxInfo:
    """Layers in force for Sandbox `sb`, as far as they are known (complete after the first run)."""
    s, r = sb.strategy, sb.ready
    assert s is not None, "a sandbox that has started"
    linux = sys.platform.startswith("linux")
    root = linux and os.geteuid() == 0
    layers = [
        Layer(
            "fresh_interpreter",
            "active",
            f"{Path(sb.python).name} -I{'' if r.get('site', True) else ' -S'} started by subprocess"
            f"{MASTER_DETAIL if sb.from_master else ''}; one forked worker per case",
        ),
        Layer("clean_environment", "active", "PATH, locale and single-thread BLAS variables only"),
        Layer("single_threaded_blas", "active", "OPENBLAS/OMP/MKL_NUM_THREADS=1"),
        Layer("wall_clock_limit", "active", f"{sb.limits.wall_s:g} s per case, then SIGKILL"),
    ]
    ns_detail = f"{s.mode}: " + "; ".join(sb.attempts) if sb.attempts else s.mode
    in_pid_ns = bool(r.get("pid_namespace"))
    only_lo = r.get("net_interfaces") in (["lo"], [])
    layers.append(
        Layer(
            "pid_namespace",
            "active" if in_pid_ns else "unavailable",
            "zygote is PID 1; leftovers killed after each case" if in_pid_ns else ns_detail,
        )
    )
    layers.append(
        Layer(
            "network_namespace",
            "active" if "net" in s.namespaces and only_lo else "unavailable",
            "only a loopback interface" if "net" in s.namespaces and only_lo else ns_detail,
        )
    )
    wl = sb.worker_layers or {}
    for name, missing in (
        ("rlimits", "not reported yet"),
        ("uid_drop", "the grader is not root" if not root else "not reported yet"),
        ("landlock", "not Linux" if not linux else "not reported yet"),
        ("seccomp", "not Linux" if not linux else "not reported yet"),
    ):
        if name in sb.disable_layers:
            missing = "switched off by the caller (disable_layers, a test-only parameter)"
        status, detail = wl.get(name, ("unavailable", missing))
        layers.append(Layer(name, "active" if status == "active" else "unavailable", detail))
    nondumpable = linux and child.get_dumpable() == 0 and r.get("dumpable") == 0
    layers.append(
        Layer(
            "parent_nondumpable",
            "active" if nondumpable else "unavailable",
            "PR_SET_DUMPABLE=0 on grader and zygote"
            if nondumpable
            else f"grader dumpable={child.get_dumpable()}, zygote dumpable={r.get('dumpable')}",
        )
    )
    return SandboxInfo(mode=s.mode, layers=tuple(layers))


def merge_layers(seen: dict[str, list[str]] | None, new: object) -> dict[str, list[str]]:
    """Worker layers over every run so far: a layer is active only if it was
    active in every run (the report never claims more than the weakest run)."""
    out = dict(seen or {})
    for name, value in (new or {}).items() if isinstance(new, dict) else ():
        ok = isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, str) for v in value)
        value = list(value) if ok else ["unavailable", "malformed layer report"]
        if name not in out or (out[name][0] == "active" and value[0] != "active"):
            out[name] = value
    return out
