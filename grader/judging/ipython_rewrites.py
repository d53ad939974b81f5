"""IPython's token transforms: finding one instance of its special syntax in a cell, and rewriting it.

IPython (IPython.core.inputtransformer2, 9.18) looks at a cell's tokens grouped
into logical lines. Four transformers each find the first instance of their
syntax (`a = %foo`, `a = !foo`, an escaped line such as `%foo`, `!foo`, `?foo`,
`/f a`, and `foo?` at a line's end); the earliest found is rewritten (if it
cannot be, the next earliest). This module holds the four finders, which look
at one logical line at a time, and the rewrite of what one of them found, with
the line the grader runs in its place (judging/ipython_scan.py makes every
rewrite of a cell, in IPython's order).
"""

from __future__ import annotations

import argparse
import re
import shlex
import tokenize
from dataclasses import dataclass
from tokenize import TokenInfo
from typing import NoReturn


class CellNotRunnable(ValueError):
    """IPython itself would refuse to run this cell (it raises before Python sees it).
    `line` is the index of the cell's original line at fault, where one is."""

    def __init__(self, message: str, line: int | None = None, syntax: bool = False):
        super().__init__(message)
        self.line = line
        self.syntax = syntax  # Python's own syntax error (an indentation its tokenizer refuses)


_OPEN, _CLOSE = {"(", "[", "{"}, {")", "]", "}"}


def _first_significant(line: list[TokenInfo]) -> int:
    ix = 0
    while ix < len(line) and line[ix].type in (tokenize.INDENT, tokenize.DEDENT):
        ix += 1
    return ix


@dataclass(frozen=True)
class Found:
    kind: str
    line: int  # 0-based line of the special syntax's start
    col: int
    priority: int  # lower wins at the same place (help before magic, so `%foo?` is help)
    q_line: int = 0  # for help: where the question mark is


def _assign_index(line: list[TokenInfo]) -> int | None:
    """The first `=` outside brackets."""
    depth = 0
    for i, tok in enumerate(line):
        if tok.string == "=" and depth == 0:
            return i
        if tok.string in _OPEN:
            depth += 1
        elif tok.string in _CLOSE and depth > 0:
            depth -= 1
    return None


def _magic_assign(line: list[TokenInfo]) -> Found | None:
    """`a = %foo`"""
    i = _assign_index(line)
    if i is None or len(line) < i + 2 or line[i + 1].string != "%":
        return None
    if len(line) == i + 2:  # `x = %` cut short by a string left open: IPython fails with IndexError
        raise CellNotRunnable(
            "IPython fails on a magic assignment cut short by an unclosed string", line[i + 1].start[0] - 1
        )
    if line[i + 2].type == tokenize.NAME:
        return Found("magic_assign", line[i + 1].start[0] - 1, line[i + 1].start[1], 10)
    return None


def _system_assign(line: list[TokenInfo]) -> Found | None:
    """`a = !foo` (the `!` is an error token to Python 3.11's tokenizer, spaces before it too)"""
    i = _assign_index(line)
    if i is None or line[i].line.strip().startswith("=") or len(line) < i + 2:
        return None
    for tok in line[i + 1 :]:
        if tok.type != tokenize.ERRORTOKEN:
            break
        if tok.string == "!":
            return Found("system_assign", tok.start[0] - 1, tok.start[1], 10)
        if not tok.string.isspace():
            break
    return None


_ESCAPE_SINGLES = {"!", "?", "%", ",", ";", "/"}
_ESCAPE_DOUBLES = {"!!", "??"}


def _escaped(line: list[TokenInfo]) -> Found | None:
    """`%magic`, `!shell`, `?help`, `/f a`, ... at the start of a logical line"""
    ix = _first_significant(line)
    if ix < len(line) and line[ix].string in _ESCAPE_SINGLES:
        return Found("escaped", line[ix].start[0] - 1, line[ix].start[1], 10)
    return None


def _help_end(line: list[TokenInfo]) -> Found | None:
    """`obj?` and `obj??`: a question mark just before the end of the logical line"""
    if len(line) > 2 and line[-2].string == "?":
        ix = _first_significant(line)
        return Found("help_end", line[ix].start[0] - 1, line[ix].start[1], 5, line[-2].start[0] - 1)
    return None


