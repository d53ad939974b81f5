"""The one script the zygote runs: the parts of grader/sandbox/inside/ joined in dependency order.

child.py says why one script; this module only builds it, and imports none of
the parts (nor NumPy, nor typing), so that sandbox/early.py can start a zygote
before anything else of the grader is loaded.

Each part is also an ordinary module, which the parent imports and ruff and
mypy check: it imports what it uses from the parts before it (`from .kernel
import _libc`), and the names it needs only for type checking under `if
TYPE_CHECKING:`. Joining keeps every other line and drops exactly these, which
the joined script has no use for (its names are then defined above, and
nothing in it is type-checked at run time):

- `from __future__ import annotations`, but in the first part, where it
  opens the script (after that part's docstring, the script's own): the
  parts' annotations stay unevaluated text there too;
- a part's imports from earlier parts (one line, or one parenthesised list);
- `TYPE_CHECKING = False` and the `if TYPE_CHECKING:` block after it.

tests/test_child_parts.py checks that the joined script means what the parts
mean as modules: the parts in dependency order, no name bound by two of them,
every global name the script loads defined in it, and PART_NAMES equal to
child.PARTS.
"""
from __future__ import annotations

import os
import re

PART_NAMES = ("kernel", "frames", "seccomp", "landlock", "worker", "supervise", "zygote")
INSIDE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inside")
FUTURE = "from __future__ import annotations\n"
# A part's import of an earlier part.
SIBLING_IMPORT = re.compile(r"^from \.(\w+) import (?:[\w, ]+|\([\w,\s]+\))\n", re.M)
# What a part has for its type checker only: its future import, and TYPE_CHECKING with its block.
CHECKING_ONLY = re.compile(r"^(?:from __future__ import annotations\n|TYPE_CHECKING = False\n"
                           r"|if TYPE_CHECKING:\n(?:[ \t]+\S.*\n|[ \t]*\n)*)", re.M)
# Both, in one pass over each part (the script is built before every zygote's start).
DROPPED = re.compile(f"{SIBLING_IMPORT.pattern}|{CHECKING_ONLY.pattern}", re.M)


def part_body(text: str, first: bool = False) -> str:
    """A part's source as it appears in the script (`first`: as the first part)."""
    if first:
        return DROPPED.sub(lambda m: FUTURE if m.group() == FUTURE else "", text)
    return DROPPED.sub("", text)


def source() -> str:
    """The script the launcher runs as `python -I [-S] -c SCRIPT CTRL_FD EARLY_MODULES [SITE_DIRS]`."""
    chunks: list[str] = []
    for name in PART_NAMES:
        with open(os.path.join(INSIDE_DIR, f"{name}.py"), encoding="utf-8") as f:
            text = f.read()
        chunks.append(f"# ---- inside/{name}.py ----\n" + part_body(text, first=not chunks))
    chunks.append('if __name__ == "__main__":\n'
                  '    zygote_main(int(sys.argv[1]), sys.argv[2].split(",") if len(sys.argv) > 2 else (),\n'
                  '                json.loads(sys.argv[3]) if len(sys.argv) > 3 else None)\n')
    return "\n\n".join(chunks)
