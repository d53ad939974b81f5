"""The grader reads a notebook cell as IPython does: judging/ipython_syntax.py, ipython_rewrites.py
and python_tokens.py against IPython itself.

The specification is IPython 9.18.1 on Python 3.11 (requirements-dev.txt pins it):
tests/data/ipython_cells.json holds its output for 700 cells (tests/ipython_corpus.py).
Every test here but the live ones runs without IPython; the live ones compare with the
installed IPython on cells generated afresh, and the tokenizer with Python 3.11's own.
"""

from __future__ import annotations

import ast
import json
import sys
import tokenize
import warnings
from pathlib import Path

import pytest

from grader.judging import jupyter_kernel, python_tokens
from grader.judging.ipython_rewrites import CellNotRunnable, time_statement
from grader.judging.ipython_scan import TRANSFORM_LOOP_LIMIT
from grader.judging.ipython_syntax import calls_on_ipython, ipython_text, transform_cell
from grader.judging.notebook import WRAPPER_MAGICS, CellSyntaxError, extract, kernel_text
from ipython_corpus import CORPUS, build_corpus, corpus_text, generated_cells

ROOT = Path(__file__).resolve().parents[1]
DATA = json.loads(CORPUS.read_text(encoding="utf-8"))
SPEC = DATA["provenance"]
CELLS = DATA["cells"]
ON_SPEC_PYTHON = SPEC["python"] == ".".join(map(str, sys.version_info[:2]))


def _ipython() -> object | None:
    try:
        import IPython
    except ImportError:
        return None
    return IPython


def ours(cell: str) -> dict[str, str]:
    try:
        return {"text": ipython_text(cell)}
    except CellNotRunnable:
        return {"error": "refused"}


def _same(entry: dict[str, str], got: dict[str, str]) -> bool:
    return ("error" in entry and "error" in got) or entry.get("text") == got.get("text")


# --- the corpus ------------------------------------------------------------------------------------------


def test_the_corpus_holds_the_cells_the_issue_names():
    cells = {c["cell"] for c in CELLS}
    assert "%load_ext autoreload\n%autoreload 2\nimport numpy as np" in cells
    assert "np.einsum?" in cells and "??np.tanh" in cells
    assert "x = (10\n     %3)" in cells and "y = [1\n  !=3]" in cells
    assert any(c.startswith("%%time") for c in cells) and any("\u2028" in c for c in cells)
    assert len(CELLS) >= 690 and SPEC["ipython"] == "9.18.1" and SPEC["python"] == "3.11"


@pytest.mark.parametrize("index", range(len(CELLS)))
def test_every_corpus_cell_reads_as_ipython_read_it(index):
    entry = CELLS[index]
    assert _same(entry, ours(entry["cell"])), entry["cell"]


@pytest.mark.parametrize("index", range(len(CELLS)))
def test_every_corpus_cell_reads_as_a_running_kernel_read_it(index):
    """A kernel's whole transform_cell: TransformerManager, then the one-line prefilter (automagic)."""
    entry = CELLS[index]
    try:
        got = {"shell": kernel_text(entry["cell"])}
    except CellNotRunnable:
        got = {"shell_error": "refused"}
    assert ("shell_error" in entry and "shell_error" in got) or entry.get("shell") == got.get("shell"), entry["cell"]


def test_the_kernels_magics_names_and_builtins_are_the_ones_recorded():
    facts = DATA["kernel"]
    assert jupyter_kernel.LINE_MAGICS == set(facts["line_magics"])
    assert jupyter_kernel.KERNEL_NAMES == set(facts["kernel_names"])
    assert jupyter_kernel.KERNEL_BUILTINS == set(facts["kernel_builtins"])
    assert jupyter_kernel.CELL_MAGICS == set(facts["cell_magics"])
    assert jupyter_kernel.EXTENSION_MAGICS["autoreload"] == set(facts["autoreload_magics"])
    assert (facts["automagic"], facts["autocall"]) == (True, 0)  # what the prefilter emulation assumes


