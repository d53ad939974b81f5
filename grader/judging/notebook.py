"""Jupyter notebooks as submissions: the code cells as the program Jupyter would run, never executed here.

The notebook is parsed as JSON and its code cells are taken in order, each read
the way a Jupyter kernel reads it (docs/feedback.md, "Notebooks"):

1. IPython's TransformerManager (judging/ipython_syntax.py): prompts, indentation,
   magics, shell escapes, help queries. What those become outside a kernel is
   carried with each rewritten line (`None`, or the statement `%time` runs);
2. a cell of one line through the kernel's prefilter, which makes `pip install x`
   a magic (automagic, judging/jupyter_kernel.py);
3. a cell magic that only wraps ordinary code (`%%time`, `%%capture`) keeps its
   body, read again as a cell, as IPython runs it; any other cell magic (`%%bash`,
   `%%writefile`, `%%timeit`), or a wrapping one IPython refuses for its arguments,
   makes its cell something the grader does not run, and a note says so (the static
   check quotes it when the function is then missing);
4. the cell compiled on its own, then what only a kernel understands replaced
   (judging/kernel_program.py: Otter's plumbing, `display`, `__future__` imports).

Every cell keeps its line numbers: `line_map` maps each line of the program to
"code cell C, line L" of the notebook, so messages point at the learner's cell even
after a magic continued over three lines became one call. One reader for the whole
project: `grade`, `batch`, `watch` and the exports' programs all grade a notebook
through this module.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .ipython_rewrites import CellNotRunnable, magic_program, time_statement
from .ipython_scan import Piece
from .ipython_syntax import CellMagic, Transformed, split_pieces, transform_pieces
from .jupyter_kernel import automagic
from .kernel_program import CellRefused, KernelState, finish_cell
from .paths import shown


class NotebookError(ValueError):
    """The file is not a readable Jupyter notebook."""


class CellSyntaxError(NotebookError):
    """A cell that neither Python nor IPython would run, with where and why."""


class CodeTooLarge(NotebookError):
    """The code cells hold more source than a submission may."""

    def __init__(self, size: int):
        super().__init__(f"the code cells hold {size} bytes of code")
        self.size = size


@dataclass(frozen=True)
class NotebookCode:
    source: str  # the code cells as one program
    line_map: tuple[str, ...]  # "code cell C, line L" for each line of `source`
    skipped: tuple[str, ...]  # one note per cell the grader does not run, saying why


# Python's own line ends. str.splitlines() also splits at U+2028, U+2029, \x0b,
# \x0c, \x1c-\x1e and \x85, which may sit inside a string literal: they are not
# the ends of lines a traceback counts.
_LINE_END = re.compile(r"\r\n|\r|\n")

# Cell magics that run their body as ordinary code in the notebook's own namespace and
# only add something around it (a timing, captured output): their body is the cell's code.
WRAPPER_MAGICS = frozenset({"time", "capture"})
# IPython runs a wrapping magic's body as a new cell, nested calls and all; it runs out
# of stack somewhere past 200 levels. The grader reads at most this many.
MAX_WRAPPING = 20
_CAPTURE_FLAGS = ("--no-stderr", "--no-stdout", "--no-display")

# Why the other common cell magics do not make their body part of the program.
_NOT_RUN = {
    "timeit": "runs its body inside a timing function, so nothing it defines survives",
    "prun": "runs its body under the profiler, which IPython alone provides",
    "writefile": "writes its body to a file instead of running it",
    "script": "runs its body in another program",
    "bash": "runs its body in a shell",
    "sh": "runs its body in a shell",
    "python": "runs its body in another Python process",
    "python3": "runs its body in another Python process",
    "html": "displays its body",
    "javascript": "displays its body",
    "js": "displays its body",
    "latex": "displays its body",
    "markdown": "displays its body",
    "svg": "displays its body",
}


def _ends(text: str) -> int:
    return len(_LINE_END.findall(text))


@dataclass
class _Program:
    """A cell's program being assembled, with the cell line each of its lines starts at."""

    text: list[str] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    line_open: bool = False  # the last text written did not end a line

    def emit(self, text: str, first_line: int) -> None:
        """Write `text`, whose first line is line `first_line` of the cell."""
        if not text:
            return
        if not self.line_open:
            self.labels.append(first_line)
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


