"""Writing grades.csv and summary.md from what is in DIR (used by a run and by a merge)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .outputs import Row, csv_text, load_rows
from .similarity import Pair, similar_pairs
from .state import StudentRecord, atomic_write
from .summary import render_summary


@dataclass(frozen=True)
class Outputs:
    rows: list[Row]
    pairs: list[Pair]
    summary: str


def write_outputs(out: Path, run: dict, records: list[StudentRecord]) -> Outputs:
    """grades.csv and summary.md in `out` for these students (similarity across all of them)."""
    rows = load_rows(out, records)
    pairs = similar_pairs({r.student: r.record.fingerprint for r in rows})
    summary = render_summary(rows, pairs, run)
    atomic_write(out / "grades.csv", csv_text(rows, list(run.get("groups", [])), pairs))
    atomic_write(out / "summary.md", summary)
    return Outputs(rows, pairs, summary)
