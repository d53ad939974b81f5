"""Time limits: probe scaling (grader/judging/timing.py), the Kattis-style derivation
(grader/maintain/calibrate.py), and the checked-in calibration record.

No timing assertion depends on how fast this machine is right now: the pure
functions get exact inputs, and the record is checked for consistency, not
re-measured (`python -m grader calibrate` does that, and prints its spread).
"""

from __future__ import annotations

import math
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, require_parts
from grader.judging.timing import (
    PROBE_BAND,
    PROBE_BAND_SLOW,
    RERUN_BAND,
    SCALE_BOUNDS,
    covered_by_timeout,
    effective_limits,
    machine_scale,
    near_the_limit,
)
from grader.maintain.calibrate import (
    MACHINE_ALLOWANCE,
    ProbeStats,
    Timing,
    derive,
    measure_probe,
    probe_center,
    render_record,
    round_up,
    set_problem_yaml_limits,
    spread,
)
from grader.maintain.verify import ExpectedSubmission, calibration_problems
from grader.problem.bundle import Bundle, BundleError
from grader.problem.spec import load_spec


def with_limits(spec, time_per_test_s=1.0, probe_time_s=0.04, wall_factor=2.0):
    return replace(
        spec,
        limits=replace(spec.limits, time_per_test_s=time_per_test_s, wall_factor=wall_factor),
        time_calibration=replace(spec.time_calibration, probe_time_s=probe_time_s),
    )


# --- probe scaling -----------------------------------------------------------------------------


def test_same_speed_means_the_published_limit(spec):
    s = with_limits(spec)
    assert machine_scale(s, 0.04) == pytest.approx(1.0)
    lim = effective_limits(s, 0.04)
    assert lim.cpu_s == pytest.approx(1.0) and lim.wall_s == pytest.approx(2.0 * 1.0 + 1.0)


def test_a_slower_machine_gets_more_time_from_the_edge_of_the_noise_band(spec):
    s = with_limits(spec)
    lim = effective_limits(s, 0.04 * 2 * PROBE_BAND_SLOW)
    assert lim.scale == pytest.approx(2.0) and lim.cpu_s == pytest.approx(2.0)
    assert lim.wall_s == pytest.approx(2.0 * 2.0 + 1.0)
    assert effective_limits(s, 0.04 / 2 / PROBE_BAND).cpu_s == pytest.approx(0.5)


@pytest.mark.parametrize("ratio", [1 / PROBE_BAND, 0.9, 1.0, 1.1, 1.33, 1.5, PROBE_BAND_SLOW])
def test_a_reading_inside_the_noise_band_means_the_stated_limit(spec, ratio):
    assert machine_scale(with_limits(spec), 0.04 * ratio) == 1.0


def test_the_scale_is_continuous_at_the_edges_of_the_band(spec):
    s = with_limits(spec)
    for edge in (PROBE_BAND_SLOW, 1 / PROBE_BAND):
        assert machine_scale(s, 0.04 * edge * 1.0001) == pytest.approx(1.0, abs=1e-3)
        assert machine_scale(s, 0.04 * edge * 0.9999) == pytest.approx(1.0, abs=1e-3)


@pytest.mark.parametrize("probe, expected", [(1e-9, SCALE_BOUNDS[0]), (1e3, SCALE_BOUNDS[1])])
def test_an_absurd_probe_is_clamped(spec, probe, expected):
    assert machine_scale(with_limits(spec), probe) == expected


def test_scaling_can_be_switched_off(spec):
    lim = effective_limits(with_limits(spec, time_per_test_s=1.5), None)
    assert (lim.scale, lim.probe_s, lim.cpu_s) == (1.0, None, 1.5)


def test_time_factor_scales_cpu_and_wall_together(spec):
    s = with_limits(spec)
    base, high = effective_limits(s, 0.05), effective_limits(s, 0.05, time_factor=1.5)
    assert high.cpu_s == pytest.approx(1.5 * base.cpu_s)
    assert high.wall_s == pytest.approx(s.limits.wall_factor * high.cpu_s + 1.0)
    assert high.time_factor == 1.5


