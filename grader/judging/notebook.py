"""Jupyter notebooks as submissions: the code cells, extracted, never executed here.

The notebook is parsed as JSON; its code cells are concatenated in order,
split into lines where Python splits them. IPython-only lines (`%magic`,
`!shell`) are commented out because they are not Python. A cell magic that
only wraps ordinary code (`%%time`, `%%capture`) loses its first line and
keeps its body; any other cell magic (`%%bash`, `%%writefile`, `%%timeit`)
makes its cell something the grader does not run, and a note says so (the
static check quotes it when the function is then missing). The result is
graded exactly like a .py file; `line_map` lets messages point at "cell 3,
line 2" instead of a line of the joined source.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .paths import shown


class NotebookError(ValueError):
    """The file is not a readable Jupyter notebook."""


@dataclass(frozen=True)
class NotebookCode:
    source: str                  # the code cells joined, IPython-only lines commented out
    line_map: tuple[str, ...]    # "code cell C, line L" for each line of `source`
    skipped: tuple[str, ...]     # one note per cell the grader does not run, saying why


# Python's own line ends. str.splitlines() also splits at U+2028, U+2029, \x0b,
# \x0c, \x1c-\x1e and \x85, which may sit inside a string literal: splitting
# there would cut the literal in two and make honest code a syntax error.
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


def _split_lines(src: str) -> list[str]:
    lines = _LINE_END.split(src)
    return lines[:-1] if lines and lines[-1] == "" else lines


def _cell_lines(cell: dict, index: int) -> tuple[list[str], str | None]:
    """The cell's lines as Python, and a note when the cell is not run at all."""
    src = cell.get("source", "")
    if isinstance(src, list):
        if not all(isinstance(s, str) for s in src):
            raise NotebookError(f"cell {index} has a malformed source")
        src = "".join(src)
    if not isinstance(src, str):
        raise NotebookError(f"cell {index} has a malformed source")
    lines = _split_lines(src)
    _refuse_surrogates(lines, index)
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        magic_line = lines[first].strip()
        magic = magic_line[2:].split(maxsplit=1)[0] if len(magic_line) > 2 else ""
        head = [f"# (notebook-only line removed) {ln.strip()}" if ln.strip() else ln for ln in lines[:first + 1]]
        if magic in WRAPPER_MAGICS:
            return head + [_line(ln) for ln in lines[first + 1:]], None
        # Any other cell magic makes the whole cell something other than Python run here.
        why = _NOT_RUN.get(magic, "is an IPython cell magic, not Python")
        note = (f"code cell {index} starts with {shown(magic_line, 60)}, which {why}; move the code to an "
                "ordinary code cell")
        return [f"# (notebook-only cell removed) {ln.strip()}" for ln in lines], note
    return [_line(ln) for ln in lines], None


def _refuse_surrogates(lines: list[str], index: int) -> None:
    """JSON's "\\ud800" escape decodes to a lone surrogate, which no later step can encode:
    the notebook is refused here, at the boundary, naming where the character sits."""
    for n, ln in enumerate(lines, 1):
        bad = next((ch for ch in ln if "\ud800" <= ch <= "\udfff"), None)
        if bad is not None:
            raise NotebookError(f"code cell {index}, line {n} holds a lone surrogate (U+{ord(bad):04X}, saved as the "
                                "JSON escape \\u" f"{ord(bad):04x}), which is not a character: remove it or write "
                                "the character it was meant to be")


def _line(ln: str) -> str:
    return f"# (notebook-only line removed) {ln.strip()}" if ln.lstrip().startswith(("%", "!")) else ln


def extract(text: str) -> NotebookCode:
    """The notebook's code cells as one Python source (see NotebookCode)."""
    try:
        nb = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise NotebookError(f"not valid JSON ({exc})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError("no 'cells' list: not a Jupyter notebook (nbformat 4)")
    lines: list[str] = []
    labels: list[str] = []
    skipped: list[str] = []
    code_index = 0
    for cell in nb["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        code_index += 1
        cell_lines, note = _cell_lines(cell, code_index)
        if note:
            skipped.append(note)
        lines += cell_lines + [""]
        labels += [f"code cell {code_index}, line {i}" for i in range(1, len(cell_lines) + 1)]
        labels.append(f"after code cell {code_index}")
    if not code_index:
        raise NotebookError("the notebook has no code cells")
    return NotebookCode("\n".join(lines) + "\n", tuple(labels), tuple(skipped))


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
