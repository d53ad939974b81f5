"""The one script the zygote runs: the parts of grader/sandbox/inside/ joined in dependency order.

child.py says why one script; this module only builds it, and imports none of
the parts (nor NumPy, nor typing), so that sandbox/early.py can start a zygote
before anything else of the grader is loaded.

Each part is also an ordinary module, which the parent imports and ruff and
mypy check: it imports what it uses from the parts before it (`from .kernel
import _libc`), and the names it needs only for type checking under `if
TYPE_CHECKING:`. Joining keeps every statement and drops what the joined
script has no use for (its names are then defined above, nothing in it is
type-checked at run time, and no one reads it):

- a part's imports from earlier parts (one line, or one parenthesised list);
- `TYPE_CHECKING = False` and the `if TYPE_CHECKING:` block after it;
- every line that is only a comment;
- the docstring of every part but the first (whose docstring is the
  script's): anywhere else in a module, a string alone is compiled to nothing.

The script is compiled from source at every zygote's start (`-c`), and every
byte of it is in every zygote's and worker's memory many times over
(docs/measurements.md, "The sandbox's script"). So the parts' types are PEP
484 type comments (`# type: (Job, int) -> bytes`), which mypy checks as it
does annotations, rather than annotations, which would be compiled at every
start; and the parts' comments, type comments of a line of their own
included, are not in the script at all, where a docstring would be: a part
describes a function in a comment under its `def`. (ruff reads no type
comments: the imports only they use say so on their line.)

tests/test_child_parts.py checks that the joined script means what the parts
mean as modules: the parts in dependency order, no name bound by two of them,
every global name the script loads defined in it, and PART_NAMES equal to
child.PARTS.
"""

from __future__ import annotations

import os
import re

PART_NAMES = ("kernel", "frames", "seccomp", "landlock", "arguments", "worker", "supervise", "zygote", "master")
INSIDE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inside")
# A part's import of an earlier part (one line, or isort's parenthesised list).
SIBLING_IMPORT = re.compile(r"^from \.(\w+) import (?:[\w, ]+|\([\w,\s]+\))\n", re.M)
# Each line the script drops, with the newline before it: a comment line (type comments
# included), an import of an earlier part, TYPE_CHECKING and the block it guards. One pattern,
# anchored on the newline, so that the regex engine skips from line to line: the script is built
# before every zygote's start.
DROPPED = re.compile(
    r"\n(?:[ \t]*#[^\n]*"
    r"|from \.\w+ import (?:[\w, ]+|\([\w,\s]+\))"
    r"|TYPE_CHECKING = False"
    r"|if TYPE_CHECKING:(?:\n[ \t]+\S[^\n]*|\n[ \t]*(?=\n))*)(?=\n)"
)


# The script's entry: a zygote's, or a master's (only the master's script holds inside/master.py),
# which returns only in each zygote it forks, with that zygote's arguments: its frames under a
# worker are then a fresh zygote's, and a deep recursion has the same room in both.
ARGUMENTS = (
    'int(sys.argv[1]), sys.argv[2].split(",") if len(sys.argv) > 2 else (),\n'
    "        json.loads(sys.argv[3]) if len(sys.argv) > 3 else None"
)
MAIN = f'if __name__ == "__main__":\n    zygote_main({ARGUMENTS})\n'
MASTER_MAIN = f'if __name__ == "__main__":\n    zygote_main(*master_main(\n        {ARGUMENTS}))\n'


def part_body(text: str, first: bool = True) -> str:
    """A part's source as it appears in the script (`first`: as its first part)."""
    if not first and text.startswith('"""'):
        text = text[text.index('"""', 3) + 3 :]
    return DROPPED.sub("", text)


def source(master: bool = False) -> str:
    """The script the launcher runs as `python -I [-S] -c SCRIPT CTRL_FD EARLY_MODULES [SITE_DIRS]`
    (`master`: a batch's master's, sandbox/master.py, which every zygote it forks runs on)."""
    chunks: list[str] = []
    for name in PART_NAMES if master else PART_NAMES[:-1]:
        with open(os.path.join(INSIDE_DIR, f"{name}.py"), encoding="utf-8") as f:
            text = f.read()
        chunks.append(f"# ---- inside/{name}.py ----\n" + part_body(text, first=not chunks))
    chunks.append(MASTER_MAIN if master else MAIN)
    return "\n\n".join(chunks)
