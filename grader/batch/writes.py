"""Every file batch writes into DIR: atomically, never through a link, never over what it did not make.

A file is written to a temporary name in its own folder (unguessable,
O_EXCL|O_NOFOLLOW, so a link planted under that name is not followed) and
renamed over its target, so a reader or a kill never sees half a file. The
target must be absent or a regular file: a folder, a symbolic link, a FIFO,
a device or a socket where a file belongs was not made by batch, and is an
OutputError naming the path, never replaced or written through. What a
caller does with the error: a student's file is that student's "could not
be judged" (api.py, shards.py); a run-level file is checked before grading
starts (exit 2) and, if it turns bad during the run, reported after the
rest is written (exit 1) (finish.py).
"""
from __future__ import annotations

import os
import stat
from pathlib import Path


class OutputError(Exception):
    """A file of DIR cannot be written (the message names the path and why)."""


def output_problem(path: Path) -> str | None:
    """Why batch may not write `path`, or None when it is absent or a regular file."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path}: cannot be examined ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return None
    kind = ("a folder" if stat.S_ISDIR(mode) else "a symbolic link" if stat.S_ISLNK(mode)
            else "a special file (FIFO, device or socket)")
    return (f"{path} is {kind} where batch writes a file: not replaced, since batch did not make it; "
            "move it away and run again")


def atomic_write(path: Path, text: str) -> None:
    """Write `text` to `path` (see the module docstring); OutputError if it cannot be."""
    problem = output_problem(path)
    if problem:
        raise OutputError(problem)
    tmp = path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise OutputError(f"{path}: cannot be written ({exc.strerror or exc})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        problem = output_problem(path)     # made a folder or a link meanwhile: still not replaced
        if problem:
            raise OutputError(problem)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputError(f"{path}: cannot be written ({exc.strerror or exc})") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
