"""summary.html: the class page, one self-contained file beside summary.md.

The same figures as the summary (summary.py), drawn: the verdicts, the score
distribution as an SVG histogram, the pass rate of each test group, the
diagnosed mistakes by frequency, the slowest submissions, everyone who could
not be judged and why, similar pairs, what the intake refused, and every
student, each linked to feedback/<id>/report.txt. No script, no network:
inline CSS and SVG only, and a Content-Security-Policy that allows nothing
else, so that even an escaping bug could not run script. Every string goes
through html_parts.py's one boundary. Timings are only in the slowest
section and in elements of class "time", so a single run and a merge of
shards write the same page apart from those.
"""

from __future__ import annotations

from statistics import mean, median
from typing import Any

from .gradebook import Row, similar_map
from .html_parts import Markup, el, histogram, join, meter
from .ids import valid_id
from .similarity import Pair
from .summary import (
    incomplete,
    run_lines,
    scores_of,
    shown_verdict,
    similar_shown,
    slowest,
    title_of,
    top_mistakes,
    verdict_counts,
)
from .summary_css import CSS

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
MAX_BARS = 40  # more possible scores than this are binned


def report_link(student: str) -> str | None:
    """The relative link to a student's report, for an id this batch could have made (else none)."""
    return f"feedback/{student}/report.txt" if valid_id(student) else None


