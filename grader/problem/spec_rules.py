"""The kinds of rule problem.yaml is written in: each checks a value and writes itself as JSON Schema.

spec.py describes problem.yaml once, as a tree of these rules (`PROBLEM_YAML`).
The same tree does both jobs, so the loader and the published schema cannot
disagree:

- `rule.check(value, where)` returns the value as the grader uses it (a float
  for a positive number, a tuple for a list, ...) or raises SpecError naming
  the path (`where`, spelt `tests.groups[1].points`);
- `rule.schema(defs)` returns the rule as JSON Schema (draft 2020-12); a rule
  with a `def_name` is written once under `$defs` and referred to.

A few rules cannot be said in JSON Schema: an integer written as 4.0 (JSON
does not tell 4 from 4.0), NaN and infinity (YAML has them, JSON has not),
min <= max in a range, and unique names in a list. The loader enforces them;
the schema states them in a description where it has room, and
tests/test_schema.py lists them as the only places where the two differ.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

JSON = dict[str, Any]
ROOT = "problem.yaml"  # the name errors give the document itself


class SpecError(ValueError):
    """problem.yaml is missing, unreadable or does not follow the schema."""


def child(where: str, key: str) -> str:
    """The path of `key` inside the mapping at `where` (top-level keys are named alone)."""
    return key if where == ROOT else f"{where}.{key}"


def typed(value: Any, kind: type | tuple[type, ...], where: str) -> Any:
    """`value` if it is a `kind`, else SpecError. A bool is never a number (YAML's `yes` is a bool)."""
    if isinstance(value, bool) and kind is not bool:
        raise SpecError(f"{where}: expected {getattr(kind, '__name__', kind)}, got bool")
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise SpecError(f"{where}: expected {names}, got {type(value).__name__}")
    return value


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values: true is not 1 (Python's == says it is), 1.0 is 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


class Rule:
    """One rule of problem.yaml; a `def_name` puts its schema under $defs. The kinds are plain
    classes, not dataclasses: spec.py builds its tree at import, on every command's start."""

    __slots__ = ()
    def_name: str | None = None

    def check(self, value: Any, where: str) -> Any:
        raise NotImplementedError

    def own_schema(self, defs: dict[str, JSON]) -> JSON:
        raise NotImplementedError

    def schema(self, defs: dict[str, JSON]) -> JSON:
        """The rule as JSON Schema, adding what it refers to into `defs`."""
        if self.def_name is None:
            return self.own_schema(defs)
        if self.def_name not in defs:
            defs[self.def_name] = {}  # reserved first: the order of first use
            defs[self.def_name] = self.own_schema(defs)
        return {"$ref": f"#/$defs/{self.def_name}"}


class Text(Rule):
    """A string; with `pattern`, one that matches it whole (`message` says what is allowed)."""

    __slots__ = ("pattern", "message")

    def __init__(self, pattern: str | None = None, message: str = "") -> None:
        self.pattern, self.message = pattern, message

    def check(self, value: Any, where: str) -> str:
        text: str = typed(value, str, where)
        if self.pattern is not None and not re.fullmatch(self.pattern, text):
            raise SpecError(f"{where}: {self.message.format(value=text)}")
        return text

    def own_schema(self, defs: dict[str, JSON]) -> JSON:
        out: JSON = {"type": "string"}
        if self.pattern is not None:
            out["pattern"] = f"^{self.pattern}$"
        return out


class Choice(Rule):
    """One of `values` (as JSON compares them); `typed_as` first requires that type. `message`
    follows "where: ", with {value} standing for the value found."""

    __slots__ = ("values", "message", "typed_as")

    def __init__(self, values: tuple[Any, ...], message: str, typed_as: type | None = None) -> None:
        self.values, self.message, self.typed_as = values, message, typed_as

    def check(self, value: Any, where: str) -> Any:
        if self.typed_as is not None:
            typed(value, self.typed_as, where)
        if not any(same_json(value, v) for v in self.values):
            raise SpecError(f"{where}: {self.message.format(value=value)}")
        return value

    def own_schema(self, defs: dict[str, JSON]) -> JSON:
        return {"const": self.values[0]} if len(self.values) == 1 else {"enum": list(self.values)}


class Boolean(Rule):
    """true or false."""

    def check(self, value: Any, where: str) -> bool:
        flag: bool = typed(value, bool, where)
        return flag

    def own_schema(self, defs: dict[str, JSON]) -> JSON:
        return {"type": "boolean"}


class Integer(Rule):
    """An integer (not a bool, not 4.0); with `minimum`, at least that (`message` if not)."""

    __slots__ = ("minimum", "message")

    def __init__(self, minimum: int | None = None, message: str = "") -> None:
        self.minimum, self.message = minimum, message

    def check(self, value: Any, where: str) -> int:
        number: int = typed(value, int, where)
        if self.minimum is not None and number < self.minimum:
            raise SpecError(f"{where}: {self.message}")
        return number

    def own_schema(self, defs: dict[str, JSON]) -> JSON:
        out: JSON = {"type": "integer"}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        return out


def _positive(value: Any, where: str) -> float:
    number: float = typed(value, (int, float), where)
    if not math.isfinite(number) or number <= 0:
        raise SpecError(f"{where}: must be a positive finite number, got {number!r}")
    return number


class PositiveNumber(Rule):
    """A finite number above 0, as a float."""

    def_name = "positive_number"

    def check(self, value: Any, where: str) -> float:
        return float(_positive(value, where))

    def own_schema(self, defs: dict[str, JSON]) -> JSON:
        return {"type": "number", "exclusiveMinimum": 0}


class PositiveInteger(Rule):
    """An integer above 0."""

    def_name = "positive_integer"

    def check(self, value: Any, where: str) -> int:
        return int(_positive(typed(value, int, where), where))

    def own_schema(self, defs: dict[str, JSON]) -> JSON:
        return {"type": "integer", "minimum": 1}


class TextList(Rule):
    """A list of strings, as a tuple."""

    def_name = "string_list"

    def check(self, value: Any, where: str) -> tuple[str, ...]:
        typed(value, list, where)
        return tuple(typed(v, str, f"{where}[{i}]") for i, v in enumerate(value))

    def own_schema(self, defs: dict[str, JSON]) -> JSON:
        return {"type": "array", "items": {"type": "string"}}


class IntRange(Rule):
    """An inclusive [min, max] of integers, 1 <= min <= max, as a tuple."""

    def_name = "int_range"

    def check(self, value: Any, where: str) -> tuple[int, int]:
        pair = typed(value, list, where)
        if len(pair) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair):
            raise SpecError(f"{where}: expected [min, max] integers")
        if not 1 <= pair[0] <= pair[1]:
            raise SpecError(f"{where}: need 1 <= min <= max, got {pair}")
        return (pair[0], pair[1])

    def own_schema(self, defs: dict[str, JSON]) -> JSON:
        bound = {"type": "integer", "minimum": 1}
        return {
            "description": "Inclusive [min, max], 1 <= min <= max (min <= max is checked by grader/problem/spec.py).",
            "type": "array",
            "prefixItems": [dict(bound), dict(bound)],
            "minItems": 2,
            "maxItems": 2,
            "items": False,
        }


class TextMap(Rule):
    """A mapping of names to strings, as a dict."""

    def check(self, value: Any, where: str) -> dict[str, str]:
        if not isinstance(value, dict):
            raise SpecError(f"{where}: expected a mapping, got {type(value).__name__}")
        return {typed(k, str, where): typed(v, str, child(where, str(k))) for k, v in value.items()}

    def own_schema(self, defs: dict[str, JSON]) -> JSON:
        return {"type": "object", "additionalProperties": {"type": "string"}}


class RequiredWhen:
    """`key` must be present when `other` has the value `equals` (else `where.key: message`)."""

    __slots__ = ("key", "other", "equals", "message")

    def __init__(self, key: str, other: str, equals: Any, message: str) -> None:
        self.key, self.other, self.equals, self.message = key, other, equals, message


class Record(Rule):
    """A mapping with exactly these keys (those in `optional` may be left out); its values checked
    in this order and returned as a dict in this order. `def_name`: its name under $defs, if any."""

    __slots__ = ("fields", "optional", "required_when", "def_name")

    def __init__(
        self,
        fields: Mapping[str, Rule],
        optional: frozenset[str] = frozenset(),
        required_when: RequiredWhen | None = None,
        def_name: str | None = None,
    ) -> None:
        self.fields, self.optional, self.required_when, self.def_name = fields, optional, required_when, def_name

    def check(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise SpecError(f"{where}: expected a mapping, got {type(value).__name__}")
        required = set(self.fields) - self.optional
        unknown = set(value) - set(self.fields)
        if unknown:
            raise SpecError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
        missing = required - set(value)
        if missing:
            raise SpecError(f"{where}: missing key(s) {', '.join(sorted(missing))}")
        out = {key: rule.check(value[key], child(where, key)) for key, rule in self.fields.items() if key in value}
        when = self.required_when
        if when is not None and when.key not in out and same_json(out.get(when.other), when.equals):
            raise SpecError(f"{child(where, when.key)}: {when.message}")
        return out

    def own_schema(self, defs: dict[str, JSON]) -> JSON:
        out: JSON = {
            "type": "object",
            "additionalProperties": False,
            "required": sorted(set(self.fields) - self.optional),
            "properties": {key: rule.schema(defs) for key, rule in self.fields.items()},
        }
        when = self.required_when
        if when is not None:
            out["if"] = {"properties": {when.other: {"const": when.equals}}}
            out["then"] = {"required": [when.key]}
        return out


class When(Rule):
    """A mapping checked by `then` when its `key` has the value `equals`, else by `otherwise`
    (problem.yaml's parameters: a list parameter has keys of its own)."""

    __slots__ = ("key", "equals", "then", "otherwise")

    def __init__(self, key: str, equals: Any, then: Rule, otherwise: Rule) -> None:
        self.key, self.equals, self.then, self.otherwise = key, equals, then, otherwise

    def check(self, value: Any, where: str) -> Any:
        chosen = isinstance(value, dict) and same_json(value.get(self.key), self.equals)
        return (self.then if chosen else self.otherwise).check(value, where)

    def own_schema(self, defs: dict[str, JSON]) -> JSON:
        return {
            "if": {"properties": {self.key: {"const": self.equals}}, "required": [self.key]},
            "then": self.then.schema(defs),
            "else": self.otherwise.schema(defs),
        }


class First:
    """The list's first item must exist and have these values (else `where: message`); the
    schema says so with `description`."""

    __slots__ = ("values", "message", "description")

    def __init__(self, values: Mapping[str, Any], message: str, description: str) -> None:
        self.values, self.message, self.description = values, message, description


class ListOf(Rule):
    """A list of `item`s, as a tuple; `first` constrains the first item, `unique_key` names a key
    no two items may share (`where: duplicate <noun> names`; not expressible in JSON Schema)."""

    __slots__ = ("item", "first", "unique_key", "noun", "min_items")

    def __init__(
        self, item: Rule, first: First | None = None, unique_key: str | None = None, noun: str = "", min_items: int = 0
    ) -> None:
        self.item, self.first, self.unique_key, self.noun = item, first, unique_key, noun
        self.min_items = min_items

    def check(self, value: Any, where: str) -> tuple[Any, ...]:
        items = tuple(self.item.check(v, f"{where}[{i}]") for i, v in enumerate(typed(value, list, where)))
        if len(items) < self.min_items:
            raise SpecError(f"{where}: at least {self.min_items} {self.noun or 'item'}(s) needed, got {len(items)}")
        if self.first is not None and not (
            items and all(same_json(items[0].get(k), v) for k, v in self.first.values.items())
        ):
            raise SpecError(f"{where}: {self.first.message}")
        if self.unique_key is not None:
            names = [item[self.unique_key] for item in items]
            if len(set(names)) != len(names):
                raise SpecError(f"{where}: duplicate {self.noun} names")
        return items

    def own_schema(self, defs: dict[str, JSON]) -> JSON:
        out: JSON = {"type": "array"}
        if self.first is not None or self.min_items:
            out["minItems"] = max(self.min_items, 1 if self.first is not None else 0)
        out["items"] = self.item.schema(defs)
        if self.first is not None:
            out["prefixItems"] = [
                {
                    **self.item.schema(defs),
                    "description": self.first.description,
                    "properties": {k: {"const": v} for k, v in self.first.values.items()},
                }
            ]
        return out


def json_schema(rule: Rule, title: str, description: str, def_order: tuple[str, ...]) -> JSON:
    """The whole document's schema: `rule` at the top, what it refers to under $defs in `def_order`
    (then any other in the order of first use)."""
    defs: dict[str, JSON] = {}
    body = rule.schema(defs)
    ordered = {name: defs[name] for name in def_order if name in defs}
    ordered.update({name: d for name, d in defs.items() if name not in ordered})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "description": description,
        "$defs": ordered,
        **body,
    }
