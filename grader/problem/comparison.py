"""problem.yaml's comparison rule as arithmetic: |got - expected| <= atol + rtol * |expected|.

The one place the tolerance test is written. The checker (a case's verdict),
the diagnosis (which values are off), the fingerprints (does a mistake pass,
does a submission reproduce it) and the fitted constants (how many tolerances
apart two outputs are) all call these functions, so a value inside the
tolerance for one of them is inside it for all: the bound is always computed
as `atol + rtol * |expected|`, in that order, in float64 (or the arrays' own
dtype), and compared with `<=`.

NaN never matches: any comparison with NaN is false, so a NaN in `got` or a
difference inf - inf is outside. An infinite `got` is outside any finite
bound; expected outputs are finite (problem/validate.py refuses others), so
the bound always is. It lives in problem/, the lowest layer, because
judging/ and feedback/ both import it (spec.py parses rtol and atol).
"""

from __future__ import annotations

import numpy as np


def tolerance(expected: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """The largest |got - expected| allowed at each element: atol + rtol * |expected|."""
    allowed: np.ndarray = atol + rtol * np.abs(expected)
    return allowed


def within_tolerance(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """True where got is within the tolerance of expected; False wherever the difference is NaN.

    Overflow and NaN warnings are silenced: an overflowing difference is +inf, which
    is simply outside, and NaN is outside by the comparison itself."""
    with np.errstate(invalid="ignore", over="ignore"):
        inside: np.ndarray = np.abs(got - expected) <= tolerance(expected, rtol, atol)
        return inside
