"""IPython's syntax in a notebook cell, read the way IPython reads it: the whole cell.

Jupyter hands every code cell to IPython's `TransformerManager.transform_cell`
(IPython.core.inputtransformer2) before Python compiles it. That step strips
pasted prompts (`>>> `, `In [3]: `), removes a cell's common indentation, turns a
cell that starts with `%%name` into a cell magic, and then rewrites IPython's
syntax inside the cell (magics, shell escapes, help queries, autocall escapes:
judging/ipython_rewrites.py). This module is that transformation, written for
the grader (which depends on NumPy and PyYAML only) after IPython 9.18's
inputtransformer2 (BSD-3-Clause), rule for rule.

Its specification is IPython's behaviour: tests/data/ipython_cells.json holds
700 cells with the text IPython 9.18.1 on Python 3.11 produced for each
(tests/ipython_corpus.py), and tests/test_ipython_syntax.py compares this module
with that corpus, on every Python, and with a live IPython on generated cells.

`transform_cell(cell)` returns IPython's text as pieces that remember which of
the cell's original lines each stands for, so that the notebook reader keeps
pointing at "code cell 3, line 2" after a continued magic collapsed three lines
into one. Calls on IPython (`get_ipython().run_line_magic(...)`) mean nothing
outside a kernel: each rewritten piece carries the line the grader runs instead,
and `calls_on_ipython(tree)` finds the calls a learner wrote by hand.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from textwrap import dedent

from .ipython_scan import Piece, token_transforms


@dataclass(frozen=True)
class CellMagic:
    """A cell that starts with `%%name args`: IPython runs it as
    run_cell_magic(name, args, body)."""

    name: str
    args: str
    body: tuple[Piece, ...]  # the cell's lines after the first, as the cleanup left them


@dataclass(frozen=True)
class Transformed:
    pieces: tuple[Piece, ...]  # IPython's text, line by line
    magic: CellMagic | None  # set when the whole cell is one cell magic

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.pieces)


# --- cleanup: blank lines, indentation, pasted prompts ---------------------------------------------------------


def _leading_empty_lines(pieces: list[Piece]) -> list[Piece]:
    for i, p in enumerate(pieces):
        if p.text and not p.text.isspace():
            return pieces[i:]
    return pieces


def _with_texts(pieces: list[Piece], texts: list[str]) -> list[Piece]:
    """New texts for the same lines. Dedenting and prompt stripping remove spaces, tabs and
    prompts only, never a line end, so each text is one of the lines, except where a line
    ends in an old-Mac "\r" and the next was only a prompt: stripped to "\n", it joins the
    "\r" into one line end, and that text stands for both lines."""
    if len(texts) == len(pieces):
        if [p.text for p in pieces] == texts:
            return pieces  # the common case: nothing changed
        return [p._replace(text=t) for p, t in zip(pieces, texts, strict=True)]
    out: list[Piece] = []
    i = 0
    for t in texts:
        j = (
            i + 1
            if (
                t.endswith("\r\n")
                and i + 1 < len(pieces)
                and pieces[i].text.endswith("\r")
                and not pieces[i].text.endswith("\r\n")
            )
            else i
        )
        j = min(j, len(pieces) - 1)
        out.append(Piece(t, pieces[min(i, j)].first, pieces[j].last, True))
        i = j + 1
    if i < len(pieces):  # texts ran out first: the last one stands for the rest
        out[-1] = Piece(out[-1].text, out[-1].first, pieces[-1].last, True)
    return out


def _leading_indent(pieces: list[Piece]) -> list[Piece]:
    if not pieces:
        return pieces
    return _with_texts(pieces, dedent("".join(p.text for p in pieces)).splitlines(keepends=True))


_PS1 = re.compile(r"^\s*>>>")
_PS1_STRIP = re.compile(r"^\s*>>>[ \t]?")
_PS2_STRIP = re.compile(r"^\s*\.\.\.[ \t]?")
_TRIPLE_QUOTE = re.compile(r"(?<!\\)(\"\"\"|''')")
_STRING_PREFIX = re.compile(r"(?i)^[rubf]*$")


def _in_triple_quotes(lines: list[str]) -> list[bool]:
    """Which lines IPython's doctest prompt stripper takes to be inside a triple-quoted
    string (its heuristic: a string opened after nothing but a prefix keeps its prompts)."""
    mask: list[bool] = []
    open_quote: str | None = None
    preserve = False
    seen_prompt = False
    for line in lines:
        mask.append(open_quote is not None and preserve)
        for m in _TRIPLE_QUOTE.finditer(line):
            quote = m.group(1)
            if open_quote is None:
                open_quote = quote
                before = line[: m.start()]
                stripped = _PS2_STRIP.sub("", _PS1_STRIP.sub("", before, count=1), count=1)
                prompted_code = stripped != before and seen_prompt
                preserve = bool(not prompted_code and _STRING_PREFIX.match(stripped.strip()))
                mask[-1] = preserve
            elif open_quote == quote:
                open_quote = None
                preserve = False
        seen_prompt = seen_prompt or bool(_PS1.match(line))
    return mask


def _strip_doctest_prompts(lines: list[str]) -> list[str]:
    """`>>> ` and `... ` prompts of a pasted doctest, outside triple-quoted strings, with
    each stretch that lost prompts dedented (IPython's classic_prompt)."""
    if not any(">>>" in line for line in lines):
        return lines  # no prompt anywhere: nothing to strip
    inside = _in_triple_quotes(lines)
    if not any(not q and _PS1.match(line) for line, q in zip(lines, inside, strict=True)):
        return lines
    out: list[str] = []
    stripped: list[bool] = []
    for line, q in zip(lines, inside, strict=True):
        new = line
        if not q:
            if _PS1_STRIP.match(line):
                new = _PS1_STRIP.sub("", line, count=1)
            elif _PS2_STRIP.match(line):
                new = _PS2_STRIP.sub("", line, count=1)
        out.append(new)
        stripped.append(new != line)
    result: list[str] = []
    i = 0
    while i < len(out):
        j = i
        while j < len(out) and inside[j] == inside[i]:
            j += 1
        segment = out[i:j]
        if not inside[i] and any(stripped[i:j]):
            segment = dedent("".join(segment)).splitlines(keepends=True)
        result += segment
        i = j
    return result


_IPYTHON_PROMPT = re.compile(r"^(((\[nav\]|\[ins\])?\ )?In\ \[\d+\]:\ |\s*\.{3,}:\ ?)")


def _strip_ipython_prompts(lines: list[str]) -> list[str]:
    if _IPYTHON_PROMPT.match(lines[0]) or (len(lines) > 1 and _IPYTHON_PROMPT.match(lines[1])):
        return [_IPYTHON_PROMPT.sub("", line, count=1) for line in lines]
    return lines


def _cleanup(pieces: list[Piece]) -> list[Piece]:
    pieces = _leading_indent(_leading_empty_lines(pieces))
    if pieces:
        pieces = _with_texts(pieces, _strip_doctest_prompts([p.text for p in pieces]))
        pieces = _with_texts(pieces, _strip_ipython_prompts([p.text for p in pieces]))
    return pieces


# --- the whole cell -----------------------------------------------------------------------------------------


def _cell_magic(pieces: list[Piece]) -> CellMagic | None:
    first = pieces[0].text if pieces else ""
    if not first.startswith("%%") or re.match(r"%%\w+\?", first):
        return None
    name, _, args = first[2:].rstrip().partition(" ")
    return CellMagic(name, args, tuple(pieces[1:]))


def split_pieces(text: str) -> list[Piece]:
    return [Piece(t, i, i) for i, t in enumerate(text.splitlines(keepends=True))]


def transform_pieces(pieces: list[Piece]) -> Transformed:
    """IPython's transform_cell on lines that already end with a line end."""
    pieces = _cleanup(pieces)
    magic = _cell_magic(pieces)
    if magic is not None:
        body = "".join(p.text for p in magic.body)
        call = f"get_ipython().run_cell_magic({magic.name!r}, {magic.args!r}, {body!r})\n"
        return Transformed((Piece(call, pieces[0].first, pieces[-1].last, True),), magic)
    pieces = token_transforms(pieces)
    return Transformed(tuple(pieces), None)


def transform_cell(cell: str) -> Transformed:
    """The text IPython's TransformerManager().transform_cell(cell) returns, line by line.

    Raises CellNotRunnable where IPython raises instead of returning text."""
    if not cell.endswith("\n"):
        cell += "\n"
    return transform_pieces(split_pieces(cell))


def ipython_text(cell: str) -> str:
    return transform_cell(cell).text


# --- what the calls on IPython become outside a kernel -------------------------------------------------------


def _is_ipython_call(node: ast.AST) -> bool:
    """`get_ipython().<method>(...)`: what a magic, a shell escape or a help query becomes."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Call)
        and isinstance(node.func.value.func, ast.Name)
        and node.func.value.func.id == "get_ipython"
        and not node.func.value.args
        and not node.func.value.keywords
    )


def calls_on_ipython(tree: ast.AST) -> list[ast.expr]:
    """The outermost `get_ipython().<method>(...)` calls in `tree`, in source order."""
    found: list[ast.expr] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if _is_ipython_call(node):
            found.append(node)  # type: ignore[arg-type]  # _is_ipython_call checked it is an ast.Call
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))
