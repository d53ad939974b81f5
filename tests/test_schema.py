"""problem.yaml against its published JSON Schema, and grader/problem/spec.py against the same mutations.

The mutations are generated from problem.yaml itself: an unknown key in every
mapping, every required key removed, and every leaf replaced by a value of
the wrong type. Both the schema (with jsonschema) and the loader the grader
really uses (grader/problem/spec.py) must reject each one, the loader with a message
that names where the problem is.

The schema is generated from the loader's own definition (spec.PROBLEM_YAML,
scripts/schemas.py): the checked-in file must be exactly what it
generates, and the two must agree on further valid and broken documents,
except for the few rules JSON Schema cannot say (LOADER_ONLY).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from grader.problem.spec import SpecError, parse_spec

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_PATH = ROOT / "schemas" / "problem.schema.json"
# Keys that may be left out: an int parameter has no dtype; the rest are optional.
OPTIONAL_KEYS = {"dtype", "symbols", "axis_names", "axes", "divisible", "slowest_accepted"}


_PARSED = yaml.safe_load((ROOT / "problem.yaml").read_text(encoding="utf-8"))


def _raw() -> dict:
    """A fresh copy of problem.yaml as parsed (parsed once: there are hundreds of mutations)."""
    return copy.deepcopy(_PARSED)


def _render(path: tuple) -> str:
    """('tests', 'groups', 1, 'points') -> 'tests.groups[1].points' (spec.py's spelling)."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out or "problem.yaml"


def _up_to_last_key(path: tuple) -> tuple:
    """Drop trailing list indices: spec.py reports constraints.B[0] as 'constraints.B'."""
    path = tuple(path)
    while path and isinstance(path[-1], int):
        path = path[:-1]
    return path


@dataclass(frozen=True)
class Mutation:
    id: str
    apply: Callable[[dict], None]
    where: tuple  # the mapping or leaf the loader must name
    must_mention: str  # a word the message must contain (the key at fault)
    path: tuple = ()  # exactly what was changed (default: `where`)

    @property
    def changed(self) -> tuple:
        return self.path or self.where


def _get(doc: Any, path: tuple) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _walk(node: Any, path: tuple = ()):
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _walk(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, path + (i,))


def _wrong_type(value: Any) -> Any:
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, (int, float)):
        return "a string"
    if isinstance(value, str):
        return 12345
    if isinstance(value, list):
        return {"not": "a list"}
    return ["not", "a mapping"]


def _key_mutations(path: tuple, node: dict) -> list[Mutation]:
    """An unknown key in the mapping at `path`, and each of its required keys missing."""

    def add_unknown(d, path=path):
        _get(d, path)["zz_unknown_key"] = 1

    out = [Mutation(f"unknown key in {_render(path)}", add_unknown, path, "zz_unknown_key")]
    for key in node:
        if key in OPTIONAL_KEYS:
            continue

        def drop(d, path=path, key=key):
            del _get(d, path)[key]

        out.append(Mutation(f"missing {_render(path + (key,))}", drop, path, str(key)))
    return out


def _retyped(path: tuple, node: object) -> bool:
    """Wrong types everywhere, but in a list of scalars only at its first element."""
    return (
        bool(path)
        and not isinstance(node, dict)
        and not (isinstance(path[-1], int) and path[-1] > 0 and not isinstance(node, list))
    )


# Mappings whose keys are names of the problem's own choosing: none is required.
MAPS = {("symbols",), ("axis_names",)}


