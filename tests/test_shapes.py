"""grader/problem/input_rules.py's shape language: dimension names and integer expressions,
bound from a case's inputs, and the misfits it names."""

from __future__ import annotations

import numpy as np
import pytest

from grader.judging.values import compare
from grader.problem.input_rules import ShapeSpecError, bind, dimension_names, evaluate, output_problems, shape_text

PATCH = [
    ("image", "ndarray", ("B", "H", "W", "C")),
    ("patch_size", "int", ()),
    ("embed_dim", "int", ()),
    ("W_proj", "ndarray", ("patch_size * patch_size * C", "embed_dim")),
]


def test_names_and_expressions_are_read_without_running_them():
    assert dimension_names(4) == ()
    assert dimension_names("B") == ("B",)
    assert dimension_names("(H // p) * (W // p)") == ("H", "p", "W")
    assert evaluate("(H // p) * (W // p) + 1 - 1", {"H": 8, "W": 12, "p": 4}) == 6


@pytest.mark.parametrize(
    "bad", ["a ** 2", "f(x)", "1.5", "a / b", "x[0]", "-a", "__import__('os')", "a if b else c", "", -1, True, 2.0]
)
def test_anything_else_is_refused(bad):
    with pytest.raises(ShapeSpecError):
        dimension_names(bad)


def test_binding_takes_each_name_where_it_first_appears_and_checks_the_rest():
    sizes, problems = bind(PATCH, {"image": (2, 8, 12, 3), "patch_size": 4, "embed_dim": 5, "W_proj": (48, 5)})
    assert problems == [] and sizes == {"B": 2, "H": 8, "W": 12, "C": 3, "patch_size": 4, "embed_dim": 5}
    assert output_problems(("B", "(H // patch_size) * (W // patch_size)", "embed_dim"), sizes, (2, 6, 5)) == []
    assert output_problems(("B", "embed_dim"), sizes, (2, 6)) == ["expected output must have shape (2, 5), got (2, 6)"]


def test_the_first_misfit_is_named_with_the_sizes_bound_so_far():
    _, problems = bind(PATCH, {"image": (2, 8, 12, 3), "patch_size": 4, "embed_dim": 5, "W_proj": (47, 5)})
    assert problems == ["W_proj must have shape (patch_size * patch_size * C, embed_dim) = (48, 5), got (47, 5)"]
    _, problems = bind(PATCH, {"image": (8, 12, 3), "patch_size": 4, "embed_dim": 5, "W_proj": (48, 5)})
    assert problems == ["image must have shape (B, H, W, C), got (8, 12, 3)"]


def test_an_expression_before_its_names_are_bound_is_checked_at_the_end():
    late = [("w", "ndarray", ("n * 2",)), ("v", "ndarray", ("n",))]
    assert bind(late, {"w": (6,), "v": (3,)})[1] == []
    assert bind(late, {"w": (7,), "v": (3,)})[1] == ["w: n * 2 = 6, got 7"]


def test_a_zero_divisor_is_a_misfit_not_a_crash():
    sig = [("a", "ndarray", ("n", "m")), ("b", "ndarray", ("n // m",))]
    assert bind(sig, {"a": (4, 0), "b": (0,)})[1] != []


def test_shapes_are_written_as_python_writes_tuples():
    assert shape_text(("B", "N", "D")) == "(B, N, D)" and shape_text(("n",)) == "(n,)"


def test_a_wrong_values_position_is_named_with_the_outputs_axis_words():
    expected = np.zeros((1, 4, 3))
    got = expected.copy()
    got[0, 2, 1] = 5.0
    msg = compare(got, expected, 1e-10, 1e-10, True, ("batch", "patch", "feature")).message
    assert "at (batch 0, patch 2, feature 1)" in msg
    assert "at (0, 2, 1)" in compare(got, expected, 1e-10, 1e-10, True).message  # no words: the indices
    nan = got.copy()
    nan[0, 3, 2] = np.nan
    assert "the first at (b 0, n 3, d 2)" in compare(nan, expected, 1e-10, 1e-10, True, ("b", "n", "d")).message
