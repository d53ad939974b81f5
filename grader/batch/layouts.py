"""Which download this is, and one Entry per student.

Recognised layouts (the naming is cited in docs/batch.md):

- file per student: `alice.py`, `alice.ipynb` (id: the file name's stem);
- folder per student: `alice/solution.py`, and GitHub Classroom's
  `gh classroom clone student-repos`, `<slug>-submissions/<slug>-<login>/`
  (id: the login);
- Gradescope "Export submissions": `submission_metadata.yml` next to
  `submission_<n>/` folders (id: the submitters' SIDs, else their names);
- Moodle "Download all submissions": `Full Name_<participant>_assignsubmission_file_/`
  folders, or the same prefix on flat file names (id: name and participant number);
- Canvas "Download submissions": `<name>[_late]_<user id>_<attachment id>_<file>`
  (id: name and user id; `late` is kept as a flag).

In a student's folder the candidates are the .py and .ipynb files (intake.py
has already skipped hidden folders, `__pycache__` and the like). Exactly one is
graded; with several, the one whose own name (the LMS's prefix removed) is
solution.py or solution.ipynb, the statement's convention, or the one matching
the instructor's `--file` pattern (Choice); otherwise, or with none, the
student gets a CE saying what was found.

One student, one submission: two entries of one input that give the same id
from their own names (`bob.py` twice in a zip, `bob.py` and `bob.ipynb`,
`bob.py` and `bob/`) are refused together, as that student's CE, rather than
one of them chosen; students of different inputs are told apart by `-2`.
"""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

import yaml

from .gradescope import GRADESCOPE_METADATA, gradescope_id, gradescope_submitters, read_metadata
from .ids import clean_text, slug
from .intake import Intake, Refusal, oversized_reason, skipped_dir

SUFFIXES = (".py", ".ipynb")
PREFERRED = ("solution.py", "solution.ipynb")
MOODLE_DIR = re.compile(r"^(?P<name>.+)_(?P<pid>\d+)_(?P<plugin>assign(?:submission|feedback)_[a-z0-9]+)_$")
MOODLE_FILE = re.compile(r"^(?P<name>.+)_(?P<pid>\d+)_assignsubmission_file_(?P<file>.+)$")
CANVAS_NAME = re.compile(r"^[a-z0-9_]*$")
CANVAS_RESUBMISSION = re.compile(r"-\d+(?=\.[^.]*$)")    # Canvas's "solution-1.py" for a re-submitted "solution.py"
NAMED_BY_ID = frozenset({"file", "folder", "github-classroom"})   # layouts whose id is a file's or folder's own name


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
class Entry:
    """One student's submission, as found (before ids are made unique)."""
    student: str               # id (a slug)
    source: str                # where it came from, for people: "INPUT:relative/path"
    path: Path | None          # the file to grade; None when there is none to grade
    layout: str                # file, folder, github-classroom, gradescope, moodle, canvas
    name: str = ""             # the student's name when the download says it
    late: bool = False         # Canvas's LATE marker
    problem: str = ""          # why there is nothing to grade (the student's CE message)
    within: Path | None = None # the input folder the file must lie in (no symlinked folder leads out)


@dataclass(frozen=True)
class Found:
    """Everything one input yielded."""
    entries: list[Entry]
    refused: list[Refusal]     # entries of the input that were not let through
    ignored: list[str]         # files that are nobody's submission (README.md, index.html, ...)


def _candidates(files: list[PurePosixPath]) -> list[PurePosixPath]:
    def visible(p: PurePosixPath) -> bool:
        return not any(skipped_dir(part) for part in p.parts[:-1]) and not p.name.startswith(".")
    return sorted(p for p in files if p.suffix in SUFFIXES and visible(p))


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


def choose(files: list[PurePosixPath], refused: list[Refusal], where: str, choice: Choice = Choice(),
           layout: str = "folder") -> tuple[PurePosixPath | None, str]:
    """The one file to grade among a student's files, or None and the CE message."""
    cands = _candidates(files)
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