def test_the_corpus_regenerates_byte_for_byte_with_the_pinned_ipython():
    ipython = _ipython()
    if ipython is None:
        pytest.skip("IPython is not installed (it comes with the dev requirements)")
    if ipython.__version__ != SPEC["ipython"] or not ON_SPEC_PYTHON:
        pytest.skip(
            f"the corpus was made with IPython {SPEC['ipython']} on Python {SPEC['python']}; this is "
            f"IPython {ipython.__version__} on Python {sys.version_info[0]}.{sys.version_info[1]}"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert corpus_text(build_corpus()) == CORPUS.read_text(encoding="utf-8")


# --- against a live IPython, on cells it has not seen -------------------------------------------------------


def test_fresh_generated_cells_read_as_the_installed_ipython_reads_them():
    ipython = _ipython()
    if ipython is None:
        pytest.skip("IPython is not installed (it comes with the dev requirements)")
    if not ON_SPEC_PYTHON:
        pytest.skip(
            f"IPython's reading depends on the Python it runs on; the grader follows IPython on Python "
            f"{SPEC['python']}, and this is {sys.version_info[0]}.{sys.version_info[1]}"
        )
    from IPython.core.inputtransformer2 import TransformerManager

    manager = TransformerManager()
    differ = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cell in generated_cells(31337, 3000):
            try:
                expected = {"text": manager.transform_cell(cell)}
            except Exception:  # any exception IPython raises is "the cell is refused"
                expected = {"error": "raised"}
            if not _same(expected, ours(cell)):
                differ.append(cell)
    assert not differ, f"{len(differ)} cells differ, the first: {differ[0]!r}"


# --- the tokenizer is Python 3.11's -----------------------------------------------------------------------------


def _stdlib_tokens(lines: list[str]) -> tuple[list[tuple], str | None]:
    out = []
    try:
        for tok in tokenize.generate_tokens(iter(lines).__next__):
            out.append((tok.type, tok.string, tok.start, tok.end))
    except (tokenize.TokenError, IndentationError) as exc:
        return out, type(exc).__name__
    return out, None


def _our_tokens(lines: list[str]) -> tuple[list[tuple], str | None]:
    out = []
    try:
        for tok in python_tokens.tokens_from(lines, 0, python_tokens.LineState(), []):
            out.append((tok.type, tok.string, tok.start, tok.end))
    except python_tokens.TokenError:
        return out, "TokenError"
    except IndentationError:
        return out, "IndentationError"
    return out, None


def _token_sources() -> list[str]:
    files = sorted((ROOT / "grader").rglob("*.py")) + sorted((ROOT / "tests").glob("test_*.py"))
    stdlib = Path(tokenize.__file__).parent
    files += sorted(stdlib.glob("*.py"))[:120]
    return [c["cell"] for c in CELLS] + [p.read_text(encoding="utf-8", errors="replace") for p in files]


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="compares with Python 3.11's own tokenize module")
def test_the_tokenizer_gives_python_3_11s_tokens_and_errors():
    differ = []
    for source in _token_sources():
        lines = (source if source.endswith("\n") else source + "\n").splitlines(keepends=True)
        if _our_tokens(lines) != _stdlib_tokens(lines):
            differ.append(source[:80])
    assert not differ, f"{len(differ)} sources differ, the first: {differ[0]!r}"


@pytest.mark.parametrize(
    "source",
    [
        "def f(x):\n    s = '''a\nb'''\n    return (x +\n            1)\n%ls\n",
        "if x:\n    y = 'a\\\n  b'\n  z = 1\n",
        "a = 1 \\\n  + 2\n\tb = 3\n# c\n\n",
    ],
)
def test_the_tokenizer_resumed_at_any_line_gives_the_same_tokens(source):
    """Started at line L in the state it recorded there, the tokenizer emits exactly what it
    emitted from line L on when it ran from the top (errors included)."""
    lines = source.splitlines(keepends=True)
    states: list[python_tokens.LineState] = []
    whole, emitted_at, error = [], [], None
    try:
        for tok in python_tokens.tokens_from(lines, 0, python_tokens.LineState(), states):
            whole.append(tok)
            emitted_at.append(len(states) - 1)
    except (python_tokens.TokenError, IndentationError) as exc:
        error = type(exc)
    for line in range(len(states)):
        tail, tail_error = [], None
        try:
            tail = list(python_tokens.tokens_from(lines, line, states[line], list(states)))
        except (python_tokens.TokenError, IndentationError) as exc:
            tail_error = type(exc)
        first = next((i for i, at in enumerate(emitted_at) if at >= line), len(whole))
        if tail_error is None:
            assert tail == whole[first:] and error is None
        else:
            assert tail_error is error


