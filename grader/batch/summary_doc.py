"""The summary as a document of blocks, and its two renderings: Markdown (summary.md) and plain
text wrapped to a width (what `batch` prints on a terminal).

summary.py says what the summary holds; this module only lays it out, so the file and the
terminal always say the same thing. Text in a block is one clean line (batch/ids.py
clean_text has been applied where it came from outside); the Markdown rendering escapes
every character a renderer would act on, the plain rendering shows it as it is, cleaned
once more (a record read back from DIR may have been forged with a terminal's escape sequence).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from .ids import clean_text

# What a Markdown renderer acts on in one line of text: cell breaks, code, links and images ([ ]),
# raw HTML and autolinks (< >), entity references (&#8238; would render a bidi override).
_MD_ACTIVE = str.maketrans({c: "\\" + c for c in "\\|`[]<>&"})
_GAP = "  "  # between the columns of a plain-text table


def md_escape(text: str) -> str:
    """Text from outside for Markdown: every character a renderer would act on is
    backslash-escaped, so it shows as typed."""
    return str(text).translate(_MD_ACTIVE)


@dataclass(frozen=True)
class Span:
    """A run of text in a line: plain, `code` (an id) or **strong**."""

    text: str
    style: str = ""  # "", "code" or "strong"


Line = tuple[Span, ...]


def line(*parts: str | Span) -> Line:
    """A line from plain strings and spans."""
    return tuple(p if isinstance(p, Span) else Span(p) for p in parts)


@dataclass(frozen=True)
class Heading:
    level: int  # 1: the title, 2: a section
    text: str


@dataclass(frozen=True)
class Lines:
    """Lines of prose, each its own line (one Markdown paragraph)."""

    lines: tuple[Line, ...]


@dataclass(frozen=True)
class Bullets:
    items: tuple[Line, ...]


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    right: tuple[bool, ...]  # right-aligned (a number) per column
    rows: tuple[tuple[str, ...], ...]


Block = Heading | Lines | Bullets | Table


def _md_line(parts: Line) -> str:
    out = []
    for s in parts:
        text = md_escape(s.text)
        out.append(f"`{s.text}`" if s.style == "code" else f"**{text}**" if s.style == "strong" else text)
    return "".join(out)


def _md_block(block: Block) -> list[str]:
    if isinstance(block, Heading):
        return ["#" * block.level + " " + md_escape(block.text)]
    if isinstance(block, Lines):
        return [_md_line(x) for x in block.lines]
    if isinstance(block, Bullets):
        return ["- " + _md_line(x) for x in block.items]
    rule = "|" + "|".join("---:" if r else "---" for r in block.right) + "|"
    rows = [block.header, *block.rows]
    return [f"| {' | '.join(md_escape(c) for c in row)} |" for row in rows[:1]] + [
        rule,
        *(f"| {' | '.join(md_escape(c) for c in row)} |" for row in rows[1:]),
    ]


def markdown(blocks: list[Block]) -> str:
    """summary.md: the blocks, one blank line between them."""
    out: list[str] = []
    for block in blocks:
        out += ([""] if out else []) + _md_block(block)
    return "\n".join(out) + "\n"


def _shown(text: str) -> str:
    """Text for a terminal: one line, no control, bidi or format character, nothing cut."""
    return clean_text(text, len(text))


def _plain_line(parts: Line) -> str:
    return _shown("".join(s.text for s in parts))


def wrap(text: str, width: int, first: str = "", rest: str = "") -> list[str]:
    """`text` in lines of at most `width` characters, never splitting a word (a word longer
    than the width stands alone on its line)."""
    return textwrap.wrap(
        text,
        width=max(width, len(first) + 1, len(rest) + 1),
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [first.rstrip()]


def _column_widths(table: Table, width: int) -> list[int] | None:
    """Each column's width: its widest cell, the widest columns narrowed (never below their longest
    word) while the table is wider than `width`; None when even that is too wide."""
    rows = [table.header, *table.rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(table.header))]
    least = [max((len(w) for r in rows for w in r[i].split()), default=1) for i in range(len(widths))]
    while sum(widths) + len(_GAP) * (len(widths) - 1) > width:
        narrowable = [i for i in range(len(widths)) if widths[i] > least[i]]
        if not narrowable:
            return None
        widths[max(narrowable, key=lambda i: widths[i])] -= 1
    return widths


def _plain_table(table: Table, width: int) -> list[str]:
    """Aligned columns, a cell's text wrapped within its column; a table that cannot fit even so
    is written one row after another, a line per cell ("- student: alice", "  similarity: 0.95")."""
    widths = _column_widths(table, width)
    if widths is None:
        return [
            w
            for row in table.rows
            for n, (head, cell) in enumerate(zip(table.header, row, strict=True))
            for w in wrap(f"{head}: {cell}", width, "- " if n == 0 else "  ", "    ")
        ]
    out = []
    for n, row in enumerate([table.header, *table.rows]):
        cells = [wrap(c, w) if c else [""] for c, w in zip(row, widths, strict=True)]
        for k in range(max(len(c) for c in cells)):
            parts = [
                (c[k] if k < len(c) else "").rjust(w) if right else (c[k] if k < len(c) else "").ljust(w)
                for c, w, right in zip(cells, widths, table.right, strict=True)
            ]
            out.append(_GAP.join(parts).rstrip())
        if n == 0:
            out.append(_GAP.join("-" * w for w in widths))
    return out


def _plain_block(block: Block, width: int) -> list[str]:
    if isinstance(block, Heading):
        title = wrap(_shown(block.text), width)
        return [*title, ("=" if block.level == 1 else "-") * min(width, max(len(t) for t in title))]
    if isinstance(block, Lines):
        return [w for x in block.lines for w in wrap(_plain_line(x), width)]
    if isinstance(block, Bullets):
        return [w for x in block.items for w in wrap(_plain_line(x), width, "- ", "  ")]
    return _plain_table(Table(block.header, block.right, tuple(tuple(map(_shown, r)) for r in block.rows)), width)


def plain_text(blocks: list[Block], width: int) -> str:
    """The blocks as plain text for a terminal `width` columns wide: prose and bullets
    wrapped at word boundaries, headings underlined, tables as aligned columns."""
    out: list[str] = []
    for block in blocks:
        out += ([""] if out else []) + _plain_block(block, width)
    return "\n".join(out) + "\n"
