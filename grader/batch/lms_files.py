"""The grades in each LMS's own import format, keyed on the identifiers it matches rows on (lms_ids.py).

One function per LMS, each written by batch and batch-merge next to grades.csv
only when the class holds students of that layout whose identifiers are known
(docs/batch.md, "Grades back into the LMS", cites the formats):

- Moodle: the assignment's grading worksheet ("Download grading worksheet"),
  whose upload matches the `Identifier` column ("Participant <n>") and reads
  `Grade`, `Last modified (grade)` and the feedback plugins' columns
  (mod/assign/feedback/offline/importgradeslib.php);
- Canvas: a gradebook CSV (Student, ID, SIS User ID, SIS Login ID, Section,
  then `<assignment> (<assignment id>)`) with its "Points Possible" row;
- Gradescope: one row per submitter (Name, SID, Email, Submission ID, Total
  Score, Max Points);
- GitHub Classroom: the columns of its assignment grades (github_username,
  roster_identifier, student_repository_name, points_awarded, points_available).

A grade is the verdict JSON's score scaled to `points` (score / max_score *
points, 2 decimals; by default the problem's maximum, so the score itself). A
student who could not be judged has an empty grade cell, never 0: the
grader's failure is not the student's zero. (Moodle's upload skips an empty
grade; Canvas's importer clears a grade already entered, which docs/batch.md
warns of.) Every cell is gradebook.cell's: one line, never a formula.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from .gradebook import Row, cell
from .lms_ids import LMS_LAYOUTS

BOM = "\ufeff"  # each file starts with one, so that Excel reads its names as UTF-8
MOODLE_WORKSHEET = "moodle-grading-worksheet.csv"
CANVAS_GRADEBOOK = "canvas-gradebook.csv"
GRADESCOPE_SCORES = "gradescope-scores.csv"
GITHUB_GRADES = "github-classroom-grades.csv"
LMS_FILE_NAMES = (MOODLE_WORKSHEET, CANVAS_GRADEBOOK, GRADESCOPE_SCORES, GITHUB_GRADES)
CANVAS_ASSIGNMENT = re.compile(r"(?P<name>\S(?:.{0,250}\S)?) \((?P<id>[0-9]{1,19})\)")
MOODLE_PARTICIPANT = "Participant "  # mod/assign/lang/en/assign.php 'hiddenuser', which the upload strips
MOODLE_COLUMNS = (
    "Identifier",
    "Full name",
    "Email address",
    "Status",
    "Grade",
    "Maximum grade",
    "Grade can be changed",
    "Last modified (submission)",
    "Last modified (grade)",
    "Feedback comments",
)
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
# The second line: Canvas's export indents it ("    Points Possible"); its importer looks for
# /Points Possible/ in the first cell (app/models/gradebook_importer.rb).
CANVAS_POINTS_ROW = "Points Possible"
GRADESCOPE_COLUMNS = ("Name", "SID", "Email", "Submission ID", "Total Score", "Max Points")
GITHUB_COLUMNS = (
    "github_username",
    "roster_identifier",
    "student_repository_name",
    "points_awarded",
    "points_available",
)


class LmsOptionError(ValueError):
    """A bad --canvas-assignment or --points (one line)."""


@dataclass(frozen=True)
class LmsOptions:
    """How the LMS files are written: `points` the grade's maximum (None: the problem's), the
    Canvas column's title `canvas_assignment` ("HW4 (12345)"; None: the bundle's id, which Canvas
    imports as a new assignment), and `when`, Moodle's `Last modified (grade)` (None: now)."""

    points: float | None = None
    canvas_assignment: str | None = None
    when: datetime | None = None


NO_LMS_OPTIONS = LmsOptions()


def check_canvas_assignment(text: str) -> str:
    """`text` if it is Canvas's column title for an assignment, `<name> (<assignment id>)`, one
    line; LmsOptionError otherwise."""
    if not CANVAS_ASSIGNMENT.fullmatch(text) or any(ch in text for ch in "\r\n\t\0"):
        raise LmsOptionError(
            f"--canvas-assignment {text[:80]!r}: expected the assignment's name and Canvas id as "
            "Canvas's gradebook names its column, such as 'HW4 (12345)'"
        )
    return text


def check_points(points: float) -> float:
    """`points` if it is a positive, finite number of points; LmsOptionError otherwise."""
    if not (0 < points < 1e9):
        raise LmsOptionError(f"--points {points}: expected a positive number of points, such as 10")
    return points


def number(value: float) -> str:
    """A grade as an LMS reads it: at most 2 decimals, no trailing zeros, never an exponent."""
    text = f"{round(value, 2):.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def grade(row: Row, points: float | None) -> str:
    """The student's grade (see the module docstring), or "" when the student could not be judged."""
    if not row.judged or row.score is None or not row.max_score:
        return ""
    return number(row.score if points is None else row.score / row.max_score * points)


def maximum(rows: Iterable[Row], points: float | None) -> str:
    """The grade's maximum: `points`, else the problem's maximum score (the verdict JSON's)."""
    if points is not None:
        return number(points)
    return next((number(r.max_score) for r in rows if r.max_score), "")


