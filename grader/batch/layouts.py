"""What one student's submission is: the file chosen among a student's candidates, the
Entry that carries it to grading, and the wrapper folder a download's students are in
(batch/discovery.py sorts a download into students).

In a student's folder the candidates are the .py and .ipynb files (intake.py
has already skipped hidden folders, `__pycache__` and the like). Exactly one is
graded; with several, the one whose own name (the LMS's prefix removed) is
solution.py or solution.ipynb, the statement's convention, or the one matching
the instructor's `--file` pattern (Choice); otherwise, or with none, the
student gets a CE saying what was found.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .gradescope import GRADESCOPE_METADATA
from .ids import clean_text
from .intake import Refusal, skipped_dir
from .layout_detectors import (
    MOODLE_DIR,
    SUFFIXES,
    claim_given_file,
    lms_named,
    own_name,
)
from .lms_ids import NO_LMS_IDS, LmsIds

PREFERRED = ("solution.py", "solution.ipynb")


@dataclass(frozen=True)
class Choice:
    """How the file to grade is chosen among one student's candidates: the one whose own name
    matches `pattern` (`--file`, a glob; with a '/', matched against the path in the student's
    folder), by default the one named solution.py or solution.ipynb."""

    pattern: str | None = None

    def matches(self, rel: PurePosixPath, name: str) -> bool:
        if self.pattern is None:
            return name in PREFERRED
        return fnmatch.fnmatchcase(rel.as_posix() if "/" in self.pattern else name, self.pattern)

    def advice(self) -> str:
        if self.pattern is None:
            return "submit exactly one .py or .ipynb file, or name the one to grade solution.py"
        return f"exactly one must match --file {clean_text(self.pattern, 80)!r}"


@dataclass(frozen=True)
class Candidate:
    """One .py or .ipynb file of a student's, whether or not it is the one graded: `batch --track`
    (track_batch.py) chooses among them once per step."""

    rel: PurePosixPath  # in the student's folder; for loose LMS-named files, the file's name
    path: Path
    source: str  # where it came from, for people, as Entry.source


@dataclass(frozen=True)
class Entry:
    """One student's submission, as found (before ids are made unique)."""

    student: str  # id (a slug)
    source: str  # where it came from, for people: "INPUT:relative/path"
    path: Path | None  # the file to grade; None when there is none to grade
    layout: str  # file, folder, github-classroom, gradescope, moodle, canvas
    name: str = ""  # the student's name when the download says it
    late: bool | None = None  # Canvas's LATE marker; None: the download says nothing about lateness
    problem: str = ""  # why there is nothing to grade (the student's CE message)
    within: Path | None = None  # the input folder the file must lie in (no symlinked folder leads out)
    lms: LmsIds = NO_LMS_IDS  # what the LMS matches the student on
    candidates: tuple[Candidate, ...] = ()  # every file it could be: none when the folder itself is refused


@dataclass(frozen=True)
class Found:
    """Everything one input yielded."""

    entries: list[Entry]
    refused: list[Refusal]  # entries of the input that were not let through
    ignored: list[str]  # files that are nobody's submission (README.md, index.html, ...)


def candidate_files(files: list[PurePosixPath]) -> list[PurePosixPath]:
    """The .py and .ipynb files among a student's, outside hidden folders, sorted."""

    def visible(p: PurePosixPath) -> bool:
        return not any(skipped_dir(part) for part in p.parts[:-1]) and not p.name.startswith(".")

    return sorted(p for p in files if p.suffix in SUFFIXES and visible(p))


def choose(
    files: list[PurePosixPath], refused: list[Refusal], where: str, choice: Choice = Choice(), layout: str = "folder"
) -> tuple[PurePosixPath | None, str]:
    """The one file to grade among a student's files, or None and the CE message."""
    cands = candidate_files(files)
    if len(cands) == 1:
        return cands[0], ""
    if len(cands) > 1:
        picked = [c for c in cands if choice.matches(c.with_name(own_name(layout, c.name)), own_name(layout, c.name))]
        if len(picked) == 1:
            return picked[0], ""
        listed = ", ".join(clean_text(str(c), 80) for c in cands[:6]) + (", ..." if len(cands) > 6 else "")
        return None, f"{len(cands)} candidate files in {where} ({listed}): {choice.advice()}"
    found = ", ".join(clean_text(str(f), 80) for f in files[:6]) + (", ..." if len(files) > 6 else "")
    why = f"no .py or .ipynb file in {where}" + (f" (found: {found})" if files else " (it is empty)")
    if refused:
        why += "; refused: " + "; ".join(r.line() for r in refused[:3])
    return None, why


def _holds_students(files: list[PurePosixPath]) -> bool:
    """Does a folder holding these files (paths inside it) look like a class, not one student?"""
    loose = [f for f in files if len(f.parts) == 1]
    if any(f.name == GRADESCOPE_METADATA for f in loose):
        return True
    lms = [f for f in loose if lms_named(f.name)]
    own = [f for f in loose if f.suffix in SUFFIXES and f not in lms]
    folders = any(len(f.parts) > 1 for f in files)
    if lms or not own:
        return bool(lms) or folders
    # Its own .py files and folders: students (alice.py, bob/) unless one is the solution itself.
    return folders and not any(f.name in PREFERRED for f in own)


def wrapper_prefix(files: list[PurePosixPath]) -> PurePosixPath:
    """The folder a zip wraps its students in ("hw1 submissions/"), up to 3 deep, or "": a lone top
    folder is a wrapper only if what it holds looks like students (folders, LMS-named files, a
    Gradescope export), not one student's own files (`alice/solution.py` with `alice/notes.py` or
    `alice/utils/`)."""
    prefix = PurePosixPath()
    for _ in range(3):
        rels = [f.relative_to(prefix) for f in files]
        tops = {r.parts[0] for r in rels if len(r.parts) > 1}
        if len(tops) != 1 or any(len(r.parts) == 1 for r in rels):
            break
        only = next(iter(tops))
        if MOODLE_DIR.match(only) or only.startswith(".") or not _holds_students([r.relative_to(only) for r in rels]):
            break
        prefix = prefix / only
    return prefix


def single_file(path: Path, label: str) -> Entry:
    """A file given on the command line: one student (Canvas's or Moodle's name, else the stem)."""
    claim = claim_given_file(path.name)
    only = (Candidate(PurePosixPath(path.name), path, clean_text(label)),)
    return Entry(
        claim.student, clean_text(label), path, claim.layout, claim.name, claim.late, lms=claim.lms, candidates=only
    )