def mutations() -> list[Mutation]:
    doc = _raw()
    out = []
    for path, node in _walk(doc):
        if any(isinstance(p, int) and p >= 2 for p in path):
            continue  # the third group (parameter) on is built like the first two
        if isinstance(node, dict) and path not in MAPS:
            out += _key_mutations(path, node)
        if _retyped(path, node) and "shape" not in path[:-1]:  # a dimension may be an int or a string

            def retype(d, path=path):
                _get(d, path[:-1])[path[-1]] = _wrong_type(_get(d, path))

            leaf = _up_to_last_key(path)
            out.append(Mutation(f"wrong type at {_render(path)}", retype, leaf, str(leaf[-1]), path))

    # Value rules that are not about keys or types.
    def set_at(path, value):
        def apply(d):
            _get(d, path[:-1])[path[-1]] = value

        return apply

    out += [
        Mutation("negative rtol", set_at(("comparison", "rtol"), -1e-8), ("comparison", "rtol"), "rtol"),
        Mutation("zero memory limit", set_at(("limits", "memory_mib"), 0), ("limits", "memory_mib"), "memory_mib"),
        Mutation("B range starting at 0", set_at(("constraints", "B"), [0, 4]), ("constraints", "B"), "B"),
        Mutation("schema_version 2", set_at(("schema_version",), 2), ("schema_version",), "schema_version"),
        Mutation(
            "feedback level not in the enum",
            set_at(("feedback", "hidden"), "everything"),
            ("feedback", "hidden"),
            "hidden",
        ),
        Mutation(
            "group name with capitals",
            set_at(("tests", "groups", 1, "name"), "Single Head"),
            ("tests", "groups", 1, "name"),
            "name",
        ),
        Mutation(
            "negative points", set_at(("tests", "groups", 1, "points"), -8), ("tests", "groups", 1, "points"), "points"
        ),
        Mutation(
            "float32 array parameter",
            set_at(("entry_point", "parameters", 0, "dtype"), "float32"),
            ("entry_point", "parameters", 0, "dtype"),
            "dtype",
        ),
        Mutation("first group hidden", set_at(("tests", "groups", 0, "visible"), False), ("tests", "groups"), "sample"),
        Mutation(
            "boolean where a number belongs",
            set_at(("limits", "time_per_test_s"), True),
            ("limits", "time_per_test_s"),
            "time_per_test_s",
        ),
    ]
    return out


MUTATIONS = mutations()


def test_mutations_cover_every_key_of_problem_yaml():
    """The generated list really walks the whole file (a regression here would hide gaps)."""
    kinds = {m.id.split(" ")[0] for m in MUTATIONS}
    assert {"unknown", "missing", "wrong"} <= kinds
    n_keys = sum(1 for path, _ in _walk(_raw()) if path and isinstance(path[-1], str))
    top_keys = set(_raw()) - OPTIONAL_KEYS
    assert {m.id.removeprefix("missing ") for m in MUTATIONS if m.id.startswith("missing ")} >= top_keys
    assert n_keys > 100 and len(MUTATIONS) > 100


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.id)
def test_spec_rejects_mutation_naming_the_path(mutation):
    doc = _raw()
    mutation.apply(doc)
    with pytest.raises(SpecError) as info:
        parse_spec(doc)
    message = str(info.value)
    assert _render(mutation.where) in message, message
    assert mutation.must_mention in message, message


# --- the published schema (needs jsonschema, a dev dependency) --------------------------------


@pytest.fixture(scope="module")
def validator():
    jsonschema = pytest.importorskip(
        "jsonschema",
        reason="jsonschema is not installed (dev dependency: pip install -r requirements-dev.txt); "
        "cannot check problem.yaml against schemas/problem.schema.json",
    )
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_schema_declares_draft_2020_12():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_every_object_in_the_schema_is_closed():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    open_objects = [
        p
        for p, node in _walk(schema)
        if isinstance(node, dict)
        and node.get("type") == "object"
        and not (node.get("additionalProperties") is False or isinstance(node.get("additionalProperties"), dict))
    ]
    assert open_objects == []


