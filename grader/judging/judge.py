"""Grading one submission, as a sequence of small named steps.

Like CMS's grading steps, each step is one function with an explicit outcome:

    read_step      -> Submission or CE (file content problems)
    static_step    -> CE for syntax, forbidden imports, a wrong signature
    cases_step     -> the test cases to run (published, or a fresh secret set)
    limits_step    -> the time limits to start with: the least ones, until a run needs the probe
    load_run       -> the submission imported once in a worker, without calling it
    load_result    -> CE/RE/TLE when that import failed (load_step does both at once)
    run_step       -> RunOutcome of one case in a fresh worker (ahead.py; shared_run_step
                      runs the next case beside it where that is sound)
    probe_now_step -> the measured limits, when a run has gone beyond the least ones
    check_step     -> CaseResult (the ordered checks of checker.decide)
    judged_step    -> run + check, twice for a CPU-time TLE within the noise band of the limit

The zygote is started before the cases are read (Sandbox.begin), so its start
overlaps the parsing. The speed probe is read only when a run needs it (most
gradings never do: timing.least_limits); after a TLE, later tests needing at
least as much work are TLE without being run (docs/time-limits.md).

`judge` strings them together and never raises for anything a submission
does; it raises BundleError or SubmissionUnreadable only when it cannot judge.
Why a wrong answer is wrong is feedback's business, one floor up
(feedback/grade.py composes "judge, then diagnose"): judging never imports it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

from .. import __version__
from ..problem.bundle import Bundle, BundleError
from ..problem.case_cache import load_cases_cached
from ..problem.cases import CaseFileError, TestCase
from .checker import Decision, RunContext, decide, limit_problem, load_problem
from .hidden import hidden_memory, hidden_time
from ..sandbox import child
from ..sandbox.launcher import Run, Sandbox, SandboxError, make_parent_nondumpable
from ..sandbox.early import EARLY_PROBE_LIMITS, Spawned
from ..sandbox.records import RunOutcome, SandboxLimits
from .source import StaticCheck, Submission, read_submission, static_check
from ..problem.spec import ProblemSpec
from .ahead import drop_ahead, ended_by_a_limit, run_step, second_worker, shared_run_step
from .timing import (GIVEN, EffectiveLimits, case_work, covered_by_timeout, effective_limits, least_limits,
                     near_the_limit, within_least_limits)
from .verdict import (CaseResult, CompileResult, GradeReport, SubmissionInfo, VERDICT_NAMES,
                      group_results, overall_verdict)


@dataclass(frozen=True)
class GradeOptions:
    tests: str = "all"                # "sample", "practice" (visible, no points) or "all"
    secret_seed: int | None = None    # generate a fresh hidden set from this seed
    isolation: str = "auto"           # "auto", or "plain" to skip namespaces
    time_factor: float = 1.0          # verify's tolerant run uses 1.5
    scale_time: bool = True           # scale limits by the speed probe
    stop_after_failure: bool = False  # verify: stop at the first non-AC case
    diagnose: bool = True             # read by feedback.grade: judging itself never diagnoses
    disable_layers: frozenset = frozenset()  # tests only: switch worker layers off; the report says so
    probe_s: float | None = None      # a speed probe measured once for many gradings (batch); None: probe here
    within: Path | None = None        # the student's upload folder: the file must be inside it (paths.py)
    second_worker: bool = True        # run the next test beside this one where that is sound (ahead.py)


# --- steps -------------------------------------------------------------------

def read_step(path: Path, spec: ProblemSpec, within: Path | None = None) -> tuple[Submission | None, StaticCheck]:
    return read_submission(path, spec.limits.source_kib * 1024, within)


def static_step(sub: Submission, spec: ProblemSpec) -> StaticCheck:
    check = static_check(sub, spec)
    if not check.ok and check.line and sub.line_map and 0 < check.line <= len(sub.line_map):
        return StaticCheck(False, f"{check.message} [{sub.line_map[check.line - 1]} of the notebook]", check.line)
    return check


def cases_step(bundle: Bundle, options: GradeOptions) -> list[TestCase]:
    """Published cases of a selection, or samples plus a hidden set generated from a secret seed."""
    if bundle.flavour == "practice" and (options.tests == "all" or options.secret_seed is not None):
        # Judging "all" on the samples alone would pass for a full verdict: refuse instead.
        what = "--secret-seed needs the reference solution" if options.secret_seed is not None \
            else "--tests all needs the hidden test cases"
        raise BundleError(f"{what}, which the practice archive does not contain: grade with --tests practice "
                          "or --tests sample, or use the judge bundle")
    if options.secret_seed is not None and options.tests == "practice":
        raise BundleError("--secret-seed draws a fresh hidden set: use it with --tests all, not --tests practice")
    groups = bundle.group_names(options.tests)
    try:
        if options.secret_seed is None:
            # bundle.load_selection, through the parsed-case cache
            cases = [c for under, names in bundle.case_sources(options.tests)
                     for c in load_cases_cached(bundle.testcases, names, under)]
        else:
            from ..problem.generate import hidden_cases, sample_cases
            from ..problem.validate import validate_cases
            reference = bundle.load_reference_module()
            cases = sample_cases(reference)
            if options.tests == "all":
                cases += hidden_cases(bundle.spec, reference, options.secret_seed)
            problems = validate_cases(cases, bundle.spec)
            if problems:
                raise BundleError(f"the generated set is invalid: {problems[0]}")
    except CaseFileError as exc:
        raise BundleError(f"broken test data: {exc}") from None
    if not cases:
        raise BundleError(f"no test cases found under {bundle.testcases} for --tests {options.tests}")
    if options.secret_seed is None:
        # A damaged or missing case file must stop grading (exit 2), never turn into a verdict.
        from ..problem.validate import validate_cases
        problems = validate_cases(cases, bundle.spec, groups)
        if problems:
            more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
            raise BundleError(f"broken test data: {problems[0]}{more}; run `python -m grader validate`")
    return cases


def probe_step(bundle: Bundle, options: GradeOptions, zygote: Spawned | None = None) -> float:
    """The speed probe, measured once in a sandbox like a submission's, for GradeOptions.probe_s
    (in `zygote`, started by sandbox/early.py, if it fits)."""
    spec = bundle.spec
    params = ", ".join(spec.parameter_names)
    allowed = {"packages": list(spec.allowed_imports.packages), "exclude": list(spec.allowed_imports.exclude),
               "stdlib": list(spec.allowed_imports.stdlib)}
    make_parent_nondumpable()
    with Sandbox(f"def {spec.function}({params}):\n    return None\n", function=spec.function,
                 n_args=len(spec.parameters), limits=sandbox_limits(spec), allowed=allowed,
                 preload=list(spec.allowed_imports.all_modules()), isolation=options.isolation,
                 prelaunched=zygote) as sb:
        return sb.probe()


def sandbox_limits(spec: ProblemSpec) -> SandboxLimits:
    lim = spec.limits
    return SandboxLimits(cpu_s=lim.time_per_test_s, wall_s=lim.wall_factor * lim.time_per_test_s + 1,
                         memory_bytes=lim.memory_mib << 20, result_bytes=lim.output_mib << 20,
                         capture_bytes=lim.captured_output_kib << 10, flood_bytes=lim.output_flood_mib << 20)


def run_context(spec: ProblemSpec, limits: EffectiveLimits) -> RunContext:
    allowed = spec.allowed_imports
    return RunContext(function=spec.function, parameters=spec.parameter_names,
                      cpu_limit_s=limits.cpu_s, wall_limit_s=limits.wall_s,
                      flood_bytes=spec.limits.output_flood_mib << 20,
                      result_bytes=spec.limits.output_mib << 20,
                      allowed_hint=f"allowed: NumPy and the standard-library modules {', '.join(allowed.stdlib)}")


def limits_step(spec: ProblemSpec, options: GradeOptions) -> EffectiveLimits:
    """The limits the first runs get: stated (no scaling), scaled by a reading given for many
    gradings, or the least limits, which stand until a run goes beyond them."""
    if not options.scale_time:
        return effective_limits(spec, None, options.time_factor)
    if options.probe_s is not None:
        return effective_limits(spec, options.probe_s, options.time_factor, GIVEN)
    return least_limits(spec, options.time_factor)


def settled(out: RunOutcome, limits: EffectiveLimits) -> bool:
    """Does this run decide its test under `limits`? Always, unless they are the least limits and
    the run went beyond them (then only the measured limit can say)."""
    return not limits.pending or within_least_limits(out.cpu_s, ended_by_a_limit(out), limits)


class ProbeFailed(SandboxError):
    """The speed probe could not be read: no time limit, so no grading (JE)."""


def probe_now_step(sb: Sandbox, spec: ProblemSpec, options: GradeOptions) -> tuple[EffectiveLimits, RunContext]:
    """Read the speed probe now, in a fresh worker of this sandbox (with the probe's own limits,
    which a 6 ms workload never nears), and set the limits it gives."""
    sb.set_time_limits(EARLY_PROBE_LIMITS["cpu_limit_s"], EARLY_PROBE_LIMITS["wall_limit_s"])
    try:
        probe = sb.probe()
    except SandboxError as exc:
        why = str(exc)
        raise ProbeFailed(why if why.startswith("the speed probe failed") else f"the speed probe failed: {why}") from None
    limits = effective_limits(spec, probe, options.time_factor)
    sb.set_time_limits(limits.cpu_s, limits.wall_s)
    return limits, run_context(spec, limits)


def load_run(sb: Sandbox, n_args: int) -> RunOutcome:
    """Import the module once in a worker, without calling the function."""
    return sb.run([0] * n_args, None, mode="load")


def load_step(sb: Sandbox, ctx: RunContext, n_args: int) -> CompileResult:
    """Import the module once in a worker and check the entry point, without calling it."""
    return load_result(load_run(sb, n_args), ctx)


def load_result(out: RunOutcome, ctx: RunContext) -> CompileResult:
    """What the import run says: OK, or the CE/RE/TLE that stops the grading."""
    if out.status == child.STATUS_LOADED and not out.signal and out.killed_by is None:
        return CompileResult("OK", "")
    d = load_problem(out, ctx) or limit_problem(out, ctx, show_message=True)
    if d is None:
        d = Decision("RE", "run", f"importing your file failed (status {out.status})")
    line = out.error.line if out.error else None
    return CompileResult(d.verdict, d.message, line)


def show_full(spec: ProblemSpec, case: TestCase) -> bool:
    """May this case's report show values and captured output?"""
    return (spec.feedback.visible if is_visible(spec, case) else spec.feedback.hidden) == "full"


