"""The kinds of rule problem.yaml's shapes and constraints are written in (spec_rules.py has the rest).

A shape is a list of dimensions (integers, names, integer expressions: problem/input_rules.py
reads them); the constraints map any dimension name to its range, beside a few fixed keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .input_rules import ShapeSpecError, dimension_names
from .spec_rules import JSON, IntRange, Rule, SpecError, child, typed


class DimList(Rule):
    """A shape: a list of dimensions, each an integer, a name or an integer expression over
    names (problem/shapes.py), as a tuple."""

    def_name = "shape"

    def check(self, value: Any, where: str) -> tuple[int | str, ...]:
        typed(value, list, where)
        for i, dim in enumerate(value):
            try:
                dimension_names(dim)
            except ShapeSpecError as exc:
                raise SpecError(f"{where}[{i}]: {exc}") from None
        return tuple(value)

    def own_schema(self, defs: dict[str, JSON]) -> JSON:
        return {
            "description": "Dimensions: integers, names, or integer expressions over names with + - * // "
            "and parentheses (checked by grader/problem/shapes.py).",
            "type": "array",
            "items": {"type": ["string", "integer"]},
        }


class SizeRanges(Rule):
    """The constraints: `fixed` keys with their own rules, and any other key a dimension name
    whose inclusive range (an IntRange) every case keeps to."""

    __slots__ = ("fixed", "optional")

    def __init__(self, fixed: Mapping[str, Rule], optional: frozenset[str] = frozenset()) -> None:
        self.fixed, self.optional = fixed, optional

    def check(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise SpecError(f"{where}: expected a mapping, got {type(value).__name__}")
        missing = set(self.fixed) - self.optional - set(value)
        if missing:
            raise SpecError(f"{where}: missing key(s) {', '.join(sorted(missing))}")
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in self.fixed:
                out[key] = self.fixed[key].check(item, child(where, key))
            elif isinstance(key, str) and key.isidentifier():
                out[key] = IntRange().check(item, child(where, key))
            else:
                raise SpecError(f"{where}: {key!r} is not a dimension name")
        return out

    def own_schema(self, defs: dict[str, JSON]) -> JSON:
        return {
            "type": "object",
            "required": sorted(set(self.fixed) - self.optional),
            "properties": {key: rule.schema(defs) for key, rule in self.fixed.items()},
            "propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
            "additionalProperties": IntRange().schema(defs),
        }


class NamePairs(Rule):
    """A list of [a, b] pairs of dimension names, as a tuple of tuples."""

    def check(self, value: Any, where: str) -> tuple[tuple[str, str], ...]:
        pairs = []
        for i, pair in enumerate(typed(value, list, where)):
            if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(n, str) for n in pair)):
                raise SpecError(f"{where}[{i}]: expected [name, name]")
            pairs.append((pair[0], pair[1]))
        return tuple(pairs)

    def own_schema(self, defs: dict[str, JSON]) -> JSON:
        name = {"type": "string"}
        return {
            "type": "array",
            "items": {"type": "array", "prefixItems": [name, name], "minItems": 2, "maxItems": 2, "items": False},
        }
