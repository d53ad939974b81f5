"""grader/judging/checker.py: every Decision path, from hand-made RunOutcome records.

No sandbox runs here: each test builds the outcome a worker would have
reported and checks the verdict, the deciding check, and the facts the message
must carry (wording may change; the facts may not).
"""

from __future__ import annotations

import signal
from dataclasses import replace

import numpy as np
import pytest

from fake_runs import run_context, run_outcome
from grader.judging import checker
from grader.judging.checker import decide, limit_problem, load_problem
from grader.judging.values import Decision, compare, error_summary
from grader.judging.verdict import CHECKS, VERDICTS
from grader.sandbox import child
from grader.sandbox.records import ErrorInfo, ReturnedValue, RunOutcome

CTX = run_context()
EXPECTED = np.arange(12, dtype=np.float64).reshape(1, 3, 4) / 7.0
LAYERS = {"rlimits": ["active", "..."]}  # the worker reported its layers: submission code ran
TOL = 1e-10


def outcome(**kw) -> RunOutcome:
    return run_outcome(**{"worker_layers": LAYERS, **kw})


def returned(array=None, type_="ndarray", dtype="float64", shape=None) -> ReturnedValue:
    if array is not None and shape is None:
        shape = array.shape
    return ReturnedValue(type=type_, dtype=dtype, shape=shape, array=array)


def ok_outcome(array: np.ndarray, **kw) -> RunOutcome:
    return outcome(value=returned(array), **kw)


def run(out: RunOutcome, show: bool = True) -> Decision:
    d = decide(out, EXPECTED, CTX, TOL, TOL, show)
    assert d.verdict in VERDICTS and d.check in CHECKS
    return d


def err(
    type_: str,
    message: str = "boom",
    line: int | None = 7,
    traceback: tuple[str, ...] = ("line 7, in vit_encoder_block: raise X",),
) -> ErrorInfo:
    return ErrorInfo(type=type_, message=message, traceback=traceback, line=line)


# --- AC and the tolerance ---------------------------------------------------------------------


def test_exact_answer_is_accepted():
    d = run(ok_outcome(EXPECTED.copy()))
    assert (d.verdict, d.check) == ("AC", "passed")
    assert d.error.outside == 0 and d.error.total == 12 and d.error.max_abs_error == 0.0


def test_error_within_tolerance_is_accepted_and_just_outside_is_not():
    inside = EXPECTED + 0.9 * (TOL + TOL * np.abs(EXPECTED))
    assert run(ok_outcome(inside)).verdict == "AC"
    outside = EXPECTED.copy()
    outside[0, 2, 1] += 1.1 * (TOL + TOL * abs(EXPECTED[0, 2, 1]))
    d = run(ok_outcome(outside))
    assert (d.verdict, d.check) == ("WA", "tolerance")
    assert d.error.outside == 1 and d.error.max_abs_at == (0, 2, 1)


def test_wrong_answer_message_locates_the_error_and_shows_values_when_allowed():
    got = EXPECTED.copy()
    got[0, 1, 3] += 0.5
    d = run(ok_outcome(got), show=True)
    assert (d.verdict, d.check) == ("WA", "tolerance")
    assert "1 of 12 values" in d.message and "(batch 0, token 1, channel 3)" in d.message
    assert repr(float(EXPECTED[0, 1, 3])) in d.message and repr(float(got[0, 1, 3])) in d.message
    assert d.error.expected_at_worst == EXPECTED[0, 1, 3] and d.error.received_at_worst == got[0, 1, 3]


def test_hidden_case_message_has_no_values():
    got = EXPECTED.copy()
    got[0, 1, 3] += 0.5
    d = run(ok_outcome(got), show=False)
    assert d.verdict == "WA" and "some values are outside" in d.message
    # no position, no count, sizes as orders of magnitude only (judging/hidden.py)
    assert "batch" not in d.message and "1 of 12" not in d.message and "of the order of 1e+0" in d.message
    assert repr(float(got[0, 1, 3])) not in d.message and "There:" not in d.message
    assert d.error.expected_at_worst is None and d.error.received_at_worst is None
    assert d.error.max_abs_at == () and d.error.max_abs_error == 1.0 and d.error.outside == 1


def test_relative_error_where_expected_is_zero_is_infinite_not_nan():
    got = EXPECTED.copy()
    got[0, 0, 0] = 1e-3  # expected[0, 0, 0] == 0
    e = error_summary(got, EXPECTED, TOL, TOL, True)
    assert e.max_rel_error == np.inf and e.max_rel_at == (0, 0, 0)
    assert e.max_abs_at == (0, 0, 0) and e.outside == 1


