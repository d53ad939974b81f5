"""Jupyter notebooks as submissions: the code cells as the program Jupyter would run, never executed here.

The notebook is parsed as JSON and its code cells are taken in order, each read
the way Jupyter reads it: through IPython's own transformation
(judging/ipython_syntax.py), so that what IPython runs is what is graded. The
calls on IPython that magics, shell escapes and help queries become
(`get_ipython().run_line_magic(...)`) mean nothing outside a kernel and are
replaced by `None`; so are the cells Otter-Grader adds to a notebook or its
students run (`import otter`, `grader = otter.Notebook(...)`,
`grader.check("q1")`, `grader.check_all()`, `grader.export(...)`), which are
not part of the answer. A cell magic that only wraps ordinary code (`%%time`,
`%%capture`) keeps its body, read again as a cell, as IPython does; any other
cell magic (`%%bash`, `%%writefile`, `%%timeit`) makes its cell something the
grader does not run, and a note says so (the static check quotes it when the
function is then missing).

Every cell keeps its line numbers: `line_map` maps each line of the program to
"code cell C, line L" of the notebook, so messages point at the learner's cell
even after a magic continued over three lines became one call. One extractor
for the whole project: `grade`, `batch`, `watch` and the exports' programs all
grade a notebook through this module.
"""
from __future__ import annotations

import ast
import json
import re
import warnings
from dataclasses import dataclass, field

from .ipython_rewrites import CellNotRunnable, Piece
from .ipython_syntax import Transformed, calls_on_ipython, split_pieces, transform_pieces
from .paths import shown


class NotebookError(ValueError):
    """The file is not a readable Jupyter notebook."""


@dataclass(frozen=True)
class NotebookCode:
    source: str                  # the code cells as one program
    line_map: tuple[str, ...]    # "code cell C, line L" for each line of `source`
    skipped: tuple[str, ...]     # one note per cell the grader does not run, saying why


# Python's own line ends. str.splitlines() also splits at U+2028, U+2029, \x0b,
# \x0c, \x1c-\x1e and \x85, which may sit inside a string literal: they are not
# the ends of lines a traceback counts.
_LINE_END = re.compile(r"\r\n|\r|\n")

# Cell magics that run their body as ordinary code in the notebook's own namespace and
# only add something around it (a timing, captured output): their body is the cell's code.
WRAPPER_MAGICS = frozenset({"time", "capture"})

# Why the other common cell magics do not make their body part of the program.
_NOT_RUN = {
    "timeit": "runs its body inside a timing function, so nothing it defines survives",
    "prun": "runs its body under the profiler, which IPython alone provides",
    "writefile": "writes its body to a file instead of running it",
    "script": "runs its body in another program", "bash": "runs its body in a shell", "sh": "runs its body in a shell",
    "python": "runs its body in another Python process", "python3": "runs its body in another Python process",
    "html": "displays its body", "javascript": "displays its body", "js": "displays its body",
    "latex": "displays its body", "markdown": "displays its body", "svg": "displays its body",
}

# Otter-Grader's Notebook methods a student or `otter assign` calls in a cell of its own.
OTTER_METHODS = frozenset({"check", "check_all", "export", "to_pdf", "run_plugin", "add_plugin_files"})


def _ends(text: str) -> int:
    return len(_LINE_END.findall(text))


@dataclass
class _Program:
    """The program being assembled, with the notebook line each of its lines starts at."""
    text: list[str] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    line_open: bool = False      # the last text written did not end a line

    def emit(self, text: str, first_line: int) -> None:
        """Write `text`, whose first line is line `first_line` of the cell."""
        if not text:
            return
        if not self.line_open:
            self.labels.append(first_line)
        text = _LINE_END.sub("\n", text)    # as compile() reads them: \r\n and \r are \n
        ends = [m.end() for m in _LINE_END.finditer(text)]
        self.labels += [first_line + k for k, end in enumerate(ends, 1) if end < len(text)]
        self.line_open = not ends or ends[-1] < len(text)
        self.text.append(text)


def _lines_before(texts: list[str]) -> list[int]:
    """The cell's line number at the start of each of its pieces."""
    starts = [1]
    for t in texts:
        starts.append(starts[-1] + _ends(t))
    return starts


def _render(pieces: tuple[Piece, ...], texts: list[str], prog: _Program, blank: bool) -> None:
    """Write the cell: each piece where it stands (or empty lines when `blank`), and an
    empty line for every original line no piece stands for (a blank line IPython dropped,
    a wrapping magic's own line), so that later lines keep their numbers."""
    line_at = _lines_before(texts)
    covered = 0
    for p in pieces:
        for i in range(covered, p.first):
            prog.emit("\n" * _ends(texts[i]), line_at[i])
        lines = _ends("".join(texts[p.first:p.last + 1]))
        text = "\n" * lines if blank else p.runs
        prog.emit(text, line_at[p.first])
        if lines > _ends(text):
            prog.emit("\n" * (lines - _ends(text)), line_at[p.first] + _ends(text))
        covered = p.last + 1
    for i in range(covered, len(texts)):
        prog.emit("\n" * _ends(texts[i]), line_at[i])


