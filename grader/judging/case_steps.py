"""One test's steps within a grading: from its run, or the reason it is not run, to its result.

For each test `case_step` takes the first step that decides it:

    not_loaded_step -> the import failed: the test inherits its verdict, not run
    total_time_step -> TLE, not run: the grading's total time limit is used up
    covered_step    -> TLE, not run: an earlier test needing no more work exceeded the time limit
                       (docs/time-limits.md, "Bounding the worst case")
    run_case_step   -> the test's run (case_runs.shared_run_step: a later test's run beside it
                       where that is sound, the largest first), then decide_step; JE when the
                       sandbox fails

    decide_step     -> check_step (the ordered checks of checker.decide), or judged_step (run +
                       check, twice for a CPU-time TLE within the noise band of the limit), after
                       probe_now_step (the measured limits) when a run went beyond the least ones

Each step is a function of the grading's shared state (`Grading`, which the
steps advance test by test) and the test's index, with an explicit outcome:
a CaseResult, or None for "not mine, the next step decides".
judging/judge.py loads the submission, builds the Grading and loops over the tests.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ..problem.cases import TestCase
from ..problem.spec import ProblemSpec
from ..sandbox.channel import Run
from ..sandbox.early import EARLY_PROBE_LIMITS
from ..sandbox.launcher import Sandbox, SandboxError
from ..sandbox.records import ReturnedValue, RunOutcome
from .case_runs import drop_ahead, ended_by_a_limit, run_step, shared_run_step
from .checker import RunContext, decide
from .hidden import hidden_memory, hidden_time
from .timing import (
    EffectiveLimits,
    covered_by_timeout,
    effective_limits,
    near_the_limit,
    within_least_limits,
)
from .verdict import CaseResult, CompileResult


def run_context(spec: ProblemSpec, limits: EffectiveLimits) -> RunContext:
    """What the checker is told besides a run's outcome: the entry point and the limits in force."""
    allowed = spec.allowed_imports
    return RunContext(
        function=spec.function,
        parameters=spec.parameter_names,
        cpu_limit_s=limits.cpu_s,
        wall_limit_s=limits.wall_s,
        flood_bytes=spec.limits.output_flood_mib << 20,
        result_bytes=spec.limits.output_mib << 20,
        allowed_hint=f"allowed: NumPy and the standard-library modules {', '.join(allowed.stdlib)}",
        output_shape=spec.output_shape,
        axis_names=spec.axis_names,
        output_axes=spec.output_axes,
    )


# --- the limits, and the speed probe when a run needs it ---------------------------------------------


def settled(out: RunOutcome, limits: EffectiveLimits) -> bool:
    """Does this run decide its test under `limits`? Always, unless they are the least limits and
    the run went beyond them (then only the measured limit can say)."""
    return not limits.pending or within_least_limits(out.cpu_s, ended_by_a_limit(out), limits)


class ProbeFailed(SandboxError):
    """The speed probe could not be read: no time limit, so no grading (JE)."""


def probe_now_step(sb: Sandbox, spec: ProblemSpec, time_factor: float) -> tuple[EffectiveLimits, RunContext]:
    """Read the speed probe now, in a fresh worker of this sandbox (with the probe's own limits,
    which a 6 ms workload never nears), and set the limits it gives."""
    sb.set_time_limits(EARLY_PROBE_LIMITS["cpu_limit_s"], EARLY_PROBE_LIMITS["wall_limit_s"])
    try:
        probe = sb.probe()
    except SandboxError as exc:
        why = str(exc)
        raise ProbeFailed(
            why if why.startswith("the speed probe failed") else f"the speed probe failed: {why}"
        ) from None
    limits = effective_limits(spec, probe, time_factor)
    sb.set_time_limits(limits.cpu_s, limits.wall_s)
    return limits, run_context(spec, limits)


# --- a run's result ----------------------------------------------------------------------------------


def is_visible(spec: ProblemSpec, case: TestCase) -> bool:
    """A sample or practice case (public data), as opposed to a hidden one."""
    return case.practice or spec.group(case.group).visible