def _render(pieces: tuple[Piece, ...], texts: list[str], blank: bool) -> _Program:
    """The cell: each piece where it stands (or empty lines when `blank`), and an empty line
    for every original line no piece stands for (a blank line IPython dropped, a wrapping
    magic's own line), so that later lines keep their numbers."""
    prog = _Program()
    line_at = _lines_before(texts)
    covered = 0
    for p in pieces:
        for i in range(covered, p.first):
            prog.emit("\n" * _ends(texts[i]), line_at[i])
        first = max(p.first, covered)  # a piece never stands for a line twice
        lines = _ends("".join(texts[first : p.last + 1]))
        text = "\n" * lines if blank else p.runs
        prog.emit(text, line_at[min(first, len(texts) - 1)])
        if lines > _ends(text):
            prog.emit("\n" * (lines - _ends(text)), line_at[first] + _ends(text))
        covered = max(covered, p.last + 1)
    for i in range(covered, len(texts)):
        prog.emit("\n" * _ends(texts[i]), line_at[i])
    return prog


def _cell_text(cell: dict[str, Any], index: int) -> str:
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
            raise NotebookError(
                f"code cell {index}, line {n} holds a lone surrogate (U+{ord(bad):04X}, saved as the "
                "JSON escape \\u"
                f"{ord(bad):04x}), which is not a character: remove it or write "
                "the character it was meant to be"
            )


# --- one cell ------------------------------------------------------------------------------------------------


def _one_line_magic(t: Transformed, state: KernelState) -> Transformed:
    """The kernel's prefilter on a cell of one line: automagic."""
    if t.magic is not None or len(t.pieces) != 1 or len(t.text.splitlines()) != 1:
        return t
    piece = t.pieces[0]
    line = piece.text.rstrip("\n")
    found = automagic(line, state.bound, state.magics)
    if found is None:
        return t
    pre, name, args, call = found
    program = magic_program(pre, name, args, line.strip())
    return Transformed((Piece(call + "\n", piece.first, piece.last, True, program, (name, args)),), None)


def kernel_text(cell: str, bound: frozenset[str] = frozenset()) -> str:
    """The text a Jupyter kernel's `transform_cell` gives for `cell` (IPython's
    TransformerManager, then the one-line prefilter), the notebook having bound `bound`."""
    if not cell.endswith("\n"):
        cell += "\n"
    return _one_line_magic(transform_pieces(split_pieces(cell)), KernelState(bound=set(bound))).text


def _capture_args_refused(args: str) -> bool:
    """Would IPython's argument parser refuse `%%capture args` (then it runs nothing)?"""
    positional = 0
    for word in args.split():
        if word.startswith("--") and len(word) > 2:
            if sum(flag.startswith(word) for flag in _CAPTURE_FLAGS) != 1:
                return True
        elif word.startswith("-"):
            return True
        else:
            positional += 1
    return positional > 1


def _refused_wrapper(magic: CellMagic) -> str | None:
    if magic.name == "time" and time_statement(magic.args) != "":
        return "IPython refuses a statement on the %%time line (UsageError), so the cell is not run"
    if magic.name == "capture" and _capture_args_refused(magic.args):
        return "IPython refuses these arguments (UsageError), so the cell is not run"
    return None


