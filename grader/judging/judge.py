"""Grading one submission, as a sequence of small named steps.

Like CMS's grading steps, each step is one function with an explicit outcome:

    read_step      -> Submission or CE (file content problems)
    static_step    -> CE for syntax, forbidden imports, a wrong signature
    sandbox_step   -> the submission's sandbox; its zygote starts (Sandbox.begin) while
                      cases_step reads the cases
    cases_step     -> the test cases to run (published, or a fresh secret set)
    load_step      -> the submission imported once in a worker (load_run) under the limits to
                      start with (limits_step: the least ones, until a run needs the probe), and
                      what that says (load_result: OK, or the CE/RE/TLE every test inherits)
    grading_step   -> what the per-case steps share (case_steps.Grading): how many workers at once
    case_step      -> each test's result, from the per-case steps (judging/case_steps.py): not run
                      (the load failed, the total time is used up, a smaller test timed out), or
                      run, beside later tests where that is sound (case_runs.py), and checked
    relabel_step   -> a notebook's messages cite its cells, not lines of the joined source

The speed probe is read only when a run needs it (most gradings never do:
timing.least_limits); after a TLE, later tests needing at least as much work
are TLE without being run (docs/time-limits.md).

`judge` strings the steps together and never raises for anything a submission
does; it raises BundleError or SubmissionUnreadable only when it cannot judge.
Why a wrong answer is wrong is feedback's business, one floor up
(feedback/grade.py composes "judge, then diagnose"): judging never imports it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .. import __version__
from ..problem.bundle import Bundle
from ..problem.cases import TestCase, case_sizes
from ..problem.spec import ProblemSpec
from ..sandbox import child
from ..sandbox.early import Spawned
from ..sandbox.launcher import Sandbox, SandboxError, make_parent_nondumpable
from ..sandbox.records import ReturnedValue, RunOutcome, SandboxInfo
from .case_runs import ahead_plan, drop_ahead, workers_at_once
from .case_selection import select_cases
from .case_steps import (
    Grading,
    ProbeFailed,
    case_step,
    is_visible,
    not_run,
    probe_now_step,
    run_context,
    settled,
    show_full,
)
from .checker import RunContext, limit_problem, load_problem
from .sandbox_terms import sandbox_allowed, sandbox_limits
from .source import EMPTY, StaticCheck, Submission, read_submission, static_check
from .timing import GIVEN, EffectiveLimits, effective_limits, least_limits
from .values import Decision
from .verdict import (
    VERDICT_NAMES,
    CaseResult,
    CompileResult,
    GradeReport,
    SubmissionInfo,
    group_results,
    overall_verdict,
)


@dataclass(frozen=True)
class GradeOptions:
    """What a caller asks of one grading (grade, watch, batch, verify, calibrate)."""

    tests: str = "all"  # "sample", "practice" (visible, no points) or "all"
    secret_seed: int | None = None  # generate a fresh hidden set from this seed
    isolation: str = "auto"  # "auto", or "plain" to skip namespaces
    time_factor: float = 1.0  # verify's tolerant run uses 1.5
    scale_time: bool = True  # scale limits by the speed probe
    stop_after_failure: bool = False  # verify: stop at the first non-AC case
    diagnose: bool = True  # read by feedback.grade: judging itself never diagnoses
    disable_layers: frozenset[str] = frozenset()  # tests only: switch worker layers off; the report says so
    probe_s: float | None = None  # a speed probe measured once for many gradings (batch); None: probe here
    within: Path | None = None  # the student's upload folder: the file must be inside it (paths.py)
    second_worker: bool = True  # run later tests beside this one where that is sound (case_runs.py)


# --- the steps before the tests ------------------------------------------------------------------------


def read_step(path: Path, spec: ProblemSpec, within: Path | None = None) -> tuple[Submission | None, StaticCheck]:
    sub, check = read_submission(path, spec.limits.source_kib * 1024, within)
    if check.message == EMPTY:
        return sub, StaticCheck(False, f"{EMPTY}: define {spec.function}({', '.join(spec.parameter_names)})")
    return sub, check


def static_step(sub: Submission, spec: ProblemSpec) -> StaticCheck:
    check = static_check(sub, spec)
    if not check.ok and check.line and sub.line_map and 0 < check.line <= len(sub.line_map):
        return StaticCheck(False, f"{check.message} [{sub.line_map[check.line - 1]} of the notebook]", check.line)
    return check


def sandbox_step(
    sub: Submission, imports: tuple[str, ...], spec: ProblemSpec, options: GradeOptions, zygote: Spawned | None = None
) -> Sandbox:
    """The submission's sandbox, not started yet: the problem's limits and allowed imports, those
    modules and the submission's own `imports` preloaded, in `zygote` (early.py's) if it fits."""
    make_parent_nondumpable()
    return Sandbox(
        sub.source,
        function=spec.function,
        n_args=len(spec.parameters),
        limits=sandbox_limits(spec),
        allowed=sandbox_allowed(spec),
        preload=[*spec.allowed_imports.all_modules(), *imports],
        filename=sub.display_name if sub.kind == "python" else "notebook.py",
        isolation=options.isolation,
        disable_layers=options.disable_layers,
        prelaunched=zygote,
    )


def cases_step(bundle: Bundle, options: GradeOptions) -> list[TestCase]:
    """Published cases of a selection, or samples plus a hidden set generated from a secret seed."""
    return select_cases(bundle, options.tests, options.secret_seed)


def probe_step(bundle: Bundle, options: GradeOptions, zygote: Spawned | None = None) -> float:
    """The speed probe, measured once in a sandbox like a submission's, for GradeOptions.probe_s
    (in `zygote`, started by sandbox/early.py, if it fits)."""
    spec = bundle.spec
    params = ", ".join(spec.parameter_names)
    make_parent_nondumpable()
    with Sandbox(
        f"def {spec.function}({params}):\n    return None\n",
        function=spec.function,
        n_args=len(spec.parameters),
        limits=sandbox_limits(spec),
        allowed=sandbox_allowed(spec),
        preload=list(spec.allowed_imports.all_modules()),
        isolation=options.isolation,
        prelaunched=zygote,
    ) as sb:
        return sb.probe()


def limits_step(spec: ProblemSpec, options: GradeOptions) -> EffectiveLimits:
    """The limits the first runs get: stated (no scaling), scaled by a reading given for many
    gradings, or the least limits, which stand until a run goes beyond them."""
    if not options.scale_time:
        return effective_limits(spec, None, options.time_factor)
    if options.probe_s is not None:
        return effective_limits(spec, options.probe_s, options.time_factor, GIVEN)
    return least_limits(spec, options.time_factor)


def load_run(sb: Sandbox, n_args: int, meanwhile: Callable[[], None] | None = None) -> RunOutcome:
    """Import the module once in a worker, without calling the function; `meanwhile` is done
    here while the worker runs."""
    run = sb.submit([0] * n_args, None, mode="load")
    if meanwhile is not None:
        meanwhile()
    return sb.collect(run)


def load_result(out: RunOutcome, ctx: RunContext) -> CompileResult:
    """What the import run says: OK, or the CE/RE/TLE that stops the grading."""
    if out.status == child.STATUS_LOADED and not out.signal and out.killed_by is None:
        return CompileResult("OK", "")
    d = load_problem(out, ctx) or limit_problem(out, ctx, show_message=True)
    if d is None:
        d = Decision("RE", "run", f"importing your file failed (status {out.status})")
    line = out.error.line if out.error else None
    return CompileResult(d.verdict, d.message, line)


def load_step(
    sb: Sandbox, spec: ProblemSpec, options: GradeOptions, meanwhile: Callable[[], None] | None = None
) -> tuple[CompileResult, EffectiveLimits, RunContext]:
    """limits_step, then load_run and what it says (load_result), with `meanwhile` done here while
    the import runs; an import that went beyond the least limits is imported again under the
    measured ones (probe_now_step). Returns the result with the limits now in force and the
    checker's view of them."""
    limits = limits_step(spec, options)
    sb.set_time_limits(limits.cpu_s, limits.wall_s)
    ctx = run_context(spec, limits)
    loaded = load_run(sb, len(spec.parameters), meanwhile)
    if not settled(loaded, limits):
        limits, ctx = probe_now_step(sb, spec, options.time_factor)
        loaded = load_run(sb, len(spec.parameters))
    return load_result(loaded, ctx), limits, ctx


