"""Reading untrusted zip files and folders safely.

A class download is hostile until checked: an entry may try to escape the
folder it is unpacked into (`../x`, `/etc/x`, `C:\\x`), be a symbolic link or a
device, be encrypted, or be a zip bomb. Every such entry is refused with a
reason naming it; the rest is unpacked as plain files (mode 0600, created with
O_EXCL|O_NOFOLLOW, so nothing already on disk is followed or overwritten).
An archive whose entry count or total unpacked size exceeds the limits is
refused as a whole, naming the entry at which the limit was crossed. Sizes are
counted while decompressing, never trusted from the archive's header.

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

from .ids import clean_text

# Junk that archivers add and nobody submits.
JUNK_PARTS = frozenset({"__MACOSX", ".DS_Store", "Thumbs.db", "desktop.ini"})
CHUNK = 1 << 16


@dataclass(frozen=True)
class IntakeLimits:
    max_entries: int = 10_000
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


class IntakeError(Exception):
    """The whole input is refused (not a zip, too many entries, too large)."""


def _junk(parts: tuple[str, ...]) -> bool:
    return any(p in JUNK_PARTS or p.startswith("._") for p in parts)


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


def unpack_zip(archive: Path, dest: Path, limits: IntakeLimits = IntakeLimits()) -> Intake:
    """Unpack `archive` into the empty folder `dest`, refusing unsafe entries."""
    try:
        zf = zipfile.ZipFile(archive)
    except zipfile.BadZipFile as exc:
        raise IntakeError(f"{archive}: not a readable zip file ({exc})") from None
    except UnicodeDecodeError:   # an entry flagged UTF-8 (bit 11) whose name is not: zipfile gives up
        raise IntakeError(f"{archive}: not a readable zip file (an entry's name is flagged UTF-8 but is "
                          "not valid UTF-8)") from None
    except OSError as exc:
        raise IntakeError(f"{archive}: cannot read ({exc.strerror or exc})") from None
    dest.mkdir(parents=True, exist_ok=True)
    out = Intake(dest)
    total = 0
    seen: set[str] = set()
    with zf:
        members = zf.infolist()
        if len(members) > limits.max_entries:
            raise IntakeError(f"{archive}: refused: {len(members)} entries, more than the limit of "
                              f"{limits.max_entries} (entry {clean_text(members[limits.max_entries].filename)!r} "
                              "is the first one over): a zip bomb, or not a class download")
        for info in members:
            shown = clean_text(info.filename)
            problem = entry_problem(info.filename, limits)
            if problem:
                out.refused.append(Refusal(shown, problem))
                continue
            parts = tuple(p for p in info.filename.split("/") if p not in ("", "."))
            if _junk(parts):
                continue
            kind = _member_kind(info)
            if kind == "symlink":
                out.refused.append(Refusal(shown, "a symbolic link: refused (it could point anywhere)"))
                continue
            if kind == "special":
                out.refused.append(Refusal(shown, "a special file (device, FIFO or socket): refused"))
                continue
            if info.flag_bits & 0x1:
                out.refused.append(Refusal(shown, "encrypted: cannot be read"))
                continue
            rel = "/".join(parts)
            if info.is_dir():
                out.dirs.append(PurePosixPath(rel))
                continue
            if rel in seen:
                out.refused.append(Refusal(shown, "a second entry with the same name: refused rather than "
                                                  "choosing one"))
                continue
            if info.file_size > limits.max_entry_bytes:
                out.refused.append(Refusal(shown, f"{info.file_size} bytes unpacked, over the "
                                                  f"{limits.max_entry_bytes >> 20} MiB limit for one entry"))
                continue
            if info.file_size > 1 << 20 and info.file_size > limits.max_ratio * max(1, info.compress_size):
                out.refused.append(Refusal(shown, f"compressed {info.file_size // max(1, info.compress_size)}:1 "
                                                  "(a zip bomb?): refused"))
                continue
            if total + info.file_size > limits.max_total_bytes:
                raise IntakeError(f"{archive}: refused at entry {shown!r}: more than "
                                  f"{limits.max_total_bytes >> 20} MiB unpacked in all (a zip bomb?)")
            try:
                written = _extract_one(zf, info, dest, parts, min(limits.max_entry_bytes,
                                                                  limits.max_total_bytes - total))
            except _TooBig:
                raise IntakeError(f"{archive}: refused at entry {shown!r}: it unpacks to more than its header "
                                  "says, or past the size limits (a zip bomb?)") from None
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
                out.refused.append(Refusal(shown, f"cannot be unpacked ({type(exc).__name__}: "
                                                  f"{clean_text(str(exc), 120)})"))
                continue
            except OSError as exc:
                out.refused.append(Refusal(shown, f"cannot be written ({exc.strerror or exc})"))
                continue
            total += written
            seen.add(rel)
            out.files.append(PurePosixPath(rel))
    return out


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
    """The regular files under `root`, without following symbolic links."""
    out = Intake(root)
    count = 0

    def visit(folder: Path, rel: PurePosixPath, depth: int) -> None:
        nonlocal count
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            out.unreadable_dirs.append(rel)
            return
        for e in entries:
            child = rel / e.name
            shown = clean_text(str(child))
            if e.name in JUNK_PARTS or e.name.startswith("._"):
                continue
            count += 1
            if count > limits.max_entries:
                raise IntakeError(f"{root}: refused at {shown!r}: more than {limits.max_entries} entries")
            try:
                st = e.stat(follow_symlinks=False)
            except OSError as exc:
                out.refused.append(Refusal(shown, f"cannot be examined ({exc.strerror or exc})"))
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
