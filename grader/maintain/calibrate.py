"""Time limits derived from measurement, as Kattis derives them.

On the calibration machine, in the sandbox exactly as grading runs:

* the speed probe is read many times, as found and again with two busy
  processes (a reading is what grading takes: the minimum CPU time of
  PROBE_GROUP runs of child.probe_workload in one sandbox worker); the
  median of every reading becomes `time_calibration.probe_time_s`, the unit
  that grader/judging/timing.py scales limits by on other machines, and the
  median reading of each condition must lie within its noise band
  (timing.PROBE_BAND);
* every accepted submission is graded `repeats` times under a generous cap;
  per case the median CPU time is kept, and the slowest case of the slowest
  accepted submission is T_ac;
* every time-limit-exceeded submission is graded under a generous cap; the
  fastest one that finishes gives T_tle (one that hits the cap counts as at
  least the cap).

Then, with Kattis's rule (problemtools `_compute_time_limit`):
time_per_test_s = max(1, ceil(safety_factor * T_ac / resolution)) * resolution,
and the limit is accepted only if time_per_test_s * tle_margin <= T_tle.
The evidence goes to calibration.yaml; `--write` also sets the two figures in
problem.yaml. Every measurement is a median and records its spread.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..judging.judge import GradeOptions, cases_step
from ..judging.timing import PROBE_BAND
from ..problem.bundle import Bundle, BundleError
from . import idle_check
from .calibration_record import machine_info, probe_center, record, render_probe, render_record, set_problem_yaml_limits
from .idle_check import MAX_STEAL_SHARE, MIN_CPU_SHARE, IdleReading, MachineBusy, require_idle
from .limit_rule import MACHINE_ALLOWANCE, TIME_RESOLUTION_S, Derivation, derive, round_up
from .measure import (
    PROBE_GROUP,
    BackgroundLoad,
    ProbeStats,
    Spread,
    Timing,
    measure_probe,
    measure_submission,
    probe_sandbox,
    spread,
)
from .verify import find_submissions

# The pieces live in measure.py, limit_rule.py and calibration_record.py; these
# names are the calibration's public API (the CLI and the tests use them from here).
__all__ = [
    "BackgroundLoad",
    "Calibration",
    "Derivation",
    "IdleReading",
    "MachineBusy",
    "ProbeStats",
    "Spread",
    "Timing",
    "calibrate",
    "derive",
    "measure_probe",
    "measure_submission",
    "probe_center",
    "record",
    "render_probe",
    "render_record",
    "render_summary",
    "round_up",
    "set_problem_yaml_limits",
    "spread",
    "write_calibration",
    "TIME_RESOLUTION_S",
    "MACHINE_ALLOWANCE",
    "PROBE_GROUP",
]

CALIBRATION_LOAD = 2  # busy processes for the loaded probe readings


# --- the whole calibration ------------------------------------------------------------------


@dataclass(frozen=True)
class Calibration:
    probes: tuple[tuple[str, ProbeStats, float], ...]  # (condition, readings, load average)
    accepted: tuple[Timing, ...]
    tle: tuple[Timing, ...]
    derivation: Derivation
    data: dict[str, Any]


def _method(bundle: Bundle, probe_runs: int, repeats: int, ac_cap: float, cap: float) -> dict[str, Any]:
    """calibration.yaml's `method`: how each figure was measured and the rule applied."""
    spec = bundle.spec
    return {
        "probe_readings": probe_runs,
        "probe_runs_per_reading": PROBE_GROUP,
        "probe_reading": "minimum CPU time of the runs in one worker; a run sums its parts' fastest of 2",
        "probe_time_s": "median of every reading, as found and loaded",
        "probe_band_factor": PROBE_BAND,
        "repeats": repeats,
        "accepted_cap_s": ac_cap,
        "tle_cap_s": cap,
        "safety_factor": spec.time_calibration.safety_factor,
        "tle_margin": spec.time_calibration.tle_margin,
        "time_resolution_s": TIME_RESOLUTION_S,
        "idle_check": f"a busy loop gets >= {MIN_CPU_SHARE:g} of the wall time and steal <= {MAX_STEAL_SHARE:g}",
        "rule": "time_per_test_s = max(1, ceil(safety_factor * T_ac / resolution)) * resolution; "
        "require time_per_test_s * tle_margin <= fastest TLE",
    }