def test_beyond_the_band_the_limit_follows_the_probe(spec):
    # Outside the noise band, a machine k times slower at the probe gets k times the time.
    s = with_limits(spec, time_per_test_s=1.0, probe_time_s=0.04)
    for probe in (0.1, 0.2, 0.4):
        assert effective_limits(s, probe).cpu_s / probe == pytest.approx(1.0 / 0.04 / PROBE_BAND_SLOW)


# --- the derivation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, resolution, expected",
    [
        (0.01, 1.0, 1.0),
        (0.5168, 1.0, 1.0),
        (1.0, 1.0, 1.0),
        (1.0000000001, 1.0, 1.0),
        (1.01, 1.0, 2.0),
        (2.3, 1.0, 3.0),
        (0.2, 0.5, 0.5),
        (0.6, 0.5, 1.0),
        (0.75, 0.25, 0.75),
    ],
)
def test_round_up_follows_kattis(value, resolution, expected):
    assert round_up(value, resolution) == expected


def timing(
    folder: str, name: str, seconds: list[float] | None, cap: float = 10.0, verdicts: tuple[str, ...] = ("AC",)
) -> Timing:
    sub = ExpectedSubmission(Path(f"/x/submissions/{folder}/{name}"), folder, "AC")
    if seconds is None:  # hit the cap
        return Timing(sub, ("TLE",), {"realistic/01": (cap,)}, True, cap, "cpu")
    return Timing(
        sub, verdicts * len(seconds), {"sample/01": (0.01,) * len(seconds), "realistic/01": tuple(seconds)}, False, cap
    )


def test_derive_uses_the_median_of_the_slowest_case_of_the_slowest_accepted():
    acc = [timing("accepted", "fast.py", [0.07, 0.08, 0.06]), timing("accepted", "slow.py", [0.30, 0.26, 0.9])]
    tle = [timing("time_limit_exceeded", "loops.py", [3.0, 3.1, 2.9]), timing("time_limit_exceeded", "inf.py", None)]
    d = derive(acc, tle, safety_factor=2.0, tle_margin=1.5)
    assert d.t_ac == pytest.approx(0.30) and "slow.py" in d.t_ac_from and "realistic/01" in d.t_ac_from
    assert d.time_limit == 1.0 and d.exact_limit == pytest.approx(0.6)
    assert d.t_tle == pytest.approx(3.0) and "loops.py" in d.t_tle_from
    assert d.ok and d.tle_bound == 1.5


def test_derive_fails_when_no_limit_separates_accepted_from_too_slow():
    acc = [timing("accepted", "slow.py", [0.7, 0.7, 0.7])]  # -> limit 2 s, bound 3 s
    tle = [timing("time_limit_exceeded", "loops.py", [2.5, 2.5, 2.5])]
    d = derive(acc, tle, 2.0, 1.5)
    assert d.time_limit == 2.0 and not d.ok
    assert any("no limit separates" in p for p in d.problems)


def test_derive_fails_a_time_out_within_the_machine_allowance():
    """2.5 s is beyond 1.5 x the 1 s limit, but a machine whose Python runs faster than its probe
    reading says could pass it there: the fastest TLE must take 1.5 x 1 x 2 = 3 s."""
    acc = [timing("accepted", "slow.py", [0.3, 0.3, 0.3])]
    near = derive(acc, [timing("time_limit_exceeded", "loops.py", [2.5, 2.5, 2.5])], 2.0, 1.5)
    assert near.time_limit == 1.0 and near.tle_required == 1.0 * 1.5 * MACHINE_ALLOWANCE == 3.0
    assert not near.ok and any("loops.py" in p and "make it slower" in p for p in near.problems)
    far = derive(acc, [timing("time_limit_exceeded", "loops.py", [3.2, 3.1, 3.3])], 2.0, 1.5)
    assert far.ok


def test_derive_flags_an_accepted_submission_that_does_not_pass():
    acc = [timing("accepted", "ok.py", [0.1]), timing("accepted", "broken.py", [0.1], verdicts=("WA",))]
    d = derive(acc, [timing("time_limit_exceeded", "inf.py", None)], 2.0, 1.5)
    assert not d.ok and any("broken.py got WA" in p for p in d.problems)


