"""An independent oracle: the encoder block, exp, tanh and erf in Python's decimal at 60 digits.

Written from the statement, not from reference/solution.py or double_double.py:
plain loops over tokens and heads, Decimal's own correctly rounded exp and sqrt,
pi from Machin's formula. Slow (pure Python), so tests use it on small cases.
The statement's constants (eps = 1e-6, 0.044715) are taken as the float64
numbers a float64 program uses; pi and sqrt(2/pi) are the real ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal, localcontext

import numpy as np

DIGITS = 60
Matrix = list[list[Decimal]]

ZERO = Decimal(0)  # the start of every sum: 0 + x and Decimal(0) + x are the same operation


def dec(v: float) -> Decimal:
    return Decimal(float(v))  # exact: every float64 is a finite decimal


def pi() -> Decimal:
    """Machin: pi = 16 atan(1/5) - 4 atan(1/239)."""

    def atan_inv(n: int) -> Decimal:
        x = Decimal(1) / n
        total = term = x
        k = 1
        while abs(term) > Decimal(10) ** -(DIGITS + 10):
            term *= -x * x
            k += 2
            total += term / k
        return total

    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        return 16 * atan_inv(5) - 4 * atan_inv(239)


def tanh(u: Decimal) -> Decimal:
    e = (-2 * abs(u)).exp()
    t = (1 - e) / (1 + e)
    return t if u >= 0 else -t


def erf(x: Decimal) -> Decimal:
    """Maclaurin series, summed at extra precision (|x| <= 4 here)."""
    with localcontext() as ctx:
        ctx.prec = DIGITS + 20
        total = term = x
        n = 0
        while abs(term) > Decimal(10) ** -(DIGITS + 15):
            n += 1
            term *= -x * x / n
            total += term / (2 * n + 1)
        return 2 / pi().sqrt() * total


def _layer_norm(rows: Matrix) -> Matrix:
    out = []
    for row in rows:
        mu = sum(row, ZERO) / len(row)
        centred = [v - mu for v in row]
        root = (sum((c * c for c in centred), ZERO) / len(row) + dec(1e-6)).sqrt()
        out.append([c / root for c in centred])
    return out


def _matmul(a: Matrix, b: Matrix) -> Matrix:
    return [[sum((a[i][k] * b[k][j] for k in range(len(b))), ZERO) for j in range(len(b[0]))] for i in range(len(a))]


def _attention(h: Matrix, heads: int, wq: Matrix, wk: Matrix, wv: Matrix) -> Matrix:
    q, k, v = _matmul(h, wq), _matmul(h, wk), _matmul(h, wv)
    n, d = len(h), len(h[0])
    dh = d // heads
    out = [[Decimal(0)] * d for _ in range(n)]
    for head in range(heads):
        cols = range(head * dh, (head + 1) * dh)
        for i in range(n):
            scores = [sum(q[i][c] * k[j][c] for c in cols) / Decimal(dh).sqrt() for j in range(n)]
            top = max(scores)
            weights = [(s - top).exp() for s in scores]
            total = sum(weights, ZERO)
            for c in cols:
                out[i][c] = sum((weights[j] / total * v[j][c] for j in range(n)), ZERO)
    return out


def encoder_block(x: np.ndarray, num_heads: int, *weights: np.ndarray) -> np.ndarray:
    """The pre-norm block at DIGITS digits, each output rounded once to float64."""
    with localcontext() as ctx:
        ctx.prec = DIGITS
        wq, wk, wv, wo, w1, w2 = ([[dec(v) for v in row] for row in w] for w in weights)
        k = (2 / pi()).sqrt()
        out = []
        for seq in x:
            tokens = [[dec(v) for v in row] for row in seq]
            att = _matmul(_attention(_layer_norm(tokens), num_heads, wq, wk, wv), wo)
            y = [[a + b for a, b in zip(r, s)] for r, s in zip(tokens, att)]
            u = _matmul(_layer_norm(y), w1)
            g = [[Decimal("0.5") * t * (1 + tanh(k * (t + dec(0.044715) * t * t * t))) for t in row] for row in u]
            z = _matmul(g, w2)
            out.append([[float(a + b) for a, b in zip(r, s)] for r, s in zip(y, z)])
        return np.array(out, dtype=np.float64)


def rounded(values: Sequence[Decimal]) -> np.ndarray:
    return np.array([float(v) for v in values], dtype=np.float64)
