"""The readable report: one screen, coloured on a terminal, plain otherwise."""
from __future__ import annotations

from ..verdict import VERDICT_NAMES, GradeReport

_COLOURS = {"AC": "32", "WA": "31", "TLE": "33", "MLE": "33", "RE": "35", "CE": "35", "OLE": "33", "JE": "41"}
MESSAGE_LINES = 6


def _paint(text: str, verdict: str, colour: bool) -> str:
    return f"\033[{_COLOURS.get(verdict, '0')}m{text}\033[0m" if colour else text


def _indent(text: str, prefix: str = "      ") -> list[str]:
    lines = text.splitlines() or [""]
    if len(lines) > MESSAGE_LINES:
        lines = lines[:MESSAGE_LINES] + [f"[... {len(lines) - MESSAGE_LINES} more lines in --json ...]"]
    return [prefix + ln for ln in lines]


def render_text(r: GradeReport, colour: bool = False) -> str:
    """Verdict, per-group results, the failing cases, and the next thing to fix."""
    out = []
    head = f"{r.verdict}  {VERDICT_NAMES[r.verdict]}"
    out.append(f"{_paint(head, r.verdict, colour)}   score {r.score}/{r.max_score}   "
               f"({r.selection} tests, {r.bundle_id} {r.bundle_version})")
    if r.compile.verdict != "OK":
        out.append("")
        out += _indent(r.compile.message, "  ")
    else:
        out.append("")
        out.append(f"  {'group':<25}{'result':<9}{'passed':<8}points")
        for g in r.groups:
            tag = "" if g.visible else " (hidden)"
            out.append(f"  {g.name + tag:<25}{_paint(f'{g.verdict:<8}', g.verdict, colour)} "
                       f"{g.passed:>3}/{g.total:<3} {g.score:>3}/{g.points}")
        failing = [c for c in r.tests if c.verdict != "AC"]
        if failing:
            out.append("")
            for c in failing[:3]:
                t = f"{c.time_s:.2f}s" if c.time_s is not None else "-"
                out.append(f"  {_paint(c.verdict, c.verdict, colour)} {c.name}  [{c.check}, {t}]")
                out += _indent(c.message)
                if c.stdout.strip():
                    out.append("      stdout:")
                    out += _indent(c.stdout.strip(), "        ")
            if len(failing) > 3:
                out.append(f"  ... and {len(failing) - 3} more failing tests (see --json)")
    if r.diagnosis and r.diagnosis.get("summary"):
        out.append("")
        out += _indent(r.diagnosis["summary"], "  ")
    if r.sandbox is not None and r.sandbox.unavailable:
        out.append("")
        out.append(f"  sandbox: {r.sandbox.mode}; unavailable here: {', '.join(r.sandbox.unavailable)}")
    out.append("")
    out.append(f"Next: {next_step(r)}")
    return "\n".join(out) + "\n"


def next_step(r: GradeReport) -> str:
    """The one thing to do next."""
    if r.verdict == "AC":
        return ("nothing: every selected test passes." if r.selection == "all"
                else "the samples pass; grade with --tests all for the hidden tests.")
    if r.diagnosis and r.diagnosis.get("next_step"):
        return r.diagnosis["next_step"]
    if r.compile.verdict != "OK":
        return "fix the problem above; the tests could not run."
    first = next(c for c in r.tests if c.verdict != "AC")
    return f"fix test {first.name} first: {first.message.splitlines()[0]}"
