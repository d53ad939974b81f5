"""Kattis input validator (input_validators/validate/validate.py of the export).

Reads one `.in` file (a JSON object of the arguments) from stdin and exits 42
when it satisfies every constraint of problem.yaml and is written exactly in
the export's canonical form (compact JSON, keys in parameter order, one final
newline: no extra whitespace, no "1.00" for 1.0), 43 otherwise with the reason
on stderr: the Kattis problem package format's input-validator contract.
problemtools (checks/validators.py) runs it on every test file and also feeds
it mutated copies, which must be rejected. Pure Python, so it runs with any
python3 the judge has.

The rules themselves (shapes, size ranges, magnitudes) are the grader's own
validator's, grader/problem/input_rules.py: the repository's copy of this
program imports them, the exported copy has the module's text pasted in
their place (platforms/files.py), so it needs no grader. This program only
reads the JSON form of a case into shapes and numbers.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from grader.problem.input_rules import bind, item_entry, magnitude_problem, size_problems  # INCLUDE

# The export writes the bundle's own: each parameter's [name, type, shape] (a list parameter's
# [name, "list", [length]], then [name[*]['key'], "item", shape] per key), problem.yaml's constraints.
CONFIG: dict[str, Any] = {
    "parameters": [["a", "ndarray", ["m", "k"]], ["k", "int", []]],
    "constraints": {"m": [1, 4], "k": [1, 8], "max_abs_input": 1000.0},
}
VALID, INVALID = 42, 43


class Invalid(Exception):
    pass


def shape_of(value: object, where: str) -> tuple[int, ...]:
    """The shape of a nested list of numbers, rectangular or Invalid; every number within the bounds."""
    if isinstance(value, list):
        if not value:
            raise Invalid(f"{where}: empty list")
        shapes = {shape_of(v, where) for v in value}
        if len(shapes) != 1:
            raise Invalid(f"{where}: ragged nesting")
        return (len(value), *shapes.pop())
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Invalid(f"{where}: {type(value).__name__} where a number belongs")
    finite = math.isfinite(value)
    problem = magnitude_problem(
        where, finite, abs(value) if finite else math.inf, CONFIG["constraints"]["max_abs_input"]
    )
    if problem:
        raise Invalid(f"{problem}: {value!r}")
    return ()


def _number(value: object, where: str) -> float:
    """A float input: a finite number within the bounds, or Invalid."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Invalid(f"{where} must be a number")
    shape_of(value, where)
    return float(value)


def _item_keys(owner: str) -> list[str]:
    """The keys of list parameter `owner`'s items, from its entries `owner[*]['key']`."""
    entries = [p[0] for p in CONFIG["parameters"] if p[1] == "item"]
    return [e.partition("[*]")[2][2:-2] for e in entries if e.partition("[*]")[0] == owner]


def _list_values(value: object, name: str, length: str) -> dict[str, tuple[int, ...] | int]:
    """A list parameter's length and each of its arrays' shapes (input_rules.bind's names); Invalid
    unless it is a list, no longer than its length's range, of objects with exactly its keys."""
    if not isinstance(value, list):
        raise Invalid(f"{name} must be a list of objects")
    most = CONFIG["constraints"].get(length, [0, len(value)])[1]
    if len(value) > most:
        raise Invalid(f"{name} has {len(value)} items, at most {most}")
    keys = _item_keys(name)
    out: dict[str, tuple[int, ...] | int] = {name: len(value)}
    for i, item in enumerate(value):
        if not isinstance(item, dict) or sorted(item) != sorted(keys):
            raise Invalid(f"{name}[{i}] must be an object with exactly the keys {keys}")
        out.update({item_entry(name, i, k): shape_of(item[k], item_entry(name, i, k)) for k in keys})
    return out


def check(raw: object) -> None:
    """Raise Invalid with the first rule `raw`, the parsed `.in` file, breaks."""
    params = [p[0] for p in CONFIG["parameters"] if p[1] != "item"]
    if not isinstance(raw, dict) or sorted(raw) != sorted(params):
        raise Invalid(f"expected a JSON object with exactly the keys {params}")
    values: dict[str, tuple[int, ...] | int] = {}
    for name, kind, shape in CONFIG["parameters"]:
        if kind == "int":
            if isinstance(raw[name], bool) or not isinstance(raw[name], int):
                raise Invalid(f"{name} must be an integer")
            values[name] = raw[name]
        elif kind == "float":
            _number(raw[name], name)
        elif kind == "list":
            values.update(_list_values(raw[name], name, shape[0]))
        elif kind == "ndarray":
            values[name] = shape_of(raw[name], name)
    signature = [(name, kind, tuple(shape)) for name, kind, shape in CONFIG["parameters"]]
    sizes, problems = bind(signature, values)
    problems = problems or size_problems(sizes, CONFIG["constraints"])
    if problems:
        raise Invalid(problems[0])


def canonical(raw: dict[str, Any]) -> str:
    params = [p[0] for p in CONFIG["parameters"] if p[1] != "item"]
    return json.dumps({p: raw[p] for p in params}, separators=(",", ":"), allow_nan=False) + "\n"


def main() -> int:
    text = sys.stdin.read()
    try:
        raw = json.loads(text, parse_constant=lambda c: float(c))
        check(raw)
        if text != canonical(raw):
            raise Invalid(
                "not in canonical form (compact JSON in parameter order, shortest float repr, one final newline)"
            )
    except (Invalid, ValueError, OverflowError, RecursionError) as exc:  # OverflowError: an integer beyond float
        print(f"invalid input: {exc}", file=sys.stderr)
        return INVALID
    return VALID


if __name__ == "__main__":
    sys.exit(main())
