"""summary.md, also printed at the end of a batch: what an instructor reads first.

Verdict counts (a student who could not be judged is counted as that, never
under a verdict), the score distribution, the most frequent diagnosed
mistakes ("9 students: GELU computed with erf ..."), the slowest submissions,
every student who could not be judged with the reason, similar pairs, and
what the intake refused. Only timings differ between a single run and a
merge of shards over the same inputs. The summary is a list of blocks
(summary_doc.py) rendered as Markdown for the file and as wrapped plain text
for the terminal; the figures are also what the class page (summary_html.py)
shows.
"""

from __future__ import annotations

from collections import Counter
from statistics import mean, median
from typing import Any

from ..judging.verdict import VERDICT_NAMES, VERDICTS
from .gradebook import Row
from .similarity import Pair, identical_groups
from .summary_doc import Block, Bullets, Heading, Line, Lines, Span, Table, line, markdown, plain_text

SLOWEST = 5
TOP_MISTAKES = 10
NOT_JUDGED = "could not be judged"


def plural(n: int, word: str) -> str:
    """ "1 student", "2 students"."""
    return f"{n} {word}{'' if n == 1 else 's'}"


# --- the figures (also the class page's) -----------------------------------------------------


def shown_verdict(row: Row) -> str:
    """The verdict a row is counted under: its verdict JSON's, or "not judged"."""
    return row.verdict if row.judged else "not judged"


def verdict_counts(rows: list[Row]) -> list[tuple[str, str, int]]:
    """(code, label, students) for each verdict given, in the verdicts' own order, then those who
    could not be judged (code ""): an unjudged student is never counted under CE."""
    counts = Counter(r.verdict for r in rows if r.judged)
    out = [(v, f"{v} {VERDICT_NAMES[v]}", counts[v]) for v in VERDICTS if counts.get(v)]
    failed = sum(1 for r in rows if not r.judged)
    return out + ([("", NOT_JUDGED, failed)] if failed else [])


def scores_of(rows: list[Row]) -> tuple[list[int], int]:
    """Every score given, and the maximum score (0 when no row has one)."""
    scores = [r.score for r in rows if isinstance(r.score, int)]
    top = max((r.max_score for r in rows if isinstance(r.max_score, int)), default=0)
    return scores, top


def top_mistakes(rows: list[Row]) -> list[tuple[str, str, int, int]]:
    """(id, title, students, of whom ambiguous) of the TOP_MISTAKES catalogue mistakes diagnosed
    most often (ties by id)."""
    mistakes: Counter[str] = Counter()
    ambiguous: Counter[str] = Counter()
    titles: dict[str, str] = {}
    for r in rows:
        for mid, title in r.mistakes():
            mistakes[mid] += 1
            ambiguous[mid] += r.mistakes_ambiguous
            titles[mid] = title
    ranked = sorted(mistakes.items(), key=lambda t: (-t[1], t[0]))[:TOP_MISTAKES]
    return [(mid, titles[mid], n, ambiguous[mid]) for mid, n in ranked]


def slowest(rows: list[Row]) -> list[Row]:
    """The SLOWEST students by grading time (ties by id)."""
    return sorted(rows, key=lambda r: (-r.record.seconds, r.student))[:SLOWEST]


def similar_shown(rows: list[Row], pairs: list[Pair]) -> tuple[list[list[str]], list[Pair]]:
    """Groups of three or more identical submissions, and the similar pairs not inside one group."""
    groups = [g for g in identical_groups({r.student: r.record.fingerprint for r in rows}) if len(g) > 2]
    grouped = {s: i for i, g in enumerate(groups) for s in g}
    return groups, [p for p in pairs if p.a not in grouped or grouped.get(p.b) != grouped[p.a]]


def incomplete(rows: list[Row], run: dict[str, Any]) -> bool:
    """Have fewer (or more) students a result than the run (or its shard) found?"""
    expected = run.get("students_in_shard")
    return expected is not None and expected != len(rows)


def run_lines(rows: list[Row], run: dict[str, Any]) -> list[str]:
    """The tests and hidden set, where it was graded, how many students were judged."""
    seed = run.get("secret_seed")
    hidden = f"a hidden set from secret seed {seed}" if seed is not None else "the published hidden set"
    shard = f", shard {run['shard']}" if run.get("shard") else ""
    mode = str(run.get("mode", "local"))
    where = f"in Docker ({mode[len('docker:') :]})" if mode.startswith("docker:") else "locally"
    judged = sum(1 for r in rows if r.judged)
    return [
        f"Tests: {run.get('tests', 'all')}, {hidden}; graded {where}{shard}.",
        f"{plural(len(rows), 'student')}: {judged} judged, {len(rows) - judged} {NOT_JUDGED}.",
    ]


def title_of(run: dict[str, Any]) -> str:
    return f"Batch summary: {run.get('bundle_id', '?')} {run.get('bundle_version', '')}"


# --- the summary's blocks ------------------------------------------------------------------


def summary_blocks(rows: list[Row], pairs: list[Pair], run: dict[str, Any]) -> list[Block]:
    """The summary: the run's heading, then one section after another."""
    return [
        *_heading(rows, run),
        *_verdicts(rows),
        *_scores(rows),
        *_mistakes(rows),
        *_slowest(rows),
        *_not_judged(rows, run),
        *_similar(rows, pairs),
        *_intake(run),
    ]


