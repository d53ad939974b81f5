"""The constraints of problem.yaml applied to one case's inputs: shapes that fit, sizes in range, values in bounds.

The one source of these rules for both input validators: problem/validate.py
(the grader's, on TestCase arrays) and the Kattis package's
input_validators/validate/validate.py, which runs on Kattis without the
grader. The export pastes this module's definitions into that program
(platforms/files.py, `program`), so the module imports only the standard
library and works on plain shapes (tuples of ints) and numbers; `signature`
and `constraints` are problem.yaml's (ProblemSpec.signature and .constraints,
or the export's copy of them). tests/test_validate.py checks that the two
validators agree on every case and on broken ones.

Shapes are symbolic. A parameter's or the output's `shape` is a list of
dimensions, each an integer, a dimension name (`B`, `N`) or an integer
expression over names (`k * k * c`,
`(h // k) * (w // k)`): integers, names, `+ - * //` and
parentheses, nothing else (parsed with `ast` and checked node by node, never
evaluated by Python). A scalar `int` parameter is itself a dimension, named by
the parameter. Binding walks the parameters in order: a bare name takes its
size where it first appears; every later appearance and every expression is
checked against the sizes bound so far (one whose names are not all bound yet,
at the end). The output's shape is then evaluated from the bound sizes.

Each function returns the problems as sentences (an empty list: none), in a
fixed order; the Kattis validator reports the first.
"""

from __future__ import annotations

import ast
import functools

_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//"}


class ShapeSpecError(ValueError):
    """A dimension of problem.yaml that is not an integer, a name or an allowed expression."""


def dimension_names(dim: int | str) -> tuple[str, ...]:
    """The names a dimension reads, in order of first appearance (ShapeSpecError if malformed)."""
    if isinstance(dim, int) and not isinstance(dim, bool):
        if dim < 0:
            raise ShapeSpecError(f"a dimension cannot be negative, got {dim}")
        return ()
    if not isinstance(dim, str):
        raise ShapeSpecError(f"a dimension is an integer, a name or an expression, got {dim!r}")
    return _expression_names(dim)


# A problem has a handful of dimension expressions, read for every input of every test: each is
# parsed once per process (a pure function of the text, so the memo cannot change an answer).
@functools.lru_cache(maxsize=512)
def _parsed(dim: str) -> ast.expr:
    return ast.parse(dim, mode="eval").body


@functools.lru_cache(maxsize=512)
def _expression_names(dim: str) -> tuple[str, ...]:
    try:
        body = _parsed(dim)
    except SyntaxError:
        raise ShapeSpecError(f"{dim!r} is not an integer expression") from None
    names: list[str] = []
    for node in ast.walk(body):
        problem = _node_problem(node)
        if problem:
            raise ShapeSpecError(f"{dim!r}: {problem}")
        if isinstance(node, ast.Name):
            names.append(node.id)
    return tuple(dict.fromkeys(names))


