"""Double-double arithmetic on NumPy arrays, from IEEE 754 operations only.

A value is a pair (hi, lo) of float64 arrays whose exact sum is the number,
with |lo| <= ulp(hi)/2: about 106 significant bits. Every function here uses
only float64 +, -, *, / and sqrt, each applied elementwise by a NumPy ufunc,
plus comparisons, rounding to an integer and the bits of an exponent. IEEE 754
defines each of those results exactly, so the same inputs give the same bits
on every conforming CPU, whatever its vendor, vector width or BLAS: no libm,
no BLAS, no fused multiply-add, no reduction whose order NumPy chooses.

The transcendental functions are evaluated in software to a fixed number of
terms (Taylor series after an exact argument reduction), accurate to about
2^-100 relative (tanh and erf: absolute near zero, relative elsewhere).
Non-finite results (overflow, 0/0) come out as the plain float64 result of
the same operation, with lo = 0. Algorithms: Dekker (1971) and Knuth's
error-free transformations; Hida, Li and Bailey's QD library for division,
square root and the order of renormalisation.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

Pair = tuple[np.ndarray, np.ndarray]

_SPLITTER = 134217729.0  # 2^27 + 1: Dekker's split into two 26-bit halves
_SPLIT_LIMIT = 2.0**995  # above this the split's product would overflow


def from_fraction(value: Fraction) -> tuple[float, float]:
    """The double-double nearest an exact rational (each part correctly rounded)."""
    hi = float(value)  # CPython's int/int division is correctly rounded
    return hi, float(value - Fraction(hi))


def _constant(digits: str) -> tuple[float, float]:
    return from_fraction(Fraction(digits))


PI = _constant("3.14159265358979323846264338327950288419716939937510582097494")
TWO_OVER_SQRT_PI = _constant("1.12837916709551257389615890312154517168810125865799771368817")
_LN2 = Fraction("0.693147180559945309417232121458176568075500134360255254120680")


def _three_parts(value: Fraction) -> tuple[float, float, float]:
    first = float(value)
    second = float(value - Fraction(first))
    return first, second, float(value - Fraction(first) - Fraction(second))


_LN2_PARTS = _three_parts(_LN2)  # k * ln 2 to ~160 bits for |k| < 2^11
_INV_LN2 = float(1 / _LN2)
_REDUCE_BITS = 10  # exp's argument is divided by 2^10 before the series
_EXP_TERMS = tuple(
    from_fraction(Fraction(1, _factorial)) for _factorial in (1, 2, 6, 24, 120, 720, 5040, 40320, 362880, 3628800)
)  # 1/n!, n = 1..10
_ERF_TERMS = 320  # series terms for erf on |x| <= _ERF_LIMIT
_ERF_LIMIT = 9.0  # beyond it 1 - |erf(x)| < 4.2e-37, below the precision


# --- error-free transformations -------------------------------------------------------


def two_sum(a: np.ndarray, b: np.ndarray) -> Pair:
    """s + e == a + b exactly, s = fl(a + b) (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def quick_two_sum(a: np.ndarray, b: np.ndarray) -> Pair:
    """s + e == a + b exactly, assuming |a| >= |b| or a == 0 (Dekker)."""
    s = a + b
    return s, b - (s - a)


def split(a: np.ndarray) -> Pair:
    """a == hi + lo with hi and lo of at most 26 significant bits each (Dekker)."""
    big = np.abs(a) > _SPLIT_LIMIT
    scaled = np.where(big, a * 2.0**-28, a)
    c = _SPLITTER * scaled
    hi = c - (c - scaled)
    lo = scaled - hi
    return np.where(big, hi * 2.0**28, hi), np.where(big, lo * 2.0**28, lo)


def two_prod(a: np.ndarray, b: np.ndarray, sa: Pair | None = None, sb: Pair | None = None) -> Pair:
    """p + e == a * b exactly (no underflow), p = fl(a * b); splits may be passed in."""
    ah, al = split(a) if sa is None else sa
    bh, bl = split(b) if sb is None else sb
    p = a * b
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


# --- arithmetic ------------------------------------------------------------------------


def finish(hi: np.ndarray, lo: np.ndarray, plain: np.ndarray) -> Pair:
    """Where the result is not finite, the plain float64 result with lo = 0."""
    bad = ~(np.isfinite(hi) & np.isfinite(lo))
    if not bad.any():
        return hi, lo
    return np.where(bad, plain, hi), np.where(bad, 0.0, lo)


def add(x: Pair, y: Pair) -> Pair:
    s, e = two_sum(x[0], y[0])
    t, f = two_sum(x[1], y[1])
    s, e = quick_two_sum(s, e + t)
    hi, lo = quick_two_sum(s, e + f)
    return finish(hi, lo, x[0] + y[0])


def neg(x: Pair) -> Pair:
    return -x[0], -x[1]


def sub(x: Pair, y: Pair) -> Pair:
    return add(x, neg(y))


def mul(x: Pair, y: Pair) -> Pair:
    p, e = two_prod(x[0], y[0])
    hi, lo = quick_two_sum(p, e + (x[0] * y[1] + x[1] * y[0]))
    return finish(hi, lo, x[0] * y[0])


def mul_double(x: Pair, b: np.ndarray) -> Pair:
    """x * b for a float64 b (cheaper than mul)."""
    p, e = two_prod(x[0], b)
    hi, lo = quick_two_sum(p, e + x[1] * b)
    return finish(hi, lo, x[0] * b)


def div(x: Pair, y: Pair) -> Pair:
    """x / y by long division: three quotient digits, renormalised (QD's accurate division)."""
    q1 = x[0] / y[0]
    r = sub(x, mul_double(y, q1))
    q2 = r[0] / y[0]
    r = sub(r, mul_double(y, q2))
    q3 = r[0] / y[0]
    q1, q2 = quick_two_sum(q1, q2)
    hi, lo = add((q1, q2), (q3, np.zeros_like(q3)))
    return finish(hi, lo, x[0] / y[0])


def sqrt(x: Pair) -> Pair:
    """Square root of x >= 0: the float64 root corrected by one Newton step."""
    with np.errstate(invalid="ignore"):
        r = np.sqrt(x[0])
    safe = np.where(r > 0, r, 1.0)
    p, e = two_prod(safe, safe)
    t = ((x[0] - p) - e + x[1]) / (2.0 * safe)
    hi, lo = quick_two_sum(safe, t)
    zero = ~(r > 0)
    hi, lo = np.where(zero, r, hi), np.where(zero, 0.0, lo)
    return finish(hi, lo, r)


def scale_pow2(x: Pair, k: np.ndarray) -> Pair:
    """x * 2^k for integer-valued k, exact while the result is normal."""
    first = np.clip(k, -1000, 1000)
    rest = k - first
    return tuple(part * _pow2(first) * _pow2(rest) for part in x)


def _pow2(k: np.ndarray) -> np.ndarray:
    """2^k as float64 for integer-valued k in [-1022, 1023], from the exponent bits."""
    biased = (np.clip(k, -1022, 1023).astype(np.int64) + 1023) << 52
    out: np.ndarray = biased.view(np.float64)
    return out


# --- exp and friends -------------------------------------------------------------------


def _expm1_reduced(r: Pair) -> Pair:
    """expm1(r) for |r| <= ln(2)/2: the series on r/2^10, then expm1(2t) = expm1(t)(2 + expm1(t))."""
    t = (r[0] * 2.0**-_REDUCE_BITS, r[1] * 2.0**-_REDUCE_BITS)
    acc = _full(t[0], _EXP_TERMS[-1])
    for coefficient in reversed(_EXP_TERMS[:-1]):
        acc = add(mul(acc, t), _full(t[0], coefficient))
    acc = mul(acc, t)
    for _ in range(_REDUCE_BITS):
        acc = mul(acc, add(acc, _full(t[0], (2.0, 0.0))))
    return acc


def _full(like: np.ndarray, value: tuple[float, float]) -> Pair:
    return np.full_like(like, value[0]), np.full_like(like, value[1])


def _reduce(x: Pair) -> tuple[np.ndarray, Pair]:
    """k and r with x = k ln 2 + r, |r| <= ln(2)/2 (ln 2 in three parts, each product exact or tiny)."""
    k = np.rint(x[0] * _INV_LN2)
    r = x
    for part in _LN2_PARTS:
        p, e = two_prod(k, np.full_like(k, part))
        r = sub(r, (p, e))
    return k, r


def _exp_parts(x: Pair) -> tuple[np.ndarray, Pair, np.ndarray, np.ndarray]:
    """(k, expm1 of the reduced argument, overflow mask, underflow mask); k = 0 where masked."""
    with np.errstate(all="ignore"):
        over = x[0] > 709.8
        under = x[0] < -745.2
        usable = ~(over | under | np.isnan(x[0]))
        xs = (np.where(usable, x[0], 0.0), np.where(usable, x[1], 0.0))
        k, r = _reduce(xs)
        return k, _expm1_reduced(r), over, under


def exp(x: Pair) -> Pair:
    with np.errstate(all="ignore"):
        k, m, over, under = _exp_parts(x)
        one_plus = add(_full(m[0], (1.0, 0.0)), m)
        hi, lo = scale_pow2(one_plus, k)
        hi = np.where(over, np.inf, np.where(under, 0.0, np.where(np.isnan(x[0]), np.nan, hi)))
        lo = np.where(np.isfinite(hi) & (hi != 0), lo, 0.0)
        return hi, lo


def expm1(x: Pair) -> Pair:
    with np.errstate(all="ignore"):
        k, m, over, under = _exp_parts(x)
        scaled = scale_pow2(add(_full(m[0], (1.0, 0.0)), m), k)
        hi, lo = np.where(k == 0, m[0], 0.0), np.where(k == 0, m[1], 0.0)
        other = sub(scaled, _full(m[0], (1.0, 0.0)))
        hi, lo = np.where(k == 0, hi, other[0]), np.where(k == 0, lo, other[1])
        hi = np.where(over, np.inf, np.where(under, -1.0, np.where(np.isnan(x[0]), np.nan, hi)))
        lo = np.where(np.isfinite(hi) & ~under, lo, 0.0)
        return hi, lo


def tanh(x: Pair) -> Pair:
    """tanh(|x|) = -expm1(-2|x|) / (2 + expm1(-2|x|)), with the sign of x."""
    with np.errstate(all="ignore"):
        sign = np.where(x[0] < 0, -1.0, 1.0)
        a = (x[0] * sign, x[1] * sign)
        m = expm1((-2.0 * a[0], -2.0 * a[1]))
        t = div(neg(m), add(_full(m[0], (2.0, 0.0)), m))
        return t[0] * sign, t[1] * sign


def erf(x: Pair) -> Pair:
    """erf(x) = 2/sqrt(pi) e^(-x^2) sum_n 2^n x^(2n+1) / (1*3*...*(2n+1)) (all terms positive).

    Summed to a fixed _ERF_TERMS terms for |x| <= _ERF_LIMIT; +-1 beyond.
    """
    with np.errstate(all="ignore"):
        sign = np.where(x[0] < 0, -1.0, 1.0)
        inside = np.abs(x[0]) <= _ERF_LIMIT
        a = (np.where(inside, x[0] * sign, 0.0), np.where(inside, x[1] * sign, 0.0))
        a2 = mul(a, a)
        two_a2 = (2.0 * a2[0], 2.0 * a2[1])
        term, total = a, a
        for n in range(1, _ERF_TERMS):
            odd = np.full_like(a[0], 2.0 * n + 1.0)
            term = div(mul(term, two_a2), (odd, np.zeros_like(odd)))
            total = add(total, term)
        value = mul(mul(total, exp(neg(a2))), _full(a[0], TWO_OVER_SQRT_PI))
        hi = np.where(inside, value[0], 1.0) * sign
        lo = np.where(inside, value[1], 0.0) * sign
        return np.where(np.isnan(x[0]), np.nan, hi), np.where(np.isnan(x[0]), 0.0, lo)