def _read_cell(text: str, index: int, state: KernelState) -> tuple[Transformed, str | None]:
    """The cell as IPython runs it, and why it is not run at all (a cell magic), if so."""
    t = _one_line_magic(transform_pieces(split_pieces(text)), state)
    depth = 0
    while t.magic is not None and t.magic.name in WRAPPER_MAGICS:
        refused = _refused_wrapper(t.magic)
        if refused:
            return t, refused
        depth += 1
        if depth > MAX_WRAPPING:
            raise CellSyntaxError(
                f"code cell {index} has more than {MAX_WRAPPING} wrapping cell magics (%%time, "
                "%%capture) one inside the other, more than the grader reads: remove them"
            )
        t = _one_line_magic(transform_pieces(list(t.magic.body)), state)  # IPython runs the body as a cell
    if t.magic is None:
        return t, None
    if not state.magics.knows_cell(t.magic.name):
        raise CellNotRunnable(
            f"%%{shown(t.magic.name, 40)} is not a cell magic of a Jupyter kernel (UsageError: cell magic not found)",
            t.pieces[0].first,
        )
    return t, _NOT_RUN.get(t.magic.name, "is an IPython cell magic, not Python")


def _check_line_magics(t: Transformed, state: KernelState) -> None:
    """Each line magic the kernel would run, in order: one it does not know fails the cell
    (UsageError), `%load_ext` and friends teach it new ones."""
    for piece in t.pieces:
        if piece.magic is None:
            continue
        name, args = piece.magic
        if not state.magics.knows_line(name):
            raise CellNotRunnable(
                f"%{shown(name, 40)} is not a line magic of a Jupyter kernel (UsageError: line "
                "magic function not found)",
                piece.first,
            )
        state.magics.ran(name, args)


def _refusal(index: int, message: str, line: int | None, original: list[str], syntax: bool) -> CellSyntaxError:
    """The CE for a cell: Python's syntax error, or what makes Jupyter refuse the cell."""
    where = f"code cell {index}" + (f", line {line}" if line is not None and 0 < line <= len(original) else "")
    quoted = shown(original[line - 1].strip(), 200) if where.endswith(f"line {line}") and line else ""
    head = f"syntax error in {where}" if syntax else f"{where} cannot run in Jupyter either"
    return CellSyntaxError(f"{head}: {message}" + (f": {quoted}" if quoted else ""))


def _not_runnable(exc: CellNotRunnable, index: int, texts: list[str], original: list[str]) -> CellSyntaxError:
    line = _lines_before(texts)[exc.line] if exc.line is not None else None
    return _refusal(index, str(exc), line, original, exc.syntax)


def _cell_program(text: str, index: int, state: KernelState) -> tuple[str, list[int], str | None]:
    """One cell as a piece of the program: its text, the cell line each of its lines starts
    at, and a note when the grader does not run the cell."""
    texts = [p.text for p in split_pieces(text)]
    original = _LINE_END.split(text)
    try:
        t, why = _read_cell(text, index, state)
    except CellNotRunnable as exc:
        raise _not_runnable(exc, index, texts, original) from None
    note = None
    if why is not None and t.magic is not None:
        magic_line = f"%%{t.magic.name} {t.magic.args}".strip()
        note = (
            f"code cell {index} starts with {shown(magic_line, 60)}, which {why}; move the code to an "
            "ordinary code cell"
        )
    prog = _render(t.pieces, texts, blank=note is not None)
    program = "".join(prog.text)
    try:
        program = finish_cell(program, state)
    except CellRefused as exc:
        line = prog.labels[exc.line - 1] if exc.line and 0 < exc.line <= len(prog.labels) else None
        raise _refusal(index, str(exc), line, original, syntax=True) from None
    try:
        if why is None:  # compiled: the kernel runs it, and meets each magic in turn
            _check_line_magics(t, state)
    except CellNotRunnable as exc:
        raise _not_runnable(exc, index, texts, original) from None
    return _LINE_END.sub("\n", program), prog.labels, note


# --- the notebook --------------------------------------------------------------------------------------------


def _code_cells(text: str) -> list[dict[str, Any]]:
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
    state = KernelState()
    for index, source in enumerate(sources, 1):
        program, lines, note = _cell_program(source, index, state)
        if note:
            skipped.append(note)
        parts += [program, "\n"]
        labels += [f"code cell {index}, line {n}" for n in lines] + [f"after code cell {index}"]
    if state.futures:  # Jupyter keeps a cell's future imports for the later cells: one line, first
        parts.insert(0, f"from __future__ import {', '.join(state.futures)}\n")
        labels.insert(0, "the __future__ imports of the notebook")
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
