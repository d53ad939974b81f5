"""Writing an output the user named (`--out`, `--json`): atomically, never through a link, never over
a file unless told to, never into the bundle.

What may be written (`target_problem`, each refusal one line naming the path):

- the folder the target goes in must exist and be a folder: nothing is created on the way;
- the target itself is never followed: a symbolic link (dangling or not), a folder, a FIFO, a
  socket or a device is refused, with force too (a link is not replaced by a file either: what
  it points to, and why it is there, are not ours to judge). It is examined with lstat only, so
  a FIFO is never opened and nothing hangs;
- an existing regular file is replaced only with force (the commands' `--force`);
- nothing is written inside the bundle's own parts (`Bundle.own_parts`: reference/, testcases/,
  problem.yaml, the grader's source, ...), force or not. The check is made on the real folder the
  target goes in, so a symlinked folder pointing into the bundle is caught too.

`/dev/null` is accepted and nothing is written: scripts time a grading with `--json /dev/null`.

How: the data goes to a temporary file with an unguessable name in the target's folder
(O_EXCL|O_NOFOLLOW, so a link planted under that name is not followed), is fsync'd, and is then put
in place. Without force by a hard link, which fails if anything appeared at the target meanwhile
(a rename where the file system has no hard links); with force by a rename over the target, which
replaces the folder entry and never writes into the file it replaces (another hard link to that
file keeps its bytes). A reader, or a kill, never sees half a file.

An output folder (`batch --out`, `export --out`, `pack --out`) follows the same rules for its own
path (`folder_problem`, `make_output_folder`): its parent must exist, it is created if absent, and
it must be a real folder, outside the bundle's parts; what is written into it is the caller's rule.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path


def file_kind(mode: int) -> str:
    """What a file of mode `mode` (from stat or lstat) is, for a message ("a FIFO (named pipe)")."""
    for test, name in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISREG, "a file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


FORCE_HINT = "pass --force to replace it"


class WriteRefused(Exception):
    """An output cannot or may not be written: the message is one line naming the path."""


def kind_of(mode: int) -> str | None:
    """What a non-regular file is, in words ("a folder", ...), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "a special file (FIFO, device or socket)"


def _is_devnull(path: Path) -> bool:
    if os.path.abspath(path) != os.devnull:
        return False
    try:
        return stat.S_ISCHR(os.stat(os.devnull).st_mode)
    except OSError:
        return False


def _parent_problem(path: Path) -> str | None:
    parent = path.parent
    try:
        mode = os.stat(parent).st_mode
    except FileNotFoundError:
        return f"{path}: the folder {parent} does not exist (it is not created): make it first"
    except NotADirectoryError:
        return f"{path}: {parent} is not a folder"
    except OSError as exc:
        return f"{path}: the folder {parent} cannot be examined ({exc.strerror or exc})"
    return None if stat.S_ISDIR(mode) else f"{path}: {parent} is not a folder"


def bundle_part(path: Path, protected: Iterable[Path]) -> Path | None:
    """The part of `protected` that `path` is or lies in (its folder's links resolved), or None."""
    real = Path(os.path.realpath(path.parent)) / path.name
    for part in protected:
        own = Path(os.path.realpath(part))
        if real == own or own in real.parents:
            return part
    return None


def _protected_problem(path: Path, protected: Iterable[Path]) -> str | None:
    part = bundle_part(path, protected)
    if part is None:
        return None
    return f"{path} is part of the bundle ({part.name}): no output is ever written into the bundle's own files"


def target_problem(path: Path, force: bool = False, protected: Iterable[Path] = ()) -> str | None:
    """Why the file `path` may not be written (the module docstring's rules), or None."""
    path = Path(path)
    if _is_devnull(path):
        return None
    problem = _parent_problem(path) or _protected_problem(path, protected)
    if problem:
        return problem
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path}: cannot be examined ({exc.strerror or exc})"
    kind = kind_of(mode)
    if kind == "a symbolic link":
        return f"{path} is a symbolic link: never written through or replaced; remove it or give another path"
    if kind:
        return f"{path} is {kind}, not a file: give a file name"
    return None if force else f"{path} exists: not overwritten ({FORCE_HINT})"


def write_file(
    path: Path, data: bytes | str, force: bool = False, protected: Iterable[Path] = (), mode: int = 0o644
) -> None:
    """Write `data` (str: as UTF-8) to `path` by the module docstring's rules; WriteRefused if not."""
    path = Path(path)
    protected = tuple(protected)
    problem = target_problem(path, force, protected)
    if problem:
        raise WriteRefused(problem)
    if _is_devnull(path):
        return
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name[:180]}.{os.urandom(6).hex()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as exc:
        raise WriteRefused(f"{path}: cannot be written ({exc.strerror or exc})") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        _put_in_place(tmp, path, force)
    except OSError as exc:
        raise WriteRefused(f"{path}: cannot be written ({exc.strerror or exc})") from None
    finally:
        tmp.unlink(missing_ok=True)
    _sync_folder(path.parent)


_NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.EXDEV}


def _put_in_place(tmp: Path, path: Path, force: bool) -> None:
    if force:
        problem = target_problem(path, True)  # became a folder or a link meanwhile: still refused
        if problem:
            raise WriteRefused(problem)
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)  # fails if anything at all is at `path` now
        return
    except FileExistsError:
        raise WriteRefused(target_problem(path) or f"{path} exists: not overwritten ({FORCE_HINT})") from None
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
    if os.path.lexists(path):
        raise WriteRefused(target_problem(path) or f"{path} exists: not overwritten ({FORCE_HINT})")
    os.replace(tmp, path)


def _sync_folder(folder: Path) -> None:
    """The rename itself made durable, where the file system allows it."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def folder_problem(path: Path, protected: Iterable[Path] = ()) -> str | None:
    """Why `path` cannot be an output folder (absent, to be created, or a real folder), or None."""
    path = Path(path)
    problem = _parent_problem(path) or _protected_problem(path, protected)
    if problem:
        return problem
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path}: cannot be examined ({exc.strerror or exc})"
    if stat.S_ISLNK(mode):
        return f"{path} is a symbolic link: give the folder itself"
    return None if stat.S_ISDIR(mode) else f"{path} exists and is not a folder"


def make_output_folder(path: Path, protected: Iterable[Path] = ()) -> Path:
    """`path`, checked by folder_problem and created if absent (its parent is not); WriteRefused if not."""
    path = Path(path)
    problem = folder_problem(path, protected)
    if problem:
        raise WriteRefused(problem)
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        problem = folder_problem(path)  # made meanwhile: still a real folder?
        if problem:
            raise WriteRefused(problem) from None
    except OSError as exc:
        raise WriteRefused(f"{path}: cannot be created ({exc.strerror or exc})") from None
    return path
