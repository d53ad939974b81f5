"""Time limits that mean the same on a laptop and in CI.

problem.yaml states the CPU time limit as measured on the calibration
machine, together with that machine's reading of a fixed probe workload
(child.probe_workload, run in a sandbox worker exactly like a submission; a
reading is the minimum CPU time of several runs). At grading time the probe
is read again and the limit is scaled by the ratio, so a machine twice as slow
gets (about) twice the time.

Two guards keep the limit from wandering with the load:

* a noise band: readings within PROBE_BAND of the calibrated one (the scatter
  of readings measured on the calibration machine, idle and loaded) mean "a
  machine of the calibration kind", scale 1, the limit exactly as the statement
  says; beyond it the scale is measured from the band's edge, so it is continuous;
* a clamp, so that a broken probe cannot make the limit absurd.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..problem.spec import ProblemSpec

SCALE_BOUNDS = (0.25, 10.0)
# Readings of the probe on one machine scatter by about +-10 % around their median,
# idle or loaded (docs/time-limits.md); beyond that a reading means a machine (or a
# host's day) of a different speed, which scaling must follow: one 25 % faster must
# not keep the 1.5x limit that `verify` checks the too-slow submissions against.
PROBE_BAND = 1.15


@dataclass(frozen=True)
class EffectiveLimits:
    cpu_s: float
    wall_s: float
    scale: float            # from the probe here vs on the calibration machine (1 inside the noise band)
    probe_s: float | None   # None when scaling was switched off
    time_factor: float      # extra multiplier (verify's 1.5x tolerant run)


def machine_scale(spec: ProblemSpec, probe_s: float) -> float:
    """probe here / probe on the calibration machine, with the noise band taken out."""
    ratio = probe_s / spec.time_calibration.probe_time_s
    if ratio > PROBE_BAND:
        ratio /= PROBE_BAND
    elif ratio < 1 / PROBE_BAND:
        ratio *= PROBE_BAND
    else:
        ratio = 1.0
    lo, hi = SCALE_BOUNDS
    return min(hi, max(lo, ratio))


def effective_limits(spec: ProblemSpec, probe_s: float | None, time_factor: float = 1.0) -> EffectiveLimits:
    """Per-case CPU and wall limits for this machine."""
    scale = machine_scale(spec, probe_s) if probe_s is not None else 1.0
    cpu = spec.limits.time_per_test_s * scale * time_factor
    return EffectiveLimits(cpu_s=cpu, wall_s=spec.limits.wall_factor * cpu + 1.0,
                           scale=scale, probe_s=probe_s, time_factor=time_factor)


# --- judging near the limit, and bounding the worst case ------------------------------------

# A CPU-time TLE at most this far over the limit is within the noise of a shared
# machine (a slow phase costs up to 1.8x here, docs/time-limits.md): the test is
# run a second time before it is called TLE, and the faster run decides.
RERUN_BAND = 1.25


def near_the_limit(cpu_s: float, killed_by_wall: bool, cpu_limit_s: float) -> bool:
    """Is this CPU-time TLE close enough to the limit to be judged twice?"""
    return not killed_by_wall and cpu_s <= RERUN_BAND * cpu_limit_s


def case_work(dims: dict[str, int]) -> int:
    """Multiply-adds of one encoder block on this case: the size that time limits scale with."""
    B, N, D, M = dims["B"], dims["N"], dims["D"], dims["M"]
    return B * N * (4 * D * D + 2 * N * D + 2 * D * M)


def covered_by_timeout(work: int, timed_out: list[tuple[str, int]]) -> str | None:
    """The name of an earlier test that exceeded the limit and that needs no more work than
    this one, or None.

    Such a test is reported TLE without being run: a submission too slow on a test is
    too slow on a larger one (docs/time-limits.md, "Bounding the worst case"). Only a
    time-out triggers this, so the verdict and score of a submission that never times
    out cannot change; one that sleeps or loops forever costs one test's limit, not 34."""
    for name, smaller in timed_out:
        if work >= smaller:
            return name
    return None
