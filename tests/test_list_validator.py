"""The input validators on a list-of-dicts parameter (the layer-stack fixture's `layer_weights`):
the grader's (problem/validate.py) and the Kattis package's, which must refuse each broken case
for the same reason, naming the item and the key."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from grader.platforms.files import plain
from grader.problem.bundle import open_bundle
from grader.problem.cases import TestCase
from grader.problem.validate import case_problems

BUNDLE = open_bundle(Path(__file__).resolve().parent / "fixtures" / "layer-stack")
SPEC = BUNDLE.spec


def _base() -> TestCase:
    """A valid case: n = 2, d = 3, three layers."""
    rng = np.random.default_rng(5)
    layers = [{"W": rng.uniform(-1, 1, (3, 3)), "b": rng.uniform(-1, 1, 3)} for _ in range(3)]
    return TestCase(
        "random/x", "random", "", {"x": rng.uniform(-1, 1, (2, 3)), "layer_weights": layers}, np.zeros((2, 3))
    )


def _layers(change) -> TestCase:
    """The base case with its list of layers changed in place by `change`."""
    case = _base()
    change(case.inputs["layer_weights"])
    return case


def _set(i: int, key: str, value) -> TestCase:
    return _layers(lambda layers: layers[i].__setitem__(key, value))


def _poke(i: int, key: str, value: float) -> TestCase:
    def change(layers):
        layers[i][key].flat[1] = value

    return _layers(change)


BROKEN: dict[str, tuple[TestCase, str]] = {
    "a key's array of the wrong shape": (
        _set(2, "W", np.ones((3, 4))),
        "layer_weights[2]['W'] must have shape (d, d) = (3, 3), got (3, 4)",
    ),
    "a bias of the wrong length": (_set(1, "b", np.ones(4)), "layer_weights[1]['b'] must have shape (d,) = (3,)"),
    "an array of the wrong rank": (_set(0, "b", np.ones((3, 1))), "layer_weights[0]['b'] must have shape (d,)"),
    "a missing key": (_layers(lambda layers: layers[1].pop("b")), "layer_weights[1]"),
    "an extra key": (_set(2, "c", np.ones(3)), "layer_weights[2]"),
    "NaN in a weight": (_poke(1, "W", np.nan), "layer_weights[1]['W'] contains NaN or infinity"),
    "infinity in a bias": (_poke(2, "b", -np.inf), "layer_weights[2]['b'] contains NaN or infinity"),
    "a value too large": (_poke(0, "W", 11.0), "layer_weights[0]['W'] has a value above 10"),
    "too many layers": (_layers(lambda layers: layers.extend(layers[:2])), "layer_weights has 5 items, at most 4"),
    "no layers": (_layers(lambda layers: layers.clear()), "L = 0 is outside [1, 4]"),
    "x of another width than the layers": (
        dataclasses.replace(_base(), inputs={**_base().inputs, "x": np.ones((2, 4))}),
        "layer_weights[0]['W'] must have shape (d, d) = (4, 4), got (3, 3)",
    ),
}


@pytest.mark.parametrize("what", sorted(BROKEN))
def test_the_grader_names_the_item_and_key(what):
    case, message = BROKEN[what]
    problems = case_problems(case, SPEC)
    assert problems and problems[0].startswith(message), problems


def test_the_base_case_is_valid():
    assert case_problems(_base(), SPEC) == []


@pytest.mark.parametrize(
    "what, change, message",
    [
        ("an item that is a list", lambda ls: ls.__setitem__(1, [np.eye(3)]), "layer_weights[1] must be a dict"),
        ("an item that is an array", lambda ls: ls.__setitem__(0, np.eye(3)), "layer_weights[0] must be a dict"),
        ("a key that is not a str", lambda ls: ls[2].__setitem__(7, np.eye(3)), "layer_weights[2]: the key 7"),
        (
            "a nested list where an array belongs",
            lambda ls: ls[0].__setitem__("W", [{"W": np.eye(3)}]),
            "layer_weights[0]['W'] must be of type ndarray, got list",
        ),
        (
            "float32 weights",
            lambda ls: ls[1].__setitem__("W", ls[1]["W"].astype(np.float32)),
            "layer_weights[1]['W'] must be float64, got float32",
        ),
        (
            "a dict subclass",
            lambda ls: ls.__setitem__(0, type("D", (dict,), {})(ls[0])),
            "layer_weights[0] must be a dict of arrays, got D",
        ),
    ],
)
def test_what_a_case_file_cannot_hold_is_refused_too(what, change, message):
    """A problem module's recipe builds its inputs in Python: anything can come of it."""
    problems = case_problems(_layers(change), SPEC)
    assert problems and problems[0].startswith(message), (what, problems)


def test_a_huge_list_is_refused_before_any_item_is_read():
    class Exploding(dict):
        def __iter__(self):
            raise AssertionError("an item was read")

    case = _base()
    case.inputs["layer_weights"][:] = [Exploding()] * 100_000
    assert case_problems(case, SPEC) == ["layer_weights has 100000 items, at most 4"]


def test_a_list_where_an_array_belongs_and_the_reverse():
    case = dataclasses.replace(_base(), inputs={"x": _base().inputs["layer_weights"], "layer_weights": np.eye(3)})
    problems = case_problems(case, SPEC)
    assert problems[:2] == ["x must be of type ndarray, got list", "layer_weights must be of type list, got ndarray"]


# --- the Kattis input validator agrees -----------------------------------------------------------


@pytest.fixture(scope="module")
def kattis_check():
    from grader.platforms.kattis import kattis_files

    files = kattis_files(BUNDLE)
    name = next(k for k in files if k.endswith("input_validators/validate/validate.py"))
    namespace: dict = {"__name__": "exported_validate"}
    exec(compile(files[name].data.decode(), name, "exec"), namespace)

    def check(raw: object) -> str | None:
        try:
            namespace["check"](raw)
        except namespace["Invalid"] as exc:
            return str(exc)
        return None

    return check


@pytest.mark.parametrize("what", sorted(BROKEN))
def test_the_kattis_validator_refuses_for_the_same_reason(what, kattis_check):
    case, message = BROKEN[what]
    theirs = kattis_check({k: plain(v) for k, v in case.inputs.items()})
    assert theirs is not None and theirs.startswith(message), theirs


@pytest.mark.parametrize(
    "layers, message",
    [
        ([[1.0]], "layer_weights[0] must be an object with exactly the keys ['W', 'b']"),
        ([{"W": [[1.0]], "b": [1.0], "c": [1.0]}], "layer_weights[0] must be an object with exactly the keys"),
        ([{"W": [[1.0]]}], "layer_weights[0] must be an object with exactly the keys"),
        ({"W": [[1.0]], "b": [1.0]}, "layer_weights must be a list of objects"),
        ([{"W": [[1.0]], "b": [True]}], "layer_weights[0]['b']: bool where a number belongs"),
        ([{"W": [[{"W": 1.0}]], "b": [1.0]}], "layer_weights[0]['W']: dict where a number belongs"),
        ([{"W": [[1.0]], "b": [1.0]}] * 10**5, "layer_weights has 100000 items, at most 4"),
    ],
)
def test_the_kattis_validator_reads_json_defensively(layers, message, kattis_check):
    theirs = kattis_check({"x": [[0.5]], "layer_weights": layers})
    assert theirs is not None and theirs.startswith(message), theirs


def test_the_kattis_validator_accepts_every_case(kattis_check):
    for case in BUNDLE.load_selection("all") + BUNDLE.load_selection("practice"):
        assert kattis_check({k: plain(v) for k, v in case.inputs.items()}) is None, case.name