def show_full(spec: ProblemSpec, case: TestCase) -> bool:
    """May this case's report show values and captured output?"""
    return (spec.feedback.visible if is_visible(spec, case) else spec.feedback.hidden) == "full"


def check_step(spec: ProblemSpec, case: TestCase, out: RunOutcome, ctx: RunContext) -> CaseResult:
    """The result of run `out`: checker.decide's verdict, with the figures its feedback may show."""
    full = show_full(spec, case)
    d = decide(out, case.expected_output, ctx, spec.comparison.rtol, spec.comparison.atol, full)
    time_s: float | None = round(out.cpu_s, 4)
    memory_mib: float | None = round(out.maxrss_kib / 1024, 1)
    if not full:  # the submission chooses both: rounded up, as judging/hidden.py says
        time_s, memory_mib = hidden_time(time_s), hidden_memory(memory_mib)
    return CaseResult(
        name=case.name,
        group=case.group,
        visible=is_visible(spec, case),
        verdict=d.verdict,
        check=d.check,
        message=d.message,
        time_s=time_s,
        memory_mib=memory_mib,
        error=d.error,
        stdout=out.stdout if full else "",
        stderr=out.stderr if full else "",
    )


def judged_step(
    sb: Sandbox, spec: ProblemSpec, case: TestCase, ctx: RunContext, out: RunOutcome | None = None
) -> tuple[CaseResult, RunOutcome]:
    """run_step (or its outcome `out`) then check_step; a CPU-time TLE within the noise band of
    the limit is run once more, alone, and the second run decides, as serious judges do (the
    message says so)."""
    out = run_step(sb, case) if out is None else out
    result = check_step(spec, case, out, ctx)
    if result.verdict != "TLE" or not near_the_limit(out.cpu_s, out.killed_by == "wall", ctx.cpu_limit_s):
        return result, out
    if sb.in_flight():  # cannot happen (only a run alone can be near the limit): never judge a shared run twice
        raise SandboxError("a second run near the limit would have shared the machine")
    again = run_step(sb, case)
    second = check_step(spec, case, again, ctx)
    note = (
        f"judged twice: the first run used {max(out.cpu_s, ctx.cpu_limit_s):.2f} s of CPU time or more, "
        f"within the noise band of the {ctx.cpu_limit_s:.2f} s limit"
    )
    if second.verdict == "TLE":
        return replace(second, message=f"{second.message} ({note}; so did the second)"), again
    return replace(second, message=f"{second.message} ({note}; the second run decided)".lstrip()), again


def not_run(spec: ProblemSpec, case: TestCase, verdict: str, check: str, why: str) -> CaseResult:
    """The result of a test decided without running it."""
    return CaseResult(
        name=case.name,
        group=case.group,
        visible=is_visible(spec, case),
        verdict=verdict,
        check=check,
        message=f"not run: {why}",
    )


# --- the per-case steps ------------------------------------------------------------------------------


@dataclass
class Grading:
    """What the per-case steps of one grading share; they advance it test by test."""

    sb: Sandbox
    spec: ProblemSpec
    cases: list[TestCase]
    started: float  # time.monotonic() at the grading's start: the total time limit's origin
    compiled: CompileResult  # the load's: OK, or the verdict every test inherits
    limits: EffectiveLimits  # the least limits until a run needs the probe, then the measured ones
    ctx: RunContext  # the checker's view of `limits`
    least: EffectiveLimits  # what a run that shared the machine must stay within to count
    workers: int  # at once: above 1, later tests run beside this one (case_runs.ahead_step)
    plan: list[tuple[int, int]]  # per test: its block's last and largest test (case_runs.ahead_plan)
    work: Sequence[int | None]  # per test: the problem module's case_work (None: no time-out short-cut)
    time_factor: float  # GradeOptions.time_factor, for the measured limits
    stop_after_failure: bool  # GradeOptions.stop_after_failure: end at the first test not AC
    ahead: dict[int, Run] = field(default_factory=dict)  # test index -> its run, started beside
    timed_out: list[tuple[str, int]] = field(default_factory=list)  # (name, work) of each test over a limit
    results: list[CaseResult] = field(default_factory=list)
    returned: dict[str, ReturnedValue | None] = field(default_factory=dict)  # what each run returned
    complete: bool = True  # False once stop_after_failure has ended the grading


