"""Feedback back out: each student's report, as `grade` prints it, in DIR/feedback/<id>/, and
the Moodle students' in DIR/moodle-feedback.zip (moodle_feedback.py).

For a judged student, report.txt is report/text_report.py's `render_text` (no colour, 80
columns, not verbose, the advice naming `python -m grader` and the file's own name) and
report.json `render_json`, both of the GradeReport read back from DIR/<id>.json
(report_read.py): the same renderer as `grade`, fed from what the batch wrote, so a run, a
resumed run and a merge of shards write the same feedback for the same verdict JSON, and
nothing a student could not see from `grade` (hidden tests keep to judging/hidden.py's
channel, which the verdict JSON already obeys). For a student who could not be judged,
report.txt says so and why (the record's reason), and there is no report.json.

Every file is written by writes.py's `atomic_write`; DIR/feedback and each student's folder
must be real folders (created if absent): a symbolic link, file or special file where one
belongs was not made by batch, is neither replaced nor written through, and is a problem
named in the outputs (exit 1), like any other run-level file.
"""

from __future__ import annotations

import os
import stat
import textwrap
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from ..problem.bundle import Bundle
from ..problem.safe_write import kind_of
from ..problem.spec import Group
from ..report.json_report import render_json
from ..report.text_report import render_text
from .gradebook import Row
from .ids import clean_text
from .moodle_feedback import ZIP_NAME, MoodleFeedback, participant_folder, zip_bytes
from .report_read import read_report
from .writes import OutputError, atomic_write

FEEDBACK_DIR = "feedback"
TEXT, JSON = "report.txt", "report.json"
WIDTH = 80  # `grade`'s width when its output is not a terminal


def not_judged_text(reason: str) -> str:
    """report.txt of a student who could not be judged: that, and why."""
    lines = ["Not judged: your submission could not be graded, so it has no score.", ""]
    lines += textwrap.wrap(f"Why: {clean_text(reason, 1000)}", WIDTH, subsequent_indent="  ")
    lines += ["", "Next: hand in again as the reason above says, or ask your instructor."]
    return "\n".join(lines) + "\n"


def student_files(row: Row, groups: Mapping[str, Group]) -> dict[str, str]:
    """A student's feedback files, name -> text: report.txt and, when judged, report.json. The
    hidden set's secret seed is the instructor's: with it, a student could draw the inputs of the
    hidden tests they were judged on, so a student's copy says only that a secret set was used
    (`hidden_set`), with `secret_seed` null."""
    report = read_report(row.report, groups) if row.judged else None
    if report is None:
        return {TEXT: not_judged_text(row.reason if not row.judged else "the verdict JSON is damaged")}
    report = replace(report, secret_seed=None)
    try:
        text = render_text(report, colour=False, width=WIDTH, verbose=False)
    except (KeyError, TypeError, IndexError, ValueError, AttributeError):  # a diagnosis of the wrong shape
        return {TEXT: not_judged_text("the verdict JSON is damaged")}
    return {TEXT: text, JSON: render_json(report)}


def _folder_problem(folder: Path) -> str | None:
    """Make `folder` if absent; why it cannot be written into (not a real folder), or None."""
    try:
        os.mkdir(folder, 0o755)
    except FileExistsError:
        pass
    except OSError as exc:
        return f"{folder}: cannot be created ({exc.strerror or exc})"
    try:
        mode = os.lstat(folder).st_mode
    except OSError as exc:
        return f"{folder}: cannot be examined ({exc.strerror or exc})"
    if stat.S_ISDIR(mode):
        return None
    return (
        f"{folder} is {kind_of(mode)} where batch makes a folder: not replaced or written through, "
        "since batch did not make it; move it away and run again"
    )


def _write_student(folder: Path, files: Mapping[str, str]) -> list[str]:
    problem = _folder_problem(folder)
    if problem:
        return [problem]
    problems = []
    for name in (TEXT, JSON):
        try:
            if name in files:
                atomic_write(folder / name, files[name])
            elif os.path.lexists(folder / name) and stat.S_ISREG(os.lstat(folder / name).st_mode):
                os.unlink(folder / name)  # an earlier run's verdict, no longer this student's
        except (OutputError, OSError) as exc:
            problems.append(str(exc))
    return problems


def write_feedback(out: Path, rows: list[Row], bundle: Bundle | None) -> list[str]:
    """DIR/feedback/<id>/ for every row and, when any student is Moodle's, DIR/moodle-feedback.zip;
    what could not be written (each one line naming the path). `bundle`: the one graded with, for
    the groups' descriptions (None: the report shows the group names instead)."""
    groups = {g.name: g for g in bundle.spec.groups} if bundle else _groups_named(rows)
    problems: list[str] = []
    moodle: list[MoodleFeedback] = []
    top = _folder_problem(out / FEEDBACK_DIR)
    if top:
        problems.append(top)
    for row in rows:
        files = student_files(row, groups)
        if not top:
            problems += _write_student(out / FEEDBACK_DIR / row.student, files)
        folder = participant_folder(row.record)
        if folder:
            moodle.append(MoodleFeedback(row.student, folder, files))
        elif row.record.layout == "moodle":
            problems.append(
                f"{out / ZIP_NAME}: no Moodle participant folder in {row.student}'s source "
                f"({row.record.source!r}): their feedback is only in {out / FEEDBACK_DIR / row.student}"
            )
    if moodle:
        data, left_out = zip_bytes(moodle)
        problems += left_out
        try:
            atomic_write(out / ZIP_NAME, data)
        except OutputError as exc:
            problems.append(str(exc))
    return problems


def _groups_named(rows: list[Row]) -> dict[str, Group]:
    """Groups known only by the names the verdicts give (no bundle: no descriptions)."""
    names = {g.get("name") for r in rows for g in (r.report or {}).get("groups", []) if isinstance(g, dict)}
    return {n: Group(n, True, 0, "", ()) for n in names if isinstance(n, str)}
