"""What a student's upload holds, and why no one file in it can be graded.

Gradescope's run_autograder and PrairieLearn's entry program pick the file to
grade by one rule (the file named like the entry file, else the one Python
file or notebook); when the rule finds none, both explain it in the same
words from here. Names come from the upload and are shown through
judging.paths.shown (no control characters, bounded length).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..judging.paths import shown


def _listed(names: list[str], limit: int = 5) -> str:
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(shown(n, 80) for n in names[:limit]) + more


def upload_files(upload: Path) -> list[str]:
    """Every file of an upload, relative and sorted, as run_autograder's find sees them:
    a link (to a folder too) is listed, never followed; hidden files and folders are left out."""
    found = []
    for folder, dirs, files in os.walk(upload):
        links = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in links)
        rel = Path(folder).relative_to(upload)
        found += [(rel / name).as_posix() for name in files + links if not name.startswith(".")]
    return sorted(found)


def unlocated_reason(entry: str, files: list[str]) -> str:
    """Why run_autograder found no one file to grade in an upload holding `files`."""
    named = [f for f in files if Path(f).name == entry]
    code = [f for f in files if f.endswith(".py") or f.lower().endswith(".ipynb")]
    if len(named) > 1:
        return f"the upload has {len(named)} files named {entry} ({_listed(named)}); keep only one"
    if code:
        return (
            f"the upload has {len(code)} Python files or notebooks ({_listed(code)}) and none named {entry}, "
            "so which one to grade is unclear"
        )
    if files:
        return f"the upload has no {entry} and no other Python file or notebook, only {_listed(files)}"
    return "the upload is empty"