def not_loaded_step(g: Grading, index: int) -> CaseResult | None:
    """The import failed: the test inherits its verdict, not run."""
    if g.compiled.verdict == "OK":
        return None
    return not_run(g.spec, g.cases[index], g.compiled.verdict, "compile", g.compiled.message)


def total_time_step(g: Grading, index: int) -> CaseResult | None:
    """TLE, not run, once the grading has used up its total time limit."""
    if time.monotonic() - g.started <= g.spec.limits.total_time_s:
        return None
    drop_ahead(g.sb, g.ahead, index)
    return not_run(
        g.spec, g.cases[index], "TLE", "limits", f"the total time limit of {g.spec.limits.total_time_s:g} s was used up"
    )


def covered_step(g: Grading, index: int) -> CaseResult | None:
    """TLE, not run, after an earlier test needing no more work exceeded the time limit
    (timing.covered_by_timeout)."""
    smaller = covered_by_timeout(g.work[index], g.timed_out) if g.timed_out else None
    if smaller is None:
        return None
    drop_ahead(g.sb, g.ahead, index)
    return not_run(
        g.spec,
        g.cases[index],
        "TLE",
        "limits",
        f"an earlier test of this size or smaller ({smaller}) exceeded the time limit",
    )


def decide_step(g: Grading, case: TestCase, out: RunOutcome, counted: bool) -> tuple[CaseResult, RunOutcome]:
    """The verdict of the test's run `out` (`counted`: case_runs.counts). Under the least limits, a
    run beyond them (or one that did not count) has the probe read, and its test is judged afresh,
    alone, under the measured limit, as if that had been there all along; a run within them is
    checked as it is. Under measured, given or stated limits: judged_step."""
    if g.limits.pending and not (counted and settled(out, g.limits)):
        drop_ahead(g.sb, g.ahead)
        g.limits, g.ctx = probe_now_step(g.sb, g.spec, g.time_factor)
        return judged_step(g.sb, g.spec, case, g.ctx)
    if g.limits.pending:
        return check_step(g.spec, case, out, g.ctx), out
    return judged_step(g.sb, g.spec, case, g.ctx, out if counted else None)


def run_case_step(g: Grading, index: int) -> CaseResult:
    """Run the test (a later test's run beside it where that is sound) and decide it; JE when the
    sandbox fails. ProbeFailed is not caught: without a time limit the whole grading is JE."""
    case = g.cases[index]
    try:
        out, counted = shared_run_step(g.sb, g.cases, index, g.ahead, g.workers, g.least, g.plan)
        # After a shared run that did not count, the rest runs alone: a submission that slow
        # would spend every later time-out twice, once shared and once alone.
        g.workers = g.workers if counted else 1
        result, out = decide_step(g, case, out, counted)
    except ProbeFailed:
        raise
    except SandboxError as exc:
        drop_ahead(g.sb, g.ahead)
        g.workers = 1  # the next run starts a new zygote, perhaps of a weaker kind: one at a time
        return not_run(g.spec, case, "JE", "run", f"sandbox failure: {exc} (a grader fault)")
    g.returned[case.name] = out.value
    work = g.work[index]
    if result.verdict == "TLE" and work is not None:
        g.timed_out.append((case.name, work))
    if g.stop_after_failure and result.verdict != "AC":
        g.complete = False
    return result


# The steps that decide a test without running it, in order; each passes the test on with None.
SKIP_STEPS = (not_loaded_step, total_time_step, covered_step)


def case_step(g: Grading, index: int) -> CaseResult:
    """Test `index`'s result: from the first of SKIP_STEPS that decides it, else from its run."""
    for skip in SKIP_STEPS:
        result = skip(g, index)
        if result is not None:
            return result
    return run_case_step(g, index)
