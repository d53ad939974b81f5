"""summary.md, also printed at the end of a batch: what an instructor reads first.

Verdict counts, the score distribution, the most frequent diagnosed mistakes
("9 students: GELU computed with erf ..."), the slowest submissions, every
student who could not be judged with the reason, similar pairs, and what the
intake refused. Only timings differ between a single run and a merge of
shards over the same inputs.
"""

from __future__ import annotations

from collections import Counter
from statistics import mean, median
from typing import Any

from ..judging.verdict import VERDICT_NAMES, VERDICTS
from .gradebook import Row
from .similarity import Pair, identical_groups

SLOWEST = 5
TOP_MISTAKES = 10


# What a Markdown renderer acts on in one line of text: cell breaks, code, links and images ([ ]),
# raw HTML and autolinks (< >), entity references (&#8238; would render a bidi override).
_MD_ACTIVE = str.maketrans({c: "\\" + c for c in "\\|`[]<>&"})


def _md(text: str) -> str:
    """Text from outside (a file name, a reason) for Markdown (already one clean line): every
    character a renderer would act on is backslash-escaped, so it shows as typed."""
    return str(text).translate(_MD_ACTIVE)


def _plural(n: int, word: str) -> str:
    """ "1 student", "2 students"."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def render_summary(rows: list[Row], pairs: list[Pair], run: dict[str, Any]) -> str:
    """The summary as Markdown: the run's heading, then one section after another."""
    out = [
        *_heading(rows, run),
        *_verdicts(rows),
        *_scores(rows),
        *_mistakes(rows),
        *_slowest(rows),
        *_not_judged(rows, run),
        *_similar(rows, pairs),
        *_intake(run),
    ]
    return "\n".join(out) + "\n"


def _incomplete(rows: list[Row], run: dict[str, Any]) -> bool:
    """Have fewer (or more) students a result than the run (or its shard) found?"""
    expected = run.get("students_in_shard")
    return expected is not None and expected != len(rows)


def _graded_where(mode: str) -> str:
    """How the run graded, from its mode ("local" or "docker:<image>")."""
    return f"in Docker ({mode[len('docker:') :]})" if mode.startswith("docker:") else "locally"


def _heading(rows: list[Row], run: dict[str, Any]) -> list[str]:
    """The bundle, the tests and hidden set, where it was graded, how many students were judged."""
    seed = run.get("secret_seed")
    hidden = f"a hidden set from secret seed {seed}" if seed is not None else "the published hidden set"
    shard = f", shard {run['shard']}" if run.get("shard") else ""
    judged = sum(1 for r in rows if r.judged)
    out = [
        f"# Batch summary: {run.get('bundle_id', '?')} {run.get('bundle_version', '')}",
        "",
        f"Tests: {run.get('tests', 'all')}, {hidden}; graded {_graded_where(run.get('mode', 'local'))}{shard}.",
        f"{_plural(len(rows), 'student')}: {judged} judged, {len(rows) - judged} could not be judged.",
    ]
    if _incomplete(rows, run):
        out.append(
            f"**Incomplete**: {len(rows)} of {run['students_in_shard']} students have a result; run the "
            "same command again to grade the rest."
        )
    return out


def _verdicts(rows: list[Row]) -> list[str]:
    """How many students got each verdict, in the verdicts' own order (none shown for 0)."""
    counts = Counter(r.verdict for r in rows)
    return [
        "",
        "## Verdicts",
        "",
        "| verdict | students |",
        "|---|---:|",
        *(f"| {v} {VERDICT_NAMES[v]} | {counts[v]} |" for v in VERDICTS if counts.get(v)),
    ]


def _scores(rows: list[Row]) -> list[str]:
    """The score distribution: mean, median and range, then students per score, highest first."""
    scores = [r.score for r in rows if isinstance(r.score, (int, float))]
    top = max((r.max_score for r in rows if isinstance(r.max_score, int)), default=0)
    out = ["", f"## Scores (out of {top})", ""]
    if not scores:
        return [*out, "no scores"]
    out.append(f"mean {mean(scores):.1f}, median {median(scores):g}, min {min(scores):g}, max {max(scores):g}")
    out += ["", "| score | students |", "|---:|---:|"]
    out += [f"| {s:g} | {n} |" for s, n in sorted(Counter(scores).items(), reverse=True)]
    return out


