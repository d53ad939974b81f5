"""What feedback on a hidden test may carry: the narrow channel (docs/threat-model.md).

A submission sees its own inputs and chooses everything it does with them: the
values it returns, the line it raises at, the exception class, the signal it
dies of, how long it runs and how much memory it takes. Whatever of that a
report repeats exactly for a hidden test is a channel out of the hidden data
(returning zeros except one element recovered expected values through
`max_abs_error`; raising at a line computed from x recovered x itself). So a
hidden test's report keeps only coarse, useful quantities:

* error sizes as an order of magnitude: the power of ten at or above the value
  (`order_of_magnitude`), exponents clamped to [-16, 16], plus 0 and infinity;
* no position (index, line number, exit status, byte count) the submission can
  choose; whether all values or only some are off, and along which axes the
  error is confined (not where);
* exception classes from a short list of built-ins (`HIDDEN_EXCEPTIONS`),
  crash signals from a short list (`HIDDEN_SIGNALS`), anything else unnamed;
* CPU time and memory rounded up to a 1-2-5 series (`round_up_125`).

`channel_bits()` counts the distinct reports a hidden test can produce under
these rules, which is the budget docs/threat-model.md states.
"""

from __future__ import annotations

import math

MIN_EXPONENT, MAX_EXPONENT = -16, 16

# Exceptions a learner meets in NumPy code; their names help and are few.
HIDDEN_EXCEPTIONS = (
    "ValueError",
    "IndexError",
    "TypeError",
    "KeyError",
    "AttributeError",
    "NameError",
    "ZeroDivisionError",
    "FloatingPointError",
    "OverflowError",
    "AssertionError",
    "RecursionError",
    "NotImplementedError",
    "UnboundLocalError",
    "RuntimeError",
    "MemoryError",
    "SystemExit",
)
HIDDEN_SIGNALS = ("SIGSEGV", "SIGABRT", "SIGBUS", "SIGFPE", "SIGILL", "SIGSYS")

_SERIES = (1, 2, 5)


def order_of_magnitude(x: float) -> float:
    """The power of ten at or above |x| (0 stays 0, infinity and NaN stay as they are)."""
    if not math.isfinite(x) or x == 0:
        return x if not math.isnan(x) else math.inf
    e = math.ceil(math.log10(abs(x)))
    if 10.0 ** (e - 1) >= abs(x):  # log10 rounding at exact powers of ten
        e -= 1
    return 10.0 ** min(max(e, MIN_EXPONENT), MAX_EXPONENT)


def round_up_125(x: float | None, smallest: float) -> float | None:
    """`x` rounded up to the next value of the series smallest * {1, 2, 5} * 10^k."""
    if x is None or not math.isfinite(x):
        return x
    value, k = smallest, 0
    while value < x and k < 60:
        k += 1
        value = smallest * _SERIES[k % 3] * 10 ** (k // 3)
    return float(f"{value:.6g}")


def hidden_time(seconds: float | None) -> float | None:
    return round_up_125(seconds, 0.01)


def hidden_memory(mib: float | None) -> float | None:
    return round_up_125(mib, 1.0)


def exception_name(name: str) -> str:
    return name if name in HIDDEN_EXCEPTIONS else "an exception"


def channel_bits(
    time_buckets: int = 12,
    memory_buckets: int = 12,
    shape_outcomes: int = 814,
    type_outcomes: int = 17,
    dtype_outcomes: int = 21,
) -> float:
    """log2 of the number of distinct reports one hidden test can produce (an upper bound).

    Counted per outcome kind: AC (absolute and relative error magnitudes), WA
    tolerance (two magnitudes, all/some values off, the confined axes: 2 scopes
    + 15 non-empty subsets of batches/tokens/heads/channels), WA finite (NaN,
    infinity, both), WA type/dtype/shape, RE (the named exceptions and signals,
    plus unnamed, a tampered channel, an exit), TLE, MLE, OLE (two ways each);
    times the time and memory buckets."""
    magnitudes = (MAX_EXPONENT - MIN_EXPONENT + 1) + 2  # powers of ten, 0, infinity
    outcomes = (
        magnitudes**2  # AC
        + magnitudes**2 * 2 * 17  # WA tolerance
        + 3
        + type_outcomes
        + dtype_outcomes
        + shape_outcomes
        + len(HIDDEN_EXCEPTIONS)
        + len(HIDDEN_SIGNALS)
        + 4  # RE
        + 6
    )  # TLE, MLE, OLE
    return math.log2(outcomes * time_buckets * memory_buckets)
