"""Walking an untrusted folder safely: regular files only, no symbolic link followed.

Each entry is examined with lstat: a symbolic link or a special file is
refused with its reason, like a zip's (intake.py has the rules and the
records), and a folder nested too deep is not walked. Each entry at the top is
one student's, counted against the per-student limit.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

from .ids import clean_text
from .intake import Intake, IntakeError, IntakeLimits, Refusal, junk_file, oversized_reason, skipped_dir


def walk_folder(root: Path, limits: IntakeLimits = IntakeLimits()) -> Intake:
    """The regular files under `root`, without following symbolic links. Each entry at the top is
    one student's: a folder holding more than max_student_entries is not walked further."""
    walk = _FolderWalk(root, limits)
    walk.visit(root, PurePosixPath(), 0)
    return walk.out


class _FolderWalk:
    """One folder walked: the Intake it fills, and the counts the limits are checked against."""

    def __init__(self, root: Path, limits: IntakeLimits) -> None:
        self.root, self.limits = root, limits
        self.out = Intake(root, limits=limits)
        self.counts: dict[PurePosixPath, int] = {}  # entries so far in each student's folder
        self.total = 0  # entries so far in the whole input

    def visit(self, folder: Path, rel: PurePosixPath, depth: int) -> None:
        """Every entry of `folder` (`rel` below the root, `depth` folders deep), in name order."""
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            self.out.unreadable_dirs.append(rel)
            return
        for e in entries:
            self.entry(e, rel / e.name, depth)

    def entry(self, e: os.DirEntry[str], child: PurePosixPath, depth: int) -> None:
        """One entry: skipped (junk, a skipped folder, in an oversized student's folder), refused,
        or counted and placed."""
        shown = clean_text(str(child))
        if junk_file(e.name) or PurePosixPath(child.parts[0]) in self.out.oversized:
            return
        try:
            mode = e.stat(follow_symlinks=False).st_mode
        except OSError as exc:
            self.out.refused.append(Refusal(shown, f"cannot be examined ({exc.strerror or exc})"))
            return
        if stat.S_ISDIR(mode) and skipped_dir(e.name):
            self.out.skipped_dirs.add(child)
        elif self.admit(child, shown):
            self.place(e, child, mode, depth, shown)

    def admit(self, child: PurePosixPath, shown: str) -> bool:
        """Count one entry: IntakeError past the class-wide bound; False (and its student's folder
        marked oversized) past the per-student one."""
        self.total += 1
        if self.total > self.limits.max_class_entries:
            raise IntakeError(
                f"{self.root}: refused at {shown!r}: more than the class-wide bound of "
                f"{self.limits.max_class_entries} entries (no real class comes near it)"
            )
        if len(child.parts) == 1:
            return True
        group = PurePosixPath(child.parts[0])
        self.counts[group] = self.counts.get(group, 0) + 1
        if self.counts[group] > self.limits.max_student_entries:
            self.out.oversized[group] = oversized_reason(self.limits)
            return False
        return True

    def place(self, e: os.DirEntry[str], child: PurePosixPath, mode: int, depth: int, shown: str) -> None:
        """A counted entry by its type: a file kept, a folder walked (unless too deep), anything
        else refused."""
        if stat.S_ISLNK(mode):
            self.out.refused.append(Refusal(shown, "a symbolic link: refused (it could point anywhere)"))
        elif stat.S_ISDIR(mode) and depth >= self.limits.max_depth:
            self.out.refused.append(Refusal(shown, f"nested more than {self.limits.max_depth} folders deep"))
        elif stat.S_ISDIR(mode):
            self.out.dirs.append(child)
            self.visit(Path(e.path), child, depth + 1)
        elif stat.S_ISREG(mode):
            self.out.files.append(child)
        else:
            self.out.refused.append(Refusal(shown, "a special file (device, FIFO or socket): refused"))