# IPython's transformers, in its order; each looks at one logical line at a time.
FINDERS = {"magic_assign": _magic_assign, "system_assign": _system_assign, "escaped": _escaped, "help_end": _help_end}


# --- rewriting one instance -----------------------------------------------------------------------------------


def _continued_end(lines: list[str], start: int) -> int:
    """The last line of a line continued with backslashes (may be one past the end, as IPython's)."""
    end = start
    while lines[end].endswith("\\\n"):
        end += 1
        if end >= len(lines):
            break
    return end


def _assemble(lines: list[str], start: int, col: int, end: int) -> str:
    parts = [lines[start][col:], *lines[start + 1 : end + 1]]
    return " ".join([p.rstrip()[:-1] for p in parts[:-1]] + [parts[-1].rstrip()])


def _magic_call(name: str, args: str) -> str:
    return f"get_ipython().run_line_magic({name!r}, {args!r})"


def _help_call(target: str, esc: str) -> str:
    method = "pinfo2" if esc == "??" else "psearch" if "*" in target else "pinfo"
    return _magic_call(method, target)


def _paren_call(content: str) -> str:
    name, _, args = content.partition(" ")
    if name == "":
        raise SyntaxError("'/' must be followed by a callable name")
    return f"{name}({', '.join(args.split())})"


def _quote_call(content: str) -> str:
    name, _, args = content.partition(" ")
    return '{}("{}")'.format(name, '", "'.join(args.split()))


def _quote2_call(content: str) -> str:
    name, _, args = content.partition(" ")
    return f'{name}("{args}")'


def _escape_call(escape: str, content: str) -> str:
    if escape in ("?", "??"):
        return "get_ipython().show_usage()" if not content else _help_call(content, escape)
    if escape == "!":
        return f"get_ipython().system({content!r})"
    if escape == "!!":
        return f"get_ipython().getoutput({content!r})"
    if escape == "%":
        name, _, args = content.partition(" ")
        return _magic_call(name, args)
    return {",": _quote_call, ";": _quote2_call, "/": _paren_call}[escape](content)


_WORD = re.compile(r"[\w*]")
_DIGIT = re.compile(r"\d")


def _name_run(s: str, end: int) -> int:
    """The start of the run of name characters (the regex class [\\w*]) that ends at `end`."""
    start = end
    while start > 0 and _WORD.match(s, start - 1):
        start -= 1
    return start


def _index_segment(s: str, end: int) -> int | None:
    """The start of `[-?digits]` ending at `end` (s[end - 1] == "]"), or None."""
    i = end - 1
    while i > 0 and "0" <= s[i - 1] <= "9":
        i -= 1
    if i == end - 1:
        return None
    if i > 0 and s[i - 1] == "-":
        i -= 1
    return i - 1 if i > 0 and s[i - 1] == "[" else None


def help_target(content: str) -> tuple[str, str] | None:
    r"""(target, "?" or "??") as IPython's help regex finds them at the end of `content`:
    `re.search(r"(%{0,2}(?!\d)[\w*]+(\.(?!\d)[\w*]+|\[-?[0-9]+\])*)(\?\??)$", content)`,
    groups 1 and 3. The regex backtracks in time quadratic in the line (60 KB of `a*` take
    minutes); this reads the line once, from its end, and finds the same leftmost match."""
    end = len(content) - 1 if content.endswith("\n") else len(content)
    q = len(content[:end]) - len(content[:end].rstrip("?"))
    if q not in (1, 2):
        return None
    pos, best = end - q, None
    while pos > 0:
        if content[pos - 1] == "]":
            start = _index_segment(content, pos)
            if start is None:
                break
            pos = start
            continue
        run = _name_run(content, pos)
        if run == pos:
            break
        first = next((i for i in range(run, pos) if not _DIGIT.match(content, i)), None)
        if first is not None:
            percents = 0
            while first == run and percents < 2 and run - percents > 0 and content[run - percents - 1] == "%":
                percents += 1
            best = first - percents
        if run > 0 and content[run - 1] == "." and not _DIGIT.match(content, run):
            pos = run - 1
            continue
        break
    if best is None:
        return None
    return content[best : end - q], content[end - q : end]


