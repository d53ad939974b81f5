"""The readable report: one screen, coloured on a terminal, plain otherwise.

Order: verdict and score; one row per group with one mark per test (so
"mlp_only passes, multi_head fails" is visible at a glance) and, for failing
groups, what the group exercises; the diagnosis's reading of that pattern;
the first failing test in detail (values only for visible tests); the known
mistake, if the outputs match one; and the one next thing to do.
"""
from __future__ import annotations

import textwrap
from typing import Any, Mapping

from ..judging.verdict import VERDICT_NAMES, CaseResult, GradeReport

_COLOURS = {"AC": "32", "WA": "31", "TLE": "33", "MLE": "33", "RE": "35", "CE": "35", "OLE": "33", "JE": "41"}
MARKS = {"AC": ".", "WA": "W", "TLE": "T", "MLE": "M", "RE": "R", "CE": "C", "OLE": "O", "JE": "J"}
WIDTH = 100               # wrap and truncate to this many columns
MESSAGE_LINES = 6         # lines of one message before "[... more in --json ...]"
DETAILED_FAILURES = 1     # failing tests shown with their full message


def _paint(text: str, code: str | None, colour: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if colour and code else text


def _verdict_paint(text: str, verdict: str, colour: bool) -> str:
    return _paint(text, _COLOURS.get(verdict), colour)


def _wrap(text: str, indent: str, limit: int = MESSAGE_LINES) -> list[str]:
    """Wrap each paragraph of `text` to WIDTH; long messages end with a pointer to --json."""
    lines: list[str] = []
    for para in text.splitlines() or [""]:
        lines += textwrap.wrap(para, WIDTH - len(indent), break_on_hyphens=False) or [""]
    if len(lines) > limit:
        lines = lines[:limit] + [f"[... {len(lines) - limit} more lines in --json ...]"]
    return [indent + ln for ln in lines]


def _truncate(text: str, room: int) -> str:
    return text if len(text) <= room else text[: max(room - 3, 0)] + "..."


def _group_rows(r: GradeReport, colour: bool) -> list[str]:
    width = max(len(g.name) for g in r.groups) + 2
    marks_w = max(max(g.total for g in r.groups), 5) + 2
    out = [f"  {'group':<{width}}{'result':<8}{'tests':<{marks_w}}{'points':<8}what it exercises"]
    for g in r.groups:
        name = g.name + ("" if g.visible else "*")
        marks = "".join(_verdict_paint(MARKS.get(c.verdict, "?"), c.verdict, colour)
                        for c in r.tests if c.group == g.name)
        pad = " " * (marks_w - g.total)
        what = _truncate(", ".join(g.exercises), WIDTH - 2 - width - 8 - marks_w - 8) if g.verdict != "AC" else ""
        out.append(f"  {name:<{width}}{_verdict_paint(f'{g.verdict:<8}', g.verdict, colour)}{marks}{pad}"
                   f"{f'{g.score}/{g.points}':<8}{what}".rstrip())
    seen = list(dict.fromkeys(c.verdict for c in r.tests))
    legend = "   ".join(f"{MARKS[v]} {VERDICT_NAMES[v].lower() if v != 'AC' else 'passed'}" for v in seen)
    hidden = "* hidden: results only, never data.   " if any(not g.visible for g in r.groups) else ""
    out.append(f"  {hidden}{legend}")
    return out


def _case_lines(c: CaseResult, colour: bool) -> list[str]:
    t = f", {c.time_s:.2f}s" if c.time_s is not None else ""
    tag = "" if c.visible else " (hidden)"
    out = [f"  {_verdict_paint(c.verdict, c.verdict, colour)} {c.name}{tag}  [{c.check}{t}]"]
    out += _wrap(c.message, "      ")
    pattern = (c.diagnosis or {}).get("pattern")
    if pattern:
        out += _wrap(f"Where: {pattern['sentence']}", "      ", 2)
    if c.stdout.strip():
        out.append("      stdout:")
        out += _wrap(c.stdout.strip(), "        ", 3)
    return out


def _diagnosis_lines(d: dict[str, Any], colour: bool) -> list[str]:
    out: list[str] = []
    fp = d.get("fingerprint") or {}
    if fp.get("message"):
        out += _wrap(fp["message"], "  ")
    if fp.get("status") == "match":
        m = fp["mistakes"][0]
        out += _wrap(f"Why: {m['explanation']}", "  ")
        s = m["statement"]
        out += _wrap(f"Statement: section \"{s['section']}\" ({s['anchor']}): \"{s['quote']}\"", "  ")
    if out:
        out[0] = _paint(out[0], "1", colour)
    return out


def render_text(r: GradeReport, colour: bool = False) -> str:
    """Verdict, per-group results, the reading, the first failure, the diagnosis, the next step."""
    out = []
    head = f"{r.verdict}  {VERDICT_NAMES[r.verdict]}"
    out.append(f"{_verdict_paint(head, r.verdict, colour)}   score {r.score}/{r.max_score}   "
               f"({r.selection} tests, {r.bundle_id} {r.bundle_version})")
    out.append("")
    if r.compile.verdict != "OK":
        out += _wrap(r.compile.message, "  ")
    elif r.groups:
        out += _group_rows(r, colour)
        d = r.diagnosis or {}
        reading = (d.get("groups") or {}).get("reading")
        if reading:
            out.append("")
            out += _wrap(f"Reading: {reading}", "  ", 3)
        failing = [c for c in r.tests if c.verdict != "AC"]
        if failing:
            out.append("")
            for c in failing[:DETAILED_FAILURES]:
                out += _case_lines(c, colour)
            if len(failing) > DETAILED_FAILURES:
                more = len(failing) - DETAILED_FAILURES
                out.append(f"  ... and {more} more failing test{'s' if more > 1 else ''} (details in --json)")
        diag = _diagnosis_lines(d, colour)
        if diag:
            out.append("")
            out += diag
    if r.sandbox is not None and r.sandbox.unavailable:
        out.append("")
        out.append(f"  sandbox: {r.sandbox.mode}; unavailable here: {', '.join(r.sandbox.unavailable)}")
    out.append("")
    out += _wrap(f"Next: {next_step(r)}", "", 3)
    return "\n".join(out) + "\n"


def next_step(r: GradeReport) -> str:
    """The one thing to do next."""
    if r.verdict == "AC":
        return ("nothing: every selected test passes." if r.selection == "all"
                else "the samples pass; the hidden tests decide the score (--tests all, judge bundle only).")
    if r.diagnosis and r.diagnosis.get("next_step"):
        return r.diagnosis["next_step"]
    if r.compile.verdict != "OK":
        return "fix the problem above; the tests could not run."
    first = next(c for c in r.tests if c.verdict != "AC")
    return f"fix test {first.name} first: {first.message.splitlines()[0]}"


def use_colour(isatty: bool, no_color_flag: bool, environ: Mapping[str, str]) -> bool:
    """Colour only on a terminal, unless --no-color, NO_COLOR (set and not empty,
    https://no-color.org) or TERM=dumb says otherwise."""
    return isatty and not no_color_flag and not environ.get("NO_COLOR") and environ.get("TERM") != "dumb"