@pytest.mark.parametrize("bad, nan, inf", [(np.nan, 1, 0), (np.inf, 0, 1), (-np.inf, 0, 1)])
def test_non_finite_values_are_wrong_even_where_expected_matches(bad, nan, inf):
    got = EXPECTED.copy()
    got[0, 2, 2] = bad
    d = run(ok_outcome(got))
    assert (d.verdict, d.check) == ("WA", "finite")
    assert f"{nan} NaN and {inf} infinite" in d.message and "(batch 0, token 2, channel 2)" in d.message


def test_all_nan_is_wrong():
    d = run(ok_outcome(np.full_like(EXPECTED, np.nan)))
    assert (d.verdict, d.check) == ("WA", "finite") and "12 NaN" in d.message


def test_compare_directly_reports_first_non_finite_position():
    got = EXPECTED.copy()
    got[0, 1, 0] = got[0, 2, 3] = np.nan
    d = compare(got, EXPECTED, TOL, TOL, True, CTX.output_axes)
    assert "(batch 0, token 1, channel 0)" in d.message


# --- what was returned ------------------------------------------------------------------------


def test_none_returned_hints_at_a_missing_return():
    d = run(outcome(value=ReturnedValue(type="NoneType")))
    assert (d.verdict, d.check) == ("WA", "type") and "return" in d.message


@pytest.mark.parametrize(
    "kind",
    [
        "list",
        "0-d array",
        "masked array (numpy.ma.MaskedArray)",
        "ndarray subclass numpy.matrix",
        "NumPy scalar float64",
    ],
)
def test_anything_but_a_plain_ndarray_is_a_type_error(kind):
    d = run(outcome(value=ReturnedValue(type=kind)))
    assert (d.verdict, d.check) == ("WA", "type") and kind in d.message


def test_hidden_case_does_not_repeat_a_submission_made_class_name():
    d = run(outcome(value=ReturnedValue(type="solution.Leak_0.25_0.75")), show=False)
    assert d.check == "type" and "0.25" not in d.message


@pytest.mark.parametrize("dtype", ["float32", "int64", "object", "complex128"])
def test_wrong_dtype(dtype):
    d = run(outcome(value=returned(None, dtype=dtype, shape=EXPECTED.shape)))
    assert (d.verdict, d.check) == ("WA", "dtype") and dtype in d.message


def test_wrong_shape_names_both_shapes():
    d = run(outcome(value=returned(None, shape=(1, 3, 5))))
    assert (d.verdict, d.check) == ("WA", "shape")
    assert "(1, 3, 5)" in d.message and "(1, 3, 4)" in d.message


def test_missing_batch_axis_is_named():
    d = run(outcome(value=returned(None, shape=(3, 4))))
    assert d.check == "shape" and "batch axis B is missing" in d.message


def test_broadcastable_shape_is_still_wrong():
    # np.allclose would accept a (1, 1, 4) row; the checker never broadcasts.
    d = run(outcome(value=returned(None, shape=(1, 1, 4))))
    assert d.check == "shape"


def test_header_without_data_is_a_runtime_error():
    d = run(outcome(value=returned(None, shape=EXPECTED.shape)))
    assert (d.verdict, d.check) == ("RE", "run")


def test_no_value_at_all_is_a_runtime_error():
    d = run(outcome(value=None))
    assert (d.verdict, d.check) == ("RE", "run") and "no result" in d.message


# --- limits -----------------------------------------------------------------------------------


def test_cpu_time_over_the_limit_is_tle_even_with_a_correct_answer():
    d = run(ok_outcome(EXPECTED.copy(), cpu_s=1.2))
    assert (d.verdict, d.check) == ("TLE", "limits") and "1.00 s per test" in d.message


def test_cpu_time_at_the_limit_is_not_tle():
    assert run(ok_outcome(EXPECTED.copy(), cpu_s=1.0)).verdict == "AC"


def test_sigxcpu_is_tle_even_when_rusage_reads_low():
    d = run(outcome(status="no_result", exit_code=None, signal=signal.SIGXCPU, cpu_s=0.98))
    assert (d.verdict, d.check) == ("TLE", "limits")
    assert "0.98" not in d.message  # never "used 0.98 s; the limit is 1.00 s"


def test_wall_clock_kill_is_tle_and_says_sleeping_counts():
    d = run(outcome(status="no_result", exit_code=None, signal=signal.SIGKILL, killed_by="wall", cpu_s=0.01))
    assert (d.verdict, d.check) == ("TLE", "limits")
    assert "3 s of wall-clock time" in d.message and "sleeping" in d.message