def is_visible(spec: ProblemSpec, case: TestCase) -> bool:
    """A sample or practice case (public data), as opposed to a hidden one."""
    return case.practice or spec.group(case.group).visible


def check_step(spec: ProblemSpec, case: TestCase, out: RunOutcome, ctx: RunContext) -> CaseResult:
    full = show_full(spec, case)
    d = decide(out, case.expected, ctx, spec.comparison.rtol, spec.comparison.atol, full)
    time_s, memory_mib = round(out.cpu_s, 4), round(out.maxrss_kib / 1024, 1)
    if not full:  # the submission chooses both: rounded up, as judging/hidden.py says
        time_s, memory_mib = hidden_time(time_s), hidden_memory(memory_mib)
    return CaseResult(name=case.name, group=case.group, visible=is_visible(spec, case),
                      verdict=d.verdict, check=d.check, message=d.message,
                      time_s=time_s, memory_mib=memory_mib,
                      error=d.error, stdout=out.stdout if full else "", stderr=out.stderr if full else "")


def judged_step(sb: Sandbox, spec: ProblemSpec, case: TestCase, ctx: RunContext,
                out: RunOutcome | None = None) -> tuple[CaseResult, RunOutcome]:
    """run_step (or its outcome `out`) then check_step; a CPU-time TLE within the noise band of
    the limit is run once more, alone, and the second run decides, as serious judges do (the
    message says so)."""
    out = run_step(sb, case) if out is None else out
    result = check_step(spec, case, out, ctx)
    if result.verdict != "TLE" or not near_the_limit(out.cpu_s, out.killed_by == "wall", ctx.cpu_limit_s):
        return result, out
    if sb.in_flight():   # cannot happen (only a run alone can be near the limit): never judge a shared run twice
        raise SandboxError("a second run near the limit would have shared the machine")
    again = run_step(sb, case)
    second = check_step(spec, case, again, ctx)
    note = (f"judged twice: the first run used {max(out.cpu_s, ctx.cpu_limit_s):.2f} s of CPU time or more, "
            f"within the noise band of the {ctx.cpu_limit_s:.2f} s limit")
    if second.verdict == "TLE":
        return replace(second, message=f"{second.message} ({note}; so did the second)"), again
    return replace(second, message=f"{second.message} ({note}; the second run decided)".lstrip()), again


