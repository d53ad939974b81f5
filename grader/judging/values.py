"""The last checks of one case (judging/checker.py runs them last): a returned float64 array
of the expected shape against the expected output. Finite values first, then the tolerance
|got - expected| <= atol + rtol * |expected| for every element; the numbers a wrong answer's
message gives (a hidden case's only as orders of magnitude: judging/hidden.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..problem.comparison import within_tolerance
from .hidden import order_of_magnitude
from .verdict import ErrorSummary


@dataclass(frozen=True)
class Decision:
    verdict: str
    check: str
    message: str
    error: ErrorSummary | None = None


def error_summary(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float, show_values: bool) -> ErrorSummary:
    """Largest absolute and relative errors, their positions, and the count outside tolerance.

    Hidden cases (show_values False) get the coarse summary of judging/hidden.py."""
    exact = _exact_summary(got, expected, rtol, atol, show_values)
    return exact if show_values else hidden_summary(exact)


def hidden_summary(e: ErrorSummary) -> ErrorSummary:
    """Magnitudes only, no positions; `outside` is either all the values or 1 ("some")."""
    return replace(
        e,
        max_abs_error=order_of_magnitude(e.max_abs_error),
        max_abs_at=(),
        max_rel_error=order_of_magnitude(e.max_rel_error),
        max_rel_at=(),
        outside=e.total if e.outside == e.total else min(e.outside, 1),
    )


def _exact_summary(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float, show_values: bool) -> ErrorSummary:
    diff = np.abs(got - expected)
    outside = int(np.count_nonzero(~within_tolerance(got, expected, rtol, atol)))
    abs_at = tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), diff.shape))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(expected != 0, diff / np.abs(expected), np.where(diff == 0, 0.0, np.inf))
    rel_at = tuple(int(i) for i in np.unravel_index(int(np.argmax(rel)), rel.shape))
    return ErrorSummary(
        max_abs_error=float(diff[abs_at]),
        max_abs_at=abs_at,
        max_rel_error=float(rel[rel_at]),
        max_rel_at=rel_at,
        outside=outside,
        total=int(diff.size),
        expected_at_worst=float(expected[abs_at]) if show_values else None,
        received_at_worst=float(got[abs_at]) if show_values else None,
    )


def _size(x: float, exact: bool) -> str:
    if exact:
        return f"{x:.2g}"
    if x == 0 or not np.isfinite(x):
        return f"{x:g}"
    return f"of the order of {x:.0e}".replace("e-0", "e-").replace("e+0", "e+")


def _position(at: tuple[int, ...], axes: tuple[str, ...]) -> str:
    """'(batch 0, token 1, channel 5)' with the output's axis words, else the index tuple."""
    if len(axes) != len(at):
        return str(at)
    return "(" + ", ".join(f"{word} {i}" for word, i in zip(axes, at)) + ")"


def compare(
    got: np.ndarray, expected: np.ndarray, rtol: float, atol: float, show_values: bool, axes: tuple[str, ...] = ()
) -> Decision:
    """finite, then tolerance; the numbers of a WA message come from error_summary (positions
    named with `axes`, the output's axis words)."""
    finite = np.isfinite(got)
    if not finite.all():
        nan, inf = int(np.isnan(got).sum()), int(np.isinf(got).sum())
        if not show_values:  # counts and positions are the submission's to choose
            kinds = " and ".join(k for k, n in (("NaN", nan), ("infinite values", inf)) if n)
            return Decision(
                "WA", "finite", f"the result contains {kinds} (counts and positions are not shown for hidden cases)"
            )
        first = tuple(int(i) for i in np.argwhere(~finite)[0])
        return Decision(
            "WA",
            "finite",
            f"the result contains {nan} NaN and {inf} infinite value(s), the first at {_position(first, axes)}",
        )
    err = error_summary(got, expected, rtol, atol, show_values)
    if err.outside == 0:
        return Decision(
            "AC",
            "passed",
            f"all {err.total} values within tolerance (largest absolute error {_size(err.max_abs_error, show_values)})",
            err,
        )
    if not show_values:
        share = "every value is" if err.outside == err.total else "some values are"
        return Decision(
            "WA",
            "tolerance",
            f"{share} outside the tolerance |got - expected| <= {atol:g} + "
            f"{rtol:g}*|expected|. Largest absolute error {_size(err.max_abs_error, False)}, "
            f"largest relative error {_size(err.max_rel_error, False)} (orders of magnitude; "
            "counts and positions are not shown for hidden cases)",
            err,
        )
    msg = (
        f"{err.outside} of {err.total} values are outside the tolerance "
        f"|got - expected| <= {atol:g} + {rtol:g}*|expected|. Largest absolute error "
        f"{err.max_abs_error:.3g} at {_position(err.max_abs_at, axes)}; largest relative error "
        f"{err.max_rel_error:.3g} at {_position(err.max_rel_at, axes)}"
    )
    if show_values:
        msg += f". There: expected {err.expected_at_worst!r}, received {err.received_at_worst!r}"
    return Decision("WA", "tolerance", msg, err)
