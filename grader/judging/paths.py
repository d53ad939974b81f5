"""Opening a file whose path came from outside, without being fooled by it.

Every entry point that is handed a path (the CLI's `grade`, the Docker image,
the Gradescope and Exercism runners, a class folder or zip in batch) calls
`open_regular` or `read_regular` here, once, and reads through the file
descriptor it returns. The checks are made on what was opened, never on the
path before opening it, so a file swapped for a symlink between a check and
the read cannot slip through:

- the last component is opened with O_NOFOLLOW (a symlink is refused, never
  followed: a link to the bundle's reference, or to /etc/shadow, is not the
  submission), first as O_PATH, which opens nothing, so that a FIFO, socket
  or device is refused by its type without the side effects of opening it;
- the real open is O_NONBLOCK | O_NOCTTY | O_NOFOLLOW, and must give the same
  inode, a regular file;
- with `within` (the submission folder of an upload, which the student
  controls), the path must lie lexically inside that folder, without '..',
  and every folder below it is walked one component at a time with
  O_NOFOLLOW, so a symlinked folder cannot lead out either. The folder
  `within` itself, and the folders above an operator-named file, are the
  operator's and are trusted.

Refusals raise PathRefused with a one-line reason and a `kind`; the caller
maps the kind to its verdict (a compilation error for a student's upload,
exit status 2 when the operator named the file).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath

from ..problem.safe_write import file_kind

_O_PATH = getattr(os, "O_PATH", 0)  # Linux; elsewhere the type check happens on the real open
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = (_O_PATH or os.O_RDONLY) | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)

# Kinds of refusal. The student's fault when the path is inside their upload:
LINK, SPECIAL, DIRECTORY, ESCAPE = "symlink", "special", "directory", "escape"
# The environment's, always exit status 2:
MISSING, UNREADABLE = "missing", "unreadable"


class PathRefused(OSError):
    """A path that is not read: `kind` says why, `reason` is one line for a person."""

    def __init__(self, reason: str, kind: str):
        super().__init__(reason)
        self.reason, self.kind = reason, kind

    def __str__(self) -> str:
        return self.reason


def shown(name: object, limit: int = 200) -> str:
    """A file name as it may appear in a message: control and other unprintable
    characters (a terminal escape in a name) become '?', and the length is capped."""
    text = "".join(ch if ch.isprintable() else "?" for ch in str(name))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _refusal(label: str, mode: int) -> PathRefused:
    if stat.S_ISLNK(mode):
        return PathRefused(
            f"{label} is a symbolic link: the grader never follows links (one could point "
            "at the reference or at a secret); submit the file itself",
            LINK,
        )
    if stat.S_ISDIR(mode):
        return PathRefused(f"{label} is a directory, not a Python file or notebook", DIRECTORY)
    return PathRefused(f"{label} is {file_kind(mode)}, not a regular file: submit a .py or .ipynb file", SPECIAL)


def _os_refusal(label: str, exc: OSError, full: str) -> PathRefused:
    """`label` names the file for the student (inside the upload); `full` for the operator."""
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return PathRefused(f"{full}: no such file", MISSING)
    if exc.errno == errno.ELOOP:
        return PathRefused(f"{label} is a symbolic link: the grader never follows links; submit the file itself", LINK)
    return PathRefused(f"{full}: cannot read ({exc.strerror or exc}; is a folder on the way unreadable?)", UNREADABLE)


def _components(path: Path, within: Path) -> list[str]:
    """The names from `within` down to `path`, lexically; PathRefused(ESCAPE) if it leaves `within`."""
    cwd = os.getcwd()
    target = PurePosixPath(cwd, path)
    label = shown(path)
    # `within` as given, or normalised: an operator's "/x/../upload" is the operator's business.
    for root in (PurePosixPath(cwd, within), PurePosixPath(os.path.abspath(within))):
        if target.parts[: len(root.parts)] == root.parts:
            rest = target.parts[len(root.parts) :]
            break
    else:
        raise PathRefused(f"{label} is outside the submission folder: name a file inside it", ESCAPE)
    if ".." in rest:
        label = shown(PurePosixPath(*rest))  # as the upload names it, without the runner's folders
        raise PathRefused(f"{label} climbs out of the submission folder with '..': name a file inside it", ESCAPE)
    if not rest:
        raise PathRefused(f"{label} is the submission folder itself, not a Python file or notebook", DIRECTORY)
    return list(rest)


def open_regular(path: str | Path, within: str | Path | None = None) -> int:
    """A read-only descriptor of the regular file at `path` (the caller closes it).

    Without `within` only the last component is checked (the operator named the
    file); with it, `path` must be inside the folder `within` and no component
    below it may be a symlink. Raises PathRefused.
    """
    path = Path(path)
    label = full = shown(path)
    if within is None:
        if path.name in ("", ".", ".."):
            try:
                mode = os.stat(path).st_mode
            except OSError as exc:
                raise _os_refusal(label, exc, full) from None
            raise _refusal(label, mode)
        parent, names = str(path.parent), [path.name]
    else:
        parent, names = str(within), _components(path, Path(within))
        label = shown(PurePosixPath(*names))
    try:
        dir_fd = os.open(parent, (_O_PATH or os.O_RDONLY) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _os_refusal(label, exc, shown(parent) if within is not None else full) from None
    try:
        for i, name in enumerate(names[:-1]):
            below = _step_into(dir_fd, name, shown(PurePosixPath(*names[: i + 1])), label, full)
            os.close(dir_fd)
            dir_fd = below
        return _open_file(dir_fd, names[-1], label, full)
    finally:
        os.close(dir_fd)


def _step_into(dir_fd: int, name: str, here: str, label: str, full: str) -> int:
    """The folder `name` below `dir_fd`, never through a symlink."""
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        raise _os_refusal(label, exc, full) from None
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        return fd
    os.close(fd)
    if stat.S_ISLNK(mode):
        raise PathRefused(
            f"{label}: the folder {here} on the way is a symbolic link: the grader never "
            "follows links; submit the files themselves",
            LINK,
        )
    raise PathRefused(f"{full}: no such file ({here} is not a folder)", MISSING)


def _open_file(dir_fd: int, name: str, label: str, full: str) -> int:
    if _O_PATH:
        # Look before opening: O_PATH opens nothing, so a device or FIFO is refused without side effects.
        try:
            probe = os.open(name, _O_PATH | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), dir_fd=dir_fd)
        except OSError as exc:
            raise _os_refusal(label, exc, full) from None
        try:
            before = os.fstat(probe)
        finally:
            os.close(probe)
        if not stat.S_ISREG(before.st_mode):
            raise _refusal(label, before.st_mode)
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        raise _os_refusal(label, exc, full) from None
    opened = os.fstat(fd)
    if not stat.S_ISREG(opened.st_mode):
        os.close(fd)
        raise _refusal(label, opened.st_mode)
    if _O_PATH and (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise PathRefused(
            f"{full} was replaced while it was being opened: grade it again once it stays put", UNREADABLE
        )
    os.set_blocking(fd, True)
    return fd


def read_regular(path: str | Path, limit: int, within: str | Path | None = None) -> bytes:
    """At most `limit` bytes of the regular file at `path` (see open_regular). Reading
    `limit + 1` tells the caller that a file is over a limit without reading all of it."""
    fd = open_regular(path, within)
    try:
        chunks, size = [], 0
        while size < limit:
            chunk = os.read(fd, min(limit - size, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise PathRefused(f"{shown(path)}: cannot read ({exc.strerror or exc})", UNREADABLE) from None
    finally:
        os.close(fd)