def parse_canvas(filename: str) -> tuple[str, str, bool, str] | None:
    """(name, user id, late, original file name) from a Canvas download's file name, or None."""
    tokens = filename.split("_")
    for i in range(len(tokens) - 2):
        if tokens[i].isdigit() and tokens[i + 1].isdigit() and len(tokens[i]) >= 2:
            name_tokens = tokens[:i]
            late = bool(name_tokens) and name_tokens[-1] == "late"
            if late:
                name_tokens = name_tokens[:-1]
            name = "_".join(name_tokens)
            if not CANVAS_NAME.match(name):
                return None
            return name, tokens[i], late, "_".join(tokens[i + 2:])
    return None


def _holds_students(files: list[PurePosixPath]) -> bool:
    """Does a folder holding these files (paths inside it) look like a class, not one student?"""
    loose = [f for f in files if len(f.parts) == 1]
    if any(f.name == GRADESCOPE_METADATA for f in loose):
        return True
    lms = [f for f in loose if MOODLE_FILE.match(f.name) or parse_canvas(f.name)]
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
        if MOODLE_DIR.match(only) or only.startswith(".") or \
                not _holds_students([r.relative_to(only) for r in rels]):
            break
        prefix = prefix / only
    return prefix


def _below(paths, prefix: PurePosixPath) -> list[PurePosixPath]:
    """The paths under `prefix`, relative to it."""
    out = []
    for p in paths:
        try:
            rel = PurePosixPath(p).relative_to(prefix)
        except ValueError:
            continue
        if rel.parts:
            out.append(rel)
    return out


def _one_each(entries: list[Entry], label: str) -> list[Entry]:
    """One entry per id among those named by a file's or folder's own name: two that give the same
    id are one student's two submissions, refused together (see the module docstring)."""
    by_id: dict[str, list[Entry]] = {}
    out = []
    for e in entries:
        (by_id.setdefault(e.student, []) if e.layout in NAMED_BY_ID else out).append(e)
    for student, group in by_id.items():
        if len(group) == 1:
            out.append(group[0])
            continue
        listed = ", ".join(sorted({e.source for e in group})[:4])
        problem = next((e.problem for e in group if e.problem.startswith("the zip holds")), "")
        out.append(Entry(student, group[0].source, None, group[0].layout, problem=problem or (
            f"{len(group)} submissions in {clean_text(label, 80)} give the student id {student!r} ({listed}): "
            "refused rather than choosing one; hand in one file or one folder")))
    return out


