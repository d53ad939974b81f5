"""calibration.yaml: the calibration's evidence as plain data, and how it is written.

`record` turns the measurements and the derivation into the file's data,
`render_record` into its exact text (tests check that the checked-in file
renders back identically); `set_problem_yaml_limits` changes exactly the two
figures of problem.yaml that the calibration owns, keeping every comment.
"""

from __future__ import annotations

import math
import os
import platform
import re
import statistics
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..judging.timing import PROBE_BAND, wall_limit
from ..problem.bundle import Bundle, BundleError
from .limit_rule import Derivation
from .measure import ProbeStats, Timing


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info(sandbox_mode: str) -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "sandbox": sandbox_mode,
        "load_average_1m_at_start": round(load[0], 2),
    }


def _timing_dict(t: Timing, wall_factor: float) -> dict[str, Any]:
    s = t.slowest
    out: dict[str, Any] = {
        "submission": f"{t.submission.folder}/{t.submission.path.name}",
        "verdicts": list(t.verdicts),
        "slowest_case": t.slowest_case,
    }
    if t.capped:
        out["time_s"] = None
        out["at_least_s"] = t.cap_s
        out["stopped_by"] = (
            "the CPU-time cap"
            if t.capped_by == "cpu"
            else f"the wall-clock cap ({wall_limit(wall_factor, t.cap_s):g} s; it hardly used the CPU)"
        )
    else:
        out["time_s"] = round(s.median, 4) if s else None
        out["slowest_case_runs_s"] = [round(v, 4) for v in t.slowest_runs] if s else []
        out["spread"] = round(s.relative, 3) if s else None
    return out


def probe_center(probes: Sequence[ProbeStats]) -> float:
    """probe_time_s: the median of every reading, idle and loaded pooled."""
    return float(f"{statistics.median(min(r) for p in probes for r in p.readings):.4g}")


def _probe_dict(p: ProbeStats, load: float) -> dict[str, Any]:
    return {
        "load_average_1m": round(load, 2),
        "single_runs": p.single.as_dict(5),
        f"min_of_{p.group}": p.grouped.as_dict(5),
    }


def record(
    bundle: Bundle,
    probes: Sequence[tuple[str, ProbeStats, float]],
    accepted: Sequence[Timing],
    tle: Sequence[Timing],
    d: Derivation,
    machine: dict[str, Any],
    method: dict[str, Any],
) -> dict[str, Any]:
    """calibration.yaml as plain data (every figure rounded so the file stays readable).

    `probes`: (condition, readings, load average) per load condition."""
    spec = bundle.spec
    center = probe_center([p for _, p, _ in probes])
    # Each condition's median reading must mean "this machine": inside the noise band.
    in_band = all(center / PROBE_BAND <= p.grouped.median <= center * PROBE_BAND for _, p, _ in probes)
    n_cases = sum(1 for g in bundle.group_names("all") for _ in (bundle.testcases / g).glob("*.json"))
    wall = wall_limit(spec.limits.wall_factor, d.time_limit)
    return {
        "generated_by": "python -m grader calibrate --write",
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine,
        "method": method,
        "probe": {label: _probe_dict(p, load) for label, p, load in probes},
        "accepted": [_timing_dict(t, spec.limits.wall_factor) for t in accepted],
        "time_limit_exceeded": [_timing_dict(t, spec.limits.wall_factor) for t in tle],
        "derived": {
            "t_ac_s": round(d.t_ac, 4),
            "t_ac_from": d.t_ac_from,
            "exact_limit_s": round(d.exact_limit, 4),
            "time_per_test_s": d.time_limit,
            "probe_time_s": center,
            # The calibration's own check band (each condition's median within it), not grading's,
            # which is wider on the slow side (timing.PROBE_BAND_SLOW, docs/time-limits.md).
            "probe_band": [round(center / PROBE_BAND, 5), round(center * PROBE_BAND, 5)],
            "fastest_tle_s": None if math.isinf(d.t_tle) else round(d.t_tle, 4),
            "fastest_tle_from": d.t_tle_from,
            "tle_bound_s": round(d.tle_bound, 4),
            "tle_required_s": round(d.tle_required, 4),
            "headroom_over_t_ac": round(d.time_limit / d.t_ac, 2) if d.t_ac else None,
            "fastest_tle_over_limit": None if math.isinf(d.t_tle) else round(d.t_tle / d.time_limit, 2),
            "wall_limit_s": round(wall, 3),
            "worst_case_run_s": round(n_cases * wall, 1),
            "total_time_s": spec.limits.total_time_s,
        },
        "checks": {
            "limit_covers_slowest_accepted": d.time_limit >= d.exact_limit,
            "fastest_tle_beyond_margin": d.tle_bound <= d.t_tle,
            "fastest_tle_beyond_margin_on_any_machine": d.tle_required <= d.t_tle,
            "total_limit_covers_every_case_at_its_wall_limit": n_cases * wall <= spec.limits.total_time_s,
            "median_reading_of_each_condition_within_the_band": in_band,
        },
        "problems": list(d.problems),
    }


