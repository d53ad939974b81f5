"""Every rewrite IPython makes of a cell's special syntax, in its order, in time proportional to the cell.

IPython finds the earliest instance of its special syntax (judging/ipython_rewrites.py),
rewrites it, tokenizes the whole cell again, and so on, until nothing is found or
500 rewrites were made (then it refuses the cell). The result here is IPython's,
rewrite for rewrite (tests/test_ipython_syntax.py), with one difference in cost
only: the tokens, each line's tokenizer state (judging/python_tokens.py) and what
each finder found are kept for the lines before the rewritten logical line, and
tokenizing resumes there and stops at the next rewrite.
"""

from __future__ import annotations

import tokenize
from collections.abc import Iterator
from dataclasses import dataclass, field
from tokenize import TokenInfo
from typing import NamedTuple

from .ipython_rewrites import FINDERS, CellNotRunnable, last_line_read, rewrite
from .python_tokens import LineState, TokenError, tokens_from

# IPython gives up on a cell whose special syntax is still changing after this many steps.
TRANSFORM_LOOP_LIMIT = 500
_OPEN, _CLOSE = {"(", "[", "{"}, {")", "]", "}"}


class Piece(NamedTuple):
    """One line as IPython holds it (a `str.splitlines(keepends=True)` piece), and the
    original pieces it stands for: itself, or the lines a transformation replaced. (A
    named tuple: a cell of 60,000 lines makes that many, several times over.)"""

    text: str
    first: int
    last: int
    replaced: bool = False
    program: str | None = None  # what the grader runs instead, when `text` calls on IPython
    magic: tuple[str, str] | None = None  # (name, arguments) of the line magic it calls

    @property
    def runs(self) -> str:
        return self.text if self.program is None else self.program


_OPEN, _CLOSE = {"(", "[", "{"}, {")", "]", "}"}


@dataclass
class _Scan:
    """The cell being rewritten, and what is known about its logical lines so far."""

    pieces: list[Piece]
    states: list[LineState] = field(default_factory=list)  # tokenizer state at each line's start
    groups: list[list[TokenInfo]] = field(default_factory=list)  # logical lines scanned, in order
    starts: list[tuple[int, int]] = field(default_factory=list)  # (line, IPython's bracket depth) at each
    stuck: dict[str, tuple[int, int]] = field(default_factory=dict)  # finder -> (group, last line read)
    resume: int = 0  # the first logical line to scan again

    def lines(self) -> list[str]:
        return [p.text for p in self.pieces]

    def groups_from(self, k: int) -> Iterator[int]:
        """Scan logical lines k, k+1, ... (tokenizing from line k's start), yielding each index."""
        line, depth = self.starts[k] if k < len(self.starts) else (0, 0)
        del self.groups[k:], self.starts[k:]
        state = self.states[line] if line < len(self.states) else LineState()
        current: list[TokenInfo] = []
        try:
            for tok in tokens_from(self.lines(), line, state, self.states):
                if not current:
                    self.starts.append((tok.start[0] - 1, depth))
                current.append(tok)
                if tok.type == tokenize.NEWLINE or (tok.type == tokenize.NL and depth <= 0):
                    self.groups.append(current)
                    current = []
                    yield len(self.groups) - 1
                elif tok.type == tokenize.OP and tok.string in _OPEN:
                    depth += 1
                elif tok.type == tokenize.OP and tok.string in _CLOSE and depth > 0:
                    depth -= 1
        except TokenError:
            pass  # the input ended inside a string or brackets: the tokens so far count
        if current:
            self.groups.append(current)
            yield len(self.groups) - 1

    def rewrite_in(self, k: int) -> bool:
        """Try the candidates of logical line k, earliest first; True once one is rewritten."""
        found = [f for kind, finder in FINDERS.items() if kind not in self.stuck and (f := finder(self.groups[k]))]
        if not found:
            return False
        lines = self.lines()
        for f in sorted(found, key=lambda f: (f.line, f.col, f.priority)):
            try:
                r = rewrite(f, lines)
            except SyntaxError:
                self.stuck[f.kind] = (k, last_line_read(f, lines))
                continue
            end = min(r.end, len(self.pieces) - 1)  # a backslash on the last line continues past it
            new = Piece(r.text, self.pieces[r.start].first, self.pieces[end].last, True, r.program, r.magic)
            self.pieces[r.start : end + 1] = [new]
            line = self.starts[k][0]
            self.resume = min([k] + [g for g, last in self.stuck.values() if last >= line])
            self.stuck = {kind: (g, last) for kind, (g, last) in self.stuck.items() if g < self.resume and last < line}
            return True
        return False

    def step(self) -> bool:
        """IPython's do_one_token_transform: True when a rewrite was made."""
        return any(self.rewrite_in(k) for k in self.groups_from(self.resume))


def _tokenize_all(lines: list[str]) -> None:
    """IPython tokenizes the whole cell before its first rewrite: an IndentationError anywhere
    fails the cell even where a rewrite would have removed its cause (an unbalanced bracket in
    a magic's arguments). The scan itself stops at each rewrite, so this is checked once here.
    (An indentation error that appears only between two rewrites and is gone after the second
    is the one case the scan does not see.)"""
    try:
        for _ in tokens_from(lines, 0, LineState(), []):
            pass
    except TokenError:
        pass


def token_transforms(pieces: list[Piece]) -> list[Piece]:
    """IPython's do_token_transforms. Raises CellNotRunnable where IPython raises."""
    scan = _Scan(list(pieces))
    try:
        _tokenize_all(scan.lines())
        for _ in range(TRANSFORM_LOOP_LIMIT):
            if not scan.step():
                return scan.pieces
    except IndentationError as exc:  # from the tokenizer: IPython fails the cell
        row = (exc.lineno or 1) - 1
        raise CellNotRunnable(exc.msg, scan.pieces[min(row, len(scan.pieces) - 1)].first, syntax=True) from None
    except CellNotRunnable as exc:  # at a line of the scan's current text
        if exc.line is not None:
            exc.line = scan.pieces[min(exc.line, len(scan.pieces) - 1)].first
        raise
    raise CellNotRunnable(
        f"IPython stops rewriting a cell's special syntax after {TRANSFORM_LOOP_LIMIT} "
        "steps and refuses to run it: split the cell"
    )