def test_problem_yaml_is_valid(validator, any_bundle):
    doc = yaml.safe_load((any_bundle.root / "problem.yaml").read_text(encoding="utf-8"))
    errors = [f"{_render(tuple(e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]
    assert errors == []


# A dimension's range is required by the loader (every name the parameters bind has one), which
# JSON Schema cannot say of keys that are the problem's own names.
SCHEMA_MUTATIONS = [
    m
    for m in MUTATIONS
    if not (m.id.startswith("missing constraints.") and m.id != "missing constraints.max_abs_input")
]


@pytest.mark.parametrize("mutation", SCHEMA_MUTATIONS, ids=lambda m: m.id)
def test_schema_rejects_mutation(validator, mutation):
    doc = _raw()
    mutation.apply(doc)
    errors = list(validator.iter_errors(doc))
    assert errors, f"the schema accepts: {mutation.id}"
    # At least one error points at the mutated place, one of its parents or one of its children.
    changed = mutation.changed
    paths = [tuple(e.absolute_path) for e in errors]
    assert any(changed[: len(p)] == p or p[: len(changed)] == changed for p in paths), paths


# --- one definition: the schema is generated from the loader's own (grader/problem/spec.py) ------


def test_the_checked_in_schema_is_the_generated_one():
    from grader.problem.spec import problem_schema_text

    assert SCHEMA_PATH.read_text(encoding="utf-8") == problem_schema_text(), (
        "schemas/problem.schema.json is out of date: run python3 scripts/schemas.py"
    )


def _set(path: tuple, value: Any) -> Callable[[dict], None]:
    def apply(d: dict) -> None:
        _get(d, path[:-1])[path[-1]] = value

    return apply


def _append_group(name: str, **changes: Any) -> Callable[[dict], None]:
    def apply(d: dict) -> None:
        d["tests"]["groups"].append({**copy.deepcopy(d["tests"]["groups"][1]), "name": name, **changes})

    return apply


def _list_parameter(**changes: Any) -> Callable[[dict], None]:
    """A `list` parameter appended (its length L given a range), with `changes` to its record."""

    def apply(d: dict) -> None:
        key = {"name": "W", "type": "ndarray", "dtype": "float64", "shape": ["D", "D"]}
        param = {"name": "blocks", "type": "list", "length": "L", "items": [key, {**key, "name": "b", "shape": ["D"]}]}
        d["entry_point"]["parameters"].append({**param, **changes})
        d["constraints"]["L"] = [1, 4]

    return apply


def _then(*steps: Callable[[dict], Any]) -> Callable[[dict], None]:
    """Each of `steps` applied in turn."""

    def apply(d: dict) -> None:
        for step in steps:
            step(d)

    return apply


def _list_key(**changes: Any) -> Callable[[dict], None]:
    """A `list` parameter whose first key's record has `changes` (None: that key removed)."""
    key = {"name": "W", "type": "ndarray", "dtype": "float64", "shape": ["D", "D"]}
    key = {k: v for k, v in {**key, **changes}.items() if v is not None}
    return _list_parameter(items=[key])


# Documents both must accept: what problem.yaml may say beyond what ours says.
VALID_VARIANTS: dict[str, Callable[[dict], None]] = {
    "as it is": lambda d: None,
    "an int parameter with dtype float64": _set(("entry_point", "parameters", 1, "dtype"), "float64"),
    "an expression in a shape": _set(("entry_point", "parameters", 6, "shape"), ["D", "M + 0"]),
    "an integer in a shape": _set(("output", "shape"), ["B", "N", "D", 1][:3]),
    "a group named with digits only": _append_group("123"),
    "a group named _": _append_group("_"),
    "a group with no points": _append_group("extra", points=0),
    "a range of one value": _set(("constraints", "M"), [7, 7]),
    "negative seeds": _set(("tests", "generator_seed"), -5),
    "an integer tolerance": _set(("comparison", "rtol"), 1),
    "schema_version written 1.0": _set(("schema_version",), 1.0),
    "empty lists of strings": _set(("allowed_imports", "stdlib"), []),
    "a list of dicts of arrays": _list_parameter(),
    "a list whose keys bind a new dimension": _then(
        _list_key(shape=["D", "H"]), lambda d: d["constraints"].update(H=[1, 8])
    ),
    "a list whose length is also a key's dimension": _list_key(shape=["L"]),
    "the sample group only": _set(
        ("tests", "groups"), [{"name": "sample", "visible": True, "points": 1, "description": "", "exercises": []}]
    ),
}
# Documents both must refuse (besides MUTATIONS).
INVALID_VARIANTS: dict[str, Callable[[dict], None]] = {
    "an int parameter with dtype float32": _set(("entry_point", "parameters", 1, "dtype"), "float32"),
    "an array parameter without dtype": lambda d: d["entry_point"]["parameters"][0].pop("dtype"),
    "schema_version true": _set(("schema_version",), True),
    "a group name with an accent": _append_group("caf\u00e9"),
    "an empty group name": _append_group(""),
    "a group name with a dash": _append_group("a-b"),
    "no groups": _set(("tests", "groups"), []),
    "the sample group second": lambda d: d["tests"]["groups"].reverse(),
    "a range of three": _set(("constraints", "D"), [1, 2, 3]),
    "a range from 0": _set(("constraints", "D"), [0, 2]),
    "a range with a bool": _set(("constraints", "M"), [1, True]),
    "a zero tolerance": _set(("comparison", "atol"), 0),
    "a float memory limit below 1": _set(("limits", "memory_mib"), 0.5),
    "a feedback level in a list": _set(("feedback", "hidden"), ["full"]),
    "output float32": _set(("output", "dtype"), "float32"),
    "visible written 1": _set(("tests", "groups", 0, "visible"), 1),
    "a top level that is a list": lambda d: d.clear(),
    "a list without its length": _then(_list_parameter(), lambda d: d["entry_point"]["parameters"][-1].pop("length")),
    "a list with a shape": _list_parameter(shape=["L"]),
    "a list with a dtype": _list_parameter(dtype="float64"),
    "a list without keys": _list_parameter(items=[]),
    "a list of lists": _list_key(type="list"),
    "a list whose key is an int": _list_key(type="int", dtype=None, shape=[]),
    "a list's key without dtype": _list_key(dtype=None),
    "a list's key with an unknown field": _list_key(default=0),
    "a list's key named with a dash": _list_key(name="W-1"),
    "a list's length that is an expression": _list_parameter(length="L + 1"),
    "a list's items that are a mapping": _list_parameter(items={"W": ["D", "D"]}),
}
# What JSON Schema cannot say, so only the loader refuses (spec_rules.py's docstring; the schema's
# description names them).
LOADER_ONLY: dict[str, Callable[[dict], None]] = {
    "an integer written as a float": _set(("track", "step"), 4.0),
    "a memory limit written as a float": _set(("limits", "memory_mib"), 512.0),
    "a range bound written as a float": _set(("constraints", "B"), [1, 4.0]),
    "NaN": _set(("comparison", "atol"), float("nan")),
    "infinity": _set(("limits", "total_time_s"), float("inf")),
    "min above max": _set(("constraints", "N"), [5, 2]),
    "two groups of one name": lambda d: d["tests"]["groups"].append(copy.deepcopy(d["tests"]["groups"][1])),
    "no parameters (the output's dimensions bound by none)": _set(("entry_point", "parameters"), []),
    "a dimension without a range": lambda d: d["constraints"].pop("M"),
    "a range for a name no parameter binds": _set(("constraints", "Q"), [1, 2]),
    "divisible naming an unbound name": _set(("constraints", "divisible"), [["D", "Q"]]),
    "a float in a shape expression": _set(("output", "shape"), ["B", "N", "D * 1.5"]),
    "a call in a shape expression": _set(("output", "shape"), ["B", "N", "max(D, 1)"]),
    "a scalar with a shape": _set(("entry_point", "parameters", 1, "shape"), ["D"]),
    "a list with two keys of one name": _list_parameter(
        items=[{"name": "W", "type": "ndarray", "dtype": "float64", "shape": [2]}] * 2
    ),
    "a list's length without a range": _then(_list_parameter(), lambda d: d["constraints"].pop("L")),
    "a list's key shape naming an unbound name": _list_key(shape=["D + Q"]),
    "two parameters of one name": lambda d: d["entry_point"]["parameters"].append(
        copy.deepcopy(d["entry_point"]["parameters"][0])
    ),
}


def _verdicts(validator, apply: Callable[[dict], None]) -> tuple[bool, bool]:
    """(the loader accepts, the schema accepts)."""
    doc = _raw()
    apply(doc)
    try:
        parse_spec(doc)
        loader = True
    except SpecError:
        loader = False
    return loader, validator.is_valid(doc)


@pytest.mark.parametrize("name", sorted(VALID_VARIANTS))
def test_both_accept(validator, name):
    assert _verdicts(validator, VALID_VARIANTS[name]) == (True, True)


@pytest.mark.parametrize("name", sorted(INVALID_VARIANTS))
def test_both_refuse(validator, name):
    assert _verdicts(validator, INVALID_VARIANTS[name]) == (False, False)


@pytest.mark.parametrize("name", sorted(LOADER_ONLY))
def test_only_the_loader_refuses_what_json_schema_cannot_say(validator, name):
    assert _verdicts(validator, LOADER_ONLY[name]) == (False, True)
