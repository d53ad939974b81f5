"""Time limits that mean the same on a laptop and in CI.

problem.yaml states the CPU time limit as measured on the calibration
machine, together with that machine's reading of a fixed probe workload
(child.probe_workload, run in a sandbox worker exactly like a submission; a
reading is the minimum CPU time of several runs). At grading time the probe
is read again and the limit is scaled by the ratio, so a machine twice as slow
gets (about) twice the time.

Two guards keep the limit from wandering with the load:

* a noise band: readings from the calibrated one / PROBE_BAND (faster) up to
  the calibrated one x PROBE_BAND_SLOW (slower) mean "a machine of the
  calibration kind", scale 1, the limit exactly as the statement says; beyond
  it the scale is measured from the band's edge, so it is continuous. The band
  is wider on the slow side because load and the host's slow phases only ever
  slow a reading down: a slower reading is ambiguous, a faster one is not;
* a clamp, so that a broken probe cannot make the limit absurd.

The clamp also makes the probe unnecessary for most gradings: no machine's limit
is below SCALE_BOUNDS[0] x the stated one, so a test that finishes within that
least limit is within the limit everywhere. `grade` runs its tests under the
least limit first and reads the probe only when a run goes beyond it
(judging/case_steps.py), then judges that run's test afresh under the measured limit.
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
# On the slow side the band also covers the host's slow phases: this VM type runs a whole
# process 1.33-1.6x slower for seconds at a time, idle or loaded, more often idle
# (docs/time-limits.md, "The host's own speed"), so a reading up to 1.6x the calibrated one
# is this machine on a slow day, not a slower machine. Giving such a reading more time would
# make the limit wander by about 30 % from grading to grading. What the stated limit costs a
# genuinely slower machine is bounded: up to 1.6x, an accepted submission keeps a 3.9x margin
# (6.2x / 1.6), and beyond the edge the limit follows the machine again.
PROBE_BAND_SLOW = 1.6


# Where a grading's limits come from (the verdict JSON's limits.probe).
MEASURED, GIVEN, OFF, NOT_NEEDED = "measured", "given", "off", "not needed"


@dataclass(frozen=True)
class EffectiveLimits:
    cpu_s: float
    wall_s: float
    scale: float | None  # from the probe here vs on the calibration machine (1 inside the noise band);
    # None while the probe is NOT_NEEDED (the limits are then the least ones)
    probe_s: float | None  # None when scaling was switched off or the probe was not needed
    time_factor: float  # extra multiplier (verify's 1.5x tolerant run)
    probe: str = MEASURED  # MEASURED in this grading, GIVEN (one reading for a batch), OFF, NOT_NEEDED

    @property
    def pending(self) -> bool:
        """The least limits, standing in for a probe that no run has needed yet."""
        return self.probe == NOT_NEEDED


def wall_limit(wall_factor: float, cpu_s: float) -> float:
    """The wall-clock limit that goes with a CPU limit: `wall_factor` x it + 1 s (problem.yaml,
    docs/time-limits.md). Sleeping and waiting count against it; the one rule for every user of
    the wall-clock limit (the sandbox's, the scaled and least limits, calibration.yaml's)."""
    return wall_factor * cpu_s + 1.0


def machine_scale(spec: ProblemSpec, probe_s: float) -> float:
    """probe here / probe on the calibration machine, with the noise band taken out."""
    ratio = probe_s / spec.time_calibration.probe_time_s
    if ratio > PROBE_BAND_SLOW:
        ratio /= PROBE_BAND_SLOW
    elif ratio < 1 / PROBE_BAND:
        ratio *= PROBE_BAND
    else:
        ratio = 1.0
    lo, hi = SCALE_BOUNDS
    return min(hi, max(lo, ratio))


def _limits(spec: ProblemSpec, scale: float, time_factor: float, probe_s: float | None, probe: str) -> EffectiveLimits:
    """The limits at `scale` (a probe's reading reports its scale; the least limits report none)."""
    cpu = spec.limits.time_per_test_s * scale * time_factor
    return EffectiveLimits(
        cpu_s=cpu,
        wall_s=wall_limit(spec.limits.wall_factor, cpu),
        scale=scale if probe != NOT_NEEDED else None,
        probe_s=probe_s,
        time_factor=time_factor,
        probe=probe,
    )


def effective_limits(
    spec: ProblemSpec, probe_s: float | None, time_factor: float = 1.0, source: str = MEASURED
) -> EffectiveLimits:
    """Per-case CPU and wall limits for this machine (`source`: how `probe_s` was obtained)."""
    scale = machine_scale(spec, probe_s) if probe_s is not None else 1.0
    return _limits(spec, scale, time_factor, probe_s, source if probe_s is not None else OFF)


def least_limits(spec: ProblemSpec, time_factor: float = 1.0) -> EffectiveLimits:
    """The limits at the clamp's lower bound: what no machine's probe can go below."""
    return _limits(spec, SCALE_BOUNDS[0], time_factor, None, NOT_NEEDED)


def within_least_limits(cpu_s: float, ended_by_a_limit: bool, least: EffectiveLimits) -> bool:
    """Does a run under the least limits decide its test without the probe? Only if it used no
    more CPU time than they allow and no limit (or kill) ended it: then it is within any
    machine's limit, and would have run exactly so under the measured one."""
    return cpu_s <= least.cpu_s and not ended_by_a_limit


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