def work_step(bundle: Bundle, cases: list[TestCase]) -> list[int | None]:
    """Each case's work, by the problem module's case_work (all None when it has none). Every
    grading imports problem.py here, so a broken one is refused by `grade` as by every other
    command (tests/test_bundle_attacks.py); judge() calls it while the load runs (grading_step)."""
    case_work = getattr(bundle.load_problem_module(), "case_work", None)
    if case_work is None:
        return [None] * len(cases)
    return [int(case_work(case_sizes(bundle.spec.signature, c))) for c in cases]


def grading_step(
    sb: Sandbox,
    spec: ProblemSpec,
    options: GradeOptions,
    cases: list[TestCase],
    started: float,
    work_of: Callable[[], Sequence[int | None]] | None = None,
) -> Grading:
    """load_step, with each case's work found by `work_of` while the import runs, then what the
    per-case steps share. How many workers may run at once is asked after the load, when the
    sandbox's layers are known (case_runs.workers_at_once)."""
    work: Sequence[int | None] = [None] * len(cases)

    def find_work() -> None:
        nonlocal work
        if work_of is not None:
            work = work_of()

    compiled, limits, ctx = load_step(sb, spec, options, find_work)
    shared = options.second_worker and compiled.verdict == "OK"
    workers = workers_at_once(sb, sb.limits.memory_bytes) if shared else 1
    return Grading(
        sb=sb,
        spec=spec,
        cases=cases,
        started=started,
        compiled=compiled,
        limits=limits,
        ctx=ctx,
        least=least_limits(spec, options.time_factor),
        workers=workers,
        # Only tests of one kind (visible, full feedback) run beside each other: a block each.
        plan=ahead_plan([(is_visible(spec, c), show_full(spec, c)) for c in cases], work),
        work=work,
        time_factor=options.time_factor,
        stop_after_failure=options.stop_after_failure,
    )


