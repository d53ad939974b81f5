"""Time limits derived from measurement, as Kattis derives them.

On the calibration machine, in the sandbox exactly as grading runs:

* the speed probe (child.probe_workload in a sandbox worker) is run many
  times; its median becomes `time_calibration.probe_time_s`, the unit that
  grader/judging/timing.py scales limits by on other machines;
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
import platform
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import yaml

from ..problem.bundle import Bundle, BundleError
from ..problem.cases import TestCase
from ..judging.judge import GradeOptions, cases_step, sandbox_limits
from ..feedback.grade import grade
from ..sandbox.launcher import Sandbox, SandboxError
from .verify import ExpectedSubmission, find_submissions

TIME_RESOLUTION_S = 1.0   # Kattis's default `time_resolution`
PROBE_GROUP = 5           # grading takes the median of this many probe runs (Sandbox.probe)
# The probe needs a compiled submission in the zygote but never runs it.
_PROBE_SOURCE = "def vit_encoder_block(*args):\n    return None\n"


@dataclass(frozen=True)
class Spread:
    """A median and how far the individual measurements strayed from it."""
    median: float
    low: float
    high: float
    n: int

    @property
    def relative(self) -> float:
        """(high - low) / median: 0.1 means the runs spanned 10 % of the median."""
        return (self.high - self.low) / self.median if self.median else 0.0

    def as_dict(self, digits: int = 4) -> dict:
        return {"median_s": round(self.median, digits), "min_s": round(self.low, digits),
                "max_s": round(self.high, digits), "runs": self.n, "spread": round(self.relative, 3)}


def spread(values: Sequence[float]) -> Spread:
    if not values:
        raise ValueError("no measurements")
    return Spread(statistics.median(values), min(values), max(values), len(values))


@dataclass(frozen=True)
class ProbeStats:
    runs: tuple[float, ...]            # every single probe run, in order
    group: int                          # runs per median in grading

    @property
    def single(self) -> Spread:
        return spread(self.runs)

    @property
    def grouped(self) -> Spread:
        """The spread of what grading sees: medians of consecutive groups of `group` runs."""
        medians = [statistics.median(self.runs[i:i + self.group])
                   for i in range(0, len(self.runs) - self.group + 1, self.group)]
        return spread(medians)


@dataclass(frozen=True)
class Timing:
    """One submission's CPU times under the generous cap, per case over the repetitions."""
    submission: ExpectedSubmission
    verdicts: tuple[str, ...]                      # verdict of each repetition
    case_times: dict[str, tuple[float, ...]]       # case -> CPU seconds, one per repetition
    capped: bool                                   # hit the cap (CPU or wall): time >= cap
    cap_s: float
    capped_by: str = ""                            # "cpu" or "wall" when capped

    @property
    def slowest_case(self) -> str | None:
        if not self.case_times:
            return None
        return max(self.case_times, key=lambda c: statistics.median(self.case_times[c]))

    @property
    def slowest(self) -> Spread | None:
        name = self.slowest_case
        return spread(self.case_times[name]) if name else None

    @property
    def time_s(self) -> float:
        """Median CPU time of the slowest case; infinity when it hit the cap."""
        if self.capped:
            return math.inf
        s = self.slowest
        return s.median if s else 0.0


@dataclass(frozen=True)
class Derivation:
    t_ac: float
    t_ac_from: str
    safety_factor: float
    tle_margin: float
    resolution: float
    time_limit: float
    t_tle: float                    # fastest TLE (inf when every one hit the cap)
    t_tle_from: str
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def exact_limit(self) -> float:
        return self.safety_factor * self.t_ac

    @property
    def tle_bound(self) -> float:
        return self.time_limit * self.tle_margin

    @property
    def ok(self) -> bool:
        return not self.problems


# --- measuring ----------------------------------------------------------------------------

