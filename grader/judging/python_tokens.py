"""Python 3.11's tokenizer, as IPython sees tokens, resumable at the start of any line.

IPython decides what is a magic on tokens (judging/ipython_syntax.py), and its
decisions depend on the tokenizer of the Python it runs on: Python 3.12
replaced the pure-Python tokenizer with the C one, and IPython 9.18 reads 68 of
the 693 cells of tests/data/ipython_cells.json differently there (a magic after
a string holding U+2028, for one, is left untransformed). The grader reads
every cell as IPython does on Python 3.11, whatever Python runs the grader, so
this module is Python 3.11's `tokenize._tokenize` (Lib/tokenize.py, PSF
licence), rule for rule, with its regular expressions and the 3.11 operator
list, over the lines IPython hands it (`str.splitlines` pieces, so a "line" may
end in U+2028).

What IPython does not need is left out (encodings, the ENCODING token). What it
does need beyond the standard module: the tokenizer's whole state at the start
of every line (`LineState`), so that after IPython's next rewrite, which
changes the cell from some line on, tokenizing resumes at that line instead of
at the top. IPython re-tokenizes the whole cell after each of up to 500
rewrites; resuming keeps a 64 KiB cell linear.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from token import COMMENT, DEDENT, ENDMARKER, ERRORTOKEN, INDENT, NAME, NEWLINE, NL, NUMBER, OP, STRING
from tokenize import TokenInfo

TABSIZE = 8


class TokenError(Exception):
    """The input ended inside a string or a bracketed statement."""


def _group(*choices: str) -> str:
    return "(" + "|".join(choices) + ")"


def _string_prefixes() -> set[str]:
    result = {""}
    for prefix in ("b", "r", "u", "f", "br", "fr"):
        for perm in itertools.permutations(prefix):
            for cased in itertools.product(*[(c, c.upper()) for c in perm]):
                result.add("".join(cased))
    return result


# Python 3.11's exact operator tokens (3.12 added "!").
_OPERATORS = (
    "!=",
    "%",
    "%=",
    "&",
    "&=",
    "(",
    ")",
    "*",
    "**",
    "**=",
    "*=",
    "+",
    "+=",
    ",",
    "-",
    "-=",
    "->",
    ".",
    "...",
    "/",
    "//",
    "//=",
    "/=",
    ":",
    ":=",
    ";",
    "<",
    "<<",
    "<<=",
    "<=",
    "=",
    "==",
    ">",
    ">=",
    ">>",
    ">>=",
    "@",
    "@=",
    "[",
    "]",
    "^",
    "^=",
    "{",
    "|",
    "|=",
    "}",
    "~",
)
_PREFIXES = _string_prefixes()
_Whitespace = r"[ \f\t]*"
_Comment = r"#[^\r\n]*"
_Name = r"\w+"
_Hexnumber = r"0[xX](?:_?[0-9a-fA-F])+"
_Binnumber = r"0[bB](?:_?[01])+"
_Octnumber = r"0[oO](?:_?[0-7])+"
_Decnumber = r"(?:0(?:_?0)*|[1-9](?:_?[0-9])*)"
_Intnumber = _group(_Hexnumber, _Binnumber, _Octnumber, _Decnumber)
_Exponent = r"[eE][-+]?[0-9](?:_?[0-9])*"
_Pointfloat = _group(r"[0-9](?:_?[0-9])*\.(?:[0-9](?:_?[0-9])*)?", r"\.[0-9](?:_?[0-9])*") + _group(_Exponent) + "?"
_Expfloat = r"[0-9](?:_?[0-9])*" + _Exponent
_Floatnumber = _group(_Pointfloat, _Expfloat)
_Imagnumber = _group(r"[0-9](?:_?[0-9])*[jJ]", _Floatnumber + r"[jJ]")
_Number = _group(_Imagnumber, _Floatnumber, _Intnumber)
_StringPrefix = _group(*_PREFIXES)
_Single = r"[^'\\]*(?:\\.[^'\\]*)*'"
_Double = r'[^"\\]*(?:\\.[^"\\]*)*"'
_Single3 = r"[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
_Double3 = r'[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
_Triple = _group(_StringPrefix + "'''", _StringPrefix + '"""')
_Special = _group(*map(re.escape, sorted(_OPERATORS, reverse=True)))
_Funny = _group(r"\r?\n", _Special)
_ContStr = _group(
    _StringPrefix + r"'[^\n'\\]*(?:\\.[^\n'\\]*)*" + _group("'", r"\\\r?\n"),
    _StringPrefix + r'"[^\n"\\]*(?:\\.[^\n"\\]*)*' + _group('"', r"\\\r?\n"),
)
_PseudoExtras = _group(r"\\\r?\n|\Z", _Comment, _Triple)
PSEUDO_TOKEN = re.compile(_Whitespace + _group(_PseudoExtras, _Number, _Funny, _ContStr, _Name), re.UNICODE)
PSEUDO_NO_STRING = re.compile(_Whitespace + _group(_PseudoExtras, _Number, _Funny, _Name), re.UNICODE)
_STRING_OPEN = re.compile(_StringPrefix + "(['\"])", re.UNICODE)

