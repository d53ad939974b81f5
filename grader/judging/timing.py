"""Time limits that mean the same on a laptop and in CI.

problem.yaml states the CPU time limit as measured on the calibration
machine, together with that machine's time for a fixed probe workload
(child.probe_workload, run in a sandbox worker exactly like a submission).
At grading time the probe is run again and the limit is scaled by the ratio,
so a machine twice as slow gets twice the time. The ratio is clamped so that
a wildly noisy probe cannot make the limit absurd.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..problem.spec import ProblemSpec

SCALE_BOUNDS = (0.25, 10.0)


@dataclass(frozen=True)
class EffectiveLimits:
    cpu_s: float
    wall_s: float
    scale: float            # probe here / probe on the calibration machine
    probe_s: float | None   # None when scaling was switched off
    time_factor: float      # extra multiplier (verify's 1.5x tolerant run)


def machine_scale(spec: ProblemSpec, probe_s: float) -> float:
    lo, hi = SCALE_BOUNDS
    return min(hi, max(lo, probe_s / spec.time_calibration.probe_time_s))


def effective_limits(spec: ProblemSpec, probe_s: float | None, time_factor: float = 1.0) -> EffectiveLimits:
    """Per-case CPU and wall limits for this machine."""
    scale = machine_scale(spec, probe_s) if probe_s is not None else 1.0
    cpu = spec.limits.time_per_test_s * scale * time_factor
    return EffectiveLimits(cpu_s=cpu, wall_s=spec.limits.wall_factor * cpu + 1.0,
                           scale=scale, probe_s=probe_s, time_factor=time_factor)
