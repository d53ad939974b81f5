"""Unpacking an untrusted zip file safely, into an empty folder.

Every entry is checked before it is written (intake.py has the rules and the
records): a name that would escape the folder (`../x`, `/etc/x`, `C:\\x`), a
symbolic link or device (by the entry's Unix mode), an encrypted or duplicate
entry, a zip bomb. Each is refused with its reason; the rest is unpacked as
plain files (mode 0600, created with O_EXCL|O_NOFOLLOW, so nothing already on
disk is followed or overwritten). Sizes are counted while decompressing,
never trusted from the archive's header. The entry count and directory size
are read from the end record (zipdir.py) before zipfile parses the directory.
"""

from __future__ import annotations

import os
import stat
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from .ids import clean_text
from .intake import Intake, IntakeError, IntakeLimits, Refusal, junk_file, oversized_reason, skipped_dir
from .zipdir import read_directory

CHUNK = 1 << 16


def _skipped_at(parts: tuple[str, ...], is_dir: bool) -> int | None:
    """The length of the path to the outermost skipped folder of an entry, 0 for a junk file, or None."""
    folders = parts if is_dir else parts[:-1]
    for i, p in enumerate(folders):
        if skipped_dir(p):
            return i + 1
    return 0 if not is_dir and junk_file(parts[-1]) else None


def entry_problem(name: str, limits: IntakeLimits) -> str | None:
    """Why an archive member name is unsafe, or None."""
    if "\0" in name:
        return "the name contains a NUL byte"
    if "\\" in name:
        return "the name contains a backslash (a Windows path separator): refused rather than guessed"
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return "absolute path: it would be written outside the folder it is unpacked into"
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        return "path traversal ('..'): it would be written outside the folder it is unpacked into"
    if not parts:
        return "empty name"
    if len(parts) > limits.max_depth:
        return f"nested more than {limits.max_depth} folders deep"
    if any(len(p.encode("utf-8", "surrogateescape")) > 255 for p in parts):
        return "a name component is longer than 255 bytes"
    return None


def _member_kind(info: zipfile.ZipInfo) -> str | None:
    """'symlink', 'special', or None for a regular file or folder (by its Unix mode, when it has one)."""
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if info.create_system == 3 and kind:  # made on Unix with a file type: the type is meaningful
        if stat.S_ISLNK(mode):
            return "symlink"
        if kind not in (stat.S_IFREG, stat.S_IFDIR):
            return "special"
    return None


def _open_zip(archive: Path, limits: IntakeLimits) -> zipfile.ZipFile:
    """The archive opened, after its end record's claims were checked against the class-wide bounds."""
    bound = f"the class-wide bound of {limits.max_class_entries} entries (no real class download comes near it)"
    try:
        directory = read_directory(archive)
    except OSError as exc:
        raise IntakeError(f"{archive}: cannot read ({exc.strerror or exc})") from None
    if directory is not None and directory.entries > limits.max_class_entries:
        raise IntakeError(
            f"{archive}: refused: its directory lists {directory.entries} entries, more than "
            f"{bound}: a zip bomb, or not a class download"
        )
    if directory is not None and directory.size > limits.max_directory_bytes:
        raise IntakeError(
            f"{archive}: refused: its directory takes {directory.size} bytes, more than the "
            f"{limits.max_directory_bytes >> 20} MiB bound: a zip bomb, or not a class download"
        )
    try:
        zf = zipfile.ZipFile(archive)
    except zipfile.BadZipFile as exc:
        raise IntakeError(f"{archive}: not a readable zip file ({exc})") from None
    except UnicodeDecodeError:  # an entry flagged UTF-8 (bit 11) whose name is not: zipfile gives up
        raise IntakeError(
            f"{archive}: not a readable zip file (an entry's name is flagged UTF-8 but is not valid UTF-8)"
        ) from None
    except OSError as exc:
        raise IntakeError(f"{archive}: cannot read ({exc.strerror or exc})") from None
    members = zf.infolist()
    if len(members) > limits.max_class_entries:  # the end record understated the count
        zf.close()
        raise IntakeError(
            f"{archive}: refused: {len(members)} entries, more than {bound} (entry "
            f"{clean_text(members[limits.max_class_entries].filename)!r} is the first one over)"
        )
    return zf


def _admitted(zf: zipfile.ZipFile, limits: IntakeLimits, out: Intake) -> list[tuple[zipfile.ZipInfo, tuple[str, ...]]]:
    """The members whose names are safe and that are not skipped, with their path parts; the unsafe
    ones are added to out.refused, the skipped folders to out.skipped_dirs."""
    admitted = []
    for info in zf.infolist():
        problem = entry_problem(info.filename, limits)
        if problem:
            out.refused.append(Refusal(clean_text(info.filename), problem))
            continue
        parts = tuple(p for p in info.filename.split("/") if p not in ("", "."))
        at = _skipped_at(parts, info.is_dir())
        if at is not None:
            if at:
                out.skipped_dirs.add(PurePosixPath(*parts[:at]))
            continue
        admitted.append((info, parts))
    return admitted


