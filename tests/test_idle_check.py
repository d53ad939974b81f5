"""calibrate's idle check (fake readings and clocks) and the probe's reading statistic (a fake clock)."""

from __future__ import annotations

import numpy as np
import pytest

from grader.cli import main
from grader.maintain import idle_check
from grader.maintain.calibrate import calibrate
from grader.maintain.idle_check import (
    MAX_STEAL_SHARE,
    MIN_CPU_SHARE,
    IdleReading,
    MachineBusy,
    busy_reasons,
    measure_idle,
    require_idle,
    steal_counters,
)
from grader.sandbox.child import probe_workload

IDLE = IdleReading(cpu_share=0.99, steal_share=0.0, load_average_1m=11.0, seconds=0.5)
SHARED = IdleReading(cpu_share=0.5, steal_share=0.0, load_average_1m=0.2, seconds=0.5)
STOLEN = IdleReading(cpu_share=0.95, steal_share=0.2, load_average_1m=0.2, seconds=0.5)


def test_an_idle_reading_passes_whatever_the_load_average():
    # The load average counts other containers' processes: it is recorded, not judged.
    assert busy_reasons(IDLE) == [] and require_idle(IDLE, allow_busy=False) == []


@pytest.mark.parametrize("reading, word", [(SHARED, "50%"), (STOLEN, "stole 20%")])
def test_a_busy_reading_is_refused_with_its_reason(reading, word):
    with pytest.raises(MachineBusy) as err:
        require_idle(reading, allow_busy=False)
    message = str(err.value)
    assert word in message and "--allow-busy" in message and "\n" not in message


def test_allow_busy_turns_the_refusal_into_warnings():
    both = IdleReading(cpu_share=0.5, steal_share=0.2, load_average_1m=3.0, seconds=0.5)
    assert len(require_idle(both, allow_busy=True)) == 2


def test_the_thresholds_are_inclusive_edges():
    edge = IdleReading(cpu_share=MIN_CPU_SHARE, steal_share=MAX_STEAL_SHARE, load_average_1m=0.0, seconds=0.5)
    assert busy_reasons(edge) == []


def test_steal_is_read_from_the_cpu_line_of_proc_stat():
    text = "cpu  100 0 50 800 10 0 5 35 0 0\ncpu0 50 0 25 400 5 0 2 18 0 0\nintr 1\n"
    assert steal_counters(text) == (35, 1000)
    assert steal_counters("intr 1\n") is None
    assert steal_counters("cpu  1 2 x 4 5 6 7 8\n") is None


class Clocks:
    """Every look at the wall clock finds it 0.1 s later; the thread ran `share` of that time."""

    def __init__(self, share: float) -> None:
        self.now, self.share = 0.0, share

    def wall(self) -> float:
        self.now += 0.1
        return self.now

    def cpu(self) -> float:
        return self.now * self.share


def test_measure_idle_divides_cpu_time_by_wall_time_and_steal_by_all_time():
    clocks = Clocks(0.5)
    stats = iter(["cpu  100 0 0 800 0 0 0 100 0 0\n", "cpu  150 0 0 850 0 0 0 200 0 0\n"])
    r = measure_idle(0.5, clocks.cpu, clocks.wall, lambda: next(stats), lambda: 7.0)
    assert r.cpu_share == pytest.approx(0.5) and r.steal_share == pytest.approx(0.5) and r.load_average_1m == 7.0
    assert busy_reasons(r)


def test_measure_idle_without_proc_stat_judges_the_cpu_share_alone():
    clocks = Clocks(1.0)
    r = measure_idle(0.3, clocks.cpu, clocks.wall, lambda: None, lambda: 0.0)
    assert r.steal_share is None and r.cpu_share == pytest.approx(1.0) and busy_reasons(r) == []


def test_calibrate_refuses_a_busy_machine_before_measuring(bundle, monkeypatch):
    monkeypatch.setattr("grader.maintain.calibrate.probe_sandbox", lambda *a: pytest.fail("measured anyway"))
    with pytest.raises(MachineBusy):
        calibrate(bundle, idle=lambda: SHARED)


def test_the_cli_exits_2_with_one_line_on_a_busy_machine(monkeypatch, capsys):
    monkeypatch.setattr(idle_check, "measure_idle", lambda: SHARED)
    assert main(["calibrate"]) == 2
    err = capsys.readouterr().err.strip()
    assert "too busy to calibrate" in err and len(err.splitlines()) == 1


# --- the probe's reading statistic ----------------------------------------------------------------------


def fake_clock(durations):
    """A clock whose successive (start, end) pairs are `durations` apart."""
    now, ticks = 0.0, []
    for d in durations:
        ticks += [now, now + d]
        now += d + 1.0
    it = iter(ticks)
    return lambda: next(it)


def test_a_probe_run_sums_each_parts_fastest_run():
    # Five parts, two runs each: a disturbed run of one part (9.0) does not reach the total.
    seconds, _ = probe_workload(np, 2, fake_clock([3.0, 1.0, 2.0, 9.0, 4.0, 4.0, 1.0, 2.0, 5.0, 6.0]))
    assert seconds == pytest.approx(1.0 + 2.0 + 4.0 + 1.0 + 5.0)


def test_a_probe_run_with_one_repeat_is_the_plain_sum():
    seconds, _ = probe_workload(np, 1, fake_clock([1.0, 2.0, 3.0, 4.0, 5.0]))
    assert seconds == pytest.approx(15.0)


def test_the_probe_work_itself_is_fixed():
    # Same arithmetic every run (its checksum), whatever the clock says.
    assert probe_workload(np, 2)[1] == pytest.approx(2 * probe_workload(np, 1)[1], rel=1e-9)