def test_derive_flags_a_cap_below_the_tle_bound():
    acc = [timing("accepted", "slow.py", [0.9])]  # -> limit 2 s, bound 3 s
    d = derive(acc, [timing("time_limit_exceeded", "inf.py", None, cap=2.5)], 2.0, 1.5)
    assert not d.ok and any("raise --tle-cap" in p for p in d.problems)


def test_derive_needs_a_tle_submission():
    d = derive([timing("accepted", "a.py", [0.1])], [], 2.0, 1.5)
    assert not d.ok and math.isinf(d.t_tle)


def test_capped_tle_counts_as_at_least_the_cap():
    t = timing("time_limit_exceeded", "inf.py", None, cap=10.0)
    assert math.isinf(t.time_s)
    d = derive([timing("accepted", "a.py", [0.2])], [t], 2.0, 1.5)
    assert d.ok and math.isinf(d.t_tle)


def test_spread_and_probe_readings_are_minima():
    s = spread([3.0, 1.0, 2.0, 10.0])
    assert (s.median, s.low, s.high, s.n) == (2.5, 1.0, 10.0, 4) and s.relative == pytest.approx(3.6)
    p = ProbeStats(((5.0, 3.0, 4.0), (2.0, 9.0, 8.0)))
    assert p.group == 3 and p.single.n == 6 and p.grouped.n == 2
    assert (p.grouped.low, p.grouped.high) == (2.0, 3.0)
    with pytest.raises(ValueError):
        spread([])


def test_probe_time_is_the_median_of_every_reading():
    idle, loaded = ProbeStats(((4.0, 5.0), (6.0,), (5.5, 7.0))), ProbeStats(((9.0, 16.0),))
    assert probe_center([idle, loaded]) == pytest.approx(5.75)  # readings 4, 6, 5.5, 9


# --- writing problem.yaml --------------------------------------------------------------------------


def test_set_problem_yaml_limits_changes_exactly_two_values(tmp_path):
    p = tmp_path / "problem.yaml"
    shutil.copy(ROOT / "problem.yaml", p)
    before = p.read_text().splitlines()
    assert set_problem_yaml_limits(p, 3.0, 0.0421)
    after = p.read_text().splitlines()
    changed = [(a, b) for a, b in zip(before, after) if a != b]
    assert len(before) == len(after) and len(changed) == 2
    assert changed[0][1].strip().startswith("time_per_test_s: 3.0")
    assert changed[1][1].strip().startswith("probe_time_s: 0.0421") and "#" in changed[1][1]
    spec = load_spec(p)
    assert spec.limits.time_per_test_s == 3.0 and spec.time_calibration.probe_time_s == 0.0421
    assert not set_problem_yaml_limits(p, 3.0, 0.0421)  # idempotent


def test_set_problem_yaml_limits_refuses_a_file_without_the_keys(tmp_path):
    p = tmp_path / "problem.yaml"
    p.write_text("limits:\n  memory_mib: 5\ntime_calibration:\n  probe_time_s: 0.1\n")
    with pytest.raises(BundleError, match="time_per_test_s"):
        set_problem_yaml_limits(p, 1.0, 0.1)


# --- the checked-in record ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def calibrated(any_bundle):
    """Each bundle of the repository that carries a calibration record."""
    require_parts(any_bundle, any_bundle.spec.time_calibration.file)
    return any_bundle


@pytest.fixture(scope="module")
def record(calibrated):
    return yaml.safe_load(calibrated.calibration_file.read_text())


def test_calibration_record_agrees_with_problem_yaml(calibrated):
    assert calibration_problems(calibrated) == []


