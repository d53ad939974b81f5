"""The time limit from the measurements: Kattis's rule (problemtools `_compute_time_limit`).

time_per_test_s = max(1, ceil(safety_factor * T_ac / resolution)) * resolution,
accepted only if time_per_test_s * tle_margin * MACHINE_ALLOWANCE <= the fastest TLE submission.

Kattis checks the time-outs at tle_margin x the limit on the machine that set the limit. A bundle
here is verified on any machine, with the limit scaled by the speed probe, so a too-slow
submission must also outrun the probe's errors: MACHINE_ALLOWANCE (docs/time-limits.md, "The
too-slow submissions' margin").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .measure import Timing

TIME_RESOLUTION_S = 1.0  # Kattis's default `time_resolution`
# A machine up to PROBE_BAND (1.15x) faster at the probe keeps the stated limit, and the probe
# misreads loop-bound code's speed-up by up to 45 % (measured: OpenBLAS's Nehalem kernels 41 %, a
# CI host 26-45 %): 1.15 x 1.45 = 1.67, rounded up.
MACHINE_ALLOWANCE = 2.0


@dataclass(frozen=True)
class Derivation:
    t_ac: float
    t_ac_from: str
    safety_factor: float
    tle_margin: float
    resolution: float
    time_limit: float
    t_tle: float  # fastest TLE (inf when every one hit the cap)
    t_tle_from: str
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def exact_limit(self) -> float:
        return self.safety_factor * self.t_ac

    @property
    def tle_bound(self) -> float:
        return self.time_limit * self.tle_margin

    @property
    def tle_required(self) -> float:
        """What the fastest TLE submission must take here, for `verify` to hold on any machine."""
        return self.tle_bound * MACHINE_ALLOWANCE

    @property
    def ok(self) -> bool:
        return not self.problems


def round_up(value: float, resolution: float = TIME_RESOLUTION_S) -> float:
    """Kattis: max(1, ceil(value / resolution)) * resolution (a tiny epsilon absorbs float noise)."""
    steps = max(1, math.ceil(value / resolution - 1e-9))
    return round(steps * resolution, 6)


def derive(
    accepted: Sequence[Timing],
    tle: Sequence[Timing],
    safety_factor: float,
    tle_margin: float,
    resolution: float = TIME_RESOLUTION_S,
) -> Derivation:
    """The time limit from T_ac, and the check against the fastest TLE submission."""
    problems = []
    usable = [t for t in accepted if t.slowest is not None and not t.capped]
    for t in accepted:
        if t.capped or any(v != "AC" for v in t.verdicts):
            problems.append(
                f"accepted submission {t.submission.path.name} got {'/'.join(t.verdicts)} even "
                f"with {t.cap_s:g} s per case"
            )
    if not usable:
        return Derivation(
            0.0,
            "-",
            safety_factor,
            tle_margin,
            resolution,
            0.0,
            math.inf,
            "-",
            tuple(problems + ["no accepted submission produced a timing"]),
        )
    worst = max(usable, key=lambda t: t.time_s)
    t_ac = worst.time_s
    limit = round_up(safety_factor * t_ac, resolution)
    fastest = min(tle, key=lambda t: t.time_s, default=None)
    t_tle = fastest.time_s if fastest else math.inf
    problems += _tle_problems(tle, fastest, limit, tle_margin)
    where = f"{worst.submission.folder}/{worst.submission.path.name} on {worst.slowest_case}"
    tle_from = (
        "-"
        if fastest is None
        else (
            f"{fastest.submission.folder}/{fastest.submission.path.name}"
            + (f" on {fastest.slowest_case}" if not fastest.capped else f" (hit the {fastest.cap_s:g} s cap)")
        )
    )
    return Derivation(t_ac, where, safety_factor, tle_margin, resolution, limit, t_tle, tle_from, tuple(problems))


def _tle_problems(tle: Sequence[Timing], fastest: Timing | None, limit: float, tle_margin: float) -> list[str]:
    """What keeps `limit` from separating the accepted from the too-slow submissions `tle`."""
    found: list[str] = []
    t_tle = fastest.time_s if fastest else math.inf
    required = limit * tle_margin * MACHINE_ALLOWANCE
    if fastest is None:
        found.append("there is no time-limit-exceeded submission to check the limit against")
    elif limit * tle_margin > t_tle:
        found.append(
            f"time limit {limit:g} s x tle_margin {tle_margin:g} = {limit * tle_margin:g} s is more "
            f"than the fastest TLE submission ({fastest.submission.path.name}, {t_tle:.3f} s): "
            "no limit separates the accepted from the too-slow submissions"
        )
    elif required > t_tle:
        found.append(
            f"the fastest TLE submission ({fastest.submission.path.name}, {t_tle:.3f} s) is less than "
            f"{MACHINE_ALLOWANCE:g} x the {limit * tle_margin:g} s where `verify` checks it: on a machine "
            "where the probe misreads its speed-up it would pass there; make it slower"
        )
    for t in tle:
        if t.capped and t.cap_s < required:
            found.append(
                f"{t.submission.path.name} hit the cap of {t.cap_s:g} s, which is below {required:g} s: raise --tle-cap"
            )
    return found
