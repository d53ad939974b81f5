"""The one script the zygote runs: the parts of grader/sandbox/inside/ joined in dependency order.

child.py says why one script; this module only builds it, and imports none of
the parts (nor NumPy), so that sandbox/early.py can start a zygote before
anything else of the grader is loaded. tests/test_child_parts.py checks that
PART_NAMES is child.PARTS, in the same order.
"""
from __future__ import annotations

import os
import re

PART_NAMES = ("kernel", "frames", "seccomp", "landlock", "worker", "supervise", "zygote")
INSIDE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inside")
# A part's import of an earlier part: dropped when the parts are concatenated.
SIBLING_IMPORT = re.compile(r"^from \.(\w+) import [\w, ]+\n", re.M)


def source() -> str:
    """The script the launcher runs as `python -I [-S] -c SCRIPT CTRL_FD EARLY_MODULES [SITE_DIRS]`."""
    chunks = []
    for name in PART_NAMES:
        with open(os.path.join(INSIDE_DIR, f"{name}.py"), encoding="utf-8") as f:
            text = f.read()
        chunks.append(f"# ---- inside/{name}.py ----\n" + SIBLING_IMPORT.sub("", text))
    chunks.append('if __name__ == "__main__":\n'
                  '    zygote_main(int(sys.argv[1]), sys.argv[2].split(",") if len(sys.argv) > 2 else (),\n'
                  '                json.loads(sys.argv[3]) if len(sys.argv) > 3 else None)\n')
    return "\n\n".join(chunks)