def unpack_zip(
    archive: Path,
    dest: Path,
    limits: IntakeLimits = IntakeLimits(),
    wrapper: Callable[[list[PurePosixPath]], PurePosixPath] | None = None,
) -> Intake:
    """Unpack `archive` into the empty folder `dest`, refusing unsafe entries. `wrapper`, given the
    files' paths, names the folder the students are in (layouts.wrapper_prefix): each folder right
    below it is one student's, whose entries count against max_student_entries."""
    zf = _open_zip(archive, limits)
    dest.mkdir(parents=True, exist_ok=True)
    out = Intake(dest, limits=limits)
    with zf:
        members = _admitted(zf, limits, out)
        if wrapper is not None:
            out.prefix = wrapper([PurePosixPath(*parts) for info, parts in members if not info.is_dir()])
        depth = len(out.prefix.parts) + 1
        counts: dict[PurePosixPath, int] = {}
        unpacker = _Unpacker(zf, archive, dest, limits, out)
        for info, parts in members:
            if len(parts) > depth:  # inside a student's folder
                group = PurePosixPath(*parts[:depth])
                counts[group] = counts.get(group, 0) + 1
                if counts[group] > limits.max_student_entries:
                    out.oversized[group] = oversized_reason(limits)
                    continue
            unpacker.unpack(info, parts)
    return out


class _Unpacker:
    """One admitted member at a time: refused (with its reason) or written under dest."""

    def __init__(self, zf: zipfile.ZipFile, archive: Path, dest: Path, limits: IntakeLimits, out: Intake):
        self.zf, self.archive, self.dest, self.limits, self.out = zf, archive, dest, limits, out
        self.total = 0
        self.seen: set[str] = set()

    def refuse(self, info: zipfile.ZipInfo, reason: str) -> None:
        self.out.refused.append(Refusal(clean_text(info.filename), reason))

    def unpack(self, info: zipfile.ZipInfo, parts: tuple[str, ...]) -> None:
        """A folder is recorded, a file checked and written; either may be refused instead."""
        rel = "/".join(parts)
        reason = self.member_problem(info)
        if reason:
            return self.refuse(info, reason)
        if info.is_dir():
            self.out.dirs.append(PurePosixPath(rel))
            return None
        reason = self.file_problem(info, rel)
        if reason:
            return self.refuse(info, reason)
        self.check_total(info)
        self.seen.add(rel)  # before unpacking: a second entry of a name that failed is still a duplicate
        return self.write(info, parts, rel)

    def member_problem(self, info: zipfile.ZipInfo) -> str | None:
        """Why a member is refused whatever it is (a link, a device, encrypted), or None."""
        kind = _member_kind(info)
        if kind:
            return (
                "a symbolic link: refused (it could point anywhere)"
                if kind == "symlink"
                else "a special file (device, FIFO or socket): refused"
            )
        if info.flag_bits & 0x1:
            return "encrypted: cannot be read"
        return None

    def file_problem(self, info: zipfile.ZipInfo, rel: str) -> str | None:
        """Why a file member is refused (a second one of its name, too big, too compressed), or None."""
        limits = self.limits
        if rel in self.seen:
            self.out.duplicates.add(PurePosixPath(rel))
            return "a second entry with the same name: refused rather than choosing one"
        if info.file_size > limits.max_entry_bytes:
            return f"{info.file_size} bytes unpacked, over the {limits.max_entry_bytes >> 20} MiB limit for one entry"
        if info.file_size > 1 << 20 and info.file_size > limits.max_ratio * max(1, info.compress_size):
            return f"compressed {info.file_size // max(1, info.compress_size)}:1 (a zip bomb?): refused"
        return None

    def check_total(self, info: zipfile.ZipInfo) -> None:
        """IntakeError if this file, as its header says, would take the input past max_total_bytes."""
        if self.total + info.file_size > self.limits.max_total_bytes:
            raise IntakeError(
                f"{self.archive}: refused at entry {clean_text(info.filename)!r}: more than "
                f"{self.limits.max_total_bytes >> 20} MiB unpacked in all (a zip bomb?)"
            )

    def write(self, info: zipfile.ZipInfo, parts: tuple[str, ...], rel: str) -> None:
        """Unpack one file under dest, counting what it really unpacks to: refused if it cannot be,
        IntakeError if it unpacks past its header's size or the limits."""
        limit = min(self.limits.max_entry_bytes, self.limits.max_total_bytes - self.total)
        try:
            written = _extract_one(self.zf, info, self.dest, parts, limit)
        except _TooBig:
            raise IntakeError(
                f"{self.archive}: refused at entry {clean_text(info.filename)!r}: it unpacks to "
                "more than its header says, or past the size limits (a zip bomb?)"
            ) from None
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
            return self.refuse(info, f"cannot be unpacked ({type(exc).__name__}: {clean_text(str(exc), 120)})")
        except OSError as exc:
            return self.refuse(info, f"cannot be written ({exc.strerror or exc})")
        self.total += written
        self.out.files.append(PurePosixPath(rel))
        return None


class _TooBig(Exception):
    pass


def _extract_one(zf: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path, parts: tuple[str, ...], limit: int) -> int:
    folder = dest
    for p in parts[:-1]:
        folder = folder / p
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            if folder.is_symlink() or not folder.is_dir():
                raise OSError(f"{folder} exists and is not a folder") from None
    target = folder / parts[-1]
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    size = 0
    try:
        with zf.open(info) as src, os.fdopen(fd, "wb") as dst:
            while True:
                chunk = src.read(CHUNK)
                if not chunk:
                    break
                size += len(chunk)
                if size > info.file_size or size > limit:
                    raise _TooBig()
                dst.write(chunk)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return size