def _mistakes(rows: list[Row]) -> list[str]:
    """The TOP_MISTAKES catalogue mistakes diagnosed most often (ties by id), each with how many
    of its students could as well have made another."""
    mistakes: Counter[str] = Counter()
    ambiguous: Counter[str] = Counter()
    titles: dict[str, str] = {}
    for r in rows:
        for mid, title in r.mistakes():
            mistakes[mid] += 1
            ambiguous[mid] += r.mistakes_ambiguous
            titles[mid] = title
    out = ["", "## Most frequent diagnosed mistakes", ""]
    if not mistakes:
        return [*out, "none diagnosed"]
    for mid, n in sorted(mistakes.items(), key=lambda t: (-t[1], t[0]))[:TOP_MISTAKES]:
        also = (
            f" ({ambiguous[mid]} of them: this or another mistake, the tests could not tell)" if ambiguous[mid] else ""
        )
        out.append(f"- {_plural(n, 'student')}: {_md(titles[mid])} (`{mid}`){also}")
    return out


def _slowest(rows: list[Row]) -> list[str]:
    """The SLOWEST students by grading time (ties by id)."""
    slowest = sorted(rows, key=lambda r: (-r.record.seconds, r.student))[:SLOWEST]
    return [
        "",
        "## Slowest submissions",
        "",
        "| student | grading time | verdict |",
        "|---|---:|---|",
        *(f"| {_md(r.student)} | {r.record.seconds:.1f} s | {r.verdict} |" for r in slowest),
    ]


def _not_judged(rows: list[Row], run: dict[str, Any]) -> list[str]:
    """Every student who could not be judged, with the reason, and every input that was refused."""
    failed = [r for r in rows if not r.judged]
    out = ["", "## Could not be judged", ""]
    if failed:
        out += [f"- {_md(r.student)} ({_md(r.record.source)}): {_md(r.reason)}" for r in failed]
    elif _incomplete(rows, run):
        out.append("none so far")
    elif run.get("input_problems"):
        out.append("every student found was judged, but not every input could be read:")
    else:
        out.append("every submission was judged")
    return out + [f"- input refused: {_md(problem)}" for problem in run.get("input_problems", [])]


def _similar(rows: list[Row], pairs: list[Pair]) -> list[str]:
    """Groups of three or more identical submissions, then the similar pairs not inside one group."""
    out = ["", "## Similar submissions", ""]
    if not pairs:
        return [*out, "no pair above the threshold"]
    groups = [g for g in identical_groups({r.student: r.record.fingerprint for r in rows}) if len(g) > 2]
    grouped = {s: i for i, g in enumerate(groups) for s in g}
    shown = [p for p in pairs if p.a not in grouped or grouped.get(p.b) != grouped[p.a]]
    out += [
        "Near-identical after normalising names, literals and layout (see docs/batch.md for what "
        "this does not catch): a reason to look, not a verdict.",
        "",
    ]
    out += [
        f"- {len(g)} students handed in the same code (after normalising): " + ", ".join(_md(s) for s in g)
        for g in groups
    ]
    if groups and shown:
        out.append("")
    if shown:
        out += ["| student | student | similarity | jaccard | containment |", "|---|---|---:|---:|---:|"]
        out += [f"| {_md(p.a)} | {_md(p.b)} | {p.score:.2f} | {p.jaccard:.2f} | {p.containment:.2f} |" for p in shown]
    return out


def _intake(run: dict[str, Any]) -> list[str]:
    """What the intake refused, and the files that are nobody's submission (the first 20 named);
    no section when there is neither."""
    refused, ignored = run.get("refused", []), run.get("ignored", [])
    if not (refused or ignored):
        return []
    out = ["", "## Intake", "", *(f"- refused: {_md(line)}" for line in refused)]
    if ignored:
        named = ", ".join(_md(i) for i in ignored[:20]) + (", ..." if len(ignored) > 20 else "")
        out.append(f"- not a submission ({len(ignored)} ignored): {named}")
    return out