def relabel_step(
    sub: Submission, results: list[CaseResult], compiled: CompileResult
) -> tuple[list[CaseResult], CompileResult]:
    """A notebook's messages cite its cells, not lines of the joined source."""
    if sub.kind != "notebook":
        return results, compiled
    from .notebook import relabel

    return (
        [replace(r, message=relabel(r.message, sub.line_map)) for r in results],
        replace(compiled, message=relabel(compiled.message, sub.line_map)),
    )


# --- the whole run ----------------------------------------------------------------------------------------


def _summary(verdict: str, results: list[CaseResult], compiled: CompileResult) -> str:
    if compiled.verdict != "OK":
        return f"{VERDICT_NAMES[compiled.verdict]}: {compiled.message}"
    if verdict == "AC":
        return f"Accepted: all {len(results)} tests passed."
    first = next(c for c in results if c.verdict != "AC")
    failed = sum(c.verdict != "AC" for c in results)
    return f"{VERDICT_NAMES[verdict]} on test {first.name} ({failed} of {len(results)} tests failed): {first.message}"


def _report(
    bundle: Bundle,
    options: GradeOptions,
    results: list[CaseResult],
    compiled: CompileResult,
    sub: Submission | None,
    sandbox: SandboxInfo | None = None,
    limits: EffectiveLimits | None = None,
    complete: bool = True,
) -> GradeReport:
    spec = bundle.spec
    run_groups = [g for g in spec.groups if any(c.group == g.name for c in results)]
    groups = group_results(run_groups, results, scored=options.tests != "practice")
    verdict = overall_verdict(results)
    info = SubmissionInfo(sub.display_name, sub.sha256, len(sub.raw), sub.kind) if sub else None
    return GradeReport(
        verdict=verdict,
        score=sum(g.score for g in groups),
        max_score=sum(g.points for g in groups),
        summary=_summary(verdict, results, compiled),
        compile=compiled,
        tests=tuple(results),
        groups=tuple(groups),
        bundle_id=spec.id,
        bundle_version=spec.version,
        grader_version=__version__,
        selection=options.tests,
        hidden_set="secret-seed" if options.secret_seed is not None else "published",
        submission=info,
        sandbox=sandbox,
        limits=limits,
        complete=complete,
        secret_seed=options.secret_seed,
    )


@dataclass(frozen=True)
class Judgement:
    """A verdict with what the diagnosis needs: the cases run and what each returned."""

    report: GradeReport
    cases: list[TestCase]
    returned: dict[str, ReturnedValue | None]  # case name -> what its run returned


def unjudged(
    bundle: Bundle,
    options: GradeOptions,
    cases: list[TestCase],
    sub: Submission | None,
    compiled: CompileResult,
    check: str,
) -> Judgement:
    """Every test not run, with the verdict of `compiled` (CE, or JE when the sandbox failed)."""
    results = [not_run(bundle.spec, c, compiled.verdict, check, compiled.message) for c in cases]
    return Judgement(_report(bundle, options, results, compiled, sub), cases, {})


def judge(
    bundle: Bundle,
    path: Path,
    options: GradeOptions = GradeOptions(),
    cases: list[TestCase] | None = None,
    zygote: Spawned | None = None,
) -> Judgement:
    """Judge the submission at `path` against the bundle's cases (or `cases`, from cases_step),
    in `zygote` (a process sandbox/early.py started at the command's start) if it fits."""
    spec = bundle.spec
    sub, check = read_step(path, spec, options.within)
    if sub is not None:
        check = static_step(sub, spec)
    if sub is None or not check.ok:
        # verify/calibrate grade many submissions: they read the cases once and pass them in.
        cases = cases_step(bundle, options) if cases is None else cases
        return unjudged(bundle, options, cases, sub, CompileResult("CE", check.message, check.line), "compile")
    started = time.monotonic()
    sb = sandbox_step(sub, check.imports, spec, options, zygote)
    sb.begin()  # the zygote starts on the other core while the cases are read here
    try:
        # Bound before anything in the sandbox can fail: cases_step raises BundleError only.
        selected = cases_step(bundle, options) if cases is None else cases
        with sb:
            g = grading_step(sb, spec, options, selected, started, lambda: work_step(bundle, selected))
            for index in range(len(selected)):
                g.results.append(case_step(g, index))
                if not g.complete:
                    break
            drop_ahead(sb, g.ahead)
            info = sb.info()
    except SandboxError as exc:
        why = str(exc) if isinstance(exc, ProbeFailed) else f"the sandbox could not be started: {exc}"
        return unjudged(bundle, options, selected, sub, CompileResult("JE", why), "run")
    finally:
        sb.close()
    results, compiled = relabel_step(sub, g.results, g.compiled)
    report = _report(bundle, options, results, compiled, sub, info, g.limits, g.complete)
    return Judgement(report, selected, g.returned)
