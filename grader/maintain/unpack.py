"""Unpacking an untrusted bundle archive safely (maintain/archive_check.py checks what it holds).

It streams the archive (a gzip bomb cannot exhaust memory), accepts only regular files and
folders below one top-level folder, with relative paths and size caps (Caps), and writes
them itself, never through tarfile's extraction.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

from .manifest import CHUNK, ArchiveRejected


@dataclass(frozen=True)
class Caps:
    """Bounds on what an archive may unpack to (the real bundle is ~5 MB in ~100 files)."""

    file_bytes: int = 64 << 20
    total_bytes: int = 512 << 20
    members: int = 20_000


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n} bytes"


class _CappedReader(io.RawIOBase):
    """Decompressed bytes, refused past a cap, so a gzip bomb stops early."""

    def __init__(self, inner: IO[bytes] | gzip.GzipFile, cap: int):
        self._inner, self._cap, self.count = inner, cap, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        data = self._inner.read(len(buf))
        self.count += len(data)
        if self.count > self._cap:
            raise ArchiveRejected(f"the archive unpacks to more than {_size(self._cap)}")
        buf[: len(data)] = data
        return len(data)


_BAD_CHARS = re.compile(r"[\x00-\x1f\x7f\\]")


def _member_path(name: str) -> PurePosixPath:
    if not name or _BAD_CHARS.search(name):
        raise ArchiveRejected(f"unsafe member name {name!r} (control characters or backslashes)")
    if name.startswith("/"):
        raise ArchiveRejected(f"member {name!r} has an absolute path")
    path = PurePosixPath(name)
    if ".." in path.parts:
        raise ArchiveRejected(f"member {name!r} climbs out of the archive with '..'")
    if not path.parts:
        raise ArchiveRejected(f"member {name!r} has an empty path")
    return path


def _member_kind(m: tarfile.TarInfo) -> str:
    if m.issym() or m.islnk():
        return "link"
    if m.ischr() or m.isblk():
        return "device"
    if m.isfifo():
        return "fifo"
    if m.issparse():
        return "sparse file"
    if m.isdir():
        return "dir"
    if m.isreg():
        return "file"
    return f"type {m.type!r}"


def _write_member(tar: tarfile.TarFile, m: tarfile.TarInfo, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(dest, flags, 0o755 if m.mode & 0o111 else 0o644)
    except FileExistsError:
        raise ArchiveRejected(f"member {m.name!r} appears twice") from None
    src = tar.extractfile(m)
    assert src is not None  # a regular file's member
    left = m.size
    with os.fdopen(fd, "wb") as out:
        while left:
            chunk = src.read(min(CHUNK, left))
            if not chunk:
                raise ArchiveRejected(f"member {m.name!r} is truncated")
            out.write(chunk)
            left -= len(chunk)


def _placed(m: tarfile.TarInfo, top: str | None, caps: Caps) -> tuple[PurePosixPath, bool]:
    """Member `m`'s relative path and whether it is a folder, once it may be unpacked below the
    single top-level folder `top` (None: `m` is the first member, and its first part becomes it)."""
    path = _member_path(m.name)
    kind = _member_kind(m)
    if kind not in ("file", "dir"):
        raise ArchiveRejected(f"member {m.name!r} is a {kind}: only regular files and folders are allowed")
    top = top or path.parts[0]
    if path.parts[0] != top:
        raise ArchiveRejected(f"member {m.name!r} is outside the archive's single top-level folder {top!r}")
    if kind == "dir":
        return path, True
    if len(path.parts) < 2:
        raise ArchiveRejected(f"member {m.name!r} is a file at the top level, outside {top!r}")
    if m.size > caps.file_bytes:
        raise ArchiveRejected(f"member {m.name!r} is {m.size} bytes, over the {_size(caps.file_bytes)} cap")
    return path, False


def _unpack_members(tar: tarfile.TarFile, dest: Path, caps: Caps) -> str | None:
    """Write every member of the streamed `tar` under `dest`, within `caps`; the top-level folder."""
    top: str | None = None
    total = members = 0
    for m in tar:
        members += 1
        if members > caps.members:
            raise ArchiveRejected(f"the archive has more than {caps.members} members")
        path, folder = _placed(m, top, caps)
        top = top or path.parts[0]
        if folder:
            (dest / path).mkdir(parents=True, exist_ok=True)
            continue
        total += m.size
        if total > caps.total_bytes:
            raise ArchiveRejected(f"the archive unpacks to more than {_size(caps.total_bytes)}")
        _write_member(tar, m, dest / path)
    return top


def safe_unpack(archive: Path, dest: Path, caps: Caps = Caps()) -> Path:
    """Unpack into `dest` (which must be empty); return the single top-level folder."""
    archive, dest = Path(archive), Path(dest)
    if archive.stat().st_size > caps.total_bytes:
        raise ArchiveRejected(f"the archive file is larger than {_size(caps.total_bytes)}")
    try:
        with open(archive, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as gz:
            reader = io.BufferedReader(_CappedReader(gz, caps.total_bytes + 1024 * caps.members + (1 << 20)))
            with tarfile.open(fileobj=reader, mode="r|") as tar:
                top = _unpack_members(tar, dest, caps)
            # Read to the end so gzip checks its CRC and length trailer.
            while reader.read(CHUNK):
                pass
    except ArchiveRejected:
        raise
    except (EOFError, zlib.error, gzip.BadGzipFile, tarfile.TarError, OSError) as exc:
        raise ArchiveRejected(f"corrupt or truncated archive ({type(exc).__name__}: {exc})") from None
    if top is None:
        raise ArchiveRejected("the archive is empty")
    return dest / top
