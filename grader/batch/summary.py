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

from ..judging.verdict import VERDICTS, VERDICT_NAMES
from .outputs import Row
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
    return f"{n} {word}{'' if n == 1 else 's'}"


def render_summary(rows: list[Row], pairs: list[Pair], run: dict) -> str:
    """The summary as Markdown."""
    out = [f"# Batch summary: {run.get('bundle_id', '?')} {run.get('bundle_version', '')}", ""]
    seed = run.get("secret_seed")
    hidden = f"a hidden set from secret seed {seed}" if seed is not None else "the published hidden set"
    mode = run.get("mode", "local")
    shard = f", shard {run['shard']}" if run.get("shard") else ""
    out.append(f"Tests: {run.get('tests', 'all')}, {hidden}; graded {'in Docker (' + mode[7:] + ')' if mode.startswith('docker:') else 'locally'}{shard}.")
    judged = [r for r in rows if r.judged]
    failed = [r for r in rows if not r.judged]
    out.append(f"{_plural(len(rows), 'student')}: {len(judged)} judged, {len(failed)} could not be judged.")
    expected = run.get("students_in_shard")
    if expected is not None and expected != len(rows):
        out.append(f"**Incomplete**: {len(rows)} of {expected} students have a result; run the same command "
                   "again to grade the rest.")
    out += ["", "## Verdicts", "", "| verdict | students |", "|---|---:|"]
    counts = Counter(r.verdict for r in rows)
    for v in VERDICTS:
        if counts.get(v):
            out.append(f"| {v} {VERDICT_NAMES[v]} | {counts[v]} |")
    scores = [r.score for r in rows if isinstance(r.score, (int, float))]
    top = max((r.max_score for r in rows if isinstance(r.max_score, int)), default=0)
    out += ["", f"## Scores (out of {top})", ""]
    if scores:
        out.append(f"mean {mean(scores):.1f}, median {median(scores):g}, min {min(scores):g}, max {max(scores):g}")
        out += ["", "| score | students |", "|---:|---:|"]
        for s, n in sorted(Counter(scores).items(), reverse=True):
            out.append(f"| {s:g} | {n} |")
    else:
        out.append("no scores")
    out += ["", "## Most frequent diagnosed mistakes", ""]
    mistakes: Counter = Counter()
    ambiguous: Counter = Counter()
    titles = {}
    for r in rows:
        for mid, title in r.mistakes():
            mistakes[mid] += 1
            ambiguous[mid] += r.mistakes_ambiguous
            titles[mid] = title
    if mistakes:
        for mid, n in sorted(mistakes.items(), key=lambda t: (-t[1], t[0]))[:TOP_MISTAKES]:
            also = f" ({ambiguous[mid]} of them: this or another mistake, the tests could not tell)" \
                if ambiguous[mid] else ""
            out.append(f"- {_plural(n, 'student')}: {_md(titles[mid])} (`{mid}`){also}")
    else:
        out.append("none diagnosed")
    out += ["", "## Slowest submissions", "", "| student | grading time | verdict |", "|---|---:|---|"]
    for r in sorted(rows, key=lambda r: (-r.record.seconds, r.student))[:SLOWEST]:
        out.append(f"| {_md(r.student)} | {r.record.seconds:.1f} s | {r.verdict} |")
    out += ["", "## Could not be judged", ""]
    if failed:
        for r in failed:
            out.append(f"- {_md(r.student)} ({_md(r.record.source)}): {_md(r.reason)}")
    elif expected is not None and expected != len(rows):
        out.append("none so far")
    elif run.get("input_problems"):
        out.append("every student found was judged, but not every input could be read:")
    else:
        out.append("every submission was judged")
    for problem in run.get("input_problems", []):
        out.append(f"- input refused: {_md(problem)}")
    out += ["", "## Similar submissions", ""]
    groups = [g for g in identical_groups({r.student: r.record.fingerprint for r in rows}) if len(g) > 2]
    grouped = {s: i for i, g in enumerate(groups) for s in g}
    shown = [p for p in pairs if p.a not in grouped or grouped.get(p.b) != grouped[p.a]]
    if pairs:
        out += ["Near-identical after normalising names, literals and layout (see docs/batch.md for what "
                "this does not catch): a reason to look, not a verdict.", ""]
        out += [f"- {len(g)} students handed in the same code (after normalising): "
                + ", ".join(_md(s) for s in g) for g in groups]
        if groups and shown:
            out.append("")
        if shown:
            out += ["| student | student | similarity | jaccard | containment |", "|---|---|---:|---:|---:|"]
            out += [f"| {_md(p.a)} | {_md(p.b)} | {p.score:.2f} | {p.jaccard:.2f} | {p.containment:.2f} |"
                    for p in shown]
    else:
        out.append("no pair above the threshold")
    refused = run.get("refused", [])
    ignored = run.get("ignored", [])
    if refused or ignored:
        out += ["", "## Intake", ""]
        out += [f"- refused: {_md(line)}" for line in refused]
        if ignored:
            shown = ", ".join(_md(i) for i in ignored[:20]) + (", ..." if len(ignored) > 20 else "")
            out.append(f"- not a submission ({len(ignored)} ignored): {shown}")
    return "\n".join(out) + "\n"
