"""A notebook cell made a piece of a plain module: what only a Jupyter kernel understands, replaced.

Jupyter compiles and runs each cell on its own, in a kernel's namespace; the grader
joins the cells into one module and imports it in the sandbox. Each cell is first
compiled on its own, as Jupyter compiles it (an unclosed bracket does not reach into
the next cell), then, without moving any line:

- calls on IPython (`get_ipython().system(...)`, written by hand; the ones IPython's
  own syntax becomes are replaced where they are made, judging/ipython_rewrites.py)
  become `None`;
- Otter-Grader's plumbing (`import otter`, `grader = otter.Notebook(...)`,
  `grader.check("q1")`, `grader.check_all()`, `grader.export(...)`) becomes `None`:
  it is not part of the answer, and the import rule would refuse it;
- `display(...)`, a builtin in a kernel, calls a function that returns None, unless
  the notebook binds the name `display` itself;
- `from __future__ import ...`, which Jupyter accepts at the top of any cell and
  keeps for the later ones, becomes `None`; the notebook reader puts one future
  import with all of the features on a line before the first cell.

`KernelState` carries from cell to cell what the next one depends on: the names bound
so far (they decide IPython's automagic, judging/jupyter_kernel.py), Otter's names,
the future features.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field

from .ipython_syntax import calls_on_ipython
from .jupyter_kernel import Magics

# Otter-Grader's Notebook methods a student or `otter assign` calls in a cell of its own.
OTTER_METHODS = frozenset({"check", "check_all", "export", "to_pdf", "run_plugin", "add_plugin_files"})
DISPLAY_STAND_IN = "(lambda *args, **kwargs: None)"
_LINE_END = re.compile(r"\r\n|\r|\n")


class CellRefused(ValueError):
    """Python refuses to compile the cell on its own; `line` is the line of the cell's program."""

    def __init__(self, message: str, line: int | None):
        super().__init__(message)
        self.line = line


@dataclass
class KernelState:
    bound: set[str] = field(default_factory=set)  # names the cells bound at module level
    otter_modules: set[str] = field(default_factory=set)  # names `import otter` bound
    otter_notebooks: set[str] = field(default_factory=set)  # names bound to otter.Notebook(...)
    futures: list[str] = field(default_factory=list)  # features of every __future__ import
    magics: Magics = field(default_factory=Magics)  # the magics the kernel knows by now


_OWN_SCOPE = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.GeneratorExp,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
)


def _binds(stmt: ast.stmt) -> tuple[set[str], set[str]]:
    """(names bound, names deleted) by one module-level statement, blocks at module level
    included; an iterative walk (a 500-term expression must not exhaust the stack). The
    name of `except ... as e` is not counted: Python deletes it when the handler ends."""
    bound: set[str] = set()
    deleted: set[str] = set()
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Del):
            deleted.add(node.id)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
        if not isinstance(node, _OWN_SCOPE):  # what is inside those is another scope
            stack.extend(ast.iter_child_nodes(node))
    return bound, deleted


def update_bound(tree: ast.Module, bound: set[str]) -> None:
    """Turn `bound` (the module-level names before the cell `tree` ran) into those after it."""
    for stmt in tree.body:
        names, deleted = _binds(stmt)
        bound |= names
        bound -= deleted - names


def bound_names(tree: ast.Module) -> set[str]:
    bound: set[str] = set()
    update_bound(tree, bound)
    return bound


def _call_on(node: ast.AST, names: set[str], methods: frozenset[str]) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in methods
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in names
    )


def _otter_plumbing(stmt: ast.stmt, state: KernelState) -> bool:
    """Does this top-level statement only drive Otter-Grader?"""
    if isinstance(stmt, ast.Import) and all(a.name == "otter" for a in stmt.names):
        state.otter_modules |= {a.asname or "otter" for a in stmt.names}
        return True
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and _call_on(stmt.value, state.otter_modules, frozenset({"Notebook"}))
    ):
        state.otter_notebooks.add(stmt.targets[0].id)
        return True
    return isinstance(stmt, ast.Expr) and _call_on(stmt.value, state.otter_notebooks, OTTER_METHODS)