def calibrate(
    bundle: Bundle,
    repeats: int = 3,
    probe_runs: int = 25,
    tle_cap_s: float | None = None,
    isolation: str = "auto",
    progress: Callable[[str], None] = lambda _: None,
    allow_busy: bool = False,
    idle: Callable[[], IdleReading] | None = None,
) -> Calibration:
    """Measure everything and derive the limit (nothing is written). On a busy machine (idle_check)
    raise MachineBusy, or with `allow_busy` go on and record why in the calibration's warnings."""
    if bundle.flavour != "judge":
        raise BundleError("calibrate needs the judge bundle (submissions/ and the hidden cases)")
    idle_reading = (idle or idle_check.measure_idle)()  # looked up now: a test may fake it
    warnings = require_idle(idle_reading, allow_busy)
    for w in warnings:
        progress(f"warning: busy machine: {w}")
    spec = bundle.spec
    subs, _ = find_submissions(bundle)
    acc_subs = [s for s in subs if s.folder == "accepted"]
    tle_subs = [s for s in subs if s.folder == "time_limit_exceeded"]
    if not acc_subs:
        raise BundleError("calibrate needs at least one submission in submissions/accepted/")
    cases = cases_step(bundle, GradeOptions(tests="all"))
    with probe_sandbox(bundle, isolation) as sb:
        sb.run([], None, mode="probe")
        mode = sb.info().mode
    progress(f"probe: {probe_runs} readings as found, then with {CALIBRATION_LOAD} busy processes")
    probes = [("as_found", measure_probe(bundle, probe_runs, isolation), os.getloadavg()[0])]
    with BackgroundLoad(CALIBRATION_LOAD):
        probes.append(
            (f"with_{CALIBRATION_LOAD}_busy", measure_probe(bundle, probe_runs, isolation), os.getloadavg()[0])
        )
    # Accepted runs get a cap far above any sensible limit: they must never be cut short.
    ac_cap = max(10.0, 10 * spec.limits.time_per_test_s)
    accepted = []
    for s in acc_subs:
        progress(f"accepted/{s.path.name}: {repeats} runs")
        accepted.append(measure_submission(bundle, s, ac_cap, repeats, isolation, cases))
    finite = [t.time_s for t in accepted if not t.capped] or [spec.limits.time_per_test_s]
    provisional = round_up(spec.time_calibration.safety_factor * max(finite))
    cap = tle_cap_s if tle_cap_s is not None else max(5.0, 10 * provisional)
    tle = []
    for s in tle_subs:
        progress(f"time_limit_exceeded/{s.path.name}: up to {repeats} runs, cap {cap:g} s")
        tle.append(measure_submission(bundle, s, cap, repeats, isolation, cases))
    d = derive(accepted, tle, spec.time_calibration.safety_factor, spec.time_calibration.tle_margin)
    method = _method(bundle, probe_runs, repeats, ac_cap, cap)
    machine = {**machine_info(mode), "idle_check": idle_reading.as_dict()}
    data = {**record(bundle, probes, accepted, tle, d, machine, method), "warnings": warnings}
    return Calibration(tuple(probes), tuple(accepted), tuple(tle), d, data)


def write_calibration(bundle: Bundle, cal: Calibration) -> list[Path]:
    """Write calibration.yaml and the two figures of problem.yaml; return the paths changed."""
    if not cal.derivation.ok:
        raise BundleError(
            "the calibration failed its checks; nothing was written: " + "; ".join(cal.derivation.problems)
        )
    out = bundle.calibration_file
    out.write_text(render_record(cal.data), encoding="utf-8")
    changed = [out]
    d = cal.data["derived"]
    if set_problem_yaml_limits(bundle.root / "problem.yaml", d["time_per_test_s"], d["probe_time_s"]):
        changed.append(bundle.root / "problem.yaml")
    return changed


def render_summary(cal: Calibration) -> str:
    """What the calibration found, for the terminal."""
    d = cal.derivation
    lines = [render_probe([(f"probe {label} (load average {load:.1f})", p) for label, p, load in cal.probes])]
    rows = [("submission", "verdicts", "slowest case", "median", "runs")]
    for t in (*cal.accepted, *cal.tle):
        s = t.slowest
        if t.capped:
            med, runs = f">= {t.cap_s:g}s", "-"
        else:
            med = f"{s.median:.3f}s" if s else "-"
            runs = ", ".join(f"{v:.3f}" for v in t.slowest_runs) if s else "-"
        rows.append(
            (f"{t.submission.folder}/{t.submission.path.name}", "/".join(t.verdicts), t.slowest_case or "-", med, runs)
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    dd = cal.data["derived"]
    lines += [
        "",
        f"T_ac = {d.t_ac:.3f} s ({d.t_ac_from})",
        f"time limit = max(1, ceil({d.safety_factor:g} x {d.t_ac:.3f} / {d.resolution:g})) x "
        f"{d.resolution:g} = {d.time_limit:g} s ({dd['headroom_over_t_ac']}x the slowest accepted case)",
        "fastest TLE = "
        + ("at least the cap" if math.isinf(d.t_tle) else f"{d.t_tle:.3f} s")
        + f" ({d.t_tle_from}); needs >= {d.tle_margin:g} x {d.time_limit:g} x {MACHINE_ALLOWANCE:g}"
        + f" = {d.tle_required:g} s",
        f"probe_time_s = {dd['probe_time_s']:g}; wall limit per case {dd['wall_limit_s']:g} s; "
        f"{dd['worst_case_run_s']:g} s for every case at its wall limit vs total_time_s {dd['total_time_s']:g}",
    ]
    for prob in d.problems:
        lines.append(f"FAIL {prob}")
    for w in cal.data.get("warnings", []):
        lines.append(f"WARNING busy machine: {w}")
    lines.append("calibrate: OK" if d.ok else "calibrate: FAILED")
    return "\n".join(lines) + "\n"
