"""Which layout one top-level folder or file of a download follows: one detector per layout.

A class download may mix layouts (a Moodle zip with a README, a folder of
students beside a few loose files), so a layout is decided name by name. Each
detector looks at one name below the wrapper folder and returns a Claim (the
layout, the student id it gives, the student's name when the download says
it) or None when the name is not of its layout. discovery.py tries them in this
order, the first claim winning (the naming is cited in docs/batch.md):

- the input as a whole: Gradescope "Export submissions", when
  `submission_metadata.yml` is at the top: the folders it lists are claimed
  before any folder detector looks at them (id: the submitters' SIDs, else
  their names);
- a folder (FOLDER_DETECTORS): Moodle "Download all submissions"
  (`Full Name_<participant>_assignsubmission_file_/`; the LMS's other plugin
  folders, online text and feedback, are claimed as nobody's submission),
  GitHub Classroom (`<slug>-submissions/<slug>-<login>/`, id: the login; or
  any folder that held a `.git`, id: the folder's name), then a folder per
  student, which claims every folder;
- a loose file (FILE_DETECTORS): Moodle (the same prefix on a flat file
  name), Canvas "Download submissions" (`<name>[_late]_<user id>_<attachment
  id>_<file>`, `late` kept as a flag), then a file per student (a .py or
  .ipynb; id: the stem); a file none claims is nobody's submission;
- a file given on the command line (COMMAND_LINE_DETECTORS): Canvas, Moodle,
  then a file per student whatever its suffix.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, TypeVar

from .gradescope import gradescope_id, gradescope_lms_ids
from .ids import clean_text, slug
from .lms_ids import NO_LMS_IDS, LmsIds, lms_ids

SUFFIXES = (".py", ".ipynb")  # a submission file's
# [0-9], not \d: Python's \d also matches other scripts' digits ("١٢"), which no LMS numbers with.
MOODLE_DIR = re.compile(r"^(?P<name>.+)_(?P<pid>[0-9]+)_(?P<plugin>assign(?:submission|feedback)_[a-z0-9]+)_$")
MOODLE_FILE = re.compile(r"^(?P<name>.+)_(?P<pid>[0-9]+)_assignsubmission_file_(?P<file>.+)$")
CANVAS_NAME = re.compile(r"^[a-z0-9_]*$")
CANVAS_RESUBMISSION = re.compile(r"-\d+(?=\.[^.]*$)")  # Canvas's "solution-1.py" for a re-submitted "solution.py"
T = TypeVar("T")


@dataclass(frozen=True)
class Claim:
    """What a detector makes of one name: whose submission it is, under which layout."""

    layout: str  # file, folder, github-classroom, gradescope, moodle, canvas
    student: str  # the id (a slug, before ids are made unique)
    name: str = ""  # the student's name when the download says it
    late: bool | None = None  # Canvas's LATE marker; None: the download says nothing about lateness
    ignored: bool = False  # the LMS's own folder, nobody's submission (Moodle's online text, feedback)
    lms: LmsIds = NO_LMS_IDS  # what the LMS matches the student on (its participant number, user id, ...)


@dataclass(frozen=True)
class TopFolder:
    """A top-level folder of a download, as the folder detectors see it."""

    name: str  # its name below the wrapper folder
    parent: str  # the name of the folder it is in (the wrapper, or the input itself)
    git: bool  # it held a .git folder (skipped by the intake, but seen)


def _ascii_digits(token: str) -> bool:
    return token.isascii() and token.isdigit()


def parse_canvas(filename: str) -> tuple[str, str, bool, str] | None:
    """(name, user id, late, original file name) from a Canvas download's file name, or None."""
    tokens = filename.split("_")
    for i in range(len(tokens) - 2):
        if _ascii_digits(tokens[i]) and _ascii_digits(tokens[i + 1]) and len(tokens[i]) >= 2:
            name_tokens = tokens[:i]
            late = bool(name_tokens) and name_tokens[-1] == "late"
            if late:
                name_tokens = name_tokens[:-1]
            name = "_".join(name_tokens)
            if not CANVAS_NAME.match(name):
                return None
            return name, tokens[i], late, "_".join(tokens[i + 2 :])
    return None


def own_name(layout: str, filename: str) -> str:
    """The name the student gave a file: without Canvas's or flat Moodle's prefix (and Canvas's
    re-submission number), which the LMS adds on download."""
    if layout == "canvas":
        parsed = parse_canvas(filename)
        return CANVAS_RESUBMISSION.sub("", parsed[3]) if parsed else filename
    if layout == "moodle":
        m = MOODLE_FILE.match(filename)
        return m["file"] if m else filename
    return filename


