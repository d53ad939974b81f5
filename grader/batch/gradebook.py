"""The gradebook: one row per student, from DIR/<id>.json and the student's record.

grades.csv is built only from what is on disk (the verdict JSON and the
record in DIR/.batch/), so a single run and a merge of shards over the same
inputs write the same file. Every cell is one line (no raw newline, tab or
control character), and text cells that a spreadsheet would run as a formula
(starting with = + - @) are prefixed with an apostrophe.

A verdict JSON is read back as hostile (see state.py): one whose fields the
gradebook reads have the wrong shape (a verdict that is not one of ours, a
score outside 0..max_score, groups or a diagnosis of the wrong type) counts
as damaged, so its student is "could not be judged", never a crash.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from ..feedback.mistakes import feedback_data
from ..judging.verdict import VERDICTS
from ..problem.bundle import Bundle
from .ids import clean_text
from .similarity import Pair
from .state import StudentRecord, read_json

FIXED = ("student", "name", "source", "layout", "late", "verdict", "score", "max_score")
TAIL = ("mistakes", "similar_to", "similarity", "sha256", "grading_s", "judged", "message")


@dataclass(frozen=True)
class Row:
    """One student's line of the gradebook: the record, and the verdict JSON it points to."""

    record: StudentRecord
    report: dict[str, Any] | None  # the verdict JSON, None if it is missing or damaged
    titles: Mapping[str, str] = field(default_factory=dict)  # the bundle's mistakes: id -> title

    @property
    def student(self) -> str:
        return self.record.student

    @property
    def verdict(self) -> str:
        """The verdict JSON's. Without one: CE for a student the batch could not judge (as for a
        missing file; a folder or link where DIR/<id>.json belongs is not the grader's fault),
        JE for a verdict JSON that went missing or was damaged after it was written."""
        if self.report:
            return str(self.report.get("verdict", "JE"))
        return "CE" if not self.record.judged else "JE"

    @property
    def score(self) -> int | None:
        return self.report.get("score") if self.report else None

    @property
    def max_score(self) -> int | None:
        return self.report.get("max_score") if self.report else None

    @property
    def judged(self) -> bool:
        return self.record.judged and self.report is not None

    @property
    def reason(self) -> str:
        if not self.record.judged and self.record.reason:
            return self.record.reason
        if self.report is None:
            return "the verdict JSON is missing or damaged"
        return self.record.reason

    def group_score(self, group: str) -> int | None:
        for g in (self.report or {}).get("groups", []):
            if g.get("name") == group:
                score: int | None = g.get("score")  # report_shape_ok checked it is a count
                return score
        return None

    def mistakes(self) -> list[tuple[str, str]]:
        """(id, title) of the catalogue mistakes the diagnosis matched (one, or several when ambiguous)."""
        fp = ((self.report or {}).get("diagnosis") or {}).get("fingerprint") or {}
        if fp.get("status") not in ("match", "ambiguous"):
            return []
        # The title is the catalogue's, not the file's: report_shape_ok checked the id is one of ours.
        return [(m["id"], self.titles[m["id"]]) for m in fp.get("mistakes", [])]

    @property
    def mistakes_ambiguous(self) -> bool:
        """Several catalogue mistakes fit and the tests run could not tell them apart."""
        fp = ((self.report or {}).get("diagnosis") or {}).get("fingerprint") or {}
        return fp.get("status") == "ambiguous"


def _count(value: object) -> TypeGuard[int]:
    """A whole number of 0 or more (a score, a count), and not a bool."""
    return type(value) is int and value >= 0


def mistake_titles(bundle: Bundle) -> dict[str, str]:
    """The bundle's catalogue of mistakes, id -> title: the only ids a verdict JSON may name."""
    return {mid: m.title for mid, m in feedback_data(bundle).catalogue.items()}


def report_shape_ok(report: object, mistake_ids: Collection[str]) -> TypeGuard[dict[str, Any]]:
    """Has this verdict JSON the shape of one `grade` writes, in every field the gradebook reads
    (a mistake it names among `mistake_ids`, the bundle's)?"""
    if not isinstance(report, dict) or report.get("verdict") not in VERDICTS:
        return False
    score, top = report.get("score"), report.get("max_score")
    if not (_count(score) and _count(top) and score <= top) or type(report.get("summary", "")) is not str:
        return False
    groups = report.get("groups", [])
    if type(groups) is not list or not all(
        isinstance(g, dict) and type(g.get("name")) is str and _count(g.get("score")) for g in groups
    ):
        return False
    diagnosis = report.get("diagnosis")
    if diagnosis is None:
        return True
    fp = diagnosis.get("fingerprint") if isinstance(diagnosis, dict) else ()
    if fp is None:
        return True
    mistakes = fp.get("mistakes", []) if isinstance(fp, dict) else None
    return type(mistakes) is list and all(isinstance(m, dict) and m.get("id") in mistake_ids for m in mistakes)


def load_report(out: Path, student: str, mistake_ids: Collection[str]) -> dict[str, Any] | None:
    """DIR/<id>.json, or None if it is missing, not a regular file, or not of the right shape."""
    report = read_json(out / f"{student}.json", out)
    return report if report_shape_ok(report, mistake_ids) else None


def load_rows(out: Path, records: list[StudentRecord], titles: Mapping[str, str]) -> list[Row]:
    """The gradebook's rows, by id: each record with its verdict JSON read back from DIR
    (`titles`: mistake_titles of the bundle)."""
    return [Row(rec, load_report(out, rec.student, titles), titles) for rec in sorted(records, key=lambda r: r.student)]


def cell(value: object) -> str:
    """One CSV cell: one line, never a formula."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return f"{value:g}" if isinstance(value, float) else str(value)
    text = clean_text(str(value), 1000)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def similar_map(pairs: list[Pair]) -> dict[str, list[tuple[str, float]]]:
    out: dict[str, list[tuple[str, float]]] = {}
    for p in pairs:
        out.setdefault(p.a, []).append((p.b, p.score))
        out.setdefault(p.b, []).append((p.a, p.score))
    return out


def csv_text(rows: list[Row], groups: list[str], pairs: list[Pair]) -> str:
    """grades.csv: a header and one row per student, sorted by id."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*FIXED, *(f"points_{g}" for g in groups), *TAIL])
    similar = similar_map(pairs)
    for r in rows:
        rec = r.record
        mates = sorted(similar.get(r.student, []), key=lambda t: (-t[1], t[0]))
        message = r.reason if not r.judged else (r.report or {}).get("summary", "")
        w.writerow(
            [
                cell(v)
                for v in (
                    r.student,
                    rec.name,
                    rec.source,
                    rec.layout,
                    rec.late,
                    r.verdict,
                    r.score,
                    r.max_score,
                    *(r.group_score(g) for g in groups),
                    ";".join(m for m, _ in r.mistakes()),
                    ";".join(m for m, _ in mates),
                    max((s for _, s in mates), default=None),
                    rec.sha256,
                    round(rec.seconds, 2),
                    r.judged,
                    message,
                )
            ]
        )
    return buf.getvalue()
