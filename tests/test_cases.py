"""grader/problem/cases.py: case files round-trip float64 exactly and malformed files are refused clearly."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from grader.problem.cases import (
    CaseFileError,
    TestCase,
    case_format,
    case_from_json,
    case_sizes,
    case_to_text,
    load_cases,
    read_case,
    write_case,
)
from same_data import assert_same_data

ID = "vit-encoder-block"
INPUT_ORDER = ("x", "num_heads", "Wq", "Wk", "Wv", "Wo", "W1", "W2")


def _case(rng: np.random.Generator, values: np.ndarray | None = None) -> TestCase:
    x = values if values is not None else rng.standard_normal((2, 3, 4))
    B, N, D = x.shape
    inputs = {
        "x": x,
        "num_heads": 2,
        **{k: rng.standard_normal((D, D)) for k in ("Wq", "Wk", "Wv", "Wo")},
        "W1": rng.standard_normal((D, 5)),
        "W2": rng.standard_normal((5, D)),
    }
    return TestCase(
        "random/99-roundtrip",
        "random",
        "round-trip check",
        inputs,
        rng.standard_normal((B, N, D)),
        extra={"note": "kept"},
    )


def _awkward_float64(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random bit patterns (every exponent), plus the values that usually break printers."""
    bits = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    values = bits.view(np.float64)
    values = values[np.isfinite(values)]
    special = np.array(
        [
            0.0,
            -0.0,
            5e-324,
            -5e-324,
            2.2250738585072014e-308,
            np.finfo(np.float64).max,
            -np.finfo(np.float64).max,
            0.1,
            1 / 3,
            1e22,
            1e23,
            9007199254740993.0,
            2.0**-1074 * 3,
        ]
    )
    return np.concatenate([values, special])


def test_every_float64_survives_the_json_text_bit_for_bit(tmp_path):
    rng = np.random.default_rng(7)
    values = _awkward_float64(rng, 4000)
    x = values[: (values.size // 24) * 24].reshape(-1, 6, 4)
    case = _case(rng, x)
    path = write_case(tmp_path, case, ID)
    back = read_case(path)
    assert_same_data(back.inputs["x"].tobytes(), x.tobytes(), "x read back")  # bytes, so -0.0 and 0.0 differ
    for key in INPUT_ORDER:
        if key != "num_heads":
            assert_same_data(back.inputs[key].tobytes(), np.asarray(case.inputs[key]).tobytes(), f"{key} read back")
    assert_same_data(back.expected.tobytes(), case.expected.tobytes(), "expected read back")
    assert back.extra == {"note": "kept"}
    assert back.inputs["num_heads"] == 2


def test_shortest_repr_is_what_is_written():
    # Python's repr is the shortest string that round-trips; the file must use it, so that
    # short inputs like 0.5 stay short and the files stay small.
    rng = np.random.default_rng(1)
    case = _case(rng, np.array([[[0.5, -0.25, 1.0, 3.0]]]))
    text = case_to_text(case, ID)
    assert '"x":[[[0.5,-0.25,1.0,3.0]]]' in text.replace("\n", "").replace(" ", "")
    for v in _awkward_float64(rng, 200):
        assert struct.pack("<d", float(repr(float(v)))) == struct.pack("<d", v)


def test_writing_is_deterministic_and_sorted():
    rng = np.random.default_rng(3)
    case = _case(rng)
    assert case_to_text(case, ID) == case_to_text(case, ID)
    head = json.loads(case_to_text(case, ID))
    assert head["format"] == case_format(ID) and list(head["input"]) == list(INPUT_ORDER)
    assert case_to_text(case, ID).endswith("}\n")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_cannot_be_written(bad):
    rng = np.random.default_rng(0)
    case = _case(rng)
    case.expected[0, 0, 0] = bad
    with pytest.raises(CaseFileError, match="non-finite value"):
        case_to_text(case, ID)


def test_a_case_without_expected_output_cannot_be_written():
    rng = np.random.default_rng(0)
    case = _case(rng)
    with pytest.raises(CaseFileError, match="must contain its expected output"):
        case_to_text(TestCase(case.name, case.group, "", case.inputs), ID)


def _raw_case() -> dict:
    return json.loads(case_to_text(_case(np.random.default_rng(5)), ID))


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda r: r.update(format="something/else"), "not a test case"),
        (lambda r: r.update(format="a/b/testcase/1"), "not a test case"),
        (lambda r: r.update(input={}), "'input' must be a mapping"),
        (lambda r: r["input"].update(num_heads=True), r"input.num_heads: expected a nested list of numbers, got bool"),
        (lambda r: r["input"].update(num_heads="2"), r"input.num_heads: expected a nested list of numbers, got str"),
        (lambda r: r["input"]["x"][0][0].__setitem__(1, True), r"input.x\[0\]\[0\]\[1\]: True is a bool, not a number"),
        (lambda r: r["input"]["x"][1][2].__setitem__(0, "1.5"), r"input.x\[1\]\[2\]\[0\]: '1.5' is a str"),
        (lambda r: r["input"]["Wq"][0].__setitem__(0, None), r"input.Wq\[0\]\[0\]: None is a NoneType"),
        (lambda r: r["input"]["W1"][0].__setitem__(0, [1.0]), "input.W1: not a rectangular array"),
        (lambda r: r["input"].update(W2="zeros"), "input.W2: expected a nested list of numbers, got str"),
        (lambda r: r.update(expected={"a": 1}), "expected: expected a nested list of numbers, got dict"),
        (lambda r: r.update(description=None), "'description' must be a string"),
    ],
)
def test_malformed_case_documents_are_refused(mutate, message):
    raw = _raw_case()
    mutate(raw)
    with pytest.raises(CaseFileError, match=message):
        case_from_json(raw, "case.json")


