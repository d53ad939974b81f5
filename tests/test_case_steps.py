"""grader/judging/case_steps.py: each per-case step, on a scripted sandbox.

judge() loops case_step over the tests; these tests drive the steps one test at
a time with a sandbox that answers from a script, so that the order of the
steps, the probe policy and what each step leaves in the Grading are checked
without a real sandbox or any timing.
"""

from __future__ import annotations

import signal
import time

import pytest

from fake_runs import run_outcome
from grader.judging import case_steps
from grader.judging.case_runs import ahead_plan
from grader.judging.case_steps import (
    SKIP_STEPS,
    Grading,
    ProbeFailed,
    case_step,
    covered_step,
    not_loaded_step,
    run_case_step,
    run_context,
    total_time_step,
)
from grader.judging.judge import GradeOptions, cases_step, work_step
from grader.judging.timing import effective_limits, least_limits
from grader.judging.verdict import CompileResult
from grader.sandbox.early import EARLY_PROBE_LIMITS
from grader.sandbox.launcher import SandboxError
from grader.sandbox.records import ReturnedValue, RunOutcome


def outcome(case, cpu_s: float, value_offset: float = 0.0, **kw) -> RunOutcome:
    """A run of `case` that returned its expected output (+ `value_offset`) after `cpu_s` of CPU time."""
    value = ReturnedValue(
        type="ndarray", dtype="float64", shape=case.expected.shape, array=case.expected + value_offset
    )
    return run_outcome(**{"cpu_s": cpu_s, "wall_s": cpu_s, "value": value, **kw})


class ScriptedSandbox:
    """Answers each run (submitted and collected, or run at once) with the next outcome of the
    script, and the probe with `probe_s`; logs every call."""

    def __init__(self, *outcomes: RunOutcome | Exception, probe_s: float | Exception = 0.04) -> None:
        self.outcomes = list(outcomes)
        self.probe_s = probe_s
        self.log: list[str] = []

    def _next(self) -> RunOutcome:
        assert self.outcomes, "ran more often than the script says"
        out = self.outcomes.pop(0)
        if isinstance(out, Exception):
            raise out
        return out

    def submit(self, args, shape) -> str:
        self.log.append("submit")
        return "run"

    def collect(self, run) -> RunOutcome:
        self.log.append("collect")
        return self._next()

    def run(self, args, shape, mode="run") -> RunOutcome:
        self.log.append("run")
        return self._next()

    def cancel(self, run) -> None:
        self.log.append("cancel")

    def in_flight(self) -> int:
        return 0

    def probe(self) -> float:
        self.log.append("probe")
        if isinstance(self.probe_s, Exception):
            raise self.probe_s
        return self.probe_s

    def set_time_limits(self, cpu_s: float, wall_s: float) -> None:
        self.log.append(f"limits {cpu_s:g}")


@pytest.fixture(scope="module")
def bundle(any_bundle):
    """Every test here is about the engine: it runs on each bundle of the repository."""
    return any_bundle


@pytest.fixture(scope="module")
def cases(bundle):
    """The first three tests of the bundle (a bundle may have a single sample)."""
    cases = cases_step(bundle, GradeOptions())[:3]
    assert len(cases) == 3
    return cases


def grading(bundle, sb, cases, **kw) -> Grading:
    """A grading under the least limits (the probe not read yet) or `limits`, the load OK, one worker."""
    spec = bundle.spec
    least = least_limits(spec)
    limits = kw.pop("limits", least)
    work = work_step(bundle, cases)
    fields = dict(
        sb=sb,
        spec=spec,
        cases=cases,
        started=time.monotonic(),
        compiled=CompileResult("OK", ""),
        limits=limits,
        ctx=run_context(spec, limits),
        least=least,
        workers=1,
        plan=ahead_plan([(True, True)] * len(cases), work),
        work=work,
        time_factor=1.0,
        stop_after_failure=False,
    )
    fields.update(kw)
    return Grading(**fields)


# --- the steps that decide a test without running it ----------------------------------------------


def test_the_skip_steps_come_in_their_documented_order():
    assert SKIP_STEPS == (not_loaded_step, total_time_step, covered_step)


def test_a_failed_load_decides_before_the_total_time(bundle, cases):
    g = grading(
        bundle,
        ScriptedSandbox(),
        cases,
        compiled=CompileResult("RE", "your file raised"),
        started=time.monotonic() - 1e6,
    )
    r = case_step(g, 0)
    assert (r.verdict, r.check, r.message) == ("RE", "compile", "not run: your file raised")


def test_the_total_time_used_up_is_tle_without_a_run(bundle, cases):
    sb = ScriptedSandbox()
    g = grading(bundle, sb, cases, started=time.monotonic() - bundle.spec.limits.total_time_s - 1)
    g.ahead[1] = "run started beside test 0"
    r = case_step(g, 1)
    assert (r.verdict, r.check) == ("TLE", "limits") and "total time limit" in r.message
    assert sb.log == ["cancel"] and g.ahead == {}


