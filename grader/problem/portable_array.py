"""Arrays whose every operation gives the same bits on every CPU.

NumPy's own matrix products go to a BLAS whose kernel, blocking and thread
count choose the order of summation; its exp and tanh have vector versions per
instruction set; np.longdouble's transcendentals use the x87 unit, whose
results differ between Intel and AMD. The arrays here avoid all three:

- elementwise +, -, *, / and sqrt are single IEEE 754 operations (NumPy's
  ufuncs, one rounding each, no fused multiply-add);
- matrix products and sums run over the contracted axis in index order, one
  vectorised step per index;
- exp, expm1, tanh and erf are evaluated in double-double software
  (double_double.py) and rounded to the array's precision.

Two array types share that structure: `DoubleDoubleArray`, about 106 bits,
for expected outputs (rounded once to float64 at the end), and
`RoundedArray`, plain float64 or float32 arithmetic in a fixed order, for
outputs that must behave like a float64 or float32 program (the stored
mistake outputs). The arrays offer NumPy's operators (+ - * / ** @,
indexing) and methods (sum, mean, var, max, reshape, transpose, swapaxes, T);
the functions (sqrt, exp, ...) come with the namespaces of
portable_arithmetic.py. Anything else (a NumPy function called on one of
these arrays, np.asarray of one) raises TypeError rather than silently
leaving the fixed arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from . import double_double as dd

Index = Any


class PortableArray:
    """Structure shared by both arithmetics; `parts` are float arrays of one shape."""

    __array_ufunc__ = None  # NumPy defers to our reflected operators, refuses its ufuncs

    parts: tuple[np.ndarray, ...]

    def _new(self, parts: Sequence[np.ndarray]) -> PortableArray:
        raise NotImplementedError

    def coerce(self, other: Any) -> PortableArray:
        raise NotImplementedError

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise TypeError(f"{type(self).__name__} does not convert implicitly: use to_numpy()")

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        raise TypeError(f"numpy.{func.__name__} is not defined on {type(self).__name__}: use the namespace")

    # --- structure (exact: no arithmetic) ---------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.parts[0].shape

    @property
    def ndim(self) -> int:
        return self.parts[0].ndim

    @property
    def size(self) -> int:
        return self.parts[0].size

    def __len__(self) -> int:
        return len(self.parts[0])

    def _map(self, fn: Callable[[np.ndarray], np.ndarray]) -> PortableArray:
        return self._new([fn(p) for p in self.parts])

    def __getitem__(self, index: Index) -> PortableArray:
        return self._map(lambda p: p[index])

    def reshape(self, *shape: Any) -> PortableArray:
        return self._map(lambda p: p.reshape(*shape))

    def transpose(self, *axes: Any) -> PortableArray:
        return self._map(lambda p: p.transpose(*axes))

    def swapaxes(self, a: int, b: int) -> PortableArray:
        return self._map(lambda p: p.swapaxes(a, b))

    @property
    def T(self) -> PortableArray:
        return self.transpose()

    # --- operators ---------------------------------------------------------------------
    def __add__(self, other: Any) -> PortableArray:
        return self.add(self.coerce(other))

    def __radd__(self, other: Any) -> PortableArray:
        return self.coerce(other).add(self)

    def __sub__(self, other: Any) -> PortableArray:
        return self.add(-self.coerce(other))

    def __rsub__(self, other: Any) -> PortableArray:
        return self.coerce(other).add(-self)

    def __mul__(self, other: Any) -> PortableArray:
        return self.mul(self.coerce(other))

    def __rmul__(self, other: Any) -> PortableArray:
        return self.coerce(other).mul(self)

    def __truediv__(self, other: Any) -> PortableArray:
        return self.div(self.coerce(other))

    def __rtruediv__(self, other: Any) -> PortableArray:
        return self.coerce(other).div(self)

    def __neg__(self) -> PortableArray:
        return self._map(np.negative)

    def __pow__(self, n: int) -> PortableArray:
        if not isinstance(n, int) or n < 1:
            raise TypeError("only positive integer powers are defined (repeated products, left to right)")
        out = self
        for _ in range(n - 1):
            out = out * self
        return out

    def __matmul__(self, other: Any) -> PortableArray:
        return self.matmul(self.coerce(other))

    def __rmatmul__(self, other: Any) -> PortableArray:
        return self.coerce(other).matmul(self)

    # --- reductions, in index order ----------------------------------------------------
    def sum(self, axis: int = -1, keepdims: bool = False) -> PortableArray:
        moved = self._map(lambda p: np.moveaxis(p, axis, 0))
        if moved.shape[0] == 0:
            total = moved._map(lambda p: np.zeros(p.shape[1:], p.dtype))
        else:
            total = moved[0]
            for i in range(1, moved.shape[0]):
                total = total.add(moved[i])
        return total._map(lambda p: np.expand_dims(p, axis)) if keepdims else total

    def mean(self, axis: int = -1, keepdims: bool = False) -> PortableArray:
        return self.sum(axis, keepdims) / self.shape[axis]

    def var(self, axis: int = -1, keepdims: bool = False, ddof: int = 0) -> PortableArray:
        centred = self - self.mean(axis, keepdims=True)
        return (centred * centred).sum(axis, keepdims) / (self.shape[axis] - ddof)

    def max(self, axis: int = -1, keepdims: bool = False) -> PortableArray:
        return self._new(_lexicographic_max(self.parts, axis, keepdims))

    # --- defined by each arithmetic ------------------------------------------------------
    def add(self, other: PortableArray) -> PortableArray:
        raise NotImplementedError

    def mul(self, other: PortableArray) -> PortableArray:
        raise NotImplementedError

    def div(self, other: PortableArray) -> PortableArray:
        raise NotImplementedError

    def matmul(self, other: PortableArray) -> PortableArray:
        raise NotImplementedError

    def to_numpy(self) -> np.ndarray:
        raise NotImplementedError


def _lexicographic_max(parts: Sequence[np.ndarray], axis: int, keepdims: bool) -> list[np.ndarray]:
    """Max of hi, then of lo among the positions attaining it (exact; NaN propagates)."""
    top = parts[0].max(axis=axis, keepdims=True)
    out = [top]
    for part in parts[1:]:
        with np.errstate(invalid="ignore"):
            candidates = np.where(parts[0] == top, part, -np.inf).max(axis=axis, keepdims=True)
        out.append(np.where(np.isfinite(top), candidates, 0.0))
    return out if keepdims else [np.squeeze(p, axis=axis) for p in out]


def _columns(a: np.ndarray, j: int) -> np.ndarray:
    return a[..., :, j : j + 1]


def _rows(b: np.ndarray, j: int) -> np.ndarray:
    return b[..., j : j + 1, :]


class DoubleDoubleArray(PortableArray):
    """hi + lo, about 106 bits; lo is None while the value is exactly a float64."""

    def __init__(self, hi: npt.ArrayLike, lo: npt.ArrayLike | None = None):
        self.hi = np.asarray(hi, dtype=np.float64)
        self.lo = None if lo is None else np.asarray(lo, dtype=np.float64)

    @property
    def parts(self) -> tuple[np.ndarray, ...]:  # type: ignore[override]  # read-only here: computed from the fields
        return (self.hi, self._lo())

    def _lo(self) -> np.ndarray:
        return np.zeros_like(self.hi) if self.lo is None else self.lo

    def _map(self, fn: Callable[[np.ndarray], np.ndarray]) -> PortableArray:
        return DoubleDoubleArray(fn(self.hi), None if self.lo is None else fn(self.lo))

    def _new(self, parts: Sequence[np.ndarray]) -> PortableArray:
        return DoubleDoubleArray(parts[0], parts[1])

    def pair(self) -> dd.Pair:
        return self.hi, self._lo()

    def coerce(self, other: Any) -> DoubleDoubleArray:
        return as_double_double(other)

    def add(self, other: PortableArray) -> PortableArray:
        with np.errstate(all="ignore"):
            return DoubleDoubleArray(*dd.add(self.pair(), _dd(other).pair()))

    def mul(self, other: PortableArray) -> PortableArray:
        o = _dd(other)
        with np.errstate(all="ignore"):
            if o.lo is None:
                return DoubleDoubleArray(*dd.mul_double(self.pair(), o.hi))
            if self.lo is None:
                return DoubleDoubleArray(*dd.mul_double(o.pair(), self.hi))
            return DoubleDoubleArray(*dd.mul(self.pair(), o.pair()))

    def div(self, other: PortableArray) -> PortableArray:
        with np.errstate(all="ignore"):
            return DoubleDoubleArray(*dd.div(self.pair(), _dd(other).pair()))

    def matmul(self, other: PortableArray) -> PortableArray:
        """Compensated dot products (Ogita, Rump and Oishi's Dot2) over k in index order."""
        b = _dd(other)
        _check_matmul(self.shape, b.shape)
        with np.errstate(all="ignore"):
            hi, lo = _dot2(self.hi, self.lo, b.hi, b.lo)
        return DoubleDoubleArray(hi, lo)

    def to_numpy(self) -> np.ndarray:
        """Rounded once to float64 (hi is the rounded sum of a normalised pair)."""
        return self.hi.copy()


def _dd(a: PortableArray) -> DoubleDoubleArray:
    if not isinstance(a, DoubleDoubleArray):
        raise TypeError(f"cannot mix {type(a).__name__} into double-double arithmetic")
    return a


_BLOCK_ELEMENTS = 1 << 15  # output elements per block: the temporaries stay in cache


def _dot2(a: np.ndarray, a_lo: np.ndarray | None, b: np.ndarray, b_lo: np.ndarray | None) -> dd.Pair:
    """a @ b in double-double, by blocks of output rows (the order within each element is fixed)."""
    out_shape = np.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1]))
    if a.shape[-1] == 0:
        return np.zeros(out_shape), np.zeros(out_shape)
    per_row = max(1, int(np.prod(out_shape)) // max(1, out_shape[-2]))
    rows = max(1, _BLOCK_ELEMENTS // per_row)
    sa, sb = dd.split(a), dd.split(b)
    blocks = []
    for r0 in range(0, a.shape[-2], rows):
        sel = (..., slice(r0, r0 + rows), slice(None))
        blocks.append(_dot2_block(a[sel], None if a_lo is None else a_lo[sel], (sa[0][sel], sa[1][sel]), b, b_lo, sb))
    return (np.concatenate([blk[0] for blk in blocks], axis=-2), np.concatenate([blk[1] for blk in blocks], axis=-2))


def _dot2_block(
    a: np.ndarray, a_lo: np.ndarray | None, sa: dd.Pair, b: np.ndarray, b_lo: np.ndarray | None, sb: dd.Pair
) -> dd.Pair:
    """One block of rows: s + c accumulates the exact products p + e with two_sum, in place."""
    shape = np.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1]))
    s, c = np.zeros(shape), np.zeros(shape)
    p, e, t, bb, s2 = (np.empty(shape) for _ in range(5))
    for j in range(a.shape[-1]):
        a_j, b_j = _columns(a, j), _rows(b, j)
        ah, al, bh, bl = _columns(sa[0], j), _columns(sa[1], j), _rows(sb[0], j), _rows(sb[1], j)
        np.multiply(a_j, b_j, out=p)  # e = ((ah*bh - p) + ah*bl + al*bh) + al*bl
        np.multiply(ah, bh, out=e)
        e -= p
        for x, y in ((ah, bl), (al, bh), (al, bl)):
            np.multiply(x, y, out=t)
            e += t
        if a_lo is not None:
            np.multiply(_columns(a_lo, j), b_j, out=t)
            e += t
        if b_lo is not None:
            np.multiply(a_j, _rows(b_lo, j), out=t)
            e += t
        np.add(s, p, out=s2)  # two_sum(s, p) -> (s2, t)
        np.subtract(s2, s, out=bb)
        np.subtract(s2, bb, out=t)
        np.subtract(s, t, out=t)
        np.subtract(p, bb, out=bb)
        t += bb
        t += e  # c = c + (err + e)
        c += t
        s, s2 = s2, s
    hi, lo = dd.quick_two_sum(s, c)
    return dd.finish(hi, lo, s)