def _probe_sandbox(bundle: Bundle, isolation: str) -> Sandbox:
    spec = bundle.spec
    allowed = {"packages": list(spec.allowed_imports.packages), "exclude": list(spec.allowed_imports.exclude),
               "stdlib": list(spec.allowed_imports.stdlib)}
    return Sandbox(_PROBE_SOURCE, function=spec.function, n_args=len(spec.parameters),
                   limits=sandbox_limits(spec), allowed=allowed, preload=spec.allowed_imports.all_modules(),
                   isolation=isolation)


def measure_probe(bundle: Bundle, runs: int = 25, isolation: str = "auto") -> ProbeStats:
    """`runs` single probe runs, each in a fresh sandbox worker as grading runs them."""
    times = []
    with _probe_sandbox(bundle, isolation) as sb:
        for _ in range(runs):
            out = sb.run([], None, mode="probe")
            if out.probe_s is None:
                raise SandboxError(f"the speed probe failed (status {out.status}, exit {out.exit_code})")
            times.append(out.probe_s)
    return ProbeStats(tuple(times), PROBE_GROUP)


class BackgroundLoad:
    """`n` busy-looping processes, to measure the probe on a loaded machine; ended by PID."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.procs: list[subprocess.Popen] = []

    def __enter__(self) -> "BackgroundLoad":
        for _ in range(self.n):
            self.procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL))
        return self

    def __exit__(self, *exc) -> None:
        for p in self.procs:
            p.kill()
            p.wait()


def measure_submission(bundle: Bundle, sub: ExpectedSubmission, cap_s: float, repeats: int,
                       isolation: str = "auto", cases: list[TestCase] | None = None) -> Timing:
    """Grade `sub` `repeats` times with the CPU limit raised to `cap_s` (no probe scaling)."""
    factor = cap_s / bundle.spec.limits.time_per_test_s
    options = GradeOptions(tests="all", isolation=isolation, time_factor=factor, scale_time=False,
                           stop_after_failure=True, diagnose=False)
    verdicts: list[str] = []
    times: dict[str, list[float]] = {}
    capped_by = ""
    for _ in range(repeats):
        report = grade(bundle, sub.path, options, cases)
        verdicts.append(report.verdict)
        for c in report.tests:
            if c.time_s is not None:
                times.setdefault(c.name, []).append(c.time_s)
        stopped = [c for c in report.tests if c.verdict == "TLE"]
        if stopped:
            # Little CPU time at a TLE means the wall-clock cap (a sleeper) stopped it.
            capped_by = "cpu" if (stopped[0].time_s or 0.0) >= 0.9 * cap_s else "wall"
            break  # another run would only burn the cap again
    return Timing(sub, tuple(verdicts), {k: tuple(v) for k, v in times.items()}, bool(capped_by), cap_s,
                  capped_by)


def round_up(value: float, resolution: float = TIME_RESOLUTION_S) -> float:
    """Kattis: max(1, ceil(value / resolution)) * resolution (a tiny epsilon absorbs float noise)."""
    steps = max(1, math.ceil(value / resolution - 1e-9))
    return round(steps * resolution, 6)


def derive(accepted: Sequence[Timing], tle: Sequence[Timing], safety_factor: float, tle_margin: float,
           resolution: float = TIME_RESOLUTION_S) -> Derivation:
    """The time limit from T_ac, and the check against the fastest TLE submission."""
    problems = []
    usable = [t for t in accepted if t.slowest is not None and not t.capped]
    for t in accepted:
        if t.capped or any(v != "AC" for v in t.verdicts):
            problems.append(f"accepted submission {t.submission.path.name} got {'/'.join(t.verdicts)} even "
                            f"with {t.cap_s:g} s per case")
    if not usable:
        return Derivation(0.0, "-", safety_factor, tle_margin, resolution, 0.0, math.inf, "-",
                          tuple(problems + ["no accepted submission produced a timing"]))
    worst = max(usable, key=lambda t: t.time_s)
    t_ac = worst.time_s
    limit = round_up(safety_factor * t_ac, resolution)
    fastest = min(tle, key=lambda t: t.time_s, default=None)
    t_tle = fastest.time_s if fastest else math.inf
    if fastest is None:
        problems.append("there is no time-limit-exceeded submission to check the limit against")
    elif limit * tle_margin > t_tle:
        problems.append(f"time limit {limit:g} s x tle_margin {tle_margin:g} = {limit * tle_margin:g} s is more "
                        f"than the fastest TLE submission ({fastest.submission.path.name}, {t_tle:.3f} s): "
                        "no limit separates the accepted from the too-slow submissions")
    for t in tle:
        if t.capped and t.cap_s < limit * tle_margin:
            problems.append(f"{t.submission.path.name} hit the cap of {t.cap_s:g} s, which is below "
                            f"{limit * tle_margin:g} s: raise --tle-cap")
    where = f"{worst.submission.folder}/{worst.submission.path.name} on {worst.slowest_case}"
    tle_from = "-" if fastest is None else (
        f"{fastest.submission.folder}/{fastest.submission.path.name}"
        + (f" on {fastest.slowest_case}" if not fastest.capped else f" (hit the {fastest.cap_s:g} s cap)"))
    return Derivation(t_ac, where, safety_factor, tle_margin, resolution, limit, t_tle, tle_from,
                      tuple(problems))


# --- the record ------------------------------------------------------------------------------

def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info(sandbox_mode: str) -> dict:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {"platform": platform.platform(), "cpu": _cpu_model(), "cores": os.cpu_count(),
            "python": platform.python_version(), "numpy": np.__version__, "sandbox": sandbox_mode,
            "load_average_1m_at_start": round(load[0], 2)}


def _timing_dict(t: Timing, wall_factor: float) -> dict:
    s = t.slowest
    out = {"submission": f"{t.submission.folder}/{t.submission.path.name}",
           "verdicts": list(t.verdicts), "slowest_case": t.slowest_case}
    if t.capped:
        out["time_s"] = None
        out["at_least_s"] = t.cap_s
        out["stopped_by"] = "the CPU-time cap" if t.capped_by == "cpu" else \
            f"the wall-clock cap ({wall_factor * t.cap_s + 1:g} s; it hardly used the CPU)"
    else:
        out["time_s"] = round(s.median, 4) if s else None
        out["slowest_case_runs_s"] = [round(v, 4) for v in t.case_times[t.slowest_case]] if s else []
        out["spread"] = round(s.relative, 3) if s else None
    return out


def record(bundle: Bundle, probe: ProbeStats, accepted: Sequence[Timing], tle: Sequence[Timing],
           d: Derivation, machine: dict, method: dict) -> dict:
    """calibration.yaml as plain data (every figure rounded so the file stays readable)."""
    spec = bundle.spec
    n_cases = sum(1 for g in bundle.group_names("all") for _ in (bundle.testcases / g).glob("*.json"))
    wall = spec.limits.wall_factor * d.time_limit + 1.0
    return {
        "generated_by": "python -m grader calibrate --write",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine,
        "method": method,
        "probe": {"single_runs": probe.single.as_dict(5),
                  f"median_of_{probe.group}": probe.grouped.as_dict(5)},
        "accepted": [_timing_dict(t, spec.limits.wall_factor) for t in accepted],
        "time_limit_exceeded": [_timing_dict(t, spec.limits.wall_factor) for t in tle],
        "derived": {
            "t_ac_s": round(d.t_ac, 4),
            "t_ac_from": d.t_ac_from,
            "exact_limit_s": round(d.exact_limit, 4),
            "time_per_test_s": d.time_limit,
            "probe_time_s": float(f"{probe.single.median:.4g}"),
            "fastest_tle_s": None if math.isinf(d.t_tle) else round(d.t_tle, 4),
            "fastest_tle_from": d.t_tle_from,
            "tle_bound_s": round(d.tle_bound, 4),
            "headroom_over_t_ac": round(d.time_limit / d.t_ac, 2) if d.t_ac else None,
            "fastest_tle_over_limit": None if math.isinf(d.t_tle) else round(d.t_tle / d.time_limit, 2),
            "wall_limit_s": round(wall, 3),
            "worst_case_run_s": round(n_cases * wall, 1),
            "total_time_s": spec.limits.total_time_s,
        },
        "checks": {
            "limit_covers_slowest_accepted": d.time_limit >= d.exact_limit,
            "fastest_tle_beyond_margin": d.tle_bound <= d.t_tle,
            "total_limit_covers_every_case_at_its_wall_limit": n_cases * wall <= spec.limits.total_time_s,
        },
        "problems": list(d.problems),
    }


HEADER = ("# Generated by `python -m grader calibrate --write`; do not edit by hand.\n"
          "# Evidence for limits.time_per_test_s and time_calibration.probe_time_s in problem.yaml:\n"
          "# see docs/time-limits.md for the method. Times are CPU seconds in the sandbox.\n")


class _RecordDumper(yaml.SafeDumper):
    """Block mappings, but a list of plain numbers or words on one line."""


def _list(dumper: yaml.SafeDumper, value: list) -> yaml.Node:
    flat = all(isinstance(v, (int, float, str)) and not isinstance(v, bool) for v in value)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flat)


_RecordDumper.add_representer(list, _list)


def render_record(data: dict) -> str:
    return HEADER + yaml.dump(data, Dumper=_RecordDumper, sort_keys=False, width=110, allow_unicode=True)


_NUMBER = r"[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?"


def set_problem_yaml_limits(path: Path, time_per_test_s: float, probe_time_s: float) -> bool:
    """Rewrite only the two values in problem.yaml, keeping every comment; True if changed."""
    text = path.read_text(encoding="utf-8")
    new = text
    for section, key, value in (("limits", "time_per_test_s", time_per_test_s),
                                ("time_calibration", "probe_time_s", probe_time_s)):
        pattern = re.compile(rf"(^{section}:\n(?:[ \t]+.*\n|[ \t]*#.*\n|\n)*?[ \t]+{key}:[ \t]*)"
                             rf"({_NUMBER})([ \t]*)(?=#|$)", re.MULTILINE)
        if len(pattern.findall(new)) != 1:
            raise BundleError(f"cannot find exactly one `{key}:` under `{section}:` in {path}")

        def put(m: re.Match, text: str = repr(float(value))) -> str:
            # Keep a trailing comment in its column.
            pad = max(1, len(m.group(2)) + len(m.group(3)) - len(text)) if m.group(3) else 0
            return m.group(1) + text + " " * pad
        new = pattern.sub(put, new)
    if new == text:
        return False
    path.write_text(new, encoding="utf-8")
    return True


# --- the whole calibration ------------------------------------------------------------------

@dataclass(frozen=True)
class Calibration:
    probe: ProbeStats
    accepted: tuple[Timing, ...]
    tle: tuple[Timing, ...]
    derivation: Derivation
    data: dict


def calibrate(bundle: Bundle, repeats: int = 3, probe_runs: int = 25, tle_cap_s: float | None = None,
              isolation: str = "auto", progress: Callable[[str], None] = lambda _: None) -> Calibration:
    """Measure everything and derive the limit (nothing is written)."""
    if bundle.flavour != "judge":
        raise BundleError("calibrate needs the judge bundle (submissions/ and the hidden cases)")
    spec = bundle.spec
    subs, _ = find_submissions(bundle)
    acc_subs = [s for s in subs if s.folder == "accepted"]
    tle_subs = [s for s in subs if s.folder == "time_limit_exceeded"]
    if not acc_subs:
        raise BundleError("calibrate needs at least one submission in submissions/accepted/")
    cases = cases_step(bundle, GradeOptions(tests="all"))
    with _probe_sandbox(bundle, isolation) as sb:
        sb.run([], None, mode="probe")
        mode = sb.info().mode
    progress(f"probe: {probe_runs} runs")
    probe = measure_probe(bundle, probe_runs, isolation)
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
    method = {"probe_runs": probe_runs, "probe_group": PROBE_GROUP, "repeats": repeats,
              "accepted_cap_s": ac_cap, "tle_cap_s": cap,
              "safety_factor": spec.time_calibration.safety_factor,
              "tle_margin": spec.time_calibration.tle_margin, "time_resolution_s": TIME_RESOLUTION_S,
              "rule": "time_per_test_s = max(1, ceil(safety_factor * T_ac / resolution)) * resolution; "
                      "require time_per_test_s * tle_margin <= fastest TLE"}
    data = record(bundle, probe, accepted, tle, d, machine_info(mode), method)
    return Calibration(probe, tuple(accepted), tuple(tle), d, data)


def write_calibration(bundle: Bundle, cal: Calibration) -> list[Path]:
    """Write calibration.yaml and the two figures of problem.yaml; return the paths changed."""
    if not cal.derivation.ok:
        raise BundleError("the calibration failed its checks; nothing was written: "
                          + "; ".join(cal.derivation.problems))
    out = bundle.calibration_file
    out.write_text(render_record(cal.data), encoding="utf-8")
    changed = [out]
    d = cal.data["derived"]
    if set_problem_yaml_limits(bundle.root / "problem.yaml", d["time_per_test_s"], d["probe_time_s"]):
        changed.append(bundle.root / "problem.yaml")
    return changed


def render_summary(cal: Calibration) -> str:
    """What the calibration found, for the terminal."""
    d, p = cal.derivation, cal.probe
    lines = [f"probe: median {p.single.median * 1000:.2f} ms over {p.single.n} runs "
             f"(range {p.single.low * 1000:.2f}-{p.single.high * 1000:.2f} ms, spread {p.single.relative:.0%}); "
             f"medians of {p.group}: {p.grouped.low * 1000:.2f}-{p.grouped.high * 1000:.2f} ms "
             f"(spread {p.grouped.relative:.0%})", ""]
    rows = [("submission", "verdicts", "slowest case", "median", "runs")]
    for t in (*cal.accepted, *cal.tle):
        s = t.slowest
        if t.capped:
            med, runs = f">= {t.cap_s:g}s", "-"
        else:
            med = f"{s.median:.3f}s" if s else "-"
            runs = ", ".join(f"{v:.3f}" for v in t.case_times[t.slowest_case]) if s else "-"
        rows.append((f"{t.submission.folder}/{t.submission.path.name}", "/".join(t.verdicts),
                     t.slowest_case or "-", med, runs))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    dd = cal.data["derived"]
    lines += ["",
              f"T_ac = {d.t_ac:.3f} s ({d.t_ac_from})",
              f"time limit = max(1, ceil({d.safety_factor:g} x {d.t_ac:.3f} / {d.resolution:g})) x "
              f"{d.resolution:g} = {d.time_limit:g} s ({dd['headroom_over_t_ac']}x the slowest accepted case)",
              "fastest TLE = " + ("at least the cap" if math.isinf(d.t_tle) else f"{d.t_tle:.3f} s")
              + f" ({d.t_tle_from}); needs >= {d.tle_margin:g} x {d.time_limit:g} = {d.tle_bound:g} s",
              f"probe_time_s = {dd['probe_time_s']:g}; wall limit per case {dd['wall_limit_s']:g} s; "
              f"{dd['worst_case_run_s']:g} s for every case at its wall limit vs total_time_s {dd['total_time_s']:g}"]
    for prob in d.problems:
        lines.append(f"FAIL {prob}")
    lines.append("calibrate: OK" if d.ok else "calibrate: FAILED")
    return "\n".join(lines) + "\n"


def render_probe(stats: Sequence[tuple[str, ProbeStats]]) -> str:
    """Probe stability figures, one line per condition (idle, loaded, ...)."""
    lines = []
    for label, p in stats:
        s, g = p.single, p.grouped
        lines.append(f"{label}: single runs median {s.median * 1000:.2f} ms, range {s.low * 1000:.2f}-"
                     f"{s.high * 1000:.2f} ms (spread {s.relative:.0%}, n={s.n}); medians of {p.group}: "
                     f"{g.median * 1000:.2f} ms, range {g.low * 1000:.2f}-{g.high * 1000:.2f} ms "
                     f"(spread {g.relative:.0%}, n={g.n})")
    return "\n".join(lines) + "\n"
