"""grader/problem/portable_array.py: fixed-order arrays, exact where it is claimed, closed to NumPy."""

from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

from grader.problem.cases import load_cases
from grader.problem.portable_arithmetic import DOUBLE_DOUBLE, rounded
from grader.problem.portable_array import DoubleDoubleArray, RoundedArray

RNG = np.random.default_rng(7)


def _fraction_matmul(a: np.ndarray, b: np.ndarray) -> list[list[Fraction]]:
    return [
        [
            sum((Fraction(a[i, k]) * Fraction(b[k, j]) for k in range(a.shape[1])), Fraction(0))
            for j in range(b.shape[1])
        ]
        for i in range(a.shape[0])
    ]


def test_double_double_matmul_is_the_exact_product_rounded_once():
    a = RNG.standard_normal((6, 40)) * 10.0 ** RNG.integers(-3, 3, (6, 40))
    b = RNG.standard_normal((40, 5))
    got = (DOUBLE_DOUBLE.asarray(a) @ b).to_numpy()
    want = np.array([[float(v) for v in row] for row in _fraction_matmul(a, b)])
    assert got.tobytes() == want.tobytes()


def test_double_double_matmul_of_two_double_double_operands_and_batches():
    third = DOUBLE_DOUBLE.asarray(np.ones((2, 3, 4))) / 3.0  # lo parts are not zero
    other = DOUBLE_DOUBLE.asarray(RNG.standard_normal((2, 4, 5))) / 7.0
    got = (third @ other).to_numpy()
    exact = [
        [
            [
                sum(
                    (
                        Fraction(1, 3) * (Fraction(float(other.hi[n, k, j])) + Fraction(float(other.lo[n, k, j])))
                        for k in range(4)
                    ),
                    Fraction(0),
                )
                for j in range(5)
            ]
            for _ in range(3)
        ]
        for n in range(2)
    ]
    assert got.tolist() == [[[float(v) for v in row] for row in mat] for mat in exact]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rounded_matmul_and_sum_follow_index_order(dtype):
    a = RNG.standard_normal((3, 17)).astype(dtype)
    b = RNG.standard_normal((17, 2)).astype(dtype)
    xp = rounded(dtype)
    got = (xp.asarray(a) @ b).to_numpy()
    scalar = np.float64 if dtype is np.float64 else np.float32
    for i in range(3):
        for j in range(2):
            acc = scalar(a[i, 0]) * scalar(b[0, j])
            for k in range(1, 17):
                acc = scalar(acc + scalar(a[i, k]) * scalar(b[k, j]))
            assert got[i, j] == acc and got.dtype == dtype
    total = xp.asarray(a).sum(axis=-1).to_numpy()
    for i in range(3):
        acc = scalar(a[i, 0])
        for k in range(1, 17):
            acc = scalar(acc + a[i, k])
        assert total[i] == acc


def test_mean_var_and_max():
    x = RNG.standard_normal((4, 9))
    for xp, tol in ((DOUBLE_DOUBLE, 1e-15), (rounded(np.float64), 1e-13)):
        a = xp.asarray(x)
        np.testing.assert_allclose(a.mean(axis=-1, keepdims=True).to_numpy(), x.mean(-1, keepdims=True), rtol=tol)
        np.testing.assert_allclose(a.var(axis=-1, ddof=1).to_numpy(), x.var(-1, ddof=1), rtol=tol)
        assert np.array_equal(a.max(axis=0).to_numpy(), x.max(0))
    one = DOUBLE_DOUBLE.asarray(np.ones(3)) / 3.0
    bigger = one + DoubleDoubleArray(np.zeros(3), np.array([0.0, 1e-30, 0.0]))
    stacked = DOUBLE_DOUBLE.stack([one, bigger], axis=0)
    assert stacked.max(axis=0).lo[1] > one.lo[1]  # the max looks at the low part on ties


def test_maximum_stack_concatenate_indexing_and_powers():
    xp = rounded(np.float64)
    a = xp.asarray(np.array([-1.0, 2.0, np.nan]))
    assert np.array_equal(xp.maximum(a, 0.0).to_numpy(), [0.0, 2.0, np.nan], equal_nan=True)
    t = DOUBLE_DOUBLE.asarray(np.arange(6.0).reshape(2, 3))
    assert (t**3).to_numpy().tolist() == (np.arange(6.0) ** 3).reshape(2, 3).tolist()
    assert DOUBLE_DOUBLE.concatenate([t, t], axis=-1).shape == (2, 6)
    assert t[..., np.array([2, 0])].to_numpy().tolist() == [[2.0, 0.0], [5.0, 3.0]]
    assert t.T.shape == (3, 2) and t.swapaxes(0, 1).shape == (3, 2) and t.reshape(3, 2).shape == (3, 2)
    with pytest.raises(TypeError):
        t**0.5


def test_transcendentals_are_rounded_from_double_double():
    x = np.linspace(-20, 20, 41)
    got = rounded(np.float64).exp(x).to_numpy()
    assert got.tolist() == [_exact_exp(v) for v in x]
    f32 = rounded(np.float32).tanh(x.astype(np.float32)).to_numpy()
    assert f32.dtype == np.float32
    np.testing.assert_allclose(f32, np.tanh(x), rtol=1e-7, atol=1e-7)


def _exact_exp(v: float) -> float:
    with localcontext() as ctx:
        ctx.prec = 50
        return float(Decimal(v).exp())


def test_numpy_cannot_leave_the_fixed_arithmetic_silently():
    a = DOUBLE_DOUBLE.asarray(np.ones((2, 2)))
    with pytest.raises(TypeError):
        np.sqrt(a)
    with pytest.raises(TypeError):
        np.asarray(a)
    with pytest.raises(TypeError):
        np.concatenate([a, a])
    with pytest.raises(TypeError):
        a + rounded(np.float64).asarray(np.ones(2))
    with pytest.raises(TypeError):
        rounded(np.float32).asarray(np.ones(2)) * rounded(np.float64).asarray(np.ones(2))
    assert isinstance(np.ones((2, 2)) @ a, DoubleDoubleArray)  # NumPy defers to our operators
    assert isinstance(np.ones(2) + rounded(np.float32).asarray(np.ones(2)), RoundedArray)


def test_non_finite_values_follow_ieee():
    big = DOUBLE_DOUBLE.asarray(np.array([1e308, 0.0, -1.0]))
    out = (big * 10.0).to_numpy()
    assert out[0] == np.inf
    ratio = (DOUBLE_DOUBLE.asarray(np.array([0.0, 1.0])) / DOUBLE_DOUBLE.asarray(np.array([0.0, 0.0]))).to_numpy()
    assert np.isnan(ratio[0]) and ratio[1] == np.inf
    assert np.isnan(DOUBLE_DOUBLE.sqrt(big).to_numpy()[2])


def test_the_reference_runs_unchanged_on_every_arithmetic(bundle):
    reference = bundle.load_reference_module()
    case = load_cases(bundle.testcases, ["multi_head"])[1]
    exact = reference.encoder_block(*case.args(), xp=DOUBLE_DOUBLE).to_numpy()
    plain = reference.encoder_block(*case.args())
    fixed = reference.encoder_block(*case.args(), xp=rounded(np.float64)).to_numpy()
    np.testing.assert_allclose(plain, exact, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fixed, exact, rtol=1e-12, atol=1e-12)
