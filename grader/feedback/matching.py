"""Comparing a submission's array with a catalogued mistake's: the grading comparison, the
match tolerance (a reproduction of the mistake's values), and the error-size rule of a
"rounding" mistake (float32 arithmetic)."""

from __future__ import annotations

import numpy as np

from ..problem.comparison import within_tolerance

# Learner-style files of each mistake agree with reference/variants.py to
# 4e-14 (scripts/bench_diagnose.py measures it); the mistake closest to the
# correct function is 1e-5 away and two mistakes are at least 2e-4 apart (measured
# on the ViT Encoder Block bundle, the repository's root). So the
# match tolerance is the grading tolerance itself, never below 1e-9 (stored
# sample outputs carry 5e-11 relative rounding): far from both.
MATCH_FACTOR = 1.0
MATCH_FLOOR = 1e-9
# "rounding" mistakes: the submission's error must be within this factor of
# the mistake's own error (float32 rounding differs between implementations).
ROUNDING_FACTOR = 10.0


def passes(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> bool:
    """The grading comparison: the same shape, finite and |got - expected| <= atol + rtol*|expected|
    everywhere."""
    return got.shape == expected.shape and bool(np.all(within_tolerance(got, expected, rtol, atol)))


def reproduces(got: np.ndarray, mistake: np.ndarray, rtol: float, atol: float) -> bool:
    """Same NaN and +-inf positions, finite values within the match tolerance."""
    if got.shape != mistake.shape:
        return False
    if not (
        np.array_equal(np.isnan(got), np.isnan(mistake))
        and np.array_equal(np.isposinf(got), np.isposinf(mistake))
        and np.array_equal(np.isneginf(got), np.isneginf(mistake))
    ):
        return False
    fin = np.isfinite(got)
    r, a = max(MATCH_FACTOR * rtol, MATCH_FLOOR), max(MATCH_FACTOR * atol, MATCH_FLOOR)
    return bool(np.all(within_tolerance(got[fin], mistake[fin], r, a)))


def _spread(a: np.ndarray, b: np.ndarray) -> float:
    """The largest relative difference; infinite between arrays of different shapes."""
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b) / (1.0 + np.abs(b)))) if a.size else 0.0


def rounding_like(got: np.ndarray, expected: np.ndarray, mistake: np.ndarray) -> bool:
    """The submission's error has the size of the mistake's own error (and sits as close to it)."""
    if not (np.isfinite(got).all() and np.isfinite(mistake).all()):
        return False
    own = _spread(mistake, expected)
    if own == 0.0:
        return False
    mine = _spread(got, expected)
    return own / ROUNDING_FACTOR <= mine <= own * ROUNDING_FACTOR and _spread(got, mistake) <= own * ROUNDING_FACTOR
