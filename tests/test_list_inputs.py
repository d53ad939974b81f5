"""A parameter that is a list of dicts of arrays: its case files, its cache entries, its copies,
and the input validator's rules for it (problem.yaml's `type: list`, docs/bundle.md)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from grader.problem.case_cache import read_case_cached
from grader.problem.cases import CaseFileError, TestCase, case_from_bytes, case_to_text, read_case, write_case


def _layers(n: int = 2, d: int = 3) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(n)
    return [{"W": rng.standard_normal((d, d)), "b": rng.standard_normal(d)} for _ in range(n)]


def _case(layers=None) -> TestCase:
    x = np.arange(6.0).reshape(2, 3) / 7
    return TestCase(
        "sample/01",
        "sample",
        "d",
        {"x": x, "layers": _layers() if layers is None else layers},
        expected=np.zeros((2, 3)),
    )


def _file(inputs: dict) -> bytes:
    doc = {"format": "p/testcase/1", "name": "sample/01", "group": "sample", "description": "", "input": inputs}
    return json.dumps({**doc, "expected": [0.0]}).encode()


def _same(a: TestCase, b: TestCase) -> bool:
    return case_to_text(a, "p") == case_to_text(b, "p")


def test_a_list_of_dicts_survives_the_file_bit_for_bit(tmp_path):
    case = _case()
    back = read_case(write_case(tmp_path, case, "p"))
    assert list(back.inputs) == ["x", "layers"]
    assert [list(d) for d in back.inputs["layers"]] == [["W", "b"], ["W", "b"]]
    for got, want in zip(back.inputs["layers"], case.inputs["layers"]):
        assert all(got[k].dtype == np.float64 and np.array_equal(got[k], want[k]) for k in want)
    assert _same(back, case)


def test_a_list_of_dicts_survives_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    path = write_case(tmp_path / "cases", _case(), "p")
    first, second = read_case_cached(path), read_case_cached(path)  # a miss, then the entry
    assert len(list((tmp_path / "cache").glob("*.case"))) == 1
    assert _same(first, second) and _same(second, _case())
    assert [list(d) for d in second.inputs["layers"]] == [["W", "b"], ["W", "b"]]


def test_the_arguments_share_nothing_with_the_case():
    case = _case()
    args = case.args()
    args[1][0]["W"][...] = 99.0
    args[1][0]["extra"] = np.zeros(1)
    args[1].append({})
    assert len(case.inputs["layers"]) == 2 and list(case.inputs["layers"][0]) == ["W", "b"]
    assert _same(case, _case())
    assert args[1] is not case.inputs["layers"] and args[1][1] is not case.inputs["layers"][1]


def test_input_values_name_every_array_of_every_item():
    values = _case().input_values()
    assert values["layers"] == 2
    assert values["layers[1]['W']"] == (3, 3) and values["layers[1]['b']"] == (3,)


@pytest.mark.parametrize(
    "layers, message",
    [
        ([{"W": [[1.0]]}, [[1.0]]], "input.layers[1]: expected a mapping of arrays, got list"),
        ([{"W": [[1.0]]}, 3], "input.layers[1]: expected a mapping of arrays, got int"),
        ([{"W": [[True]]}], "input.layers[0]['W'][0][0]: True is a bool, not a number"),
        ([{"W": [{"nested": [1.0]}]}], "input.layers[0]['W'][0]: {'nested': [1.0]} is a dict, not a number"),
        ([{"W": [[1.0], [1.0, 2.0]]}], "input.layers[0]['W']: not a rectangular array"),
        ([{"W": "1.5"}], "input.layers[0]['W']: expected a nested list of numbers, got str"),
        ([{"W": None}], "input.layers[0]['W']: expected a nested list of numbers, got NoneType"),
    ],
)
def test_a_malformed_list_in_a_case_file_is_refused_naming_the_item(layers, message):
    with pytest.raises(CaseFileError) as info:
        case_from_bytes(_file({"layers": layers}), "f.json")
    assert message in str(info.value)


def test_a_list_input_that_is_not_dicts_cannot_be_written():
    case = _case(layers=[{"W": np.eye(2)}, {1: np.eye(2)}])
    with pytest.raises(CaseFileError, match="dicts with string keys only"):
        case_to_text(case, "p")