class _Discovery:
    """One input's files below its wrapper folder, sorted into students."""

    def __init__(self, label: str, intake: Intake, prefix: PurePosixPath, choice: Choice):
        self.label, self.intake, self.prefix, self.choice = label, intake, prefix, choice
        self.base = intake.root / prefix
        self.refused = list(intake.refused)
        self.entries: list[Entry] = []
        self.ignored: list[str] = []
        self.by_top: dict[str, list[PurePosixPath]] = {}
        self.loose: list[PurePosixPath] = []
        for f in _below(intake.files, prefix):
            if skipped_dir(f.parts[0]):   # .git, .vscode, __pycache__ at the top (a hidden file too): nobody's
                continue
            if len(f.parts) == 1:
                self.loose.append(f)
            else:
                self.by_top.setdefault(f.parts[0], []).append(PurePosixPath(*f.parts[1:]))
        # Folders that hold nothing unpacked (empty, or only .git) are students all the same.
        dirs = _below(intake.dirs, prefix)
        inside_skipped = [d for d in _below(intake.skipped_dirs, prefix) if len(d.parts) > 1]
        self.skipped: dict[str, list[str]] = {}
        for d in inside_skipped:
            if len(d.parts) == 2:
                self.skipped.setdefault(d.parts[0], []).append(d.name)
        for d in (*dirs, *inside_skipped):
            if not skipped_dir(d.parts[0]):
                self.by_top.setdefault(d.parts[0], [])
        self.unreadable = {d.parts[0] for d in _below(intake.unreadable_dirs, prefix)}
        self.oversized = {d.parts[0]: why for d, why in zip(_below(intake.oversized, prefix),
                                                            intake.oversized.values())}
        self.duplicates = set(_below(intake.duplicates, prefix))
        for top in (*self.unreadable, *self.oversized):
            self.by_top.setdefault(top, [])

    def src(self, rel: PurePosixPath | str) -> str:
        return clean_text(f"{self.label}:{(self.prefix / rel).as_posix()}" if str(rel) else self.label)

    def duplicated(self, paths: list[PurePosixPath]) -> str:
        twice = sorted(p for p in paths if p in self.duplicates)
        return (f"the zip holds {clean_text(twice[0].as_posix(), 80)!r} more than once: refused rather than "
                "choosing one (unzip would keep the last); hand in one") if twice else ""

    def refused_under(self, top: str) -> list[Refusal]:
        head = (self.prefix / top).as_posix()
        return [r for r in self.refused if r.entry == head or r.entry.startswith(head + "/")]

    def folder_entry(self, top: str, student: str, layout: str, name: str = "") -> Entry:
        shown = clean_text(top, 80)
        problem = ""
        if top in self.unreadable:
            problem = f"cannot read the folder {shown!r} (or a folder inside it)"
        elif top in self.oversized:
            problem = f"the folder {shown!r} holds {self.oversized[top]}"
        else:
            problem = self.duplicated([top / f for f in self.by_top.get(top, [])])
        if problem:
            return Entry(student, self.src(top), None, layout, name, problem=problem)
        chosen, why = choose(self.by_top.get(top, []), self.refused_under(top), f"the folder {shown!r}",
                             self.choice)
        skipped = sorted(self.skipped.get(top, []))
        if not self.by_top.get(top) and skipped:
            why = why.replace(" (it is empty)", f" (it holds only what is skipped: {', '.join(skipped[:4])})")
        return Entry(student, self.src(PurePosixPath(top) / chosen) if chosen else self.src(top),
                     self.base / top / chosen if chosen else None, layout, name, problem=why)

    def refused_students(self) -> None:
        """A refused top-level entry that would have been a student's (a symlinked alice.py or alice/)
        is that student's CE, so nobody silently drops out of the gradebook."""
        for r in self.refused:
            rel = PurePosixPath(r.entry)
            try:
                rel = rel.relative_to(self.prefix)
            except ValueError:
                continue
            if len(rel.parts) == 1 and rel.name not in self.by_top and rel not in self.duplicates \
                    and (rel.suffix in SUFFIXES or not rel.suffix):
                self.entries.append(Entry(slug(rel.stem), self.src(rel), None, "file" if rel.suffix else "folder",
                                          problem=f"refused: {r.line()}"))

    def gradescope(self) -> set[str] | None:
        """The export's students (None if its metadata cannot be read); the folders it names."""
        self.loose = [f for f in self.loose if f.name != GRADESCOPE_METADATA]
        try:
            meta = gradescope_submitters(read_metadata(self.base / GRADESCOPE_METADATA, self.intake.root))
        except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError, RecursionError) as exc:
            why = f"{self.label}: cannot read {GRADESCOPE_METADATA}: {clean_text(str(exc), 200)}"
            self.entries = [Entry(slug(self.label), self.src(GRADESCOPE_METADATA), None, "gradescope", problem=why)]
            return None
        for folder in sorted(meta):
            student, name = gradescope_id(folder, meta[folder])
            if folder in self.by_top:
                self.entries.append(self.folder_entry(folder, student, "gradescope", name))
            else:
                self.entries.append(Entry(student, self.src(folder), None, "gradescope", name,
                                          problem=f"{GRADESCOPE_METADATA} lists {clean_text(folder, 80)!r}, "
                                                  "but the export has no such folder"))
        return set(meta)

    def folders(self, tops: list[str]) -> None:
        gh = self.base.name[: -len("-submissions")] + "-" if self.base.name.endswith("-submissions") else None
        for top in tops:
            m = MOODLE_DIR.match(top)
            if m:
                if m["plugin"] != "assignsubmission_file":
                    self.ignored.append(self.src(top))   # online text, feedback files: not a file submission
                    continue
                name = clean_text(m["name"], 120)
                self.entries.append(self.folder_entry(top, slug(f"{name}_{m['pid']}"), "moodle", name))
            elif gh and top.startswith(gh) and len(top) > len(gh):
                self.entries.append(self.folder_entry(top, slug(top[len(gh):]), "github-classroom"))
            else:
                git = self.prefix / top / ".git" in self.intake.skipped_dirs
                self.entries.append(self.folder_entry(top, slug(top), "github-classroom" if git else "folder"))

    def loose_files(self) -> None:
        grouped: dict[tuple[str, str], list[PurePosixPath]] = {}
        names: dict[tuple[str, str], tuple[str, bool]] = {}
        for f in sorted(self.loose):
            moodle, canvas = MOODLE_FILE.match(f.name), parse_canvas(f.name)
            if moodle:
                key = ("moodle", slug(f"{moodle['name']}_{moodle['pid']}"))
                names[key] = (clean_text(moodle["name"], 120), False)
            elif canvas:
                cname, uid, late, _orig = canvas
                key = ("canvas", slug(f"{cname}_{uid}" if cname else f"anonymous_{uid}"))
                names[key] = (cname, names.get(key, ("", False))[1] or late)
            elif f.suffix in SUFFIXES:
                twice = self.duplicated([f])
                self.entries.append(Entry(slug(f.stem), self.src(f), None if twice else self.base / f, "file",
                                          problem=twice))
                continue
            else:
                self.ignored.append(self.src(f))
                continue
            grouped.setdefault(key, []).append(f)
        for (layout, student), group in sorted(grouped.items()):
            name, late = names[(layout, student)]
            limits = self.intake.limits
            why = self.duplicated(group) or (f"{len(group)} files: {oversized_reason(limits)}"
                                             if len(group) > limits.max_student_entries else "")
            chosen, why = (None, why) if why else \
                choose(group, [], f"the {layout.capitalize()} files of {student}", self.choice, layout)
            self.entries.append(Entry(student, self.src(chosen) if chosen else self.src(group[0]),
                                      self.base / chosen if chosen else None, layout, name, late, why))