def render_page(rows: list[Row], pairs: list[Pair], run: dict[str, Any]) -> str:
    """The class page as one HTML document."""
    body = join(
        _header(rows, run),
        _section("Verdicts", _verdicts(rows)),
        _section("Scores", _scores(rows)),
        _section("Pass rate per test group", _groups(rows, run)),
        _section("Most frequent diagnosed mistakes", _mistakes(rows)),
        _section("Slowest submissions", _slowest(rows), "slowest"),
        _section("Could not be judged", _not_judged(rows, run)),
        _section("Similar submissions", _similar(rows, pairs)),
        _section("Intake", _intake(run)) if run.get("refused") or run.get("ignored") else None,
        _section("All students", _students(rows, pairs), "students"),
    )
    head = el(
        "head",
        None,
        el("meta", {"charset": "utf-8"}),
        el("meta", {"http-equiv": "Content-Security-Policy", "content": CSP}),
        el("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
        el("title", None, title_of(run)),
        el("style", None, Markup(CSS)),
    )
    return "<!DOCTYPE html>\n" + el("html", {"lang": "en"}, head, el("body", None, el("main", None, body))) + "\n"


def _section(title: str, content: Markup, ident: str | None = None) -> Markup:
    return el("section", {"id": ident}, el("h2", None, title), content)


def _table(header: tuple[str, ...], rows: list[list[Markup | str | int | None]], numeric: set[int]) -> Markup:
    """A table; the columns in `numeric` right-aligned."""
    head = el("tr", None, *(el("th", {"class": "num" if i in numeric else None}, h) for i, h in enumerate(header)))
    body = [
        el("tr", None, *(el("td", {"class": "num" if i in numeric else None}, c) for i, c in enumerate(r)))
        for r in rows
    ]
    return el("table", None, el("thead", None, head), el("tbody", None, *body))


def _header(rows: list[Row], run: dict[str, Any]) -> Markup:
    scores, top = scores_of(rows)
    judged = sum(1 for r in rows if r.judged)
    cards = [
        ("students", str(len(rows)), ""),
        ("judged", str(judged), ""),
        ("could not be judged", str(len(rows) - judged), "bad" if judged < len(rows) else ""),
        ("accepted", str(sum(1 for r in rows if r.judged and r.verdict == "AC")), "good"),
        (f"mean score (of {top})", f"{mean(scores):.1f}" if scores else "-", ""),
        ("median score", f"{median(scores):g}" if scores else "-", ""),
    ]
    notice = (
        el(
            "p",
            {"class": "notice"},
            f"Incomplete: {len(rows)} of {run['students_in_shard']} students have a "
            "result; run the same command again to grade the rest.",
        )
        if incomplete(rows, run)
        else None
    )
    return el(
        "header",
        None,
        el("h1", None, title_of(run)),
        *(el("p", {"class": "lede"}, x) for x in run_lines(rows, run)),
        notice,
        el(
            "div",
            {"class": "cards"},
            *(el("div", {"class": f"card {k}".strip()}, el("b", None, v), el("span", None, lb)) for lb, v, k in cards),
        ),
    )


def _verdict_class(code: str) -> str:
    return "ok" if code == "AC" else "wa" if code == "WA" else "nj" if code in ("", "not judged") else "err"


def _badge(verdict: str, label: str | None = None) -> Markup:
    return el("span", {"class": f"badge {_verdict_class(verdict)}"}, label or verdict)


def _verdicts(rows: list[Row]) -> Markup:
    counts = verdict_counts(rows)
    return _table(
        ("verdict", "students", ""),
        [[_badge(c, label), n, meter(n / len(rows), _verdict_class(c))] for c, label, n in counts],
        {1},
    )


def score_bins(rows: list[Row]) -> list[tuple[str, int, str]]:
    """The score distribution: (label, students, kind) for each possible score from 0 to the
    maximum, in bins of several scores when there are more than MAX_BARS."""
    scores, top = scores_of(rows)
    width = -(-(top + 1) // MAX_BARS)
    out = []
    for low in range(0, top + 1, width):
        high = min(low + width - 1, top)
        n = sum(1 for s in scores if low <= s < high + 1)
        kind = "full" if high == top else "zero" if low == 0 else ""
        out.append((str(low) if low == high else f"{low}-{high}", n, kind))
    return out


def _scores(rows: list[Row]) -> Markup:
    scores, top = scores_of(rows)
    if not scores:
        return el("p", None, "no scores")
    stats = (
        f"mean {mean(scores):.1f}, median {median(scores):g}, min {min(scores):g}, max {max(scores):g} (out of {top})"
    )
    chart = histogram(score_bins(rows), f"Score distribution (out of {top})", "score")
    return join(el("p", None, stats), el("figure", None, chart))


def _group_passed(row: Row, group: str) -> bool:
    """Did the student pass every test of `group` (read from the verdict JSON as hostile)?"""
    for g in (row.report or {}).get("groups", []):
        if isinstance(g, dict) and g.get("name") == group:
            passed, total = g.get("passed"), g.get("total")
            return type(passed) is int and type(total) is int and 0 < total == passed
    return False


def _groups(rows: list[Row], run: dict[str, Any]) -> Markup:
    judged = [r for r in rows if r.judged]
    groups = [str(g) for g in run.get("groups", [])]
    if not judged or not groups:
        return el("p", None, "no student was judged")
    lines: list[list[Markup | str | int | None]] = []
    for g in groups:
        n = sum(1 for r in judged if _group_passed(r, g))
        lines.append([g, f"{n} of {len(judged)}", f"{100 * n / len(judged):.0f}%", meter(n / len(judged), "ok")])
    note = el("p", {"class": "note"}, "Students who passed every test of the group, among those judged.")
    return join(note, _table(("group", "passed", "rate", ""), lines, {1, 2}))


def _mistakes(rows: list[Row]) -> Markup:
    ranked = top_mistakes(rows)
    if not ranked:
        return el("p", None, "none diagnosed")
    most = ranked[0][2]
    lines: list[list[Markup | str | int | None]] = [
        [
            join(
                title,
                el("small", None, f"{amb} of them: this or another mistake, the tests could not tell") if amb else None,
            ),
            el("code", None, mid),
            n,
            meter(n / most, "wa"),
        ]
        for mid, title, n, amb in ranked
    ]
    return _table(("mistake", "id", "students", ""), lines, {2})


def _student_cell(student: str) -> Markup:
    href = report_link(student)
    return el("a", {"href": href}, student) if href else el("span", None, student)


def _slowest(rows: list[Row]) -> Markup:
    lines: list[list[Markup | str | int | None]] = [
        [_student_cell(r.student), el("span", {"class": "time"}, f"{r.record.seconds:.1f} s"), _badge(shown_verdict(r))]
        for r in slowest(rows)
    ]
    return _table(("student", "grading time", "verdict"), lines, {1})


def _not_judged(rows: list[Row], run: dict[str, Any]) -> Markup:
    failed = [r for r in rows if not r.judged]
    refused = [el("li", None, f"input refused: {p}") for p in run.get("input_problems", [])]
    if failed:
        table = _table(
            ("student", "source", "why"),
            [[_student_cell(r.student), r.record.source, r.reason] for r in failed],
            set(),
        )
    else:
        table = el("p", None, "none so far" if incomplete(rows, run) else "every submission was judged")
    return join(table, el("ul", None, *refused) if refused else None)


def _similar(rows: list[Row], pairs: list[Pair]) -> Markup:
    if not pairs:
        return el("p", None, "no pair above the threshold")
    groups, shown = similar_shown(rows, pairs)
    note = el(
        "p",
        {"class": "note"},
        "Near-identical after normalising names, literals and layout (see docs/batch.md for what this does "
        "not catch): a reason to look, not a verdict.",
    )
    same = [
        el("li", None, f"{len(g)} students handed in the same code (after normalising): " + ", ".join(g))
        for g in groups
    ]
    lines: list[list[Markup | str | int | None]] = [
        [_student_cell(p.a), _student_cell(p.b), f"{p.score:.2f}", f"{p.jaccard:.2f}", f"{p.containment:.2f}"]
        for p in shown
    ]
    table = _table(("student", "student", "similarity", "jaccard", "containment"), lines, {2, 3, 4}) if lines else None
    return join(note, el("ul", None, *same) if same else None, table)


def _intake(run: dict[str, Any]) -> Markup:
    refused, ignored = run.get("refused", []), run.get("ignored", [])
    items = [el("li", None, f"refused: {x}") for x in refused]
    if ignored:
        named = ", ".join(ignored[:20]) + (", ..." if len(ignored) > 20 else "")
        items.append(el("li", None, f"not a submission ({len(ignored)} ignored): {named}"))
    return el("ul", None, *items)


def _student_rows(row: Row, mates: str) -> Markup:
    """A student's line, and the verdict's summary (or why they could not be judged) below it."""
    score = f"{row.score:g} / {row.max_score}" if row.judged and row.score is not None else ""
    message = (row.report or {}).get("summary", "") if row.judged else row.reason
    cells: list[Markup | str | int | None] = [
        _student_cell(row.student),
        row.record.name,
        _badge(shown_verdict(row)),
        score,
        ", ".join(m for m, _ in row.mistakes()),
        mates,
        el("span", {"class": "time"}, f"{row.record.seconds:.1f} s"),
    ]
    first = el("tr", None, *(el("td", {"class": "num" if i in (3, 6) else None}, c) for i, c in enumerate(cells)))
    return join(first, el("tr", {"class": "message"}, el("td", None), el("td", {"colspan": 6}, message)))


def _students(rows: list[Row], pairs: list[Pair]) -> Markup:
    similar = similar_map(pairs)
    header = ("student", "name", "verdict", "score", "mistakes", "similar to", "time")
    head = el("tr", None, *(el("th", {"class": "num" if i in (3, 6) else None}, h) for i, h in enumerate(header)))
    body = [
        _student_rows(r, ", ".join(s for s, _ in sorted(similar.get(r.student, []), key=lambda t: (-t[1], t[0]))))
        for r in rows
    ]
    return el("div", {"class": "wide"}, el("table", None, el("thead", None, head), el("tbody", None, *body)))