def _module_global(stmt: ast.stmt) -> bool:
    """`global x` at a cell's top level: nothing in a kernel (each cell has its own symbol
    table), a SyntaxError in one module where x was assigned earlier."""
    return isinstance(stmt, ast.Global)


def _future(stmt: ast.stmt, state: KernelState) -> bool:
    if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
        state.futures += [a.name for a in stmt.names if a.name not in state.futures]
        return True
    return False


def _display_loads(tree: ast.Module, state: KernelState) -> list[ast.Name]:
    if "display" in state.bound or "display" in bound_names(tree):
        return []
    return [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "display" and isinstance(n.ctx, ast.Load)]


def _lines_with_ends(text: str) -> list[str]:
    parts: list[str] = []
    pos = 0
    for m in _LINE_END.finditer(text):
        parts.append(text[pos : m.end()])
        pos = m.end()
    if pos < len(text):
        parts.append(text[pos:])
    return parts


def _split_at(line: str, col: int) -> tuple[str, str]:
    """A line cut at an ast column offset (which counts UTF-8 bytes)."""
    data = line.encode("utf-8")
    return data[:col].decode("utf-8"), data[col:].decode("utf-8")


def _replace(lines: list[str], node: ast.stmt | ast.expr, text: str) -> None:
    """Put `text` (one line) where `node` stands, keeping every line where it is."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    head, _ = _split_at(lines[first], node.col_offset)
    _, tail = _split_at(lines[last], node.end_col_offset or 0)
    if first == last:
        lines[first] = head + text + tail
        return
    end = _LINE_END.search(lines[first])
    lines[first] = head + "(" + text + (end.group() if end else "\n")
    for i in range(first + 1, last):
        middle = _LINE_END.search(lines[i])
        lines[i] = middle.group() if middle else ""
    lines[last] = ")" + tail


def _compiled(program: str) -> ast.Module:
    """The cell's syntax tree, compiled on its own; CellRefused when Python refuses it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning (an invalid escape) is not an error
            tree = ast.parse(program)
            compile(tree, "cell", "exec", dont_inherit=True)
    except SyntaxError as exc:
        hint = (
            "; Jupyter runs a cell's top-level await, a module cannot: move it into a function"
            if "outside" in (exc.msg or "") and "await" in (exc.msg or "")
            else ""
        )
        raise CellRefused((exc.msg or "invalid syntax") + hint, exc.lineno) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        why = str(exc) or "its expressions are nested too deeply for Python to compile"
        raise CellRefused(f"{why} ({type(exc).__name__})", None) from None
    return tree


def finish_cell(program: str, state: KernelState) -> str:
    """The cell's program as a piece of one module (see the module docstring)."""
    tree = _compiled(program)
    nodes: list[ast.stmt | ast.expr] = [
        s for s in tree.body if _otter_plumbing(s, state) or _future(s, state) or _module_global(s)
    ]
    nodes += calls_on_ipython(tree)
    displays = _display_loads(tree, state)
    update_bound(tree, state.bound)
    if not nodes and not displays:
        return program
    kept: list[tuple[ast.stmt | ast.expr, str]] = []
    for node, text in sorted(
        [(n, "None") for n in nodes] + [(n, DISPLAY_STAND_IN) for n in displays],
        key=lambda nt: (nt[0].lineno, nt[0].col_offset),
    ):
        if kept and (node.lineno, node.col_offset) < (kept[-1][0].end_lineno or 0, kept[-1][0].end_col_offset or 0):
            continue  # inside what is already replaced
        kept.append((node, text))
    lines = _lines_with_ends(program)
    for node, text in reversed(kept):
        _replace(lines, node, text)
    return "".join(lines)
