"""Reading untrusted zip files and folders safely.

A class download is hostile until checked: an entry may try to escape the
folder it is unpacked into (`../x`, `/etc/x`, `C:\\x`), be a symbolic link or a
device, be encrypted, or be a zip bomb. Every such entry is refused with a
reason naming it; the rest is unpacked as plain files (mode 0600, created with
O_EXCL|O_NOFOLLOW, so nothing already on disk is followed or overwritten).
Sizes are counted while decompressing, never trusted from the archive's header.

What nobody submits (`.git` and other hidden folders, `__MACOSX`, `__pycache__`,
`.ipynb_checkpoints`, AppleDouble `._*` files) is skipped, with everything under
it, before anything is counted. The limits are then of two kinds (IntakeLimits,
their one home): a student's folder holding more than `max_student_entries`
entries is not unpacked further and is named in `Intake.oversized` (that
student's "could not be judged"); an input past the class-wide bounds, set far
above any real class so that only a hostile download reaches them, is refused
as a whole, naming the entry at which the bound was crossed. A zip's entry
count and directory size are read from its end record (zipdir.py) before
zipfile parses the directory.

A folder is walked without following symbolic links; links and special files
are refused the same way.
"""
from __future__ import annotations

import os
import stat
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable

from .ids import clean_text
from .zipdir import read_directory

# Folders nobody submits (besides every hidden one), and files archivers add: skipped with
# everything under them before anything is counted.
SKIPPED_DIRS = frozenset({"__MACOSX", "__pycache__", "node_modules"})
JUNK_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})
CHUNK = 1 << 16


@dataclass(frozen=True)
class IntakeLimits:
    max_student_entries: int = 10_000     # one student's folder, after skipping: more is that student's CE
    max_class_entries: int = 100_000      # a whole input (a zip's every entry, as its directory says)
    max_directory_bytes: int = 16 << 20   # a zip's central directory (parsed into memory by zipfile)
    max_total_bytes: int = 512 << 20      # unpacked, all entries together
    max_entry_bytes: int = 32 << 20       # one entry (a submission is at most 64 KiB anyway)
    max_ratio: int = 200                  # unpacked/packed above this, for entries over 1 MiB: a bomb
    max_depth: int = 16                   # folders nested deeper are refused


@dataclass(frozen=True)
class Refusal:
    """One entry that was not let through, and why."""
    entry: str          # the entry's name as the archive or folder spells it (cleaned for display)
    reason: str

    def line(self) -> str:
        return f"{self.entry}: {self.reason}"


@dataclass
class Intake:
    """What an input yielded: its regular files (relative paths) and what was refused."""
    root: Path
    files: list[PurePosixPath] = field(default_factory=list)
    dirs: list[PurePosixPath] = field(default_factory=list)     # every folder, even an empty one
    refused: list[Refusal] = field(default_factory=list)
    unreadable_dirs: list[PurePosixPath] = field(default_factory=list)
    skipped_dirs: set[PurePosixPath] = field(default_factory=set)   # the outermost skipped folders (.git, ...)
    oversized: dict[PurePosixPath, str] = field(default_factory=dict)   # a student's folder over the limit: why
    duplicates: set[PurePosixPath] = field(default_factory=set)     # files a zip holds more than once
    prefix: PurePosixPath = PurePosixPath()   # the wrapper folder the students are in ("" when none)
    limits: IntakeLimits = IntakeLimits()      # what it was read under (layouts applies the per-student one
                                               # to LMS students made of loose files)


class IntakeError(Exception):
    """The whole input is refused (not a zip, past the class-wide bounds)."""


def skipped_dir(name: str) -> bool:
    """A folder nobody submits: hidden (.git, .ipynb_checkpoints, ...) or in SKIPPED_DIRS."""
    return name.startswith(".") or name in SKIPPED_DIRS


def junk_file(name: str) -> bool:
    return name in JUNK_FILES or name.startswith("._")


def oversized_reason(limits: IntakeLimits) -> str:
    return (f"more than {limits.max_student_entries} files and folders, the limit for one student (counted "
            "after skipping .git, __MACOSX, __pycache__ and other hidden folders): not unpacked further")


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
    if info.create_system == 3 and kind:   # made on Unix with a file type: the type is meaningful
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
        raise IntakeError(f"{archive}: refused: its directory lists {directory.entries} entries, more than "
                          f"{bound}: a zip bomb, or not a class download")
    if directory is not None and directory.size > limits.max_directory_bytes:
        raise IntakeError(f"{archive}: refused: its directory takes {directory.size} bytes, more than the "
                          f"{limits.max_directory_bytes >> 20} MiB bound: a zip bomb, or not a class download")
    try:
        zf = zipfile.ZipFile(archive)
    except zipfile.BadZipFile as exc:
        raise IntakeError(f"{archive}: not a readable zip file ({exc})") from None
    except UnicodeDecodeError:   # an entry flagged UTF-8 (bit 11) whose name is not: zipfile gives up
        raise IntakeError(f"{archive}: not a readable zip file (an entry's name is flagged UTF-8 but is "
                          "not valid UTF-8)") from None
    except OSError as exc:
        raise IntakeError(f"{archive}: cannot read ({exc.strerror or exc})") from None
    members = zf.infolist()
    if len(members) > limits.max_class_entries:   # the end record understated the count
        zf.close()
        raise IntakeError(f"{archive}: refused: {len(members)} entries, more than {bound} (entry "
                          f"{clean_text(members[limits.max_class_entries].filename)!r} is the first one over)")
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