@dataclass(frozen=True)
class Rewrite:
    start: int  # first and last line replaced
    end: int
    text: str  # IPython's line
    program: str | None  # the grader's line, when IPython's calls on IPython
    magic: tuple[str, str] | None = None  # (name, arguments) of a line magic


def _outside_kernel(prefix: str, original: str) -> str:
    """A call on IPython outside a kernel: `None`, the original kept as a comment on one line."""
    return f"{prefix}None  # {' '.join(original.split())}\n"


class _MagicArguments(argparse.ArgumentParser):
    """IPython's MagicArgumentParser for %time: no help option, errors raised, not exits."""

    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def _arg_split(text: str) -> list[str]:
    """IPython's arg_split(text, strict=False): shlex, quotes kept, an unclosed quote's rest one word."""
    lex = shlex.shlex(text, posix=False)
    lex.whitespace_split = True
    lex.commenters = ""
    words: list[str] = []
    while True:
        try:
            words.append(next(lex))
        except StopIteration:
            break
        except ValueError:
            words.append(lex.token)
            break
    return words


def time_statement(args: str) -> str | None:
    """The statement IPython's %time runs for `%time args`: its option --no-raise-error
    parsed out, the other words joined again by one space (IPython 9.18's
    parse_argstring(partial=True)); None when IPython refuses the arguments."""
    parser = _MagicArguments(prog="%time", add_help=False)
    parser.add_argument("--no-raise-error", action="store_true")
    try:
        _, extra = parser.parse_known_args(_arg_split(args))
    except ValueError:
        return None
    return " ".join(extra)


def magic_program(prefix: str, name: str, args: str, original: str) -> str:
    """What the grader runs for the line magic `name args`: `%time` runs its statement (or,
    assigned, its expression) in the notebook's namespace, so that statement is what runs
    (if it does not compile, neither does the cell: IPython raises the same SyntaxError);
    any other magic means nothing outside a kernel and is `None`."""
    statement = time_statement(args) if name == "time" else None
    if statement:
        return f"{prefix}{statement}\n"
    return _outside_kernel(prefix, original)


def last_line_read(found: Found, lines: list[str]) -> int:
    """The last line a rewrite of `found` reads: its outcome depends on nothing after it."""
    return found.q_line if found.kind == "help_end" else min(_continued_end(lines, found.line), len(lines) - 1)


def rewrite(found: Found, lines: list[str]) -> Rewrite:
    """The line replacing the special syntax found; SyntaxError when it is not one IPython
    can rewrite (then the next candidate is tried)."""
    start, col = found.line, found.col
    if found.kind == "help_end":
        piece = "".join(lines[start : found.q_line + 1])
        target = help_target(piece[col:])
        if target is None:
            raise SyntaxError(piece[col:])
        call = _help_call(*target)
        return Rewrite(start, found.q_line, piece[:col] + call + "\n", _outside_kernel(piece[:col], piece[col:]))
    end = _continued_end(lines, start)
    rest = _assemble(lines, start, col, end)
    prefix = lines[start][:col]
    if found.kind == "magic_assign":
        name, _, args = rest[1:].partition(" ")
        return Rewrite(
            start, end, prefix + _magic_call(name, args) + "\n", magic_program(prefix, name, args, rest), (name, args)
        )
    if found.kind == "system_assign":
        call = f"get_ipython().getoutput({rest[1:]!r})"
        return Rewrite(start, end, prefix + call + "\n", _outside_kernel(prefix, rest))
    escape = rest[:2] if len(rest) > 1 and rest[:2] in _ESCAPE_DOUBLES else rest[:1]
    call = _escape_call(escape, rest[len(escape) :])
    if escape == "%":
        name, _, args = rest[1:].partition(" ")
        return Rewrite(start, end, prefix + call + "\n", magic_program(prefix, name, args, rest), (name, args))
    program = _outside_kernel(prefix, rest) if call.startswith("get_ipython()") else None
    return Rewrite(start, end, prefix + call + "\n", program)