def not_run(spec: ProblemSpec, case: TestCase, verdict: str, check: str, why: str) -> CaseResult:
    return CaseResult(name=case.name, group=case.group, visible=is_visible(spec, case),
                      verdict=verdict, check=check, message=f"not run: {why}")


# --- the whole run ----------------------------------------------------------------------

def _summary(verdict: str, results: list[CaseResult], compiled: CompileResult) -> str:
    if compiled.verdict != "OK":
        return f"{VERDICT_NAMES[compiled.verdict]}: {compiled.message}"
    if verdict == "AC":
        return f"Accepted: all {len(results)} tests passed."
    first = next(c for c in results if c.verdict != "AC")
    failed = sum(c.verdict != "AC" for c in results)
    return f"{VERDICT_NAMES[verdict]} on test {first.name} ({failed} of {len(results)} tests failed): {first.message}"


def _report(bundle: Bundle, options: GradeOptions, results: list[CaseResult], compiled: CompileResult,
            sub: Submission | None, sandbox=None, limits=None, complete: bool = True) -> GradeReport:
    spec = bundle.spec
    run_groups = [g for g in spec.groups if any(c.group == g.name for c in results)]
    groups = group_results(run_groups, results, scored=options.tests != "practice")
    verdict = overall_verdict(results)
    info = SubmissionInfo(sub.display_name, sub.sha256, len(sub.raw), sub.kind) if sub else None
    return GradeReport(
        verdict=verdict, score=sum(g.score for g in groups), max_score=sum(g.points for g in groups),
        summary=_summary(verdict, results, compiled), compile=compiled, tests=tuple(results),
        groups=tuple(groups), bundle_id=spec.id, bundle_version=spec.version, grader_version=__version__,
        selection=options.tests, hidden_set="secret-seed" if options.secret_seed is not None else "published",
        submission=info, sandbox=sandbox, limits=limits, complete=complete, secret_seed=options.secret_seed)