ENDPATS: dict[str, re.Pattern[str]] = {}
for _p in _PREFIXES:
    ENDPATS[_p + "'"] = re.compile(_Single, re.UNICODE)
    ENDPATS[_p + '"'] = re.compile(_Double, re.UNICODE)
    ENDPATS[_p + "'''"] = re.compile(_Single3, re.UNICODE)
    ENDPATS[_p + '"""'] = re.compile(_Double3, re.UNICODE)
SINGLE_QUOTED = {p + q for p in _PREFIXES for q in ("'", '"')}
TRIPLE_QUOTED = {p + q for p in _PREFIXES for q in ("'''", '"""')}


@dataclass(frozen=True)
class LineState:
    """Everything the tokenizer carries from one line to the next."""

    parenlev: int = 0
    continued: bool = False
    indents: tuple[int, ...] = (0,)
    open_from: tuple[int, int] | None = None  # (line index, column) of a string still open
    needcont: bool = False  # ... opened with a backslash continuation (3.11 never resets it)
    endpat: str = ""  # ENDPATS key of the open string
    last_line: str = ""  # the line before (an implicit NEWLINE at the end depends on it)


def _indentation(line: str) -> tuple[int, int]:
    """(column, position) of the first character that is not indentation."""
    column = pos = 0
    while pos < len(line):
        if line[pos] == " ":
            column += 1
        elif line[pos] == "\t":
            column = (column // TABSIZE + 1) * TABSIZE
        elif line[pos] == "\f":
            column = 0
        else:
            break
        pos += 1
    return column, pos


class _Line:
    """One line's tokenizing, a small state machine over LineState."""

    def __init__(self, lines: list[str], index: int, state: LineState):
        self.lines, self.index = lines, index
        self.line = lines[index] if index < len(lines) else ""
        self.lnum, self.s = index + 1, state
        self.pos = 0
        self.tokens: list[TokenInfo] = []
        self.stop = False  # the tokenizer stops here (end of input)
        self._closes: dict[str, list[int]] = {}

    def token(self, kind: int, text: str, start: tuple[int, int], end: tuple[int, int], line: str) -> None:
        self.tokens.append(TokenInfo(kind, text, start, end, line))

    def _open_text(self, open_from: tuple[int, int]) -> tuple[str, str]:
        """(the open string so far, the lines it spans): 3.11's contstr and contline, built
        once from the lines instead of by concatenating line after line (quadratic)."""
        first, col = open_from
        spanned = "".join(self.lines[first : self.index])
        return spanned[col:], spanned

    def open_string(self) -> bool:
        """Continue a string left open; True when the rest of the line is tokenized."""
        s, line = self.s, self.line
        assert s.open_from is not None
        strstart = (s.open_from[0] + 1, s.open_from[1])
        if not line:
            raise TokenError("EOF in multi-line string", strstart)
        m = ENDPATS[s.endpat].match(line)
        if m:
            self.pos = m.end(0)
            text, spanned = self._open_text(s.open_from)
            self.token(STRING, text + line[: self.pos], strstart, (self.lnum, self.pos), spanned + line)
            self.s = replace(s, open_from=None, needcont=False)
            return True
        if s.needcont and line[-2:] != "\\\n" and line[-3:] != "\\\r\n":
            text, spanned = self._open_text(s.open_from)
            self.token(ERRORTOKEN, text + line, strstart, (self.lnum, len(line)), spanned)
            self.s = replace(s, open_from=None)
            return False
        return False

    def new_statement(self) -> bool:
        """Indentation at the start of a statement; True when the rest of the line is tokenized."""
        line, lnum = self.line, self.lnum
        if not line:
            self.stop = True
            return False
        column, pos = _indentation(line)
        if pos == len(line):
            self.stop = True
            return False
        if line[pos] in "#\r\n":
            if line[pos] == "#":
                comment = line[pos:].rstrip("\r\n")
                self.token(COMMENT, comment, (lnum, pos), (lnum, pos + len(comment)), line)
                pos += len(comment)
            self.token(NL, line[pos:], (lnum, pos), (lnum, len(line)), line)
            return False
        indents = list(self.s.indents)
        if column > indents[-1]:
            indents.append(column)
            self.token(INDENT, line[:pos], (lnum, 0), (lnum, pos), line)
        while column < indents[-1]:
            if column not in indents:
                raise IndentationError(
                    "unindent does not match any outer indentation level", ("<tokenize>", lnum, pos, line)
                )
            indents.pop()
            self.token(DEDENT, "", (lnum, pos), (lnum, pos), line)
        self.s = replace(self.s, indents=tuple(indents))
        self.pos = pos
        return True

    def string_token(self, text: str, start: int, initial: str) -> bool:
        """A string starting at `start`; False when it stays open past this line."""
        line, lnum = self.line, self.lnum
        if text in TRIPLE_QUOTED:
            m = ENDPATS[text].match(line, self.pos)
            if m:
                self.pos = m.end(0)
                self.token(STRING, line[start : self.pos], (lnum, start), (lnum, self.pos), line)
                return True
            self.s = replace(self.s, open_from=(self.index, start), endpat=text)
            return False
        if text[-1] == "\n":
            key = next(k for k in (initial, text[1:2], text[2:3]) if k in ENDPATS)
            self.s = replace(self.s, open_from=(self.index, start), endpat=key, needcont=True)
            return False
        self.token(STRING, text, (lnum, start), (lnum, start + len(text)), line)
        return True

    def one_token(self, m: re.Match[str]) -> bool:
        """The token the pseudo-token pattern matched; False when the line ends here."""
        line, lnum = self.line, self.lnum
        start, end = m.span(1)
        self.pos = end
        if start == end:
            return True
        text, initial = line[start:end], line[start]
        spos, epos = (lnum, start), (lnum, end)
        if initial in "0123456789" or (initial == "." and text not in (".", "...")):
            self.token(NUMBER, text, spos, epos, line)
        elif initial in "\r\n":
            self.token(NL if self.s.parenlev > 0 else NEWLINE, text, spos, epos, line)
        elif initial == "#":
            self.token(COMMENT, text, spos, epos, line)
        elif (
            text in TRIPLE_QUOTED or initial in SINGLE_QUOTED or text[:2] in SINGLE_QUOTED or text[:3] in SINGLE_QUOTED
        ):
            return self.string_token(text, start, initial)
        elif initial.isidentifier():
            self.token(NAME, text, spos, epos, line)
        elif initial == "\\":
            self.s = replace(self.s, continued=True)
        else:
            if initial in "([{":
                self.s = replace(self.s, parenlev=self.s.parenlev + 1)
            elif initial in ")]}":
                self.s = replace(self.s, parenlev=self.s.parenlev - 1)
            self.token(OP, text, spos, epos, line)
        return True

    def _string_closes(self, quote: str) -> list[int]:
        """For each position j of the line, where a string whose opening `quote` came just
        before j ends (3.11's ContStr, closing quote or backslash-newline), or -1: what the
        regex finds from j, for every j at once, right to left."""
        line, n = self.line, len(self.line)
        ends = [-1] * (n + 2)
        for j in range(n - 1, -1, -1):
            c = line[j]
            if c == quote:
                ends[j] = j + 1
            elif c == "\\":
                if line.startswith("\n", j + 1):
                    ends[j] = j + 2
                elif line.startswith("\r\n", j + 1):
                    ends[j] = j + 3
                elif j + 1 < n:
                    ends[j] = ends[j + 2]
            elif c != "\n":
                ends[j] = ends[j + 1]
        return ends

    def _pseudo_token(self) -> re.Match[str] | None:
        """PSEUDO_TOKEN's match at pos. Its ContStr alternative retries from every quote and
        backtracks over the rest of the line each time (quadratic on a line of escaped quotes,
        as in 3.11 itself); whether it matches is read off _string_closes, and where it cannot,
        the same pattern without it is used."""
        line, pos = self.line, self.pos
        start = pos
        while start < len(line) and line[start] in " \f\t":
            start += 1
        m = _STRING_OPEN.match(line, start)
        if m is None or line.startswith(m.group(2) * 3, m.start(2)):
            return PSEUDO_TOKEN.match(line, pos)
        quote = m.group(2)
        if quote not in self._closes:
            self._closes[quote] = self._string_closes(quote)
        if self._closes[quote][m.end(2)] >= 0:
            return PSEUDO_TOKEN.match(line, pos)
        return PSEUDO_NO_STRING.match(line, pos)

    def run(self) -> LineState:
        s = self.s
        if s.open_from is not None:
            go_on = self.open_string()
        elif s.parenlev == 0 and not s.continued:
            go_on = self.new_statement()
        else:
            if not self.line:
                raise TokenError("EOF in multi-line statement", (self.lnum, 0))
            self.s = replace(s, continued=False)
            go_on = True
        while go_on and self.pos < len(self.line):
            m = self._pseudo_token()
            if m:
                go_on = self.one_token(m)
            else:
                self.token(ERRORTOKEN, self.line[self.pos], (self.lnum, self.pos), (self.lnum, self.pos + 1), self.line)
                self.pos += 1
        return self.s


def _end_tokens(s: LineState, lnum: int) -> list[TokenInfo]:
    """What the tokenizer adds at the end of the input: a NEWLINE the last line did not
    have, a DEDENT per open indentation level, the ENDMARKER."""
    out: list[TokenInfo] = []
    last = s.last_line
    if last and last[-1] not in "\r\n" and not last.strip().startswith("#"):
        out.append(TokenInfo(NEWLINE, "", (lnum - 1, len(last)), (lnum - 1, len(last) + 1), ""))
    out += [TokenInfo(DEDENT, "", (lnum, 0), (lnum, 0), "") for _ in s.indents[1:]]
    out.append(TokenInfo(ENDMARKER, "", (lnum, 0), (lnum, 0), ""))
    return out


def tokens_from(lines: list[str], first: int, state: LineState, states: list[LineState]) -> Iterator[TokenInfo]:
    """The tokens of lines[first:], the tokenizer starting in `state`. The state at the start
    of each line it reads is written to states[i] (the list is extended as it goes), so a
    later call can resume there. Raises TokenError and IndentationError as 3.11's does."""
    del states[first:]
    for i in range(first, len(lines) + 1):
        states.append(state)
        step = _Line(lines, i, state)
        line = step.line
        new_state = step.run()
        yield from step.tokens
        if step.stop:
            yield from _end_tokens(state, i + 1)
            return
        state = replace(new_state, last_line=line) if line else new_state