def _csv(lines: Iterable[Iterable[object]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")  # RFC 4180's line ends, which every LMS reads
    for line in lines:
        w.writerow([cell(v) for v in line])
    return buf.getvalue()


def _keyed(rows: list[Row], lms: str) -> dict[str, list[Row]]:
    """The students of `lms` with known identifiers, by the key its LMS matches a row on (digits
    read as a number, as the LMS's lookup does: `007` is `7`; a GitHub login in any case)."""
    out: dict[str, list[Row]] = {}
    for r in rows:
        if r.record.layout == lms and r.record.lms.lms == lms:
            key = r.record.lms.key
            out.setdefault(key.lower() if lms == "github-classroom" else key.lstrip("0") or "0", []).append(r)
    return out


def _of(rows: list[Row], lms: str) -> list[Row]:
    """The rows of `lms`'s file: every student of it whose key no other student shares (two downloads
    given together can repeat a participant or user id; the LMS would give them all one grade)."""
    return [r for r in rows if any(len(g) == 1 and g[0] is r for g in _keyed(rows, lms).values())]


def shared_key_problems(rows: list[Row]) -> list[str]:
    """One line for each LMS key that several students share, all of whom are left out of its file,
    and for each student of an LMS's layout whose key is not known (an id too long to be the LMS's,
    a record written before keys were kept), who is not in it either: nobody drops out unsaid. (A
    GitHub Classroom clone found outside `<slug>-submissions/` has no login to know: no line, as
    docs/batch.md says.)"""
    names = dict(zip(LMS_LAYOUTS, LMS_FILE_NAMES, strict=True))
    shared = [
        f"{names[lms]}: {', '.join(sorted(r.student for r in group))} have one {lms} id ({key}): left out, "
        "since the LMS would give them all one grade; grade them by hand"
        for lms in LMS_LAYOUTS
        for key, group in sorted(_keyed(rows, lms).items())
        if len(group) > 1
    ]
    unknown = [
        f"{names[r.record.layout]}: no {r.record.layout} id known for {r.student} ({r.record.source!r}): "
        "not in the file; grade them by hand"
        for r in rows
        if r.record.layout in names and r.record.layout != "github-classroom" and r.record.lms.lms != r.record.layout
    ]
    return shared + unknown


def _message(row: Row) -> str:
    return row.reason if not row.judged else str((row.report or {}).get("summary", ""))


def moodle_worksheet(rows: list[Row], opts: LmsOptions) -> str:
    """moodle-grading-worksheet.csv: Moodle's grading worksheet, one line per Moodle student."""
    when = (opts.when or datetime.now(UTC)).astimezone(UTC)
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S+00:00")  # PHP's strtotime, which the upload uses, reads ISO 8601
    top = maximum(rows, opts.points)
    lines = [MOODLE_COLUMNS] + [
        (
            MOODLE_PARTICIPANT + r.record.lms.key,
            r.record.name,
            "",
            "",
            grade(r, opts.points),
            top,
            "Yes",
            "",
            stamp,
            _message(r),
        )
        for r in _of(rows, "moodle")
    ]
    return _csv(lines)


def canvas_gradebook(rows: list[Row], opts: LmsOptions, bundle_id: str) -> str:
    """canvas-gradebook.csv: Canvas's gradebook columns, its Points Possible line, one line per
    Canvas student keyed on the user id (ID)."""
    title = opts.canvas_assignment or bundle_id
    points_row = (CANVAS_POINTS_ROW, "", "", "", "", maximum(rows, opts.points))
    lines: list[tuple[object, ...]] = [(*CANVAS_COLUMNS, title), points_row]
    lines += [(r.record.name, r.record.lms.key, "", "", "", grade(r, opts.points)) for r in _of(rows, "canvas")]
    return _csv(lines)


def gradescope_scores(rows: list[Row], opts: LmsOptions) -> str:
    """gradescope-scores.csv: one line per submitter (a group's members each get the submission's
    grade), with the submission id."""
    top = maximum(rows, opts.points)
    lines: list[tuple[object, ...]] = [GRADESCOPE_COLUMNS]
    for r in _of(rows, "gradescope"):
        ids = r.record.lms
        for i in range(max(len(ids.emails), len(ids.sids), len(ids.names), 1)):
            name, sid, email = (t[i] if i < len(t) else "" for t in (ids.names, ids.sids, ids.emails))
            lines.append((name, sid, email, ids.key, grade(r, opts.points), top))
    return _csv(lines)


def github_classroom_grades(rows: list[Row], opts: LmsOptions) -> str:
    """github-classroom-grades.csv: one line per login, in the columns of Classroom's grades."""
    top = maximum(rows, opts.points)
    lines: list[tuple[object, ...]] = [GITHUB_COLUMNS]
    lines += [(r.record.lms.key, "", "", grade(r, opts.points), top) for r in _of(rows, "github-classroom")]
    return _csv(lines)


def lms_files(rows: list[Row], opts: LmsOptions, bundle_id: str) -> dict[str, str]:
    """file name -> text of every LMS file this class calls for (students of that layout), each
    starting with a UTF-8 BOM so that Excel reads names right."""
    writers: dict[str, tuple[str, Callable[[], str]]] = {
        "moodle": (MOODLE_WORKSHEET, lambda: moodle_worksheet(rows, opts)),
        "canvas": (CANVAS_GRADEBOOK, lambda: canvas_gradebook(rows, opts, bundle_id)),
        "gradescope": (GRADESCOPE_SCORES, lambda: gradescope_scores(rows, opts)),
        "github-classroom": (GITHUB_GRADES, lambda: github_classroom_grades(rows, opts)),
    }
    # A layout whose students are all left out (shared keys) still gets its file, header only, so
    # that an earlier run's file there is not left standing with grades this run did not give.
    held = {r.record.layout for r in rows}
    return {name: BOM + write() for lms, (name, write) in writers.items() if lms in held}
