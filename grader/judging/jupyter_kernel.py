"""What a Jupyter kernel gives a cell that a Python module does not, and its one-line prefilter.

A notebook runs in ipykernel's shell (ZMQInteractiveShell, IPython 9.18). After
IPython's TransformerManager (judging/ipython_syntax.py), the shell passes a cell
that is one line long through its prefilter (InteractiveShell.transform_cell,
IPython.core.prefilter). With automagic on, as in every Jupyter kernel, that
makes `pip install numpy`, `ls`, `pwd` or `load_ext autoreload` line magics:
when the line's first word is a line magic's name, is not followed by `=` or
`,`, and no name of the notebook, builtin or keyword shadows it (its
AutoMagicChecker, tried after its AssignmentChecker; the other checkers need
objects only a kernel has, or autocall, which Jupyter leaves off).

The facts below were read off a running kernel (ipykernel 7.4.0, IPython 9.18.1,
Python 3.11) by tests/ipython_corpus.py and are kept in tests/data/ipython_cells.json;
tests/test_ipython_syntax.py checks that these constants equal them, and that
`prefilter` gives what the kernel's own `transform_cell` gives.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Set
from dataclasses import dataclass, field

# The kernel's line magics (`%lsmagic`), aliases such as `ls` included.
LINE_MAGICS = frozenset(
    {
        "alias",
        "alias_magic",
        "autoawait",
        "autocall",
        "automagic",
        "autosave",
        "bookmark",
        "cat",
        "cd",
        "clear",
        "code_wrap",
        "colors",
        "conda",
        "config",
        "connect_info",
        "cp",
        "debug",
        "dhist",
        "dirs",
        "doctest_mode",
        "ed",
        "edit",
        "env",
        "gui",
        "hist",
        "history",
        "killbgscripts",
        "ldir",
        "less",
        "lf",
        "lk",
        "ll",
        "load",
        "load_ext",
        "loadpy",
        "logoff",
        "logon",
        "logstart",
        "logstate",
        "logstop",
        "ls",
        "lsmagic",
        "lx",
        "macro",
        "magic",
        "mamba",
        "man",
        "matplotlib",
        "micromamba",
        "mkdir",
        "more",
        "mv",
        "notebook",
        "page",
        "pastebin",
        "pdb",
        "pdef",
        "pdoc",
        "pfile",
        "pinfo",
        "pinfo2",
        "pip",
        "popd",
        "pprint",
        "precision",
        "prun",
        "psearch",
        "psource",
        "pushd",
        "pwd",
        "pycat",
        "pylab",
        "qtconsole",
        "quickref",
        "recall",
        "rehashx",
        "reload_ext",
        "rep",
        "rerun",
        "reset",
        "reset_selective",
        "rm",
        "rmdir",
        "run",
        "save",
        "sc",
        "set_env",
        "store",
        "subshell",
        "sx",
        "system",
        "tb",
        "time",
        "timeit",
        "unalias",
        "unload_ext",
        "uv",
        "who",
        "who_ls",
        "whos",
        "xdel",
        "xmode",
    }
)

# The kernel's cell magics (`%%name`).
CELL_MAGICS = frozenset(
    {
        "!",
        "HTML",
        "SVG",
        "bash",
        "capture",
        "code_wrap",
        "debug",
        "file",
        "html",
        "javascript",
        "js",
        "latex",
        "markdown",
        "perl",
        "prun",
        "pypy",
        "python",
        "python2",
        "python3",
        "ruby",
        "script",
        "sh",
        "svg",
        "sx",
        "system",
        "time",
        "timeit",
        "writefile",
    }
)

# The line magics an extension IPython ships adds when loaded (`%load_ext autoreload`).
EXTENSION_MAGICS: dict[str, frozenset[str]] = {
    "autoreload": frozenset({"aimport", "autoreload"}),
    "storemagic": frozenset({"store"}),
}
# Magics that make any name a magic from then on: another extension, an alias, every executable.
OPENING_MAGICS = frozenset({"load_ext", "reload_ext", "alias", "alias_magic", "rehashx"})

# The names the kernel binds before the first cell runs (`_i1`, `_1`, ... come with each cell).
KERNEL_NAMES = frozenset(
    {
        "In",
        "Out",
        "_",
        "__",
        "___",
        "__builtin__",
        "__builtins__",
        "__doc__",
        "__loader__",
        "__name__",
        "__package__",
        "__spec__",
        "_dh",
        "_i",
        "_ih",
        "_ii",
        "_iii",
        "_oh",
        "exit",
        "get_ipython",
        "open",
        "quit",
    }
)

# What the kernel adds to the builtins.
KERNEL_BUILTINS = frozenset({"__IPYTHON__", "display", "execfile", "get_ipython", "runfile"})

_LINE_SPLIT = re.compile(r"^(\s*)([,;/%]|!!?|\?\??)?\s*(%{0,2}[\w\.\*]*)(.*?$|$)")


def shadowed(name: str, bound: Set[str]) -> bool:
    """IPython's is_shadowed: a name of the notebook, the kernel or the builtins, or a keyword."""
    return (
        name in bound
        or name in KERNEL_NAMES
        or name in KERNEL_BUILTINS
        or hasattr(builtins, name)
        or keyword.iskeyword(name)
    )


def _split(line: str) -> tuple[str, str, str]:
    """(leading whitespace, the function part, the rest), as IPython's split_user_input."""
    m = _LINE_SPLIT.match(line)
    if m is None:
        parts = line.split(None, 1)
        ifun, rest = (parts + [""])[:2] if parts else (line, "")
        pre = re.match(r"^(\s*)", line).group(1)  # type: ignore[union-attr]  # always matches
        return pre, ifun.strip(), rest
    pre, _, ifun, rest = m.groups()
    return pre, ifun.strip(), rest


@dataclass
class Magics:
    """The magics the kernel knows at a point of the notebook: its own, those of the
    extensions loaded so far; `any_name` once an unknown extension, an alias or
    `%rehashx` may have made any name a magic."""

    line: set[str] = field(default_factory=lambda: set(LINE_MAGICS))
    cell: set[str] = field(default_factory=lambda: set(CELL_MAGICS))
    any_name: bool = False

    def ran(self, name: str, args: str) -> None:
        """Take in what running the line magic `name args` adds."""
        if name not in OPENING_MAGICS:
            return
        extensions = args.split() if name in ("load_ext", "reload_ext") else []
        if name not in ("load_ext", "reload_ext") or any(e not in EXTENSION_MAGICS for e in extensions):
            self.any_name = True
        for e in extensions:
            self.line |= EXTENSION_MAGICS.get(e, frozenset())

    def knows_line(self, name: str) -> bool:
        return self.any_name or name in self.line

    def knows_cell(self, name: str) -> bool:
        return self.any_name or name in self.cell


def automagic(line: str, bound: Set[str], magics: Magics) -> tuple[str, str, str, str] | None:
    """(leading whitespace, magic name, its arguments, IPython's call) when IPython's prefilter
    makes the one-line cell `line` (without its line end) a line magic; None when it leaves it
    as Python. `bound`: the names the notebook's earlier cells bound."""
    if not line.strip():
        return None
    pre, ifun, raw_rest = _split(line)
    rest = raw_rest.lstrip()
    if rest and rest[0] in "=,":
        return None  # an assignment: Python
    if ifun not in magics.line or shadowed(ifun.split(".", 1)[0], bound):
        return None
    name, _, args = f"{ifun} {rest}".partition(" ")
    name = name.lstrip("%")
    return pre, name, args, f"{pre}get_ipython().run_line_magic({name!r}, {args!r})"
