"""judging/judge.py and judging/case_steps.py near the time limit: judged twice, and the worst case bounded.

No assertion here is about how long anything took: each checks which tests ran,
their verdicts and what the report says about them.
"""

from __future__ import annotations

import signal
from dataclasses import replace

import pytest

from fake_runs import run_outcome
from grader.feedback.grade import grade
from grader.judging.case_steps import judged_step, settled
from grader.judging.checker import RunContext
from grader.judging.judge import GradeOptions, cases_step, limits_step
from grader.judging.timing import effective_limits, least_limits, machine_scale
from grader.sandbox import child
from grader.sandbox.records import ReturnedValue, RunOutcome

CTX = RunContext(
    function="vit_encoder_block",
    parameters=("x",) * 8,
    cpu_limit_s=1.0,
    wall_limit_s=4.0,
    flood_bytes=32 << 20,
    result_bytes=16 << 20,
    allowed_hint="",
)


def outcome(**kw) -> RunOutcome:
    """A run killed by the CPU limit (SIGXCPU after 1 s), with `kw` applied."""
    return run_outcome(
        **{"status": "no_result", "exit_code": None, "signal": signal.SIGXCPU, "cpu_s": 1.0, "wall_s": 1.1, **kw}
    )


class ScriptedSandbox:
    """Answers run() with the outcomes given, in order; fails if asked once more."""

    def __init__(self, *outcomes: RunOutcome) -> None:
        self.outcomes = list(outcomes)

    def run(self, args, shape, mode="run"):
        assert self.outcomes, "ran more often than expected"
        return self.outcomes.pop(0)

    def in_flight(self) -> int:
        return 0


@pytest.fixture(scope="module")
def sample(bundle):
    return cases_step(bundle, GradeOptions(tests="sample"))[0]


def accepted(case) -> RunOutcome:
    value = ReturnedValue(type="ndarray", dtype="float64", shape=case.expected.shape, array=case.expected.copy())
    return outcome(status=child.STATUS_OK, exit_code=0, signal=None, cpu_s=0.9, value=value)


def test_a_time_out_in_the_noise_band_is_run_again_and_the_second_run_decides(bundle, sample):
    result, out = judged_step(ScriptedSandbox(outcome(), accepted(sample)), bundle.spec, sample, CTX)
    assert result.verdict == "AC" and out.cpu_s == 0.9
    assert "judged twice" in result.message and "the second run decided" in result.message


def test_two_time_outs_in_the_band_are_tle_and_say_so(bundle, sample):
    result, _ = judged_step(ScriptedSandbox(outcome(), outcome(cpu_s=1.2)), bundle.spec, sample, CTX)
    assert result.verdict == "TLE" and "judged twice" in result.message and "so did the second" in result.message


@pytest.mark.parametrize(
    "first", [outcome(cpu_s=2.5, signal=signal.SIGKILL), outcome(cpu_s=0.01, signal=signal.SIGKILL, killed_by="wall")]
)
def test_a_clear_time_out_is_run_once(bundle, sample, first):
    result, _ = judged_step(ScriptedSandbox(first), bundle.spec, sample, CTX)
    assert result.verdict == "TLE" and "judged twice" not in result.message


def test_an_accepted_run_is_run_once(bundle, sample):
    result, _ = judged_step(ScriptedSandbox(accepted(sample)), bundle.spec, sample, CTX)
    assert result.verdict == "AC"


LOOPS_ON_THE_SECOND_SAMPLE = """
import numpy as np

def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    if x.shape == (1, 3, 2):      # sample/02 only
        while True:
            pass
    return np.zeros(x.shape)
"""


def test_tests_at_least_as_large_as_a_timed_out_one_are_tle_without_running(bundle, tmp_path):
    sub = tmp_path / "solution.py"
    sub.write_text(LOOPS_ON_THE_SECOND_SAMPLE)
    r = grade(bundle, sub, GradeOptions(tests="sample", diagnose=False, scale_time=False))
    first, second, third = r.tests
    assert first.verdict == "WA" and first.time_s is not None  # ran, and keeps its own verdict
    # At the CPU limit it is judged twice; on a machine so busy that the loop gets less than a
    # quarter of a core, the wall clock stops it first: TLE either way.
    assert second.verdict == "TLE" and ("judged twice" in second.message or "wall-clock" in second.message)
    assert third.verdict == "TLE" and third.time_s is None  # larger: reported, not run
    assert third.message == (
        "not run: an earlier test of this size or smaller (sample/02-two-heads) exceeded the time limit"
    )


SLEEPS = "import time\n\ndef vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):\n    time.sleep(3600)\n"


def test_a_sleeper_costs_one_wall_limit_and_every_test_still_has_a_verdict(bundle, tmp_path):
    sub = tmp_path / "solution.py"
    sub.write_text(SLEEPS)
    # A quarter of the limit keeps this test short: 3 x 0.25 + 1 = 1.75 s of wall clock.
    r = grade(bundle, sub, GradeOptions(diagnose=False, scale_time=False, time_factor=0.25))
    assert len(r.tests) == 34 and {t.verdict for t in r.tests} == {"TLE"} and r.score == 0
    ran = [t for t in r.tests if t.time_s is not None]
    assert [t.name for t in ran] == ["sample/01-identity-weights"] and "wall-clock" in ran[0].message
    assert all(t.message.startswith("not run: an earlier test") for t in r.tests[1:])


