"""The function's parameters as problem.yaml declares them: their record, their rules, the
dimensions they bind.

A parameter is a float64 array (`ndarray`, with a shape), an `int` (itself a dimension, by its
name), a `float`, or a `list` of dicts of arrays: `length` names the dimension the list's length
binds, and `items` declares every item's keys, each an ndarray parameter, all items sharing one
binding of their dimensions (a network's weights, one dict of arrays per layer).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .input_rules import Signature, item_entry
from .shape_rules import DimList
from .spec_rules import Choice, ListOf, Record, RequiredWhen, Text, When

_NAME = "[A-Za-z_][A-Za-z0-9_]*"


@dataclass(frozen=True)
class Parameter:
    name: str
    type: str  # "ndarray", "int" (itself a dimension, by its name), "float" or "list" (of dicts of arrays)
    dtype: str | None
    shape: tuple[int | str, ...]  # dimensions: problem/input_rules.py; () for a scalar or a list
    length: str | None = None  # a list's: the dimension name its length binds
    items: tuple[Parameter, ...] = ()  # a list's: each item's keys, in order, as ndarray parameters


_ARRAY_DTYPE = "arrays must be float64"
_SCALAR_OR_ARRAY = Record(
    {
        "name": Text(),
        "type": Choice(
            ("ndarray", "int", "float"), "must be 'ndarray', 'int', 'float' or 'list', got {value!r}", typed_as=str
        ),
        "dtype": Choice(("float64",), _ARRAY_DTYPE),
        "shape": DimList(),
    },
    optional=frozenset({"dtype"}),
    required_when=RequiredWhen("dtype", "type", "ndarray", _ARRAY_DTYPE),
    def_name="parameter",
)
_ITEM_KEY = Record(
    {
        "name": Text(pattern=_NAME, message="a key is a name of letters, digits and '_' ({value!r})"),
        "type": Choice(("ndarray",), "a list's items hold arrays only, got {value!r}", typed_as=str),
        "dtype": Choice(("float64",), _ARRAY_DTYPE),
        "shape": DimList(),
    },
    def_name="list_item_key",
)
_LIST = Record(
    {
        "name": Text(),
        "type": Choice(("list",), "must be 'list', got {value!r}"),
        "length": Text(pattern=_NAME, message="the length is a dimension name ({value!r})"),
        "items": ListOf(_ITEM_KEY, unique_key="name", noun="key", min_items=1),
    },
    def_name="list_parameter",
)
PARAMETER = When("type", "list", _LIST, _SCALAR_OR_ARRAY)


def parameter_from(doc: dict[str, Any]) -> Parameter:
    """The record of one parameter as PARAMETER checked it."""
    if doc["type"] == "list":
        keys = tuple(parameter_from(k) for k in doc["items"])
        return Parameter(doc["name"], "list", None, (), length=doc["length"], items=keys)
    return Parameter(doc["name"], doc["type"], doc.get("dtype"), doc["shape"])


def signature(parameters: Sequence[Parameter]) -> Signature:
    """(name, type, shape) of each parameter in call order, what input_rules.bind reads: a list is
    its length (a dimension, shape (length,)), then one entry per key, named `name[*]['key']`."""
    out: Signature = []
    for p in parameters:
        if p.type != "list":
            out.append((p.name, p.type, p.shape))
            continue
        out.append((p.name, "list", (p.length or p.name,)))
        out += [(item_entry(p.name, "*", k.name), "item", k.shape) for k in p.items]
    return out


def bound_names(parameters: Sequence[Parameter]) -> set[str]:
    """The dimension names a call binds: each int parameter's, each list's length, each bare name
    of an array's shape (a list's keys' too)."""
    names = {p.name for p in parameters if p.type == "int"} | {p.length for p in parameters if p.length}
    arrays = [a for p in parameters for a in (p.items or (p,))]
    return names | {d for a in arrays for d in a.shape if isinstance(d, str) and d.isidentifier()}


def shapes_to_bind(parameters: Sequence[Parameter]) -> list[tuple[str, tuple[int | str, ...]]]:
    """(where, shape) of every shape the parameters declare, for the check that each name is bound."""
    out = []
    for p in parameters:
        where = f"entry_point.parameters: {p.name}"
        out += [(f"{where}.{k.name}", k.shape) for k in p.items] if p.type == "list" else [(where, p.shape)]
    return out