def test_calibration_record_meets_the_kattis_rules(record, calibrated):
    spec = calibrated.spec
    d, m = record["derived"], record["method"]
    assert d["time_per_test_s"] == spec.limits.time_per_test_s
    assert d["time_per_test_s"] >= spec.time_calibration.safety_factor * d["t_ac_s"]
    assert d["time_per_test_s"] == round_up(spec.time_calibration.safety_factor * d["t_ac_s"], m["time_resolution_s"])
    assert d["fastest_tle_s"] is None or d["time_per_test_s"] * spec.time_calibration.tle_margin <= d["fastest_tle_s"]
    required = d["time_per_test_s"] * spec.time_calibration.tle_margin * MACHINE_ALLOWANCE
    assert d["tle_required_s"] == pytest.approx(required)
    assert d["fastest_tle_s"] is None or d["fastest_tle_s"] >= required
    assert all(record["checks"].values()) and record["problems"] == []
    # T_ac really is the slowest accepted median, and every accepted one passed every run.
    assert d["t_ac_s"] == max(a["time_s"] for a in record["accepted"])
    assert all(v == "AC" for a in record["accepted"] for v in a["verdicts"])


def test_calibration_record_is_made_of_medians_with_their_spread(record, calibrated):
    bundle = calibrated
    m = record["method"]
    assert m["probe_readings"] >= 20 and m["probe_runs_per_reading"] >= 5 and m["repeats"] >= 3
    for a in record["accepted"]:
        runs = a["slowest_case_runs_s"]
        assert len(runs) == m["repeats"] and a["time_s"] == sorted(runs)[len(runs) // 2]
        assert a["spread"] == pytest.approx((max(runs) - min(runs)) / a["time_s"], abs=2e-3)
    # probe_time_s lies between the conditions' median readings, and each of them is in the band.
    group = m["probe_runs_per_reading"]
    medians = [c[f"min_of_{group}"]["median_s"] for c in record["probe"].values()]
    center = record["derived"]["probe_time_s"]
    assert len(record["probe"]) == 2 and m["probe_band_factor"] == PROBE_BAND
    # (the record shows readings to 3 significant figures: up to 0.5% off the unrounded ones)
    assert min(medians) * 0.995 <= center <= max(medians) * 1.005
    assert all(center / PROBE_BAND <= v <= center * PROBE_BAND for v in medians)
    assert record["checks"]["median_reading_of_each_condition_within_the_band"]
    for key in ("python", "numpy", "cpu", "cores", "sandbox"):
        assert record["machine"][key]
    # Every submission of the two folders that matter is in the record.
    on_disk = {
        f"{p.parent.name}/{p.name}"
        for folder in ("accepted", "time_limit_exceeded")
        for p in (bundle.submissions / folder).glob("*.py")
    }
    recorded = {t["submission"] for t in record["accepted"] + record["time_limit_exceeded"]}
    assert on_disk == recorded, "submissions changed since calibration: run `python -m grader calibrate --write`"


def test_calibration_record_renders_back_identically(record, calibrated):
    text = calibrated.calibration_file.read_text()
    assert render_record(record) == text


def test_calibration_mismatch_is_detected(tmp_path, calibrated):
    bundle = calibrated
    shutil.copy(bundle.calibration_file, tmp_path / "calibration.yaml")
    shifted = replace(
        bundle.spec, limits=replace(bundle.spec.limits, time_per_test_s=bundle.spec.limits.time_per_test_s + 1)
    )
    problems = calibration_problems(Bundle(tmp_path, shifted))
    assert len(problems) == 1 and "time_per_test_s" in problems[0]
    (tmp_path / "calibration.yaml").unlink()
    assert "missing" in calibration_problems(Bundle(tmp_path, bundle.spec))[0]


# --- the probe, really run -----------------------------------------------------------------------------


def test_probe_runs_in_the_sandbox_and_reports_cpu_time(bundle):
    stats = measure_probe(bundle, readings=2, repeats=3)
    assert len(stats.runs) == 6 and all(0 < t < 5 for t in stats.runs)
    assert stats.grouped.n == 2 and stats.grouped.low == stats.single.low
    # Thread CPU time is exact: no reading sits on the 4 ms scheduler-tick grid that the
    # process clock snaps to once RLIMIT_CPU is set.
    assert len({round(t, 6) for t in stats.runs}) > 1


# --- judging near the limit, bounding the worst case (pure functions) ------------------------------------


@pytest.mark.parametrize(
    "cpu, wall, expected",
    [(1.0, False, True), (1.25, False, True), (1.26, False, False), (0.2, True, False), (3.0, False, False)],
)
def test_only_a_cpu_time_out_close_to_the_limit_is_judged_twice(cpu, wall, expected):
    assert near_the_limit(cpu, wall, 1.0) is expected
    assert RERUN_BAND == 1.25


def test_case_work_counts_the_blocks_multiply_adds(bundle):
    case_work = bundle.load_problem_module().case_work
    assert case_work({"B": 2, "N": 3, "D": 4, "M": 5, "num_heads": 2}) == 2 * 3 * (4 * 16 + 2 * 3 * 4 + 2 * 4 * 5)


def test_without_the_bundles_case_work_nothing_is_covered():
    assert covered_by_timeout(None, [("sample/02", 1)]) is None


def test_a_test_at_least_as_large_as_a_timed_out_one_is_covered():
    timed_out = [("sample/02", 108)]
    assert covered_by_timeout(108, timed_out) == "sample/02"
    assert covered_by_timeout(10**6, timed_out) == "sample/02"
    assert covered_by_timeout(107, timed_out) is None
    assert covered_by_timeout(5, []) is None


def test_every_wall_clock_limit_follows_the_one_rule(any_spec):
    """wall_factor x CPU limit + 1 s, for the sandbox's stated limits, the scaled and the least
    limits, and calibration.yaml's figures (timing.wall_limit is the one home of the rule)."""
    spec = any_spec
    from grader.judging.sandbox_terms import sandbox_limits
    from grader.judging.timing import least_limits, wall_limit
    from grader.maintain.calibration_record import _timing_dict

    assert wall_limit(3.0, 1.0) == 4.0 and wall_limit(2.0, 0.25) == 1.5
    factor = spec.limits.wall_factor
    assert sandbox_limits(spec).wall_s == wall_limit(factor, spec.limits.time_per_test_s)
    for lim in (least_limits(spec), effective_limits(spec, 0.5), effective_limits(spec, None, 1.5)):
        assert lim.wall_s == wall_limit(factor, lim.cpu_s)
    sub = ExpectedSubmission(ROOT / "submissions" / "time_limit_exceeded" / "sleep.py", "time_limit_exceeded", "TLE")
    capped = Timing(sub, ("TLE",), {}, True, 2.5, "wall")
    assert _timing_dict(capped, 3.0)["stopped_by"] == "the wall-clock cap (8.5 s; it hardly used the CPU)"


def test_probe_conditions_as_found_then_under_load(bundle, monkeypatch):
    """calibrate --probe-only: each condition labelled, the loaded one measured inside the load."""
    from grader.maintain import measure

    events = []

    class Load:
        def __init__(self, n):
            events.append(f"load {n}")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            events.append("unload")

    monkeypatch.setattr(measure, "BackgroundLoad", Load)
    monkeypatch.setattr(
        measure, "measure_probe", lambda b, r, i: events.append(f"measure {r} {i}") or ProbeStats(((0.005,),))
    )
    monkeypatch.setattr(measure.os, "getloadavg", lambda: (1.25, 0.0, 0.0))
    found = measure.probe_conditions(bundle, 7, "plain")
    assert [label for label, _ in found] == ["as found (load average 1.2)"] and events == ["measure 7 plain"]
    events.clear()
    labels = [label for label, _ in measure.probe_conditions(bundle, 3, "auto", load=2)]
    assert labels == ["as found (load average 1.2)", "with 2 more busy process(es) (load average 1.2)"]
    assert events == ["measure 3 auto", "load 2", "measure 3 auto", "unload"]


# --- calibration's evidence is measured in full -----------------------------------------------------------


def test_calibration_grades_with_the_hidden_tests_figures_in_full(bundle):
    # A hidden test's report rounds its CPU time up to a 1-2-5 series (0.161 s would read 0.2 s):
    # calibrate's T_ac and fastest TLE must be the times themselves.
    from grader.maintain.measure import full_figures

    coarse = replace(bundle.spec, feedback=replace(bundle.spec.feedback, hidden="summary"))
    full = full_figures(Bundle(bundle.root, coarse))
    assert full.spec.feedback.hidden == "full" and full.root == bundle.root
    assert replace(full.spec, feedback=coarse.feedback) == coarse