# --- the speed probe, read only when a run needs it ---------------------------------------------


@pytest.mark.parametrize(
    "run, decides",
    [
        (dict(cpu_s=0.2, signal=None), True),  # within the least limit: decided
        (dict(cpu_s=0.3, signal=None), False),  # beyond it: only the measured limit can say
        (dict(cpu_s=0.01, signal=signal.SIGKILL, killed_by="wall"), False),  # a sleeper's wall-clock kill
        (dict(cpu_s=0.2, signal=signal.SIGXCPU), False),  # the CPU rlimit fired
    ],
)
def test_a_run_under_the_least_limits_decides_only_if_it_stayed_within_them(bundle, run, decides):
    least = limits_step(bundle.spec, GradeOptions())
    assert least == least_limits(bundle.spec) and least.pending and least.cpu_s == 0.25
    assert settled(outcome(**run), least) is decides
    # Under measured, given or stated limits every run decides its test (judged_step's rules).
    for limits in (
        effective_limits(bundle.spec, 0.006),
        limits_step(bundle.spec, GradeOptions(probe_s=0.006)),
        limits_step(bundle.spec, GradeOptions(scale_time=False)),
    ):
        assert not limits.pending and settled(outcome(**run), limits)


# Burn 0.4 s of their own CPU time (not wall time: the same on a busy machine): beyond the least
# limit (0.25 s), well within the measured one (10 s: as_if_calibrated_on_a_far_faster_machine).
# One on the import (which every worker repeats), one on sample/02 only.
BURN = """
import time
import numpy as np

def _burn(seconds):
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass
"""
SOLVE = (
    open(__file__.replace("tests/test_judge_time.py", "reference/solution.py"))
    .read()
    .replace("def vit_encoder_block(", "def _solve(")
)
BURNS_ON_IMPORT = BURN + SOLVE + "\n_burn(0.4)\nvit_encoder_block = _solve\n"
BURNS_ON_THE_SECOND_SAMPLE = (
    BURN
    + SOLVE
    + """

def vit_encoder_block(x, num_heads, Wq, Wk, Wv, Wo, W1, W2):
    if x.shape == (1, 3, 2):      # sample/02 only
        _burn(0.4)
    return _solve(x, num_heads, Wq, Wk, Wv, Wo, W1, W2)
"""
)


def as_if_calibrated_on_a_far_faster_machine(bundle):
    """The bundle with a calibration probe time so small that any machine's probe reads slower:
    the measured limit is the clamp's upper bound (10x), well beyond the 0.4 s burns, on a fast
    idle machine as on a slow busy one (with the real calibration the measured limit here can be
    as low as the least limit's 0.25 s, and whether 0.4 s fits would depend on the machine)."""
    calibration = replace(bundle.spec.time_calibration, probe_time_s=1e-6)
    return replace(bundle, spec=replace(bundle.spec, time_calibration=calibration))


def graded_with_a_measured_probe(bundle, tmp_path, source):
    sub = tmp_path / "solution.py"
    sub.write_text(source)
    bundle = as_if_calibrated_on_a_far_faster_machine(bundle)
    r = grade(bundle, sub, GradeOptions(tests="sample", diagnose=False))
    assert r.verdict == "AC", r.summary
    lim = r.limits
    assert lim.probe == "measured" and lim.probe_s is not None and lim.scale == machine_scale(bundle.spec, lim.probe_s)
    assert lim.cpu_s == pytest.approx(bundle.spec.limits.time_per_test_s * lim.scale) and lim.cpu_s > 0.4
    assert all("judged twice" not in t.message for t in r.tests)
    return r.tests


def test_a_test_beyond_the_least_limit_reads_the_probe_and_is_judged_under_the_measured_limit(bundle, tmp_path):
    first, second, third = graded_with_a_measured_probe(bundle, tmp_path, BURNS_ON_THE_SECOND_SAMPLE)
    assert second.time_s >= 0.4
    assert first.time_s < 0.25 and third.time_s < 0.25


def test_an_import_beyond_the_least_limit_reads_the_probe_before_the_first_test(bundle, tmp_path):
    tests = graded_with_a_measured_probe(bundle, tmp_path, BURNS_ON_IMPORT)
    assert all(t.time_s >= 0.4 for t in tests)


def test_a_probe_that_fails_mid_grading_is_a_judging_error_with_its_reason(bundle, tmp_path, monkeypatch):
    from grader.sandbox.launcher import Sandbox, SandboxError

    def broken(self, repeats=8):
        raise SandboxError("the speed probe failed (status no_result, exit None)")

    monkeypatch.setattr(Sandbox, "probe", broken)
    sub = tmp_path / "solution.py"
    sub.write_text(BURNS_ON_THE_SECOND_SAMPLE)
    r = grade(bundle, sub, GradeOptions(tests="sample", diagnose=False))
    assert r.verdict == "JE" and r.compile.verdict == "JE"
    assert r.compile.message.startswith("the speed probe failed") and "could not be started" not in r.compile.message
    assert r.limits is None  # no limits block that would claim the probe was not needed