def render_summary(rows: list[Row], pairs: list[Pair], run: dict[str, Any]) -> str:
    """The summary as Markdown (summary.md)."""
    return markdown(summary_blocks(rows, pairs, run))


def summary_text(blocks: list[Block], width: int) -> str:
    """The summary as plain text wrapped to `width` columns (the terminal's)."""
    return plain_text(blocks, width)


def _heading(rows: list[Row], run: dict[str, Any]) -> list[Block]:
    lines: list[Line] = [line(t) for t in run_lines(rows, run)]
    if incomplete(rows, run):
        lines.append(
            line(
                Span("Incomplete", "strong"),
                f": {len(rows)} of {run['students_in_shard']} students have a result; run the "
                "same command again to grade the rest.",
            )
        )
    return [Heading(1, title_of(run)), Lines(tuple(lines))]


def _verdicts(rows: list[Row]) -> list[Block]:
    counts = tuple((label, str(n)) for _, label, n in verdict_counts(rows))
    return [Heading(2, "Verdicts"), Table(("verdict", "students"), (False, True), counts)]


def _scores(rows: list[Row]) -> list[Block]:
    """Mean, median and range, then students per score, highest first."""
    scores, top = scores_of(rows)
    out: list[Block] = [Heading(2, f"Scores (out of {top})")]
    if not scores:
        return [*out, Lines((line("no scores"),))]
    stats = f"mean {mean(scores):.1f}, median {median(scores):g}, min {min(scores):g}, max {max(scores):g}"
    per_score = tuple((f"{s:g}", str(n)) for s, n in sorted(Counter(scores).items(), reverse=True))
    return [*out, Lines((line(stats),)), Table(("score", "students"), (True, True), per_score)]


def _mistakes(rows: list[Row]) -> list[Block]:
    """Each mistake with how many of its students could as well have made another."""
    out: list[Block] = [Heading(2, "Most frequent diagnosed mistakes")]
    ranked = top_mistakes(rows)
    if not ranked:
        return [*out, Lines((line("none diagnosed"),))]
    items = tuple(
        line(
            f"{plural(n, 'student')}: {title} (",
            Span(mid, "code"),
            ")" + (f" ({ambiguous} of them: this or another mistake, the tests could not tell)" if ambiguous else ""),
        )
        for mid, title, n, ambiguous in ranked
    )
    return [*out, Bullets(items)]


def _slowest(rows: list[Row]) -> list[Block]:
    table = tuple((r.student, f"{r.record.seconds:.1f} s", shown_verdict(r)) for r in slowest(rows))
    return [
        Heading(2, "Slowest submissions"),
        Table(("student", "grading time", "verdict"), (False, True, False), table),
    ]


def _not_judged(rows: list[Row], run: dict[str, Any]) -> list[Block]:
    """Every student who could not be judged, with the reason, and every input that was refused."""
    failed = tuple(line(f"{r.student} ({r.record.source}): {r.reason}") for r in rows if not r.judged)
    refused = tuple(line(f"input refused: {problem}") for problem in run.get("input_problems", []))
    out: list[Block] = [Heading(2, "Could not be judged")]
    if failed:
        return [*out, Bullets(failed + refused)]
    if incomplete(rows, run):
        out.append(Lines((line("none so far"),)))
    elif refused:
        out.append(Lines((line("every student found was judged, but not every input could be read:"),)))
    else:
        out.append(Lines((line("every submission was judged"),)))
    return out + ([Bullets(refused)] if refused else [])


def _similar(rows: list[Row], pairs: list[Pair]) -> list[Block]:
    out: list[Block] = [Heading(2, "Similar submissions")]
    if not pairs:
        return [*out, Lines((line("no pair above the threshold"),))]
    groups, shown = similar_shown(rows, pairs)
    out.append(
        Lines(
            (
                line(
                    "Near-identical after normalising names, literals and layout (see docs/batch.md for what "
                    "this does not catch): a reason to look, not a verdict."
                ),
            )
        )
    )
    if groups:
        out.append(
            Bullets(
                tuple(
                    line(f"{len(g)} students handed in the same code (after normalising): " + ", ".join(g))
                    for g in groups
                )
            )
        )
    if shown:
        cells = tuple((p.a, p.b, f"{p.score:.2f}", f"{p.jaccard:.2f}", f"{p.containment:.2f}") for p in shown)
        header = ("student", "student", "similarity", "jaccard", "containment")
        out.append(Table(header, (False, False, True, True, True), cells))
    return out


def _intake(run: dict[str, Any]) -> list[Block]:
    """What the intake refused, and the files that are nobody's submission (the first 20 named);
    no section when there is neither."""
    refused, ignored = run.get("refused", []), run.get("ignored", [])
    if not (refused or ignored):
        return []
    items = [line(f"refused: {x}") for x in refused]
    if ignored:
        named = ", ".join(ignored[:20]) + (", ..." if len(ignored) > 20 else "")
        items.append(line(f"not a submission ({len(ignored)} ignored): {named}"))
    return [Heading(2, "Intake"), Bullets(tuple(items))]
