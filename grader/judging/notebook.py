"""Jupyter notebooks as submissions: the code cells, extracted, never executed here.

The notebook is parsed as JSON; its code cells are concatenated in order.
IPython-only lines (`%magic`, `!shell`) are commented out because they are
not Python. The result is graded exactly like a .py file; `line_map` lets
messages point at "cell 3, line 2" instead of a line of the joined source.
"""
from __future__ import annotations

import json
import re


class NotebookError(ValueError):
    """The file is not a readable Jupyter notebook."""


def _cell_lines(cell: dict, index: int) -> list[str]:
    src = cell.get("source", "")
    if isinstance(src, list):
        if not all(isinstance(s, str) for s in src):
            raise NotebookError(f"cell {index} has a malformed source")
        src = "".join(src)
    if not isinstance(src, str):
        raise NotebookError(f"cell {index} has a malformed source")
    lines = src.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        # A cell magic (%%bash, %%writefile, ...) makes the whole cell something other than Python.
        return [f"# (notebook-only cell removed) {ln.strip()}" for ln in lines]
    return [f"# (notebook-only line removed) {ln.strip()}" if ln.lstrip().startswith(("%", "!")) else ln
            for ln in lines]


def extract_code(text: str) -> tuple[str, tuple[str, ...]]:
    """(joined Python source, per-line "cell C, line L" labels)."""
    try:
        nb = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise NotebookError(f"not valid JSON ({exc})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError("no 'cells' list: not a Jupyter notebook (nbformat 4)")
    lines: list[str] = []
    labels: list[str] = []
    code_index = 0
    for cell in nb["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        code_index += 1
        cell_lines = _cell_lines(cell, code_index)
        lines += cell_lines + [""]
        labels += [f"code cell {code_index}, line {i}" for i in range(1, len(cell_lines) + 1)]
        labels.append(f"after code cell {code_index}")
    if not code_index:
        raise NotebookError("the notebook has no code cells")
    return "\n".join(lines) + "\n", tuple(labels)


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