def _check_matmul(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    if len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
        raise ValueError(f"matmul: shapes {a} and {b} do not align")


class RoundedArray(PortableArray):
    """Plain float64 or float32 arithmetic, every operation in a fixed order."""

    def __init__(self, value: npt.ArrayLike, dtype: type):
        self.dtype = np.dtype(dtype)
        self.value = np.asarray(value, dtype=self.dtype)

    @property
    def parts(self) -> tuple[np.ndarray, ...]:  # type: ignore[override]  # read-only here: computed from the fields
        return (self.value,)

    def _new(self, parts: Sequence[np.ndarray]) -> PortableArray:
        return RoundedArray(parts[0], self.dtype.type)

    def coerce(self, other: Any) -> RoundedArray:
        return as_rounded(other, self.dtype.type)

    def _same(self, other: PortableArray) -> RoundedArray:
        if not isinstance(other, RoundedArray) or other.dtype != self.dtype:
            raise TypeError(f"cannot mix {type(other).__name__} into {self.dtype} arithmetic")
        return other

    def add(self, other: PortableArray) -> PortableArray:
        return self._new([self.value + self._same(other).value])

    def mul(self, other: PortableArray) -> PortableArray:
        return self._new([self.value * self._same(other).value])

    def div(self, other: PortableArray) -> PortableArray:
        return self._new([self.value / self._same(other).value])

    def matmul(self, other: PortableArray) -> PortableArray:
        b = self._same(other).value
        _check_matmul(self.shape, b.shape)
        acc = None
        for j in range(self.shape[-1]):
            term = _columns(self.value, j) * _rows(b, j)
            acc = term if acc is None else acc + term
        if acc is None:
            shape = np.broadcast_shapes(self.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1]))
            acc = np.zeros(shape, self.dtype)
        return self._new([acc])

    def to_numpy(self) -> np.ndarray:
        return self.value.copy()


# --- converting into each arithmetic ----------------------------------------------------------


def as_double_double(value: Any, dtype: Any = None) -> DoubleDoubleArray:
    """A double-double array of a float64-exact value (Python ints and floats, float arrays).

    `dtype` is accepted for NumPy's signature and ignored: the value is exact.
    """
    if isinstance(value, DoubleDoubleArray):
        return value
    if isinstance(value, PortableArray):
        raise TypeError(f"cannot mix {type(value).__name__} into double-double arithmetic")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
        raise ValueError("integer not exactly representable in float64")
    return DoubleDoubleArray(np.asarray(value, dtype=np.float64))


def as_rounded(value: Any, own: Any) -> RoundedArray:
    """A `own`-precision (float64 or float32) array of a value, rounded once if need be."""
    if isinstance(value, RoundedArray) and value.dtype == np.dtype(own):
        return value
    if isinstance(value, PortableArray):
        raise TypeError(f"cannot mix {type(value).__name__} into {np.dtype(own)} arithmetic")
    return RoundedArray(np.asarray(value, dtype=np.float64).astype(own), np.dtype(own).type)
