"""grader/judging/judge.py, step by step, and the options of `grade`.

The steps that need a submission to run use the real sandbox; the others get
hand-made records. Verdict aggregation (verdict.py) is checked here too,
because `grade` is where it is applied. A test about the engine runs on every
bundle of the repository (`any_bundle`); the root's own numbers stay on the root.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, require_parts
from fake_runs import run_outcome
from grader.feedback.grade import grade
from grader.judging.case_steps import check_step, not_run, run_context, show_full
from grader.judging.judge import GradeOptions, cases_step, load_step
from grader.judging.sandbox_terms import sandbox_allowed, sandbox_limits
from grader.judging.timing import PROBE_BAND_SLOW, effective_limits
from grader.judging.verdict import CaseResult, group_results, overall_verdict
from grader.problem.bundle import Bundle, BundleError
from grader.problem.cases import load_cases
from grader.sandbox.launcher import Sandbox
from grader.sandbox.records import ReturnedValue, RunOutcome

REFERENCE = ROOT / "reference" / "solution.py"


def _first_array(spec) -> str:
    """The name of the bundle's first ndarray parameter (the root's x)."""
    return next(p.name for p in spec.parameters if p.type == "ndarray")


def _hidden_groups(spec) -> list[str]:
    return [g.name for g in spec.groups if not g.visible]


def _sample_files(bundle) -> list[str]:
    return [
        f"{g}/{p.stem}" for g in bundle.group_names("sample") for p in sorted((bundle.testcases / g).glob("*.json"))
    ]


def _reference(bundle) -> Path:
    require_parts(bundle, "reference/solution.py")
    return bundle.reference_dir / "solution.py"


# --- cases_step ---------------------------------------------------------------------------------------


def test_published_cases_come_in_problem_yaml_group_order(any_bundle):
    cases = cases_step(any_bundle, GradeOptions())
    order = [g.name for g in any_bundle.spec.groups]
    assert {c.group for c in cases} == set(order)
    assert [c.group for c in cases] == sorted((c.group for c in cases), key=order.index)
    samples = _sample_files(any_bundle)
    assert [c.name for c in cases[: len(samples)]] == samples


def test_the_roots_published_cases(bundle):
    cases = cases_step(bundle, GradeOptions())
    assert len(cases) == 34
    assert [c.name for c in cases[:3]] == [
        "sample/01-identity-weights",
        "sample/02-two-heads",
        "sample/03-batch-of-two",
    ]


def test_sample_selection_is_the_visible_group_only(any_bundle):
    cases = cases_step(any_bundle, GradeOptions(tests="sample"))
    assert {c.group for c in cases} == set(any_bundle.group_names("sample"))
    assert [c.name for c in cases] == _sample_files(any_bundle)


def test_secret_seed_keeps_the_samples_and_replaces_every_hidden_case(any_bundle):
    first = _first_array(any_bundle.spec)
    published = {c.name: c for c in cases_step(any_bundle, GradeOptions())}
    fresh = cases_step(any_bundle, GradeOptions(secret_seed=99))
    assert [c.name for c in fresh] == list(published)  # same recipes, same order
    replaced = [c for c in fresh if not np.array_equal(c.inputs[first], published[c.name].inputs[first])]
    samples = set(any_bundle.group_names("sample"))
    # A recipe may ignore its generator (the patch embedding's toy image): each hidden group, not
    # each hidden case, gets new data; on the root, every hidden case does.
    assert {c.group for c in replaced} == set(any_bundle.group_names("all")) - samples
    if any_bundle.root == ROOT:
        assert len(replaced) == sum(c.group not in samples for c in fresh)
    assert all(np.array_equal(c.expected, published[c.name].expected) for c in fresh if c.group in samples)
    again = cases_step(any_bundle, GradeOptions(secret_seed=99))
    assert all(np.array_equal(a.expected, b.expected) for a, b in zip(fresh, again))


@pytest.mark.parametrize("which", ["sample", "practice", "all"])
def test_published_cases_are_the_bundles_selection_read_through_the_cache(any_bundle, which):
    """cases_step reads with Bundle.load_selection (the one implementation), cached: the same cases."""
    cached, plain = cases_step(any_bundle, GradeOptions(tests=which)), any_bundle.load_selection(which)
    first = _first_array(any_bundle.spec)
    assert [c.name for c in cached] == [c.name for c in plain]
    assert all(
        np.array_equal(a.expected, b.expected) and np.array_equal(a.inputs[first], b.inputs[first])
        for a, b in zip(cached, plain)
    )


def test_every_sandbox_gets_the_allowed_imports_of_problem_yaml(any_spec):
    spec = any_spec
    allowed = sandbox_allowed(spec)
    assert allowed == {
        "packages": list(spec.allowed_imports.packages),
        "exclude": list(spec.allowed_imports.exclude),
        "stdlib": list(spec.allowed_imports.stdlib),
    }
    assert all(type(v) is list for v in allowed.values())  # sent to the zygote as JSON


def test_unknown_selection_cannot_be_judged(any_bundle):
    with pytest.raises(BundleError, match="unknown test selection"):
        cases_step(any_bundle, GradeOptions(tests="hidden"))


# --- limits and contexts ------------------------------------------------------------------------------


def test_sandbox_limits_follow_problem_yaml(any_spec):
    spec = any_spec
    lim = sandbox_limits(spec)
    assert lim.cpu_s == spec.limits.time_per_test_s
    assert lim.wall_s == spec.limits.wall_factor * spec.limits.time_per_test_s + 1
    assert lim.memory_bytes == spec.limits.memory_mib << 20 and lim.result_bytes == spec.limits.output_mib << 20
    assert lim.flood_bytes == spec.limits.output_flood_mib << 20


def test_run_context_carries_the_effective_limits(any_spec):
    spec = any_spec
    eff = effective_limits(spec, spec.time_calibration.probe_time_s * 2 * PROBE_BAND_SLOW)
    ctx = run_context(spec, eff)
    assert ctx.cpu_limit_s == pytest.approx(2 * spec.limits.time_per_test_s)
    assert ctx.wall_limit_s == eff.wall_s and ctx.parameters == spec.parameter_names
    assert "numpy" not in ctx.allowed_hint.split("modules")[1] and "math" in ctx.allowed_hint


# --- check_step, show_full, not_run -----------------------------------------------------------------------


def _outcome(array: np.ndarray, **kw) -> RunOutcome:
    return run_outcome(
        **{
            "cpu_s": 0.123456,
            "wall_s": 0.2,
            "maxrss_kib": 51300,
            "value": ReturnedValue("ndarray", "float64", array.shape, array),
            "stdout": "printed 0.5\n",
            "stderr": "warn\n",
            "output_bytes": 17,
            "worker_layers": {},
            **kw,
        }
    )


def test_check_step_on_a_visible_case_keeps_output_and_rounds_figures(any_bundle):
    spec = any_bundle.spec
    case = cases_step(any_bundle, GradeOptions(tests="sample"))[0]
    ctx = run_context(spec, effective_limits(spec, None))
    r = check_step(spec, case, _outcome(case.expected.copy()), ctx)
    assert (r.verdict, r.check, r.visible, r.group) == ("AC", "passed", True, case.group)
    assert r.time_s == 0.1235 and r.memory_mib == 50.1
    assert r.stdout == "printed 0.5\n" and r.stderr == "warn\n"


def test_check_step_on_a_hidden_case_drops_output_and_values(any_bundle):
    spec = any_bundle.spec
    case = next(c for c in cases_step(any_bundle, GradeOptions()) if not spec.group(c.group).visible)
    ctx = run_context(spec, effective_limits(spec, None))
    r = check_step(spec, case, _outcome(case.expected + 1.0), ctx)
    assert r.verdict == "WA" and not r.visible and r.stdout == "" and r.stderr == ""
    assert r.error.received_at_worst is None and r.error.expected_at_worst is None


def test_show_full_follows_the_feedback_policy(any_bundle):
    spec = any_bundle.spec
    cases = cases_step(any_bundle, GradeOptions())
    assert show_full(spec, cases[0]) is (spec.feedback.visible == "full")
    hidden = next(c for c in cases if c.group == _hidden_groups(spec)[-1])
    assert show_full(spec, hidden) is (spec.feedback.hidden == "full")
    strict = replace(spec, feedback=replace(spec.feedback, visible="summary"))
    assert show_full(strict, cases[0]) is False


def test_not_run_records_why(any_bundle):
    spec = any_bundle.spec
    case = cases_step(any_bundle, GradeOptions(tests="sample"))[-1]
    r = not_run(spec, case, "CE", "compile", "syntax error at line 3")
    assert (r.name, r.verdict, r.check, r.time_s) == (_sample_files(any_bundle)[-1], "CE", "compile", None)
    assert r.message == "not run: syntax error at line 3"


# --- load_step in a real sandbox --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source, verdict, words",
    [
        ("def FUNCTION(*a):\n    return a[0]\n", "OK", ""),
        ("FUNCTION = 3\n", "CE", "is a int, not a function"),
        ("import numpy as np\nW = np.eye(2)[5]\ndef FUNCTION(*a):\n    pass\n", "RE", "IndexError"),
        ("exec('import os')\ndef FUNCTION(*a):\n    pass\n", "CE", "'os'"),
        ("while True:\n    pass\ndef FUNCTION(*a):\n    pass\n", "TLE", "CPU time"),
    ],
)
def test_load_step_imports_once_without_calling(any_spec, source, verdict, words):
    spec = any_spec
    with Sandbox(
        source.replace("FUNCTION", spec.function),
        function=spec.function,
        n_args=len(spec.parameters),
        limits=sandbox_limits(spec),
        allowed=sandbox_allowed(spec),
        preload=spec.allowed_imports.all_modules(),
    ) as sb:
        result, limits, ctx = load_step(sb, spec, GradeOptions(scale_time=False))
    assert result.verdict == verdict and words in result.message
    assert limits == effective_limits(spec, None) and ctx == run_context(spec, limits)


# --- grade() and its options --------------------------------------------------------------------------------


def test_grade_reference_needs_no_probe(any_bundle):
    # Every run stays within the least limits any machine gets: no verdict depends on this one's speed.
    spec = any_bundle.spec
    r = grade(any_bundle, _reference(any_bundle), GradeOptions(tests="sample"))
    assert r.verdict == "AC" and r.complete and r.score == r.max_score == spec.group("sample").points
    lim = r.limits
    assert lim.probe == "not needed" and lim.probe_s is None and lim.scale is None
    assert lim.cpu_s == pytest.approx(0.25 * spec.limits.time_per_test_s)
    assert lim.wall_s == pytest.approx(spec.limits.wall_factor * lim.cpu_s + 1)
    n = len(_sample_files(any_bundle))
    assert r.sandbox is not None and r.submission.sha256 and r.summary == f"Accepted: all {n} tests passed."


def test_grade_without_scaling_and_with_a_time_factor(any_bundle):
    spec = any_bundle.spec
    r = grade(
        any_bundle,
        _reference(any_bundle),
        GradeOptions(tests="sample", scale_time=False, time_factor=1.5, diagnose=False),
    )
    assert r.limits.probe_s is None and r.limits.scale == 1.0
    assert r.limits.cpu_s == pytest.approx(1.5 * spec.limits.time_per_test_s) and r.limits.time_factor == 1.5


def test_stop_after_failure_stops_at_the_first_non_ac_case(bundle):
    wrong = ROOT / "submissions" / "wrong_answer" / "no_scaling.py"  # passes the samples, fails later
    full = grade(bundle, wrong, GradeOptions(diagnose=False))
    stopped = grade(bundle, wrong, GradeOptions(stop_after_failure=True, diagnose=False))
    first_bad = next(i for i, c in enumerate(full.tests) if c.verdict != "AC")
    assert full.complete and len(full.tests) == 34
    assert not stopped.complete and len(stopped.tests) == first_bad + 1
    assert stopped.verdict == full.verdict == full.tests[first_bad].verdict == "WA"
    assert [c.name for c in stopped.tests] == [c.name for c in full.tests[: first_bad + 1]]
    assert full.summary.startswith(f"Wrong Answer on test {full.tests[first_bad].name} (")


def test_preloaded_cases_are_the_ones_judged(any_bundle):
    group = _hidden_groups(any_bundle.spec)[0]
    cases = load_cases(any_bundle.testcases, [group])[:2]
    r = grade(any_bundle, _reference(any_bundle), GradeOptions(diagnose=False), cases)
    assert [c.name for c in r.tests] == [c.name for c in cases] and r.verdict == "AC"
    assert [g.name for g in r.groups] == [group]


def test_compile_error_marks_every_case_not_run(any_bundle, tmp_path):
    function = any_bundle.spec.function
    sub = tmp_path / "solution.py"
    sub.write_text(f"def {function}(a):\n    return a\n")  # every bundle's function takes more than one
    r = grade(any_bundle, sub, GradeOptions(tests="sample"))
    assert r.verdict == "CE" and r.compile.verdict == "CE" and r.compile.line == 1
    assert r.score == 0 and r.sandbox is None and r.limits is None
    assert all(c.verdict == "CE" and c.check == "compile" and c.message.startswith("not run:") for c in r.tests)
    assert r.summary.startswith(f"Compilation Error: {function} takes 1 positional")


def test_load_failure_is_the_verdict_of_every_case(any_bundle, tmp_path):
    sub = tmp_path / "solution.py"
    function = any_bundle.spec.function
    sub.write_text(f"import numpy as np\nraise ValueError('top level')\ndef {function}(*a):\n    pass\n")
    r = grade(any_bundle, sub, GradeOptions(tests="sample"))
    assert r.verdict == "RE" and r.compile.verdict == "RE" and r.compile.line == 2
    assert all(c.verdict == "RE" and c.check == "compile" for c in r.tests)


def test_total_time_limit_cuts_the_run_short(any_bundle, tmp_path):
    bundle = any_bundle
    tiny = Bundle(bundle.root, replace(bundle.spec, limits=replace(bundle.spec.limits, total_time_s=1e-6)))
    r = grade(tiny, _reference(bundle), GradeOptions(tests="sample", diagnose=False))
    assert r.verdict == "TLE"
    assert all(c.verdict == "TLE" and "total time limit" in c.message for c in r.tests)


# --- aggregation (ICPC rule) -------------------------------------------------------------------------------------


def _case(name: str, group: str, verdict: str) -> CaseResult:
    return CaseResult(
        name=name,
        group=group,
        visible=group == "sample",
        verdict=verdict,
        check="passed" if verdict == "AC" else "run",
        message="",
    )


def test_overall_verdict_is_the_first_failure_in_test_order():
    cases = [
        _case("a", "sample", "AC"),
        _case("b", "sample", "RE"),
        _case("c", "batch", "WA"),
        _case("d", "batch", "TLE"),
    ]
    assert overall_verdict(cases) == "RE"
    assert overall_verdict(cases[:1]) == "AC"
    assert overall_verdict([]) == "JE"


def test_groups_score_all_or_nothing(any_spec):
    sample, hidden = any_spec.group("sample"), any_spec.group(_hidden_groups(any_spec)[0])
    cases = [
        _case("s1", "sample", "AC"),
        _case("s2", "sample", "AC"),
        _case("b1", hidden.name, "AC"),
        _case("b2", hidden.name, "WA"),
    ]
    groups = {g.name: g for g in group_results([sample, hidden], cases)}
    assert (groups["sample"].score, groups["sample"].passed, groups["sample"].verdict) == (sample.points, 2, "AC")
    batch = groups[hidden.name]
    assert (batch.score, batch.passed, batch.total, batch.verdict) == (
        0,
        1,
        2,
        "WA",
    )


# --- a speed probe shared by many gradings (batch) ---------------------------------------------------


def test_probe_s_given_is_used_instead_of_probing(any_bundle):
    bundle = any_bundle
    reference = _reference(bundle)
    from grader.judging.judge import probe_step

    probe = probe_step(bundle, GradeOptions())
    assert 0 < probe < 10
    given = bundle.spec.time_calibration.probe_time_s * 2 * PROBE_BAND_SLOW  # beyond the noise band
    report = grade(bundle, reference, GradeOptions(tests="sample", probe_s=given))
    assert report.verdict == "AC"
    assert report.limits.probe_s == given
    assert report.limits.scale == pytest.approx(2.0)
    assert report.limits.cpu_s == pytest.approx(2.0 * bundle.spec.limits.time_per_test_s)
    off = grade(bundle, reference, GradeOptions(tests="sample", probe_s=given, scale_time=False, diagnose=False))
    assert off.limits.probe_s is None and off.limits.scale == 1.0