def test_unreadable_files_name_the_file(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text("{ not json", encoding="utf-8")
    with pytest.raises(CaseFileError, match=r"broken\.json: cannot read test case"):
        read_case(bad)
    with pytest.raises(CaseFileError, match="cannot read test case"):
        read_case(tmp_path / "missing.json")


def test_load_cases_checks_name_and_location(tmp_path):
    case = _case(np.random.default_rng(2))
    write_case(tmp_path, case, ID)
    (tmp_path / "random" / "99-roundtrip.json").rename(tmp_path / "random" / "98-moved.json")
    with pytest.raises(CaseFileError, match="do not match its location"):
        load_cases(tmp_path, ["random"])


def test_args_are_fresh_positional_copies(any_bundle):
    spec = any_bundle.spec
    case = any_bundle.load_selection("sample")[0]
    args = case.args()
    assert [type(a).__name__ for a in args] == [p.type for p in spec.parameters]
    first = next(i for i, p in enumerate(spec.parameters) if p.type == "ndarray")
    assert args[first].any()
    args[first][...] = 0.0  # a submission that writes into its input must not change the case
    assert case.inputs[spec.parameters[first].name].any()
    sizes = case_sizes(spec.signature, case)
    assert all(type(v) is int for v in sizes.values()) and set(spec.constraints) >= set(sizes)


def test_the_roots_first_sample_has_its_sizes(bundle):
    case = load_cases(bundle.testcases, ["sample"])[0]
    assert list(case.inputs) == list(INPUT_ORDER)
    assert case_sizes(bundle.spec.signature, case) == {"B": 1, "N": 2, "D": 2, "num_heads": 1, "M": 2}


def test_checked_in_cases_load_in_judging_order(any_bundle):
    spec = any_bundle.spec
    cases = load_cases(any_bundle.testcases, any_bundle.group_names("all"))
    order = [g.name for g in spec.groups]
    positions = [order.index(c.group) for c in cases]
    assert positions == sorted(positions)
    assert all(c.expected is not None and c.expected.dtype == np.float64 for c in cases)