HEADER = (
    "# Generated by `python -m grader calibrate --write`; do not edit by hand.\n"
    "# Evidence for limits.time_per_test_s and time_calibration.probe_time_s in problem.yaml:\n"
    "# see docs/time-limits.md for the method. Times are CPU seconds in the sandbox.\n"
)


class _RecordDumper(yaml.SafeDumper):
    """Block mappings, but a list of plain numbers or words on one line."""


def _list(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.Node:
    flat = all(isinstance(v, (int, float, str)) and not isinstance(v, bool) for v in value)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flat)


_RecordDumper.add_representer(list, _list)


def render_record(data: dict[str, Any]) -> str:
    return HEADER + yaml.dump(data, Dumper=_RecordDumper, sort_keys=False, width=110, allow_unicode=True)


_NUMBER = r"[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?"


def set_problem_yaml_limits(path: Path, time_per_test_s: float, probe_time_s: float) -> bool:
    """Rewrite only the two values in problem.yaml, keeping every comment; True if changed."""
    text = path.read_text(encoding="utf-8")
    new = text
    for section, key, value in (
        ("limits", "time_per_test_s", time_per_test_s),
        ("time_calibration", "probe_time_s", probe_time_s),
    ):
        pattern = re.compile(
            rf"(^{section}:\n(?:[ \t]+.*\n|[ \t]*#.*\n|\n)*?[ \t]+{key}:[ \t]*)"
            rf"({_NUMBER})([ \t]*)(?=#|$)",
            re.MULTILINE,
        )
        if len(pattern.findall(new)) != 1:
            raise BundleError(f"cannot find exactly one `{key}:` under `{section}:` in {path}")

        def put(m: re.Match[str], text: str = repr(float(value))) -> str:
            # Keep a trailing comment in its column.
            pad = max(1, len(m.group(2)) + len(m.group(3)) - len(text)) if m.group(3) else 0
            return m.group(1) + text + " " * pad

        new = pattern.sub(put, new)
    if new == text:
        return False
    path.write_text(new, encoding="utf-8")
    return True


def render_probe(stats: Sequence[tuple[str, ProbeStats]]) -> str:
    """Probe stability figures, one line per condition (idle, loaded, ...)."""
    lines = []
    for label, p in stats:
        s, g = p.single, p.grouped
        lines.append(
            f"{label}: single runs median {s.median * 1000:.2f} ms, range {s.low * 1000:.2f}-"
            f"{s.high * 1000:.2f} ms (spread {s.relative:.0%}, n={s.n}); readings (min of {p.group}): "
            f"{g.median * 1000:.2f} ms, range {g.low * 1000:.2f}-{g.high * 1000:.2f} ms "
            f"(spread {g.relative:.0%}, n={g.n})"
        )
    return "\n".join(lines) + "\n"
