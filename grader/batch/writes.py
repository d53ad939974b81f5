"""Every file batch writes into DIR: atomically, never through a link, never over what it did not make.

The writing itself is problem/safe_write.py's (a temporary file in the same
folder, O_EXCL|O_NOFOLLOW, fsync'd, renamed over the target), with the one
difference that batch replaces the regular files it finds: DIR's files are
its own outputs, rewritten on every run and on resume (docs/batch.md). Any
other thing where a file belongs (a folder, a symbolic link, a FIFO, a device
or a socket) was not made by batch, and is an OutputError naming the path,
never replaced or written through. What a caller does with the error: a
student's file is that student's "could not be judged" (grading.py, shards.py);
a run-level file is checked before grading starts (exit 2) and, if it turns
bad during the run, reported after the rest is written (exit 1)
(gradebook_files.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..problem.safe_write import WriteRefused, kind_of, write_file


class OutputError(Exception):
    """A file of DIR cannot be written (the message names the path and why)."""


def output_problem(path: Path) -> str | None:
    """Why batch may not write `path`, or None when it is absent or a regular file."""
    try:
        kind = kind_of(os.lstat(path).st_mode)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path}: cannot be examined ({exc.strerror or exc})"
    if kind is None:
        return None
    return (
        f"{path} is {kind} where batch writes a file: not replaced, since batch did not make it; "
        "move it away and run again"
    )


def atomic_write(path: Path, text: str | bytes) -> None:
    """Write `text` to `path` (see the module docstring); OutputError if it cannot be."""
    problem = output_problem(path)
    if problem:
        raise OutputError(problem)
    try:
        write_file(path, text, force=True)
    except WriteRefused as exc:
        raise OutputError(output_problem(path) or str(exc)) from None
