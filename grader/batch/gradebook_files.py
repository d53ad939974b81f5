"""Writing grades.csv, summary.md and summary.html from what is in DIR (used by a run and by a merge).

Each is written on its own: one that cannot be (a folder or a link put where
it belongs, writes.py) is named in Outputs.problems and the other is still
written; the command then exits 1 and says which.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..problem.bundle import Bundle
from .feedback_files import write_feedback
from .gradebook import Row, csv_text, load_rows
from .similarity import Pair, similar_pairs
from .state import StudentRecord
from .summary import render_summary, summary_blocks
from .summary_doc import Block
from .summary_html import render_page
from .writes import OutputError, atomic_write


@dataclass(frozen=True)
class Outputs:
    """What writing the gradebook files made: the rows and pairs they show, the summary's text."""

    rows: list[Row]
    pairs: list[Pair]
    summary: str
    problems: tuple[str, ...] = ()  # run-level files that could not be written
    blocks: list[Block] = field(default_factory=list)  # the summary, for the terminal (summary_doc.py)


def write_outputs(
    out: Path,
    run: dict[str, Any],
    records: list[StudentRecord],
    titles: Mapping[str, str],
    bundle: Bundle | None = None,
) -> Outputs:
    """grades.csv, summary.md and summary.html in `out` for these students (similarity across all of them;
    `titles`: the bundle's mistakes, gradebook.mistake_titles), and their feedback (`bundle`: the
    one graded with, feedback_files.write_feedback)."""
    rows = load_rows(out, records, titles)
    pairs = similar_pairs({r.student: r.record.fingerprint for r in rows})
    summary = render_summary(rows, pairs, run)
    problems = []
    pages = (("summary.md", summary), ("summary.html", render_page(rows, pairs, run)))
    for name, text in (("grades.csv", csv_text(rows, list(run.get("groups", [])), pairs)), *pages):
        try:
            atomic_write(out / name, text)
        except OutputError as exc:
            problems.append(str(exc))
    problems += write_feedback(out, rows, bundle)  # DIR/feedback/, DIR/moodle-feedback.zip (feedback_files.py)
    return Outputs(rows, pairs, summary, tuple(problems), summary_blocks(rows, pairs, run))