def unpack_zip(archive: Path, dest: Path, limits: IntakeLimits = IntakeLimits(),
               wrapper: Callable[[list[PurePosixPath]], PurePosixPath] | None = None) -> Intake:
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
            if len(parts) > depth:    # inside a student's folder
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
        limits, shown = self.limits, clean_text(info.filename)
        kind = _member_kind(info)
        if kind:
            return self.refuse(info, "a symbolic link: refused (it could point anywhere)" if kind == "symlink"
                               else "a special file (device, FIFO or socket): refused")
        if info.flag_bits & 0x1:
            return self.refuse(info, "encrypted: cannot be read")
        rel = "/".join(parts)
        if info.is_dir():
            self.out.dirs.append(PurePosixPath(rel))
            return None
        if rel in self.seen:
            self.out.duplicates.add(PurePosixPath(rel))
            return self.refuse(info, "a second entry with the same name: refused rather than choosing one")
        if info.file_size > limits.max_entry_bytes:
            return self.refuse(info, f"{info.file_size} bytes unpacked, over the "
                                     f"{limits.max_entry_bytes >> 20} MiB limit for one entry")
        if info.file_size > 1 << 20 and info.file_size > limits.max_ratio * max(1, info.compress_size):
            return self.refuse(info, f"compressed {info.file_size // max(1, info.compress_size)}:1 "
                                     "(a zip bomb?): refused")
        if self.total + info.file_size > limits.max_total_bytes:
            raise IntakeError(f"{self.archive}: refused at entry {shown!r}: more than "
                              f"{limits.max_total_bytes >> 20} MiB unpacked in all (a zip bomb?)")
        self.seen.add(rel)    # before unpacking: a second entry of a name that failed is still a duplicate
        try:
            written = _extract_one(self.zf, info, self.dest, parts,
                                   min(limits.max_entry_bytes, limits.max_total_bytes - self.total))
        except _TooBig:
            raise IntakeError(f"{self.archive}: refused at entry {shown!r}: it unpacks to more than its header "
                              "says, or past the size limits (a zip bomb?)") from None
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
            return self.refuse(info, f"cannot be unpacked ({type(exc).__name__}: {clean_text(str(exc), 120)})")
        except OSError as exc:
            return self.refuse(info, f"cannot be written ({exc.strerror or exc})")
        self.total += written
        self.out.files.append(PurePosixPath(rel))
        return None


class _TooBig(Exception):
    pass


def _extract_one(zf: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path, parts: tuple[str, ...],
                 limit: int) -> int:
    folder = dest
    for p in parts[:-1]:
        folder = folder / p
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            if folder.is_symlink() or not folder.is_dir():
                raise OSError(f"{folder} exists and is not a folder")
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


def walk_folder(root: Path, limits: IntakeLimits = IntakeLimits()) -> Intake:
    """The regular files under `root`, without following symbolic links. Each entry at the top is
    one student's: a folder holding more than max_student_entries is not walked further."""
    out = Intake(root, limits=limits)
    counts: dict[PurePosixPath, int] = {}
    total = 0

    def admit(child: PurePosixPath, shown: str) -> bool:
        nonlocal total
        total += 1
        if total > limits.max_class_entries:
            raise IntakeError(f"{root}: refused at {shown!r}: more than the class-wide bound of "
                              f"{limits.max_class_entries} entries (no real class comes near it)")
        if len(child.parts) == 1:
            return True
        group = PurePosixPath(child.parts[0])
        counts[group] = counts.get(group, 0) + 1
        if counts[group] > limits.max_student_entries:
            out.oversized[group] = oversized_reason(limits)
            return False
        return True

    def visit(folder: Path, rel: PurePosixPath, depth: int) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            out.unreadable_dirs.append(rel)
            return
        for e in entries:
            child = rel / e.name
            shown = clean_text(str(child))
            if junk_file(e.name) or PurePosixPath(child.parts[0]) in out.oversized:
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError as exc:
                out.refused.append(Refusal(shown, f"cannot be examined ({exc.strerror or exc})"))
                continue
            if stat.S_ISDIR(st.st_mode) and skipped_dir(e.name):
                out.skipped_dirs.add(child)
                continue
            if not admit(child, shown):
                continue
            if stat.S_ISLNK(st.st_mode):
                out.refused.append(Refusal(shown, "a symbolic link: refused (it could point anywhere)"))
            elif stat.S_ISDIR(st.st_mode):
                if depth >= limits.max_depth:
                    out.refused.append(Refusal(shown, f"nested more than {limits.max_depth} folders deep"))
                else:
                    out.dirs.append(child)
                    visit(Path(e.path), child, depth + 1)
            elif stat.S_ISREG(st.st_mode):
                out.files.append(child)
            else:
                out.refused.append(Refusal(shown, "a special file (device, FIFO or socket): refused"))

    visit(root, PurePosixPath(), 0)
    return out