def test_a_test_no_smaller_than_a_timed_out_one_is_tle_without_a_run(bundle, cases):
    sb = ScriptedSandbox()
    work = work_step(bundle, cases)[1]
    g = grading(bundle, sb, cases, timed_out=[("sample/x", work)])
    r = case_step(g, 1)
    assert r.verdict == "TLE" and "(sample/x) exceeded the time limit" in r.message and sb.log == []
    g.timed_out = [("sample/x", work + 1)]  # a larger test's time-out says nothing about this one
    assert covered_step(g, 1) is None


# --- run_case_step and the probe policy ----------------------------------------------------------


def test_a_run_within_the_least_limits_decides_without_the_probe(bundle, cases):
    sb = ScriptedSandbox(outcome(cases[0], cpu_s=0.01))
    g = grading(bundle, sb, cases)
    r = case_step(g, 0)
    assert r.verdict == "AC" and sb.log == ["submit", "collect"]
    assert g.limits.pending and g.returned[cases[0].name] is not None


def test_a_run_beyond_the_least_limits_reads_the_probe_and_runs_the_test_again(bundle, cases):
    spec = bundle.spec
    sb = ScriptedSandbox(
        outcome(cases[0], cpu_s=0.5), outcome(cases[0], cpu_s=0.3), probe_s=spec.time_calibration.probe_time_s
    )
    g = grading(bundle, sb, cases)
    r = case_step(g, 0)
    measured = effective_limits(spec, spec.time_calibration.probe_time_s)
    assert r.verdict == "AC" and r.time_s == 0.3  # the second run decided
    probe_limit = EARLY_PROBE_LIMITS["cpu_limit_s"]  # the probe's own, then the measured ones
    assert sb.log == ["submit", "collect", f"limits {probe_limit:g}", "probe", f"limits {measured.cpu_s:g}", "run"]
    assert not g.limits.pending and g.limits == measured and g.ctx.cpu_limit_s == measured.cpu_s


def test_a_shared_run_that_does_not_count_ends_the_other_workers(bundle, cases):
    spec = bundle.spec
    sb = ScriptedSandbox(
        outcome(cases[0], cpu_s=0.5, alone=False),
        outcome(cases[0], cpu_s=0.3),
        probe_s=spec.time_calibration.probe_time_s,
    )
    g = grading(bundle, sb, cases, workers=2, limits=effective_limits(spec, spec.time_calibration.probe_time_s))
    r = case_step(g, 0)
    assert r.verdict == "AC" and r.time_s == 0.3 and g.workers == 1
    # test 1's run, started beside test 0's, is ended unread; test 0 runs again, alone
    assert sb.log == ["submit", "submit", "collect", "cancel", "run"] and g.ahead == {}


def test_a_sandbox_failure_is_je_for_the_test_and_the_rest_runs_alone(bundle, cases):
    sb = ScriptedSandbox(SandboxError("the zygote disappeared"))
    g = grading(bundle, sb, cases, workers=3)
    r = run_case_step(g, 2)
    assert (r.verdict, r.check) == ("JE", "run") and "sandbox failure: the zygote disappeared" in r.message
    assert g.workers == 1 and cases[2].name not in g.returned


def test_an_unreadable_probe_ends_the_whole_grading(bundle, cases):
    sb = ScriptedSandbox(outcome(cases[0], cpu_s=0.5), probe_s=SandboxError("no reading"))
    g = grading(bundle, sb, cases)
    with pytest.raises(ProbeFailed, match="the speed probe failed: no reading"):
        run_case_step(g, 0)


def test_a_time_out_is_remembered_and_stop_after_failure_ends_the_grading(bundle, cases):
    spec = bundle.spec
    measured = effective_limits(spec, spec.time_calibration.probe_time_s)
    killed = outcome(cases[0], cpu_s=0.2, killed_by="wall", signal=signal.SIGKILL, status="no_result", value=None)
    g = grading(bundle, ScriptedSandbox(killed), cases, limits=measured, stop_after_failure=True)
    r = run_case_step(g, 0)
    assert r.verdict == "TLE" and g.timed_out == [(cases[0].name, work_step(bundle, cases)[0])]
    assert not g.complete


def test_judge_runs_the_tests_through_case_step(bundle, monkeypatch):
    """judge() gives every test to case_step, in order (the loop the docs describe)."""
    from conftest import require_parts
    from grader.judging import judge as J

    require_parts(bundle, "reference/solution.py")

    seen = []
    real = case_steps.case_step

    def spy(g, index):
        seen.append(index)
        return real(g, index)

    monkeypatch.setattr(J, "case_step", spy)
    j = J.judge(bundle, bundle.reference_dir / "solution.py", GradeOptions(tests="sample"))
    assert j.report.verdict == "AC" and seen == list(range(len(j.cases)))