def test_output_flood_is_ole():
    d = run(outcome(status="no_result", exit_code=None, signal=signal.SIGKILL, killed_by="output"))
    assert (d.verdict, d.check) == ("OLE", "limits") and "32 MiB" in d.message


def test_oversized_result_is_ole():
    d = run(outcome(result_too_large=True, value=returned(None, shape=(10**8,))))
    assert (d.verdict, d.check) == ("OLE", "limits") and "16 MiB" in d.message


def test_memory_error_is_mle():
    d = run(outcome(status=child.STATUS_CALL_EXCEPTION, error=err("MemoryError", "", 12)))
    assert (d.verdict, d.check) == ("MLE", "limits") and "line 12" in d.message


def test_sigkill_without_wall_or_output_kill_is_mle():
    d = run(outcome(status="no_result", exit_code=None, signal=signal.SIGKILL))
    assert (d.verdict, d.check) == ("MLE", "limits")


# --- precedence where two limits race (docs/time-limits.md) -----------------------------------------


def test_a_run_denied_memory_is_mle_even_when_its_cpu_time_passed_the_limit():
    # Filling memory costs CPU time: the bomb's first test took 0.44 s against a 0.43 s limit.
    d = run(outcome(status=child.STATUS_CALL_EXCEPTION, error=err("MemoryError", "", 12), cpu_s=1.4))
    assert (d.verdict, d.check) == ("MLE", "limits")
    d = run(
        outcome(
            status=child.STATUS_CALL_EXCEPTION,
            error=err("MemoryError", "", 12),
            cpu_s=1.4,
            signal=signal.SIGXCPU,
            exit_code=None,
        )
    )
    assert d.verdict == "MLE"


def test_a_kernel_kill_below_the_hard_cpu_limit_is_mle_even_past_the_soft_limit():
    d = run(outcome(status="no_result", exit_code=None, signal=signal.SIGKILL, cpu_s=1.3))
    assert (d.verdict, d.check) == ("MLE", "limits")


def test_sigkill_at_the_hard_cpu_limit_is_tle():
    # RLIMIT_CPU's hard limit (soft + 1 s) kills with SIGKILL when SIGXCPU was caught.
    d = run(outcome(status="no_result", exit_code=None, signal=signal.SIGKILL, cpu_s=2.0))
    assert (d.verdict, d.check) == ("TLE", "limits")


@pytest.mark.parametrize("cpu_s", [1.9968, 1.999999, 1.6])
def test_sigkill_read_a_hair_under_the_hard_cpu_limit_is_still_tle(cpu_s):
    # rusage read the hard limit's kill as 1.99x s in 1 of 10 gradings: it was MLE by rounding.
    d = run(outcome(status="no_result", exit_code=None, signal=signal.SIGKILL, cpu_s=cpu_s))
    assert (d.verdict, d.check) == ("TLE", "limits")


def test_the_hard_limit_line_follows_the_scaled_cpu_limit():
    # a limit of 1.36 s: soft 2 s, hard 3 s; a kernel kill at 2.2 s is not the CPU limit's
    ctx = replace(CTX, cpu_limit_s=1.36)
    assert child.cpu_rlimit(1.36) == (2, 3) and child.cpu_rlimit(1.0) == (1, 2)
    kill = dict(status="no_result", exit_code=None, signal=signal.SIGKILL)
    assert limit_problem(outcome(cpu_s=2.2, **kill), ctx, True).verdict == "MLE"
    assert limit_problem(outcome(cpu_s=2.999, **kill), ctx, True).verdict == "TLE"


def test_the_wall_clock_kill_decides_before_memory():
    d = run(outcome(status="no_result", exit_code=None, signal=signal.SIGKILL, killed_by="wall", cpu_s=0.2))
    assert d.verdict == "TLE"


def test_tle_takes_precedence_over_a_crash_signal():
    d = run(outcome(status="no_result", exit_code=None, signal=signal.SIGSEGV, cpu_s=5.0))
    assert d.verdict == "TLE"


# --- crashes and exceptions ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "sig, words",
    [
        (signal.SIGSEGV, "segmentation fault"),
        (signal.SIGABRT, "abort"),
        (signal.SIGFPE, "arithmetic fault"),
        (signal.SIGSYS, "forbidden system call"),
        (signal.SIGBUS, "bus error"),
        (signal.SIGTERM, "SIGTERM"),
    ],
)
def test_fatal_signals_are_runtime_errors_named_in_words(sig, words):
    d = run(outcome(status="no_result", exit_code=None, signal=sig))
    assert (d.verdict, d.check) == ("RE", "run") and words in d.message


