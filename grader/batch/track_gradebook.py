"""DIR/grades.csv and DIR/summary.md of `batch --track`: one row per student, a column per step.

Every cell is taken from the step's own gradebook row (DIR/<step>/grades.csv's, read back from
DIR/<step>/<id>.json by gradebook.load_rows), so it is what `grade` says of that file. A student
who handed in nothing for a step has empty cells for it; one who could not be judged for a step
has the cells of that step's grades.csv (CE, 0, judged `no`), and the reason in `message`. The
total adds the scores of the steps handed in, and is empty when a step handed in could not be
judged (the grader's failure is not the student's zero). Cells go through gradebook.cell (one line, never a
formula); the file is UTF-8 with a BOM, like DIR/<step>/grades.csv.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from .gradebook import Row, cell
from .lms_files import BOM
from .summary_doc import Block, Bullets, Heading, Lines, Table, line, markdown
from .track_class import ClassStep, ClassStudent, Intake, StepRun
from .writes import OutputError, atomic_write


def step_max(step: ClassStep, tests: str) -> int:
    """The step's maximum score for the tests run (`--tests sample|all`)."""
    groups = set(step.bundle.group_names(tests))
    return sum(g.points for g in step.bundle.spec.groups if g.name in groups)


def _rows(runs: Sequence[StepRun]) -> dict[str, dict[str, Row]]:
    """step name -> student -> that step's gradebook row."""
    return {r.step.name: {row.student: row for row in r.result.outputs.rows} for r in runs}


def header(steps: Sequence[ClassStep]) -> list[str]:
    """grades.csv's columns: the ids, a score per step, a verdict per step, then the totals."""
    scores = [f"{s.label} score" for s in steps]
    verdicts = [f"{s.label} verdict" for s in steps]
    return ["student", "name", "layout", *scores, *verdicts, "total", "max_total", "judged", "message"]


def _student_line(
    student: ClassStudent, steps: Sequence[ClassStep], rows: dict[str, dict[str, Row]], top: int
) -> list[str]:
    mine = [rows.get(s.name, {}).get(student.entry.student) for s in steps]
    handed = [(s, r) for s, r in zip(steps, mine, strict=True) if r is not None]
    failed = [f"{s.label}: {r.reason}" for s, r in handed if not r.judged]
    judged = bool(handed) and not failed
    total = sum(r.score or 0 for _, r in handed) if judged else None
    message = student.nothing or "; ".join(failed)
    e = student.entry
    values: list[object] = [e.student, e.name, e.layout]
    values += [r.score if r is not None else None for r in mine]
    values += [r.verdict if r is not None else None for r in mine]
    values += [total, top, judged, message]
    return [cell(v) for v in values]


def track_csv(steps: Sequence[ClassStep], runs: Sequence[StepRun], students: Sequence[ClassStudent], tests: str) -> str:
    """DIR/grades.csv's text (without the BOM): a header and one line per student, by id."""
    rows, top = _rows(runs), sum(step_max(s, tests) for s in steps)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header(steps))
    for s in sorted(students, key=lambda s: s.entry.student):
        w.writerow(_student_line(s, steps, rows, top))
    return buf.getvalue()


def _step_table(steps: Sequence[ClassStep], runs: Sequence[StepRun], students: int) -> Table:
    rows = _rows(runs)
    out: list[tuple[str, ...]] = []
    for s in steps:
        if s.name not in rows:
            out.append((s.label, s.title, "-", "-", "-", "-", "not graded (interrupted)"))
            continue
        got = list(rows[s.name].values())
        judged = [r for r in got if r.judged]
        ac = sum(1 for r in judged if r.verdict == "AC")
        counts = (len(got), ac, len(judged) - ac, len(got) - len(judged), students - len(got))
        out.append((s.label, s.title, *map(str, counts)))
    head = ("step", "title", "handed in", "AC", "other verdicts", "could not be judged", "not submitted")
    return Table(head, (False, False, True, True, True, True, True), tuple(out))


def summary_blocks(
    steps: Sequence[ClassStep],
    runs: Sequence[StepRun],
    students: Sequence[ClassStudent],
    intake: Intake,
    left_out: Sequence[str],
) -> list[Block]:
    """The track's summary: counts per step, then whoever and whatever needs a look."""
    nothing = sorted((s.entry.student, s.nothing) for s in students if s.nothing)
    blocks: list[Block] = [
        Heading(1, "The class over the track"),
        Lines((line(f"{len(students)} students, {len(steps)} steps; {len(nothing)} handed in nothing for any step."),)),
        _step_table(steps, runs, len(students)),
    ]
    sections: list[tuple[str, list[str]]] = [
        ("Steps not in this copy (not graded)", list(left_out)),
        ("Handed in nothing for any step", [f"{sid}: {why}" for sid, why in nothing]),
        (
            "Could not be judged for a step",
            [
                f"{r.step.label}: {row.student}: {row.reason}"
                for r in runs
                for row in r.result.outputs.rows
                if not row.judged
            ],
        ),
        ("Inputs refused", list(intake.problems)),
        ("Entries refused", list(intake.refused)),
        ("Ignored (nobody's submission)", list(intake.ignored)),
    ]
    for title, items in sections:
        if items:
            blocks += [Heading(2, title), Bullets(tuple(line(i) for i in items))]
    return blocks


def _unjudged(run: StepRun) -> list[Row]:
    return [row for row in run.result.outputs.rows if not row.judged]


def _links(steps: Sequence[ClassStep]) -> str:
    """The Markdown links to each step's summary: step names are slugs (track_batch checks), so
    they go into a link as they are."""
    items = [f"- [{s.label}]({s.name}/summary.md)" for s in steps]
    return "\n## Each step's own summary\n\n" + "\n".join(items) + "\n"


def write_track_outputs(
    out: Path,
    steps: Sequence[ClassStep],
    runs: Sequence[StepRun],
    students: Sequence[ClassStudent],
    intake: Intake,
    left_out: Sequence[str],
    tests: str,
) -> tuple[list[str], list[Block]]:
    """Write DIR/grades.csv and DIR/summary.md; (what could not be written, the summary's blocks for
    the terminal: each step's summary named by its path rather than linked)."""
    blocks = summary_blocks(steps, runs, students, intake, left_out)
    files = {
        "grades.csv": BOM + track_csv(steps, runs, students, tests),
        "summary.md": markdown(blocks) + _links(steps),
    }
    problems = []
    for name, text in files.items():
        try:
            atomic_write(out / name, text)
        except OutputError as exc:
            problems.append(str(exc))
    paths = Lines(tuple(line(f"{s.label}: {out / s.name / 'summary.md'}") for s in steps))
    return problems, [*blocks, Heading(2, "Each step's own summary"), paths]