def _cell_text(cell: dict, index: int) -> str:
    src = cell.get("source", "")
    if isinstance(src, list):
        if not all(isinstance(s, str) for s in src):
            raise NotebookError(f"cell {index} has a malformed source")
        src = "".join(src)
    if not isinstance(src, str):
        raise NotebookError(f"cell {index} has a malformed source")
    _refuse_surrogates(src, index)
    return src if src.endswith("\n") else src + "\n"


def _refuse_surrogates(src: str, index: int) -> None:
    """JSON's "\\ud800" escape decodes to a lone surrogate, which no later step can encode:
    the notebook is refused here, at the boundary, naming where the character sits."""
    for n, ln in enumerate(_LINE_END.split(src), 1):
        bad = next((ch for ch in ln if "\ud800" <= ch <= "\udfff"), None)
        if bad is not None:
            raise NotebookError(f"code cell {index}, line {n} holds a lone surrogate (U+{ord(bad):04X}, saved as the "
                                "JSON escape \\u" f"{ord(bad):04x}), which is not a character: remove it or write "
                                "the character it was meant to be")


def _cell_program(text: str, index: int) -> tuple[str, list[int], str | None]:
    """One cell as the program runs it: its text, the cell line each of its lines starts at,
    and a note when the grader does not run the cell."""
    texts = [p.text for p in split_pieces(text)]
    try:
        t: Transformed = transform_pieces(split_pieces(text))
        while t.magic is not None and t.magic.name in WRAPPER_MAGICS:
            t = transform_pieces(list(t.magic.body))       # IPython runs the body as a cell of its own
    except CellNotRunnable as exc:
        raise NotebookError(f"code cell {index} cannot run in Jupyter either: {exc}") from None
    note = None
    if t.magic is not None:
        magic_line = f"%%{t.magic.name} {t.magic.args}".strip()
        why = _NOT_RUN.get(t.magic.name, "is an IPython cell magic, not Python")
        note = (f"code cell {index} starts with {shown(magic_line, 60)}, which {why}; move the code to an "
                "ordinary code cell")
    prog = _Program()
    _render(t.pieces, texts, prog, blank=note is not None)
    return "".join(prog.text), prog.labels, note


# --- what only a kernel understands: calls on IPython, Otter's plumbing ---------------------------------------

@dataclass
class _Seen:
    """What the cells before this one bound or started (the program is one module, the
    notebook's cells are compiled one by one)."""
    otter_modules: set[str] = field(default_factory=set)     # names `import otter` bound
    otter_notebooks: set[str] = field(default_factory=set)   # names bound to otter.Notebook(...)
    statements: bool = False                                 # a statement other than a docstring


def _call_on(node: ast.AST, names: set[str], methods: frozenset[str]) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in methods
            and isinstance(node.func.value, ast.Name) and node.func.value.id in names)


def _otter_plumbing(stmt: ast.stmt, seen: _Seen) -> bool:
    """Does this top-level statement only drive Otter-Grader?"""
    if isinstance(stmt, ast.Import) and all(a.name == "otter" for a in stmt.names):
        seen.otter_modules |= {a.asname or "otter" for a in stmt.names}
        return True
    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and _call_on(stmt.value, seen.otter_modules, frozenset({"Notebook"}))):
        seen.otter_notebooks.add(stmt.targets[0].id)
        return True
    return isinstance(stmt, ast.Expr) and _call_on(stmt.value, seen.otter_notebooks, OTTER_METHODS)


def _misplaced_future(stmt: ast.stmt, seen: _Seen, first: bool) -> bool:
    """A `from __future__ import` that Jupyter accepts at the top of a later cell but that
    could not stand there in one module: it is dropped (a future import changes nothing
    in Python 3 but `annotations`, which only delays evaluating annotations)."""
    if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
        return seen.statements
    docstring = first and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
        and isinstance(stmt.value.value, str)
    seen.statements = seen.statements or not docstring
    return False


def _only_in_a_kernel(tree: ast.Module, seen: _Seen) -> list[ast.stmt | ast.expr]:
    """What is replaced by None: Otter's plumbing, misplaced future imports, calls on IPython."""
    nodes: list[ast.stmt | ast.expr] = []
    for stmt in tree.body:
        first = not seen.statements
        if _otter_plumbing(stmt, seen) or _misplaced_future(stmt, seen, first):
            nodes.append(stmt)
    return nodes + calls_on_ipython(tree)


def _lines_with_ends(text: str) -> list[str]:
    parts: list[str] = []
    pos = 0
    for m in _LINE_END.finditer(text):
        parts.append(text[pos:m.end()])
        pos = m.end()
    if pos < len(text):
        parts.append(text[pos:])
    return parts


def _split_at(line: str, col: int) -> tuple[str, str]:
    """A line cut at an ast column offset (which counts UTF-8 bytes)."""
    data = line.encode("utf-8")
    return data[:col].decode("utf-8"), data[col:].decode("utf-8")


