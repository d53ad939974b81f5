"""grader/problem/comparison.py: the one tolerance test, and nobody else writing it out.

Every comparison the grader makes (checker, diagnosis, fingerprints, fitted
constants) goes through `within_tolerance` or `tolerance`; the last test reads
grader/ and fails on a copy of the formula anywhere else, except in the
programs that run on a platform without the grader.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import numpy as np
import pytest

from grader.judging.values import compare
from grader.problem.comparison import tolerance, within_tolerance

GRADER = Path(__file__).resolve().parents[1] / "grader"
RTOL = ATOL = 5e-8
# Programs that run on a platform with the standard library (and NumPy) only: they cannot
# import grader/, so they carry the rule themselves (tests/test_kattis.py and tests/test_otter.py
# check that they judge as the grader does).
PLATFORM_PROGRAMS = {"platforms/programs/kattis_output_validator.py"}


def test_the_bound_is_atol_plus_rtol_times_expected():
    e = np.array([0.0, 1.0, -2.0, 1e300])
    assert np.array_equal(tolerance(e, 1e-3, 1e-6), 1e-6 + 1e-3 * np.abs(e))


def test_the_bound_itself_is_inside():
    e = np.array([1.0, -3.0, 0.0])
    bound = tolerance(e, 0.5, 0.25)  # exact in binary: 0.75, 1.75, 0.25
    assert within_tolerance(e + bound, e, 0.5, 0.25).all()
    assert within_tolerance(e - bound, e, 0.5, 0.25).all()
    assert not within_tolerance(np.nextafter(e + bound, np.inf), e, 0.5, 0.25).any()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_infinity_never_match(bad):
    e = np.array([1.0, 2.0])
    got = np.array([bad, 2.0])
    assert within_tolerance(got, e, RTOL, ATOL).tolist() == [False, True]
    assert not within_tolerance(got, got, RTOL, ATOL)[0]  # NaN - NaN and inf - inf are NaN


def test_an_overflowing_difference_is_outside_without_a_warning():
    with np.errstate(all="raise"):
        assert not within_tolerance(np.array([1e308]), np.array([-1e308]), RTOL, ATOL)[0]


def test_the_checker_counts_exactly_the_values_outside():
    rng = np.random.default_rng(28)
    for _ in range(50):
        expected = rng.standard_normal((2, 3, 4)) * 10.0 ** rng.integers(-3, 4)
        got = expected + rng.standard_normal(expected.shape) * tolerance(expected, RTOL, ATOL) * rng.uniform(0, 2)
        outside = int(np.count_nonzero(~within_tolerance(got, expected, RTOL, ATOL)))
        d = compare(got, expected, RTOL, ATOL, True)
        assert (d.verdict == "AC") == (outside == 0)
        if outside:
            assert d.error.outside == outside


def _code_without_strings(text: str) -> str:
    """The source with its string literals and comments removed (docstrings may quote the rule)."""
    kept = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type not in (tokenize.STRING, tokenize.COMMENT, getattr(tokenize, "FSTRING_MIDDLE", -1)):
            kept.append(tok.string)
    return " ".join(kept)


# `atol + rtol * abs(...)`, whatever the names (`a + r * np.abs(m)`): a sum of a name and a product
# of a name with an absolute value.
_FORMULA = re.compile(r"\b\w+\s*\+\s*\w+\s*\*\s*(?:np\s*\.\s*)?abs\s*\(")


def test_no_other_module_writes_the_tolerance_test_out():
    copies = []
    for path in sorted(GRADER.rglob("*.py")):
        rel = path.relative_to(GRADER).as_posix()
        if rel in PLATFORM_PROGRAMS or rel == "problem/comparison.py":
            continue
        if _FORMULA.search(_code_without_strings(path.read_text(encoding="utf-8"))):
            copies.append(rel)
    assert copies == [], f"the tolerance test written out again (use grader/problem/comparison.py): {copies}"


def test_the_copy_finder_finds_a_copy():
    """Guard against a check that cannot fail."""
    assert _FORMULA.search(_code_without_strings("ok = np.abs(g - e) <= atol + rtol * np.abs(e)\n"))
    assert _FORMULA.search(_code_without_strings("ok = abs(g - e) <= a + r * abs(e)\n"))
    assert not _FORMULA.search(_code_without_strings('"""|got - expected| <= atol + rtol * abs(e)"""\n'))
