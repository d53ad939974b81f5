"""HTML built from parts that escape what they are given: the class page's only way to write markup.

`el` makes an element; every child or attribute value that is not `Markup`
(markup `el` made itself) is text, and goes through `text`, the one boundary
where a string becomes HTML: one clean line (ids.clean_text: no control,
bidi or format character), then html.escape(quote=True). So a student's name
is text wherever it is put, in an element or in an attribute. Tag and
attribute names are this module's callers' literals, never data.

The charts are inline SVG (no script, no external file): a histogram with a
<title> and <desc>, and the small bars of a table row.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from .ids import clean_text

MAX_TEXT = 1000  # a verdict's summary or a reason is shorter; a longer string is cut
_VOID = frozenset({"meta", "br", "hr", "rect", "line", "col"})
_SVG = "http://www.w3.org/2000/svg"


class Markup(str):
    """HTML that `el` or `join` built: inserted as it is."""


def text(value: object) -> Markup:
    """Any value as HTML text or an attribute's value: one clean line, then every character HTML
    acts on (& < > " ') escaped."""
    return Markup(html.escape(clean_text(value, MAX_TEXT), quote=True))


Child = Markup | str | int | float | None


def join(*children: Child) -> Markup:
    """Children side by side: markup as it is, anything else as text, None left out."""
    return Markup("".join(c if isinstance(c, Markup) else text(c) for c in children if c is not None))


def el(tag: str, attrs: Mapping[str, object] | None = None, *children: Child) -> Markup:
    """<tag attrs>children</tag>; an attribute whose value is None is left out."""
    shown = "".join(f' {name}="{text(value)}"' for name, value in (attrs or {}).items() if value is not None)
    if tag in _VOID and not children:
        return Markup(f"<{tag}{shown}>" if tag in ("meta", "br", "hr", "col") else f"<{tag}{shown}/>")
    return Markup(f"<{tag}{shown}>{join(*children)}</{tag}>")


def meter(share: float, kind: str = "") -> Markup:
    """A small horizontal bar for a share in 0..1 (the figure is in the next cell: the bar is
    hidden from screen readers)."""
    share = min(max(share, 0.0), 1.0)
    return el(
        "svg",
        {"class": "meter", "viewBox": "0 0 100 10", "preserveAspectRatio": "none", "aria-hidden": "true"},
        el("rect", {"class": "track", "width": "100", "height": "10", "rx": "2"}),
        el("rect", {"class": f"fill {kind}".strip(), "width": f"{100 * share:.1f}", "height": "10", "rx": "2"}),
    )


def histogram(bins: Sequence[tuple[str, int, str]], title: str, x_label: str) -> Markup:
    """An SVG histogram of (label, count, CSS class) bins: one bar per bin, each with its own
    <title> and its count written above it, the labels below."""
    width, height, left, bottom, top = 720, 260, 40, 44, 24
    plot_w, plot_h = width - left - 12, height - bottom - top
    most = max((n for _, n, _ in bins), default=0) or 1
    step = plot_w / max(len(bins), 1)
    parts: list[Markup] = [
        el("title", {"id": "hist-title"}, title),
        el("desc", {"id": "hist-desc"}, "; ".join(f"{x_label} {lb}: {n}" for lb, n, _ in bins)),
        el("line", {"class": "axis", "x1": left, "x2": width - 12, "y1": top + plot_h, "y2": top + plot_h}),
    ]
    for i, (label, n, kind) in enumerate(bins):
        h = plot_h * n / most
        x = left + i * step + step * 0.12
        y = top + plot_h - h
        tip = el("title", None, f"{x_label} {label}: {n} {'student' if n == 1 else 'students'}")
        parts.append(
            el(
                "g",
                None,
                el(
                    "rect",
                    {
                        "class": f"bar {kind}".strip(),
                        "x": f"{x:.1f}",
                        "y": f"{y:.1f}",
                        "width": f"{step * 0.76:.1f}",
                        "height": f"{h:.1f}",
                        "rx": "3",
                    },
                    tip,
                ),
                el("text", {"class": "count", "x": f"{x + step * 0.38:.1f}", "y": f"{y - 6:.1f}"}, n if n else None),
                el("text", {"class": "label", "x": f"{x + step * 0.38:.1f}", "y": top + plot_h + 18}, label),
            )
        )
    parts.append(el("text", {"class": "axis-title", "x": left + plot_w / 2, "y": height - 6}, x_label))
    return el(
        "svg",
        {
            "xmlns": _SVG,
            "class": "histogram",
            "viewBox": f"0 0 {width} {height}",
            "role": "img",
            "aria-labelledby": "hist-title hist-desc",
        },
        *parts,
    )