def discover(label: str, intake: Intake, unwrap: bool = False, choice: Choice = Choice()) -> Found:
    """The students in one unpacked zip (unwrap=True: look inside a wrapper folder) or folder."""
    prefix = intake.prefix if intake.prefix.parts or not unwrap else wrapper_prefix(list(intake.files))
    d = _Discovery(label, intake, prefix, choice)
    d.refused_students()
    tops = sorted(d.by_top)
    if GRADESCOPE_METADATA in {f.name for f in d.loose}:
        listed = d.gradescope()
        if listed is None:
            return Found([replace(e, within=intake.root) for e in d.entries], d.refused, [])
        tops = [t for t in tops if t not in listed]
    d.folders(tops)
    d.loose_files()
    return Found([replace(e, within=intake.root) for e in _one_each(d.entries, label)], d.refused, d.ignored)


def single_file(path: Path, label: str) -> Entry:
    """A file given on the command line: one student."""
    canvas = parse_canvas(path.name)
    if canvas:
        cname, uid, late, _ = canvas
        return Entry(slug(f"{cname}_{uid}" if cname else f"anonymous_{uid}"), clean_text(label), path,
                     "canvas", cname, late)
    moodle = MOODLE_FILE.match(path.name)
    if moodle:
        return Entry(slug(f"{moodle['name']}_{moodle['pid']}"), clean_text(label), path, "moodle",
                     clean_text(moodle["name"], 120))
    return Entry(slug(path.stem), clean_text(label), path, "file")