def _node_problem(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and type(node.value) is not int:
        return f"only integer constants, got {node.value!r}"
    if isinstance(node, ast.BinOp) and type(node.op) not in _OPERATORS:
        return "only + - * // are allowed"
    if not isinstance(node, (ast.Name, ast.Constant, ast.BinOp, ast.Load, *_OPERATORS)):
        return "only integers, names, + - * // and parentheses are allowed"
    return None


def evaluate(dim: int | str, sizes: dict[str, int]) -> int:
    """The size `dim` stands for, given `sizes` (KeyError names an unbound name)."""
    if isinstance(dim, int):
        return dim
    return _value(_parsed(dim), sizes)


def _value(node: ast.expr, sizes: dict[str, int]) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        return sizes[node.id]
    assert isinstance(node, ast.BinOp)  # dimension_names allowed nothing else
    a, b = _value(node.left, sizes), _value(node.right, sizes)
    if isinstance(node.op, ast.Add):
        return a + b
    if isinstance(node.op, ast.Sub):
        return a - b
    if isinstance(node.op, ast.Mult):
        return a * b
    return a // b if b else -1  # a size of -1 never matches: a zero divisor is a misfit


def shape_text(shape: tuple[int | str, ...]) -> str:
    """The shape as problem.yaml writes it, in parentheses: (m, k), or (n,) for one dimension."""
    inner = ", ".join(str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


Dim = int | str
Signature = list[tuple[str, str, tuple[Dim, ...]]]  # (name, type, shape) of each parameter, in call order


def item_entry(name: str, index: int | str, key: str) -> str:
    """How an array in a list parameter's item is named: layers[2]['W'] (index "*": any item)."""
    return f"{name}[{index}][{key!r}]"


def _expanded(signature: Signature, values: dict[str, tuple[int, ...] | int]) -> Signature:
    """`signature` with a list's length bound as a dimension (its shape names it) and each key's
    entry `name[*]['key']` repeated for every item of the list in `values`, in order."""
    out: Signature = []
    for name, kind, shape in signature:
        if kind != "item":
            out.append((name, kind, shape))
            continue
        owner, _, key = name.partition("[*]")
        count = values.get(owner)
        out += [(f"{owner}[{i}]{key}", "ndarray", shape) for i in range(count if isinstance(count, int) else 0)]
    return out


def bind(signature: Signature, values: dict[str, tuple[int, ...] | int]) -> tuple[dict[str, int], list[str]]:
    """The sizes the inputs give the dimension names, and how their shapes misfit.

    `signature` is (name, type, shape) of each parameter in call order; `values` hold each array's shape (a
    tuple) and each int parameter's value; a list's, its length, and each of its arrays' shapes
    under item_entry's names. The first misfit stops the binding: the sizes later
    arrays are measured against would be wrong, so only it is reported."""
    sizes: dict[str, int] = {}
    pending: list[tuple[str, Dim, int]] = []
    for name, kind, shape in _expanded(signature, values):
        value = values.get(name)
        problem = None
        if kind == "int" and isinstance(value, int):
            problem = _bind_one(name, name, value, sizes, pending)
        elif kind == "list" and isinstance(value, int):
            problem = _bind_one(f"the length of {name}", shape[0], value, sizes, pending)
        elif kind == "ndarray" and isinstance(value, tuple):
            problem = _bind_array(name, shape, value, sizes, pending)
        if problem:
            return sizes, [problem]
    for name, dim, got in pending:
        if evaluate(dim, sizes) != got:
            return sizes, [f"{name}: {dim} = {evaluate(dim, sizes)}, got {got}"]
    return sizes, []


def _bind_array(
    name: str,
    shape: tuple[int | str, ...],
    got: tuple[int, ...],
    sizes: dict[str, int],
    pending: list[tuple[str, Dim, int]],
) -> str | None:
    if len(got) != len(shape):
        return f"{name} must have shape {_known(shape, sizes)}, got {tuple(got)}"
    for dim, size in zip(shape, got):
        if _bind_one(name, dim, size, sizes, pending) is not None:
            return f"{name} must have shape {_known(shape, sizes)}, got {tuple(got)}"
    return None


def _bind_one(
    name: str, dim: int | str, size: int, sizes: dict[str, int], pending: list[tuple[str, Dim, int]]
) -> str | None:
    if isinstance(dim, str) and dim.isidentifier() and dim not in sizes:
        sizes[dim] = size
        return None
    if all(n in sizes for n in dimension_names(dim)):
        return None if evaluate(dim, sizes) == size else f"{name}: {dim} must be {evaluate(dim, sizes)}, got {size}"
    pending.append((name, dim, size))
    return None


def _known(shape: tuple[int | str, ...], sizes: dict[str, int]) -> str:
    """The shape with the sizes bound so far put in: (D, M) = (8, M)."""
    filled = tuple(evaluate(d, sizes) if all(n in sizes for n in dimension_names(d)) else d for d in shape)
    text = shape_text(shape)
    return text if filled == shape else f"{text} = {shape_text(filled)}"


def output_problems(output_shape: tuple[Dim, ...], sizes: dict[str, int], got: tuple[int, ...]) -> list[str]:
    """The expected output's shape against the output's symbolic shape."""
    want = tuple(evaluate(d, sizes) for d in output_shape)
    return [] if tuple(got) == want else [f"expected output must have shape {want}, got {tuple(got)}"]


def size_problems(sizes: dict[str, int], constraints: dict[str, object]) -> list[str]:
    """Sizes outside problem.yaml's inclusive [min, max] ranges (`constraints`, by dimension name,
    in its order), then each `divisible` pair [a, b] whose a is not a multiple of b."""
    out = []
    for key, bounds in constraints.items():
        if key in ("max_abs_input", "divisible") or not isinstance(bounds, (list, tuple)):
            continue
        lo, hi = bounds
        if not lo <= sizes[key] <= hi:
            out.append(f"{key} = {sizes[key]} is outside [{lo}, {hi}]")
    pairs = constraints.get("divisible", ())
    for a, b in pairs if isinstance(pairs, (list, tuple)) else ():
        if sizes[b] >= 1 and sizes[a] % sizes[b]:
            out.append(f"{a} = {sizes[a]} is not divisible by {b} = {sizes[b]}")
    return out


def magnitude_problem(name: str, finite: bool, largest: float, limit: float) -> str | None:
    """A value of input `name` that is NaN or infinite (`finite` false), or above `limit`
    (max_abs_input) in magnitude (`largest`, the largest absolute value); None if neither."""
    if not finite:
        return f"{name} contains NaN or infinity"
    if largest > limit:
        return f"{name} has a value above {limit:g} in magnitude"
    return None
