"""The namespaces machine-independent code is written against: NumPy's names, fixed arithmetic.

Code written against a small NumPy-like namespace `xp` runs on NumPy itself
and on the arrays of portable_array.py: `xp.asarray`, `xp.sqrt`, `xp.exp`,
`xp.tanh`, `xp.erf`, `xp.maximum`, `xp.stack`, `xp.concatenate`, `xp.pi`,
with the arrays' own operators and methods. `DOUBLE_DOUBLE` computes in
about 106 bits (the expected outputs); `rounded(float64)` and
`rounded(float32)` compute as a float64 or float32 program would, in a fixed
order, with exp, tanh and erf evaluated in double-double and rounded once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import double_double as dd
from .portable_array import DoubleDoubleArray, RoundedArray, as_double_double, as_rounded


@dataclass(frozen=True)
class Arithmetic:
    """The namespace a computation is written against (see the module docstring)."""

    name: str
    asarray: Callable[..., Any]
    sqrt: Callable[[Any], Any]
    exp: Callable[[Any], Any]
    tanh: Callable[[Any], Any]
    erf: Callable[[Any], Any]
    pi: Any

    def maximum(self, a: Any, b: Any) -> Any:
        a, b = self.asarray(a), self.asarray(b)
        diff = a - b
        take_a = np.isnan(a.parts[0]) | ~(diff.parts[0] < 0)
        shape = np.broadcast_shapes(a.shape, b.shape)
        return a._new(
            [
                np.where(take_a, np.broadcast_to(pa, shape), np.broadcast_to(pb, shape))
                for pa, pb in zip(a.parts, b.parts)
            ]
        )

    def stack(self, arrays: Sequence[Any], axis: int = 0) -> Any:
        items = [self.asarray(a) for a in arrays]
        return items[0]._new([np.stack([it.parts[i] for it in items], axis=axis) for i in range(len(items[0].parts))])

    def concatenate(self, arrays: Sequence[Any], axis: int = 0) -> Any:
        items = [self.asarray(a) for a in arrays]
        return items[0]._new(
            [np.concatenate([it.parts[i] for it in items], axis=axis) for i in range(len(items[0].parts))]
        )


# --- double-double ------------------------------------------------------------------------


def _dd_unary(fn: Callable[[dd.Pair], dd.Pair]) -> Callable[[Any], DoubleDoubleArray]:
    def apply(value: Any) -> DoubleDoubleArray:
        with np.errstate(all="ignore"):
            return DoubleDoubleArray(*fn(as_double_double(value).pair()))

    return apply


DOUBLE_DOUBLE = Arithmetic(
    name="double-double",
    asarray=as_double_double,
    sqrt=_dd_unary(dd.sqrt),
    exp=_dd_unary(dd.exp),
    tanh=_dd_unary(dd.tanh),
    erf=_dd_unary(dd.erf),
    pi=DoubleDoubleArray(np.float64(dd.PI[0]), np.float64(dd.PI[1])),
)


# --- float64 / float32 in a fixed order ------------------------------------------------------


def _rounded_unary(dtype: type, fn: Callable[[dd.Pair], dd.Pair]) -> Callable[[Any], RoundedArray]:
    """fn evaluated in double-double on the exact value, then rounded to `dtype`."""

    def apply(value: Any) -> RoundedArray:
        a = as_rounded(value, dtype).value.astype(np.float64)
        with np.errstate(all="ignore"):
            hi, _ = fn((a, np.zeros_like(a)))
            return RoundedArray(hi.astype(dtype), dtype)

    return apply


def _rounded_arithmetic(own: type) -> Arithmetic:
    def asarray(value: Any, dtype: Any = None) -> RoundedArray:  # dtype: NumPy's signature, ignored
        return as_rounded(value, own)

    def sqrt(value: Any) -> RoundedArray:
        return RoundedArray(np.sqrt(asarray(value).value), own)

    return Arithmetic(
        name=np.dtype(own).name,
        asarray=asarray,
        sqrt=sqrt,
        exp=_rounded_unary(own, dd.exp),
        tanh=_rounded_unary(own, dd.tanh),
        erf=_rounded_unary(own, dd.erf),
        pi=RoundedArray(np.float64(math.pi), own),
    )


ROUNDED = {np.dtype(t): _rounded_arithmetic(t) for t in (np.float64, np.float32)}


def rounded(dtype: Any) -> Arithmetic:
    """Plain `dtype` (float64 or float32) arithmetic in a fixed order."""
    return ROUNDED[np.dtype(dtype)]