def test_unknown_signal_number_is_still_described():
    d = run(outcome(status="no_result", exit_code=None, signal=77))
    assert d.verdict == "RE" and "signal 77" in d.message


def test_exception_in_the_call_shows_type_line_message_and_traceback_on_visible_cases():
    d = run(
        outcome(
            status=child.STATUS_CALL_EXCEPTION,
            error=err(
                "ValueError",
                "cannot reshape array of size 6",
                17,
                ("line 17, in vit_encoder_block: q = h.reshape(B, N, H, D)",),
            ),
        )
    )
    assert (d.verdict, d.check) == ("RE", "run")
    assert "ValueError at line 17" in d.message and "cannot reshape" in d.message
    assert "q = h.reshape" in d.message


def test_exception_on_a_hidden_case_shows_only_the_builtin_type_not_the_line():
    d = run(
        outcome(
            status=child.STATUS_CALL_EXCEPTION,
            error=err("ValueError", "x[0,0,0] = 0.123456", 17, ("line 17: print(x)",)),
        ),
        show=False,
    )
    assert "ValueError" in d.message and "17" not in d.message  # the line is the submission's to choose
    assert "0.123456" not in d.message and "print(x)" not in d.message


def test_exception_class_made_by_the_submission_is_not_named_on_hidden_cases():
    d = run(outcome(status=child.STATUS_CALL_EXCEPTION, error=err("Leak_0_123", "", 3)), show=False)
    assert d.verdict == "RE" and "Leak_0_123" not in d.message


@pytest.mark.parametrize(
    "type_, words",
    [("SystemExit", "sys.exit()"), ("RecursionError", "recursion"), ("KeyboardInterrupt", "KeyboardInterrupt")],
)
def test_exit_and_recursion_get_a_hint(type_, words):
    d = run(outcome(status=child.STATUS_CALL_EXCEPTION, error=err(type_, "0")))
    assert d.verdict == "RE" and words in d.message


def test_not_implemented_tells_the_learner_to_implement_it():
    d = run(outcome(status=child.STATUS_CALL_EXCEPTION, error=err("NotImplementedError", "", 20)))
    assert d.verdict == "RE" and "not implemented yet" in d.message and "statement.md" in d.message
    # No command here: the report's next step names the learner's own file and command form.
    assert "grader" not in d.message and "solution.py" not in d.message


def test_exception_while_importing_is_a_runtime_error_that_says_so():
    d = run(outcome(status=child.STATUS_IMPORT_EXCEPTION, error=err("NameError", "name 'W' is not defined", 3)))
    assert (d.verdict, d.check) == ("RE", "run") and "imported" in d.message and "NameError" in d.message


def test_os_exit_without_result_is_a_runtime_error():
    d = run(outcome(status="no_result", exit_code=0))
    assert (d.verdict, d.check) == ("RE", "run") and "status 0" in d.message


def test_vanished_without_exit_code_is_a_runtime_error():
    d = run(outcome(status="no_result", exit_code=None))
    assert d.verdict == "RE" and "abnormally" in d.message


def test_corrupted_result_channel_is_a_runtime_error():
    d = run(outcome(status="protocol_error", detail="frame header is not valid JSON"))
    assert (d.verdict, d.check) == ("RE", "run") and "file descriptor 3" in d.message


# --- the harness's own failures -----------------------------------------------------------------


@pytest.mark.parametrize("code", sorted(checker.HARNESS_FAILURES))
def test_harness_exit_before_the_layers_frame_is_a_judging_error(code):
    d = run(outcome(status="no_result", exit_code=code, worker_layers=None))
    assert (d.verdict, d.check) == ("JE", "run") and "grader fault" in d.message


@pytest.mark.parametrize("code", sorted(checker.HARNESS_FAILURES))
def test_the_same_exit_after_submission_code_ran_is_the_submissions_fault(code):
    d = run(outcome(status="no_result", exit_code=code))
    assert d.verdict == "RE"


# --- compile-time problems discovered in the sandbox -------------------------------------------------


def test_missing_function_is_ce():
    d = run(outcome(status=child.STATUS_MISSING_FUNCTION))
    assert (d.verdict, d.check) == ("CE", "compile") and "vit_encoder_block" in d.message


def test_not_callable_is_ce_and_names_the_type():
    d = run(outcome(status=child.STATUS_NOT_CALLABLE, detail="int"))
    assert (d.verdict, d.check) == ("CE", "compile") and "is a int" in d.message


def test_bad_signature_is_ce_and_lists_the_parameters():
    d = run(outcome(status=child.STATUS_BAD_SIGNATURE, detail="missing a required argument: 'extra'"))
    assert (d.verdict, d.check) == ("CE", "compile")
    assert "8 positional arguments" in d.message and "Wq" in d.message and "extra" in d.message