# --- cost: each line tokenized a bounded number of times ------------------------------------------------------


def _counted(monkeypatch, owner: type, name: str) -> list[int]:
    """Count the calls of method `name` of `owner` for the rest of the test: [count]."""
    calls = [0]
    real = getattr(owner, name)

    def counting(self, *args, **kwargs):
        calls[0] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return calls


@pytest.mark.parametrize(
    "shape",
    ["magics after the code", "magics before the code", "in an indented block", "unbalanced brackets in each magic"],
)
def test_a_cell_of_many_magics_is_tokenized_in_time_proportional_to_its_size(monkeypatch, shape):
    """IPython re-tokenizes the whole cell after each of up to 500 rewrites (quadratic: about
    18 s for 56 KiB of code and 499 magics); the scan resumes at the rewritten line."""
    pad = ["x = [1, 2, 3]  # padding\n"] * 1000
    magics = [f"%ls {i}\n" for i in range(TRANSFORM_LOOP_LIMIT - 1)]
    cell = {
        "magics after the code": pad + magics,
        "magics before the code": magics + pad,
        "in an indented block": ["if True:\n"] + ["    " + ln for ln in pad + magics],
        "unbalanced brackets in each magic": [f"%ls ) {i}\n" for i in range(TRANSFORM_LOOP_LIMIT - 1)] + pad,
    }[shape]
    visits = _counted(monkeypatch, python_tokens._Line, "run")
    text = transform_cell("".join(cell)).text
    assert text.count("get_ipython()") == TRANSFORM_LOOP_LIMIT - 1
    assert visits[0] <= 5 * len(cell), f"{visits[0]} line visits for {len(cell)} lines"


def test_a_cell_needing_more_rewrites_than_ipython_makes_is_refused():
    with pytest.raises(CellNotRunnable, match="500"):
        transform_cell("".join(f"%ls {i}\n" for i in range(TRANSFORM_LOOP_LIMIT)))


# --- the program the grader runs for each cell ---------------------------------------------------------------


def _time_statement(node: ast.AST) -> str | None:
    """The statement of a `run_line_magic('time', args)` call (None: not one, or nothing to run)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "run_line_magic"
        and len(node.args) == 2
        and isinstance(name := node.args[0], ast.Constant)
        and isinstance(text := node.args[1], ast.Constant)
        and name.value == "time"
        and isinstance(text.value, str)
    ):
        return time_statement(text.value) or None
    return None


def _calls_on_ipython(text: str) -> list[ast.expr]:
    """The calls on IPython in the text (none where it does not parse: it never runs)."""
    try:
        return calls_on_ipython(ast.parse(text))
    except (SyntaxError, ValueError):
        return []


def _bad_time(text: str) -> bool:
    """Does the text run `%time` on a statement that does not compile (SyntaxError when run)?"""
    for call in _calls_on_ipython(text):
        statement = _time_statement(call)
        if statement is not None:
            try:
                compile(statement, "time", "exec")
            except (SyntaxError, ValueError):
                return True
    return False


class _KernelCalls(ast.NodeTransformer):
    """IPython's calls as the grader runs them: `%time`'s statement or expression where it
    parses, None for every other call on IPython."""

    def __init__(self, calls: list[ast.expr]):
        self.calls = {id(c) for c in calls}

    @staticmethod
    def _timed(node: ast.AST) -> str | None:
        return _time_statement(node)

    def visit_Expr(self, node):
        if id(node.value) in self.calls and (timed := self._timed(node.value)):
            try:
                return ast.parse(timed).body
            except SyntaxError:
                pass
        return self.generic_visit(node)

    def visit_Call(self, node):
        if id(node) in self.calls:
            timed = self._timed(node)
            try:
                return ast.parse(timed, mode="eval").body if timed else ast.Constant(None)
            except SyntaxError:
                return ast.Constant(None)
        return self.generic_visit(node)


def _as_run(text: str) -> str | None:
    """IPython's text as the grader runs it, as an AST dump (None: it does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    return ast.dump(ast.fix_missing_locations(_KernelCalls(calls_on_ipython(tree)).visit(tree)))