def gradescope_folders(submitters: Mapping[str, list[dict[str, Any]]]) -> dict[str, Claim]:
    """Gradescope: each folder submission_metadata.yml lists (gradescope.gradescope_submitters), in
    name order, claimed for the id its submitters give."""
    return {
        folder: Claim(
            "gradescope",
            *gradescope_id(folder, submitters[folder]),
            lms=gradescope_lms_ids(folder, submitters[folder]),
        )
        for folder in sorted(submitters)
    }


def moodle_folder(folder: TopFolder) -> Claim | None:
    """Moodle: `Full Name_<participant>_assignsubmission_file_`; another plugin's folder is ignored."""
    m = MOODLE_DIR.match(folder.name)
    if not m:
        return None
    name = clean_text(m["name"], 120)
    ignored = m["plugin"] != "assignsubmission_file"
    return Claim("moodle", slug(f"{name}_{m['pid']}"), name, ignored=ignored, lms=lms_ids("moodle", m["pid"]))


def github_classroom_folder(folder: TopFolder) -> Claim | None:
    """GitHub Classroom: `<slug>-<login>` in `<slug>-submissions` (id: the login), or a clone
    elsewhere, known by its .git (id: the folder's name)."""
    assignment = folder.parent[: -len("-submissions")] + "-" if folder.parent.endswith("-submissions") else None
    if assignment and folder.name.startswith(assignment) and len(folder.name) > len(assignment):
        login = folder.name[len(assignment) :]
        return Claim("github-classroom", slug(login), lms=lms_ids("github-classroom", login))
    return Claim("github-classroom", slug(folder.name)) if folder.git else None


def student_folder(folder: TopFolder) -> Claim:
    """A folder per student, named for the student: claims every folder."""
    return Claim("folder", slug(folder.name))


def moodle_file(filename: str) -> Claim | None:
    """Flat Moodle: `Full Name_<participant>_assignsubmission_file_<file>`."""
    m = MOODLE_FILE.match(filename)
    if not m:
        return None
    return Claim("moodle", slug(f"{m['name']}_{m['pid']}"), clean_text(m["name"], 120), lms=lms_ids("moodle", m["pid"]))


def canvas_file(filename: str) -> Claim | None:
    """Canvas: `<name>[_late]_<user id>_<attachment id>_<file>` (anonymous grading: no name)."""
    parsed = parse_canvas(filename)
    if parsed is None:
        return None
    name, uid, late, _original = parsed
    student = slug(f"{name}_{uid}" if name else f"anonymous_{uid}")
    return Claim("canvas", student, name, late, lms=lms_ids("canvas", uid))


def student_file(filename: str) -> Claim | None:
    """A file per student, named for the student: a .py or .ipynb file."""
    path = PurePosixPath(filename)
    return Claim("file", slug(path.stem)) if path.suffix in SUFFIXES else None


def given_file(filename: str) -> Claim:
    """A file given on the command line: one student's, named for the student, whatever its suffix."""
    return Claim("file", slug(PurePosixPath(filename).stem))


FOLDER_DETECTORS: tuple[Callable[[TopFolder], Claim | None], ...] = (
    moodle_folder,
    github_classroom_folder,
    student_folder,
)
FILE_DETECTORS: tuple[Callable[[str], Claim | None], ...] = (moodle_file, canvas_file, student_file)
COMMAND_LINE_DETECTORS: tuple[Callable[[str], Claim | None], ...] = (canvas_file, moodle_file, given_file)


def _first(detectors: tuple[Callable[[T], Claim | None], ...], subject: T) -> Claim | None:
    return next((c for c in (detect(subject) for detect in detectors) if c is not None), None)


def claim_folder(folder: TopFolder) -> Claim:
    """The first folder detector's claim (student_folder claims any folder the others do not)."""
    return _first(FOLDER_DETECTORS, folder) or student_folder(folder)


def claim_file(filename: str) -> Claim | None:
    """The first file detector's claim on a loose file, or None when it is nobody's submission."""
    return _first(FILE_DETECTORS, filename)


def claim_given_file(filename: str) -> Claim:
    """The first command-line detector's claim (given_file claims any file the others do not)."""
    return _first(COMMAND_LINE_DETECTORS, filename) or given_file(filename)


def lms_named(filename: str) -> bool:
    """Does a file carry an LMS's download prefix (Moodle's or Canvas's)?"""
    return moodle_file(filename) is not None or canvas_file(filename) is not None