def test_forbidden_import_at_run_time_is_ce_with_the_allowed_list():
    d = run(
        outcome(status=child.STATUS_FORBIDDEN_IMPORT, error=err("ImportError", "import of 'os' is not allowed here", 4))
    )
    assert (d.verdict, d.check) == ("CE", "compile")
    assert "'os'" in d.message and "line 4" in d.message and "allowed: NumPy" in d.message


def test_hidden_case_ce_details_are_dropped():
    d = run(outcome(status=child.STATUS_BAD_SIGNATURE, detail="0.123456 leaked"), show=False)
    assert d.verdict == "CE" and "0.123456" not in d.message


def test_load_problem_is_none_for_a_normal_run():
    assert load_problem(ok_outcome(EXPECTED), CTX) is None
    assert limit_problem(ok_outcome(EXPECTED), CTX, True) is None


def test_ce_is_decided_before_limits():
    d = run(outcome(status=child.STATUS_MISSING_FUNCTION, cpu_s=9.0))
    assert d.verdict == "CE"


def test_decide_never_mutates_the_expected_array():
    before = EXPECTED.copy()
    got = EXPECTED + 1.0
    run(ok_outcome(got))
    assert np.array_equal(EXPECTED, before)


def test_every_check_name_is_known_to_the_verdict_module():
    produced = {
        run(o).check
        for o in (
            ok_outcome(EXPECTED.copy()),
            ok_outcome(EXPECTED + 1),
            ok_outcome(EXPECTED * np.nan),
            outcome(value=ReturnedValue(type="list")),
            outcome(value=returned(None, dtype="float32", shape=(1, 3, 4))),
            outcome(value=returned(None, shape=(3, 4))),
            outcome(status="no_result", exit_code=0),
            outcome(status=child.STATUS_MISSING_FUNCTION),
            ok_outcome(EXPECTED.copy(), cpu_s=5.0),
        )
    }
    assert produced == set(CHECKS)


@pytest.mark.parametrize(
    "kind, show, phrase",
    [
        ("ndarray subclass numpy.matrix", True, "returned an ndarray subclass numpy.matrix;"),
        ("int", False, "returned an int;"),
        ("list", False, "returned a list;"),
        ("0-d array", True, "returned a 0-d array;"),
        ("solution.Wrapper", True, "returned an object of class solution.Wrapper;"),
        ("solution.Wrapper", False, "returned an object of a class defined in your code"),
        ("NumPy scalar float64", False, "returned a NumPy scalar float64;"),
    ],
)
def test_what_was_returned_is_named_with_its_article(kind, show, phrase):
    d = run(outcome(value=returned(type_=kind, dtype=None, shape=None)), show)
    assert (d.verdict, d.check) == ("WA", "type") and phrase in d.message
    assert "a an " not in d.message and "a ndarray" not in d.message


# --- the same decisions on every bundle's own output (its shape, its axis names) -----------------------


def test_every_bundles_sample_output_is_decided_by_its_checks(any_bundle):
    from grader.judging.case_steps import run_context as context_of
    from grader.judging.timing import effective_limits

    spec = any_bundle.spec
    ctx = context_of(spec, effective_limits(spec, None))
    expected = any_bundle.load_selection("sample")[0].expected
    rtol, atol = spec.comparison.rtol, spec.comparison.atol

    def decided(value: ReturnedValue) -> Decision:
        d = decide(outcome(value=value), expected, ctx, rtol, atol, True)
        assert d.verdict in VERDICTS and d.check in CHECKS
        return d

    assert (decided(returned(expected.copy())).verdict, decided(returned(expected.copy())).check) == ("AC", "passed")
    off = decided(returned(expected + 1.0))
    assert (off.verdict, off.check) == ("WA", "tolerance")
    assert decided(returned(None, dtype="float32", shape=expected.shape)).check == "dtype"
    wider = (*expected.shape[:-1], expected.shape[-1] + 1)
    d = decided(returned(None, shape=wider))
    assert (d.verdict, d.check) == ("WA", "shape") and str(wider) in d.message and str(expected.shape) in d.message
    if expected.ndim > 1:  # a missing leading axis is named (its axis name, its dimension)
        d = decided(returned(None, shape=expected.shape[1:]))
        assert d.check == "shape" and str(spec.output_shape[0]) in d.message
    none = decided(ReturnedValue(type="NoneType", dtype=None, shape=None, array=None))
    assert none.verdict == "WA" and none.check == "type"