def _as_none(lines: list[str], node: ast.stmt | ast.expr) -> None:
    """Replace the statement or expression `node` by `None`, keeping every line where it is."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    head, _ = _split_at(lines[first], node.col_offset)
    _, tail = _split_at(lines[last], node.end_col_offset or 0)
    if first == last:
        lines[first] = head + "None" + tail
        return
    end = _LINE_END.search(lines[first])
    lines[first] = head + "(None" + (end.group() if end else "\n")
    for i in range(first + 1, last):
        middle = _LINE_END.search(lines[i])
        lines[i] = middle.group() if middle else ""
    lines[last] = ")" + tail


class CellSyntaxError(NotebookError):
    """A cell that does not compile on its own, as Jupyter compiles it."""


def _compiled(program: str, index: int, numbers: list[int], source: str) -> ast.Module | None:
    """The cell's syntax tree; CellSyntaxError when Python refuses the cell (on its own: an
    unclosed bracket must not reach into the next cell), quoting the learner's own line.
    None when the tree is too deep to build here: compiling the whole program reports it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # SyntaxWarning (an invalid escape) is not an error
            tree = ast.parse(program)
            compile(tree, "cell", "exec", dont_inherit=True)
    except SyntaxError as exc:
        line = numbers[exc.lineno - 1] if exc.lineno and 0 < exc.lineno <= len(numbers) else None
        if line is None:
            raise CellSyntaxError(f"syntax error in code cell {index}: {exc.msg}") from None
        original = _LINE_END.split(source)
        text = shown(original[line - 1].strip(), 200) if line <= len(original) else ""
        raise CellSyntaxError(f"syntax error in code cell {index}, line {line}: {exc.msg}"
                              + (f": {text}" if text else "")) from None
    except (ValueError, RecursionError, MemoryError):
        return None
    return tree


def _finished(program: str, index: int, numbers: list[int], source: str, seen: _Seen) -> str:
    """The cell checked on its own, with what only a kernel understands replaced by None."""
    tree = _compiled(program, index, numbers, source)
    if tree is None:
        return program
    nodes = _only_in_a_kernel(tree, seen)
    if not nodes:
        return program
    kept: list[ast.stmt | ast.expr] = []
    for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):
        if kept and (node.lineno, node.col_offset) < (kept[-1].end_lineno or 0, kept[-1].end_col_offset or 0):
            continue          # inside a statement already replaced
        kept.append(node)
    lines = _lines_with_ends(program)
    for node in reversed(kept):
        _as_none(lines, node)
    return "".join(lines)


# --- the notebook --------------------------------------------------------------------------------------------

class CodeTooLarge(NotebookError):
    """The code cells hold more source than a submission may."""

    def __init__(self, size: int):
        super().__init__(f"the code cells hold {size} bytes of code")
        self.size = size


def _code_cells(text: str) -> list[dict]:
    try:
        nb = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise NotebookError(f"not valid JSON ({exc})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError("no 'cells' list: not a Jupyter notebook (nbformat 4)")
    cells = [c for c in nb["cells"] if isinstance(c, dict) and c.get("cell_type") == "code"]
    if not cells:
        raise NotebookError("the notebook has no code cells")
    return cells


def extract(text: str, max_code_bytes: int | None = None) -> NotebookCode:
    """The notebook's code cells as one program (see NotebookCode). With `max_code_bytes`,
    code cells holding more than that are refused (CodeTooLarge) before any is read."""
    cells = _code_cells(text)
    sources = [_cell_text(cell, index) for index, cell in enumerate(cells, 1)]
    size = sum(len(s.encode("utf-8")) for s in sources)
    if max_code_bytes is not None and size > max_code_bytes:
        raise CodeTooLarge(size)
    parts: list[str] = []
    labels: list[str] = []
    skipped: list[str] = []
    seen = _Seen()
    for index, source in enumerate(sources, 1):
        program, lines, note = _cell_program(source, index)
        if note:
            skipped.append(note)
        parts += [_finished(program, index, lines, source, seen), "\n"]
        labels += [f"code cell {index}, line {n}" for n in lines] + [f"after code cell {index}"]
    return NotebookCode("".join(parts), tuple(labels), tuple(skipped))


def extract_code(text: str) -> tuple[str, tuple[str, ...]]:
    """(joined Python source, per-line "cell C, line L" labels)."""
    code = extract(text)
    return code.source, code.line_map


_AT_LINE = re.compile(r"\bat line (\d+)")
_FRAME_LINE = re.compile(r"(?m)^(\s*)line (\d+), in ")


def relabel(message: str, line_map: tuple[str, ...]) -> str:
    """Add "(code cell C, line L)" to the line numbers the grader's messages cite.

    Only the grader's own phrasings are touched: the first "at line N" and the
    traceback lines "line N, in f: ..."; numbers outside the joined source stay as they are.
    """
    def label(n: str) -> str:
        i = int(n)
        return f" ({line_map[i - 1]})" if 0 < i <= len(line_map) else ""
    message = _AT_LINE.sub(lambda m: f"at line {m.group(1)}{label(m.group(1))}", message, count=1)
    return _FRAME_LINE.sub(lambda m: f"{m.group(1)}line {m.group(2)}{label(m.group(2))}, in ", message)
