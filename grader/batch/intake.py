"""What reading an untrusted input yields, and the rules every input is read under.

A class download is hostile until checked (zip_intake.py unpacks a zip,
folder_intake.py walks a folder): an entry may try to escape the folder it is
unpacked into, be a symbolic link or a device, be encrypted, or be a zip bomb.
Every such entry is refused with a reason naming it (a Refusal); the regular
files let through, and what else was seen, make up the input's Intake.

What nobody submits (`.git` and other hidden folders, `__MACOSX`, `__pycache__`,
`.ipynb_checkpoints`, AppleDouble `._*` files) is skipped, with everything under
it, before anything is counted. The limits are then of two kinds (IntakeLimits,
their one home): a student's folder holding more than `max_student_entries`
entries is not unpacked further and is named in `Intake.oversized` (that
student's "could not be judged"); an input past the class-wide bounds, set far
above any real class so that only a hostile download reaches them, is refused
as a whole (IntakeError), naming the entry at which the bound was crossed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

# Folders nobody submits (besides every hidden one), and files archivers add: skipped with
# everything under them before anything is counted.
SKIPPED_DIRS = frozenset({"__MACOSX", "__pycache__", "node_modules"})
JUNK_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})


@dataclass(frozen=True)
class IntakeLimits:
    """Every bound an input is read under (docs/batch.md has the table)."""

    max_student_entries: int = 10_000  # one student's folder, after skipping: more is that student's CE
    max_class_entries: int = 100_000  # a whole input (a zip's every entry, as its directory says)
    max_directory_bytes: int = 16 << 20  # a zip's central directory (parsed into memory by zipfile)
    max_total_bytes: int = 512 << 20  # unpacked, all entries together
    max_entry_bytes: int = 32 << 20  # one entry (a submission is at most 64 KiB anyway)
    max_ratio: int = 200  # unpacked/packed above this, for entries over 1 MiB: a bomb
    max_depth: int = 16  # folders nested deeper are refused


@dataclass(frozen=True)
class Refusal:
    """One entry that was not let through, and why."""

    entry: str  # the entry's name as the archive or folder spells it (cleaned for display)
    reason: str

    def line(self) -> str:
        """The refusal as the summary lists it: "entry: reason"."""
        return f"{self.entry}: {self.reason}"


@dataclass
class Intake:
    """What an input yielded: its regular files (relative paths) and what was refused."""

    root: Path
    files: list[PurePosixPath] = field(default_factory=list)
    dirs: list[PurePosixPath] = field(default_factory=list)  # every folder, even an empty one
    refused: list[Refusal] = field(default_factory=list)
    unreadable_dirs: list[PurePosixPath] = field(default_factory=list)
    skipped_dirs: set[PurePosixPath] = field(default_factory=set)  # the outermost skipped folders (.git, ...)
    oversized: dict[PurePosixPath, str] = field(default_factory=dict)  # a student's folder over the limit: why
    duplicates: set[PurePosixPath] = field(default_factory=set)  # files a zip holds more than once
    prefix: PurePosixPath = PurePosixPath()  # the wrapper folder the students are in ("" when none)
    limits: IntakeLimits = IntakeLimits()  # what it was read under (layouts applies the per-student one
    # to LMS students made of loose files)


class IntakeError(Exception):
    """The whole input is refused (not a zip, past the class-wide bounds)."""


def skipped_dir(name: str) -> bool:
    """A folder nobody submits: hidden (.git, .ipynb_checkpoints, ...) or in SKIPPED_DIRS."""
    return name.startswith(".") or name in SKIPPED_DIRS


def junk_file(name: str) -> bool:
    """A file an archiver or a file manager adds (.DS_Store, AppleDouble ._x): nobody's submission."""
    return name in JUNK_FILES or name.startswith("._")


def oversized_reason(limits: IntakeLimits) -> str:
    """Why a student's folder over the per-student limit is that student's CE."""
    return (
        f"more than {limits.max_student_entries} files and folders, the limit for one student (counted "
        "after skipping .git, __MACOSX, __pycache__ and other hidden folders): not unpacked further"
    )