@dataclass(frozen=True)
class Judgement:
    """A verdict with what the diagnosis needs: the cases run and what each returned."""
    report: GradeReport
    cases: list[TestCase]
    returned: dict   # case name -> ReturnedValue (or None)


def judge(bundle: Bundle, path: Path, options: GradeOptions = GradeOptions(),
          cases: list[TestCase] | None = None, zygote: Spawned | None = None) -> Judgement:
    """Judge the submission at `path` against the bundle's cases (or `cases`, from cases_step),
    in `zygote` (a process sandbox/early.py started at the command's start) if it fits."""
    spec = bundle.spec
    sub, read_check = read_step(path, spec, options.within)
    compiled_check = static_step(sub, spec) if sub is not None else read_check
    if not compiled_check.ok:
        # verify/calibrate grade many submissions: they read the cases once and pass them in.
        cases = cases_step(bundle, options) if cases is None else cases
        compiled = CompileResult("CE", compiled_check.message, compiled_check.line)
        results = [not_run(spec, c, "CE", "compile", compiled.message) for c in cases]
        return Judgement(_report(bundle, options, results, compiled, sub), cases, {})

    make_parent_nondumpable()
    allowed = {"packages": list(spec.allowed_imports.packages), "exclude": list(spec.allowed_imports.exclude),
               "stdlib": list(spec.allowed_imports.stdlib)}
    preload = [*spec.allowed_imports.all_modules(), *compiled_check.imports]
    started = time.monotonic()
    results: list[CaseResult] = []
    returned: dict = {}   # case name -> ReturnedValue, for the diagnosis
    timed_out: list[tuple[str, int]] = []   # (name, work) of each test over a limit
    complete = True
    sb = Sandbox(sub.source, function=spec.function, n_args=len(spec.parameters),
                 limits=sandbox_limits(spec), allowed=allowed, preload=preload,
                 filename=sub.display_name if sub.kind == "python" else "notebook.py",
                 isolation=options.isolation, disable_layers=options.disable_layers, prelaunched=zygote)
    # The zygote starts on the other core while the cases are read here.
    sb.begin()
    try:
        cases = cases_step(bundle, options) if cases is None else cases
        with sb:
            limits = limits_step(spec, options)
            sb.set_time_limits(limits.cpu_s, limits.wall_s)
            ctx = run_context(spec, limits)
            loaded = load_run(sb, len(spec.parameters))
            if not settled(loaded, limits):
                limits, ctx = probe_now_step(sb, spec, options)
                loaded = load_run(sb, len(spec.parameters))
            compiled = load_result(loaded, ctx)
            least = least_limits(spec, options.time_factor)
            two = options.second_worker and compiled.verdict == "OK" and second_worker(sb, sb.limits.memory_bytes)
            ahead: dict[int, Run] = {}   # test index -> its run, started beside the one before
            kinds = [(is_visible(spec, c), show_full(spec, c)) for c in cases]   # who may share (ahead.py)
            for index, case in enumerate(cases):
                if compiled.verdict != "OK":
                    results.append(not_run(spec, case, compiled.verdict, "compile", compiled.message))
                    continue
                if time.monotonic() - started > spec.limits.total_time_s:
                    drop_ahead(sb, ahead, index)
                    results.append(not_run(spec, case, "TLE", "limits",
                                           f"the total time limit of {spec.limits.total_time_s:g} s was used up"))
                    continue
                work = case_work(case.dims)
                smaller = covered_by_timeout(work, timed_out)
                if smaller is not None:
                    drop_ahead(sb, ahead, index)
                    results.append(not_run(spec, case, "TLE", "limits", f"an earlier test of this size or "
                                           f"smaller ({smaller}) exceeded the time limit"))
                    continue
                try:
                    out, counted = shared_run_step(sb, cases, index, ahead, two, least, kinds)
                    # After a shared run that did not count, the rest runs alone: a submission that slow
                    # would spend every later time-out twice, once shared and once alone.
                    two = two and counted
                    if limits.pending and not (counted and settled(out, limits)):
                        # judged afresh, alone, under the measured limit, as if it had been there all along
                        drop_ahead(sb, ahead)
                        limits, ctx = probe_now_step(sb, spec, options)
                        result, out = judged_step(sb, spec, case, ctx)
                    elif limits.pending:
                        result = check_step(spec, case, out, ctx)
                    else:
                        result, out = judged_step(sb, spec, case, ctx, out if counted else None)
                except ProbeFailed:
                    raise
                except SandboxError as exc:
                    drop_ahead(sb, ahead)
                    two = False   # the next run starts a new zygote, perhaps of a weaker kind: one at a time
                    results.append(not_run(spec, case, "JE", "run", f"sandbox failure: {exc} (a grader fault)"))
                    continue
                results.append(result)
                returned[case.name] = out.value
                if result.verdict == "TLE":
                    timed_out.append((case.name, work))
                if options.stop_after_failure and result.verdict != "AC":
                    complete = False
                    break
            drop_ahead(sb, ahead)
            info = sb.info()
    except SandboxError as exc:
        why = str(exc) if isinstance(exc, ProbeFailed) else f"the sandbox could not be started: {exc}"
        compiled = CompileResult("JE", why)
        results = [not_run(spec, c, "JE", "run", compiled.message) for c in cases]
        return Judgement(_report(bundle, options, results, compiled, sub), cases, {})
    finally:
        sb.close()
    if sub.kind == "notebook":  # cite cells, not lines of the joined source
        from .notebook import relabel
        results = [replace(r, message=relabel(r.message, sub.line_map)) for r in results]
        compiled = replace(compiled, message=relabel(compiled.message, sub.line_map))
    return Judgement(_report(bundle, options, results, compiled, sub, info, limits, complete), cases, returned)
