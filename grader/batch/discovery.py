"""Which download this is, and one Entry per student.

The input's files below its wrapper folder (if it has one) are sorted by
their top-level name; each top-level folder and each loose file is then
claimed by the first layout detector that knows it (layout_detectors.py has
the layouts, file per student, folder per student, GitHub Classroom,
Gradescope, Moodle and Canvas, and the order they are tried in). A folder is
one student's; loose files an LMS named are grouped by the student they give;
layouts.py chooses the file a student's candidates give.

One student, one submission: two entries of one input that give the same id
from their own names (`bob.py` twice in a zip, `bob.py` and `bob.ipynb`,
`bob.py` and `bob/`) are refused together, as that student's CE, rather than
one of them chosen; students of different inputs are told apart by `-2`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import PurePosixPath

import yaml

from .gradescope import GRADESCOPE_METADATA, gradescope_submitters, read_metadata
from .ids import clean_text, slug
from .intake import Intake, Refusal, oversized_reason, skipped_dir
from .layout_detectors import SUFFIXES, Claim, TopFolder, claim_file, claim_folder, gradescope_folders
from .layouts import Candidate, Choice, Entry, Found, candidate_files, choose, wrapper_prefix
from .lms_ids import NO_LMS_IDS, LmsIds

NAMED_BY_ID = frozenset({"file", "folder", "github-classroom"})  # layouts whose id is a file's or folder's own name


def _below(paths: Iterable[PurePosixPath], prefix: PurePosixPath) -> list[PurePosixPath]:
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
    out: list[Entry] = []
    for e in entries:
        (by_id.setdefault(e.student, []) if e.layout in NAMED_BY_ID else out).append(e)
    for student, group in by_id.items():
        if len(group) == 1:
            out.append(group[0])
            continue
        listed = ", ".join(sorted({e.source for e in group})[:4])
        problem = next((e.problem for e in group if e.problem.startswith("the zip holds")), "")
        out.append(
            Entry(
                student,
                group[0].source,
                None,
                group[0].layout,
                problem=problem
                or (
                    f"{len(group)} submissions in {clean_text(label, 80)} give the student id {student!r} ({listed}): "
                    "refused rather than choosing one; hand in one file or one folder"
                ),
            )
        )
    return out


class _Discovery:
    """One input's files below its wrapper folder, sorted by top-level name into the students
    found so far (`entries`), and what is nobody's (`ignored`)."""

    def __init__(self, label: str, intake: Intake, prefix: PurePosixPath, choice: Choice) -> None:
        self.label, self.intake, self.prefix, self.choice = label, intake, prefix, choice
        self.base = intake.root / prefix
        self.refused = list(intake.refused)
        self.entries: list[Entry] = []
        self.ignored: list[str] = []
        self.by_top: dict[str, list[PurePosixPath]] = {}  # top-level folder -> the files in it
        self.loose: list[PurePosixPath] = []  # the files at the top
        self.skipped: dict[str, list[str]] = {}  # top-level folder -> its skipped folders (.git)
        self.unreadable = {d.parts[0] for d in _below(intake.unreadable_dirs, prefix)}
        self.oversized = {
            d.parts[0]: why for d, why in zip(_below(intake.oversized, prefix), intake.oversized.values())
        }
        self.duplicates = set(_below(intake.duplicates, prefix))
        self._sort_files()
        self._add_folders()

    def _sort_files(self) -> None:
        """Each file below the prefix: loose at the top, or in its top-level folder."""
        for f in _below(self.intake.files, self.prefix):
            if skipped_dir(f.parts[0]):  # .git, .vscode, __pycache__ at the top (a hidden file too): nobody's
                continue
            if len(f.parts) == 1:
                self.loose.append(f)
            else:
                self.by_top.setdefault(f.parts[0], []).append(PurePosixPath(*f.parts[1:]))

    def _add_folders(self) -> None:
        """Top-level folders that hold no file let through (empty, only .git, unreadable, over the
        limit) are students all the same."""
        dirs = _below(self.intake.dirs, self.prefix)
        inside_skipped = [d for d in _below(self.intake.skipped_dirs, self.prefix) if len(d.parts) > 1]
        for d in inside_skipped:
            if len(d.parts) == 2:
                self.skipped.setdefault(d.parts[0], []).append(d.name)
        for d in (*dirs, *inside_skipped):
            if not skipped_dir(d.parts[0]):
                self.by_top.setdefault(d.parts[0], [])
        for top in (*self.unreadable, *self.oversized):
            self.by_top.setdefault(top, [])

    def src(self, rel: PurePosixPath | str) -> str:
        """Where something came from, for people: "INPUT:path below the input"."""
        return clean_text(f"{self.label}:{(self.prefix / rel).as_posix()}" if str(rel) else self.label)

    def duplicated(self, paths: list[PurePosixPath]) -> str:
        """The CE message when the zip held one of these paths more than once, else ""."""
        twice = sorted(p for p in paths if p in self.duplicates)
        return (
            (
                f"the zip holds {clean_text(twice[0].as_posix(), 80)!r} more than once: refused rather than "
                "choosing one (unzip would keep the last); hand in one"
            )
            if twice
            else ""
        )

    def candidates(self, files: list[PurePosixPath], folder: str = "") -> tuple[Candidate, ...]:
        """Every .py and .ipynb file of a student's (`files`: in the folder `folder`, or loose)."""
        return tuple(
            Candidate(f, self.base / folder / f, self.src(PurePosixPath(folder) / f)) for f in candidate_files(files)
        )

    def refused_under(self, top: str) -> list[Refusal]:
        """What the intake refused inside the top-level folder `top`."""
        head = (self.prefix / top).as_posix()
        return [r for r in self.refused if r.entry == head or r.entry.startswith(head + "/")]

    def folder_entry(self, top: str, student: str, layout: str, name: str = "", lms: LmsIds = NO_LMS_IDS) -> Entry:
        """A student whose submission is the folder `top`: the file to grade in it, or the CE."""
        shown = clean_text(top, 80)
        problem = ""
        if top in self.unreadable:
            problem = f"cannot read the folder {shown!r} (or a folder inside it)"
        elif top in self.oversized:
            problem = f"the folder {shown!r} holds {self.oversized[top]}"
        else:
            problem = self.duplicated([top / f for f in self.by_top.get(top, [])])
        if problem:
            return Entry(student, self.src(top), None, layout, name, problem=problem, lms=lms)
        chosen, why = choose(self.by_top.get(top, []), self.refused_under(top), f"the folder {shown!r}", self.choice)
        skipped = sorted(self.skipped.get(top, []))
        if not self.by_top.get(top) and skipped:
            why = why.replace(" (it is empty)", f" (it holds only what is skipped: {', '.join(skipped[:4])})")
        return Entry(
            student,
            self.src(PurePosixPath(top) / chosen) if chosen else self.src(top),
            self.base / top / chosen if chosen else None,
            layout,
            name,
            problem=why,
            lms=lms,
            candidates=self.candidates(self.by_top.get(top, []), top),
        )

    def refused_students(self) -> None:
        """A refused top-level entry that would have been a student's (a symlinked alice.py or alice/)
        is that student's CE, so nobody silently drops out of the gradebook."""
        for r in self.refused:
            rel = PurePosixPath(r.entry)
            try:
                rel = rel.relative_to(self.prefix)
            except ValueError:
                continue
            if (
                len(rel.parts) == 1
                and rel.name not in self.by_top
                and rel not in self.duplicates
                and (rel.suffix in SUFFIXES or not rel.suffix)
            ):
                self.entries.append(
                    Entry(
                        slug(rel.stem),
                        self.src(rel),
                        None,
                        "file" if rel.suffix else "folder",
                        problem=f"refused: {r.line()}",
                    )
                )

    def gradescope(self) -> set[str] | None:
        """Gradescope's export, when submission_metadata.yml is at the top: an entry for each folder
        it lists, and those folders (none: not an export); None when the metadata cannot be read,
        the input then being that one CE (which replaces every entry found so far)."""
        if GRADESCOPE_METADATA not in {f.name for f in self.loose}:
            return set()
        self.loose = [f for f in self.loose if f.name != GRADESCOPE_METADATA]
        try:
            meta = gradescope_submitters(read_metadata(self.base / GRADESCOPE_METADATA, self.intake.root))
        except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError, RecursionError) as exc:
            why = f"{self.label}: cannot read {GRADESCOPE_METADATA}: {clean_text(str(exc), 200)}"
            self.entries = [Entry(slug(self.label), self.src(GRADESCOPE_METADATA), None, "gradescope", problem=why)]
            return None
        for folder, claim in gradescope_folders(meta).items():
            if folder in self.by_top:
                self.entries.append(self.folder_entry(folder, claim.student, claim.layout, claim.name, claim.lms))
            else:
                self.entries.append(
                    Entry(
                        claim.student,
                        self.src(folder),
                        None,
                        claim.layout,
                        claim.name,
                        problem=f"{GRADESCOPE_METADATA} lists {clean_text(folder, 80)!r}, "
                        "but the export has no such folder",
                        lms=claim.lms,
                    )
                )
        return set(meta)

    def folder(self, top: str) -> None:
        """One top-level folder: the student the first folder detector claims it for, or ignored."""
        claim = claim_folder(TopFolder(top, self.base.name, self.prefix / top / ".git" in self.intake.skipped_dirs))
        if claim.ignored:
            self.ignored.append(self.src(top))
        else:
            self.entries.append(self.folder_entry(top, claim.student, claim.layout, claim.name, claim.lms))

    def loose_files(self) -> None:
        """The files at the top: a student's own file is its own entry, LMS-named files are grouped
        by the student they give, any other is ignored."""
        groups: dict[tuple[str, str], list[PurePosixPath]] = {}
        claims: dict[tuple[str, str], Claim] = {}
        for f in sorted(self.loose):
            claim = claim_file(f.name)
            if claim is None:
                self.ignored.append(self.src(f))
            elif claim.layout == "file":
                twice = self.duplicated([f])
                self.entries.append(
                    Entry(
                        claim.student,
                        self.src(f),
                        None if twice else self.base / f,
                        "file",
                        problem=twice,
                        candidates=() if twice else self.candidates([f]),
                    )
                )
            else:
                key = (claim.layout, claim.student)
                groups.setdefault(key, []).append(f)
                late = claim.late if key not in claims else claims[key].late or claim.late  # any of the files late
                claims[key] = replace(claim, late=late)
        for key, group in sorted(groups.items()):
            self.entries.append(self.lms_files_entry(claims[key], group))

    def lms_files_entry(self, claim: Claim, group: list[PurePosixPath]) -> Entry:
        """One student of loose LMS-named files: the file to grade among them, or the CE."""
        limits = self.intake.limits
        why = self.duplicated(group) or (
            f"{len(group)} files: {oversized_reason(limits)}" if len(group) > limits.max_student_entries else ""
        )
        group_ok = not why
        chosen, why = (
            (None, why)
            if why
            else choose(
                group, [], f"the {claim.layout.capitalize()} files of {claim.student}", self.choice, claim.layout
            )
        )
        return Entry(
            claim.student,
            self.src(chosen) if chosen else self.src(group[0]),
            self.base / chosen if chosen else None,
            claim.layout,
            claim.name,
            claim.late,
            why,
            lms=claim.lms,
            candidates=self.candidates(group) if group_ok else (),
        )


def discover(label: str, intake: Intake, unwrap: bool = False, choice: Choice = Choice()) -> Found:
    """The students in one unpacked zip (unwrap=True: look inside a wrapper folder) or folder:
    Gradescope's listed folders first, then every other top-level folder and loose file as its
    layout's detector claims it (see the module docstring)."""
    prefix = intake.prefix if intake.prefix.parts or not unwrap else wrapper_prefix(list(intake.files))
    discovery = _Discovery(label, intake, prefix, choice)
    discovery.refused_students()
    listed = discovery.gradescope()
    if listed is None:
        return Found([replace(e, within=intake.root) for e in discovery.entries], discovery.refused, [])
    for top in sorted(discovery.by_top):
        if top not in listed:
            discovery.folder(top)
    discovery.loose_files()
    entries = _one_each(discovery.entries, label)
    return Found([replace(e, within=intake.root) for e in entries], discovery.refused, discovery.ignored)