def _body_text(cell: str) -> str | None:
    """The text a kernel runs for `cell`, wrapping cell magics unwrapped (None: not run)."""
    t = transform_cell(cell)
    while t.magic is not None and t.magic.name in WRAPPER_MAGICS:
        if t.magic.name == "time" and t.magic.args:
            return None  # IPython: "Can't use statement directly after '%%time'!" (UsageError)
        body = "".join(p.text for p in t.magic.body)
        t = transform_cell(body)
        if t.magic is None:
            return kernel_text(body) if body else ""
    return None  # a cell magic that wraps no Python: the kernel runs no text of ours


def _unknown_magic(text: str) -> bool:
    """Does the kernel's text call a magic the kernel does not have (UsageError when run)?"""
    for call in _calls_on_ipython(text):
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)  # what calls_on_ipython finds
        known: dict[str, frozenset[object]] = {
            "run_line_magic": jupyter_kernel.LINE_MAGICS,
            "run_cell_magic": jupyter_kernel.CELL_MAGICS,
        }
        method = call.func.attr
        if method in known and isinstance(call.args[0], ast.Constant) and call.args[0].value not in known[method]:
            return True
    return False


def _compiles(cell: str, shell: str) -> bool:
    """Does what a kernel runs for the cell compile (the compiler's own checks included), and
    does every magic it calls exist?"""
    text = shell if transform_cell(cell).magic is None else _body_text(cell)
    try:
        compile(text or "", "cell", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return not any(check(t) for t in (shell, text or "") for check in (_unknown_magic, _bad_time))


def _expected_program(cell: str, shell: str) -> str | None:
    """What the grader should run: the kernel's text (or a wrapping magic's body read again,
    as %%time and %%capture run it), IPython's calls as _KernelCalls makes them."""
    if transform_cell(cell).magic is None:
        return _as_run(shell)
    body = _body_text(cell)
    return _as_run(body) if body is not None else ast.dump(ast.parse(""))


def _program(cell: str) -> tuple[str, tuple[str, ...]] | None:
    """The grader's program for a one-cell notebook; None when it refuses the cell's syntax."""
    try:
        code = extract(json.dumps({"nbformat": 4, "cells": [{"cell_type": "code", "source": cell}]}))
    except CellSyntaxError:
        return None
    return code.source, code.line_map


@pytest.mark.parametrize("index", [i for i, c in enumerate(CELLS) if "shell" in c and "otter" not in c["cell"]])
def test_each_cell_runs_as_ipython_would_run_it_and_keeps_its_line_numbers(index):
    """(Otter's own cells are left out: the grader removes them too; tests/test_notebook.py.)"""
    cell, shell = CELLS[index]["cell"], CELLS[index]["shell"]
    program = _program(cell)
    expected = _expected_program(cell, shell)
    if program is None:  # refused: what the kernel runs does not compile either
        assert expected is None or not _compiles(cell, shell), cell
        return
    source, labels = program
    assert _as_run(source) == expected, (cell, source)
    lines = (
        len(
            (cell if cell.endswith(("\n", "\r")) else cell + "\n").replace("\r\n", "\n").replace("\r", "\n").split("\n")
        )
        - 1
    )
    assert labels[-1] == "after code cell 1"
    assert len(labels) - 1 >= lines and all(lab.startswith("code cell 1, line ") for lab in labels[:-1])
    numbers = [int(lab.rsplit(" ", 1)[1]) for lab in labels[:-1]]
    assert numbers == sorted(numbers) and (not numbers or numbers[0] == 1)


def test_a_cell_of_many_short_lines_is_not_copied_line_by_line(monkeypatch):
    """The scan copies the cell's lines once per rewrite, not once per logical line."""
    from grader.judging import ipython_scan

    copies = _counted(monkeypatch, ipython_scan._Scan, "lines")
    cell = "x\n" * 30000 + "".join(f"%ls {i}\n" for i in range(10))
    assert transform_cell(cell).text.count("get_ipython()") == 10
    assert copies[0] <= 3 * 11, copies


def test_the_help_query_is_found_as_ipythons_regex_finds_it():
    """help_target reads the line once from its end; IPython's regex, the specification,
    backtracks quadratically (minutes for 60 KB of `a*`). Random lines over the characters
    that matter give the same match."""
    import random
    import re

    from grader.judging.ipython_rewrites import help_target

    spec = re.compile(r"(%{0,2}(?!\d)[\w*]+(\.(?!\d)[\w*]+|\[-?[0-9]+\])*)(\?\??)$")
    rng = random.Random(5)
    alphabet = list("ab1_*.[]-%?\n é٣x(")
    for _ in range(100_000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        m = spec.search(line)
        assert help_target(line) == ((m.group(1), m.group(3)) if m else None), line
    assert help_target("a*" * 30000 + ")?") is None


def test_time_statement_is_what_ipythons_own_parser_leaves():
    """time_statement against IPython's %time argument parser itself, when installed."""
    if _ipython() is None:
        pytest.skip("IPython is not installed (it comes with the dev requirements)")
    from IPython.core import magic_arguments
    from IPython.core.magics.execution import ExecutionMagics

    for args in [
        "y = f(a,  b)",
        "--no-raise-error x = 1",
        "-n1 x = 1",
        "--no-r x=1",
        'x = "a  b"',
        "x = 1 # it's",
        "--no-raise-error=3 x",
        "",
        "-- x",
        "--no-raise-error --no-raise-error y",
        "x = 'unclosed",
    ]:
        try:
            _, extra = magic_arguments.parse_argstring(ExecutionMagics.time, args, partial=True)
            expected = " ".join(extra)
        except Exception:  # IPython's UsageError: the magic refuses the arguments
            expected = None
        assert time_statement(args) == expected, args


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="compares with Python 3.11's own tokenize module")
def test_the_tokenizer_reads_strings_and_escapes_as_python_3_11():
    """Random lines of quotes, prefixes, backslashes and line ends: the shortcut that decides
    whether a string closes gives the tokens 3.11's regex gives."""
    import random

    rng = random.Random(11)
    pieces = ["'", '"', "\\", "r", "b", "f", "rb", "x", " ", "\n", "\r\n", "\r", "#", "'''", '"""', "(", ")"]
    differ = []
    for _ in range(4000):
        source = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 16))) + "\n"
        lines = source.splitlines(keepends=True)
        if _our_tokens(lines) != _stdlib_tokens(lines):
            differ.append(source)
    assert not differ, f"{len(differ)} sources differ, the first: {differ[0]!r}"


def test_a_line_of_escaped_quotes_is_not_scanned_from_every_quote(monkeypatch):
    """3.11's string pattern retries from each quote and backtracks over the rest of the line
    (85 s for 64 KiB of `\\"`); where no string can close there, the pattern without it is used."""
    calls = [0]
    real = python_tokens.PSEUDO_TOKEN

    class Counting:  # counts the full pattern's tries where a string may start
        def match(self, line, pos):
            calls[0] += line[pos] in "'\""
            return real.match(line, pos)

    monkeypatch.setattr(python_tokens, "PSEUDO_TOKEN", Counting())
    line = 'x = "' + '\\"' * 20000 + "\n"
    tokens = list(python_tokens.tokens_from([line], 0, python_tokens.LineState(), []))
    assert len(tokens) > 40000 and calls[0] < 10, calls[0]
