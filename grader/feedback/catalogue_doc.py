"""docs/mistakes.md: a bundle's catalogue of mistakes as a page a learner reads.

Each bundle has its own page, generated from its problem module's CATALOGUE and PARTS by
`python -m grader generate` (and checked by `generate --check`, so it cannot drift from the
catalogue the diagnosis uses). The practice archive carries it beside docs/feedback.md, which
explains the feedback of every bundle.
"""

from __future__ import annotations

from pathlib import Path

from ..problem.bundle import Bundle
from .mistakes import FeedbackData, feedback_data

DOC = Path("docs") / "mistakes.md"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell (the catalogue is the bundle author's prose)."""
    return " ".join(text.split()).replace("|", "\\|")


def render_catalogue(title: str, data: FeedbackData) -> str:
    """The whole page: what a named mistake means, then one row per catalogue entry."""
    lines = [
        f"# Mistakes this judge names: {title}",
        "",
        "Generated from `CATALOGUE` in problem.py by `python -m grader generate`; do not edit by hand.",
        "",
        "When a wrong answer's outputs match one of these mistakes on the cases you can see, the",
        "report names it, says which part of the function it is in, quotes the statement's rule it",
        'breaks and gives the one thing to change (docs/feedback.md, "Mistake fingerprints").',
        "A mistake not listed here is still judged wrong; the report then says where the error is.",
        "",
        "| id | title | part | statement |",
        "|---|---|---|---|",
    ]
    for m in data.catalogue.values():
        part = _cell(data.parts.get(m.part, m.part))
        lines.append(f"| `{m.id}` | {_cell(m.title)} | {part} | [{_cell(m.section)}](../{m.anchor}) |")
    return "\n".join(lines) + "\n"


def catalogue_doc(bundle: Bundle) -> tuple[Path, str]:
    """(path, text) of the bundle's docs/mistakes.md."""
    return bundle.root / DOC, render_catalogue(bundle.spec.title, feedback_data(bundle))
