"""The readable report: fits the terminal, coloured on a terminal, plain otherwise.

Default order (the common case, one named mistake, fits 80x24): the verdict
and score; one row per group with one mark per test (so "mlp_only passes,
multi_head fails" is visible at a glance) and what each group exercises; the
known mistake if the outputs match one, else the reading of the group pattern
and the first failing test in one sentence; the one next step. `verbose`
adds the detail below: every part of the diagnosis, the first failing test
in full (values only for visible tests), its printed output, why the mistake
is wrong and the statement's words.

Every line is wrapped at word boundaries to `width` columns (the terminal's,
see terminal_width); nothing is cut mid-word. The default report takes at most
`rows` - 1 lines (SCREEN_LINES: an 80x24 terminal), leaving the last row to
what follows it: the shell's prompt after `grade`, watch's status line.

Advice names the learner's own file and command (`Invocation`): a learner who
typed `grader grade my_solution.py` is told to run `grader grade
my_solution.py --tests sample`, not another file or another command form.
"""

from __future__ import annotations

import shlex
import shutil
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..judging.checker import NOT_IMPLEMENTED
from ..judging.verdict import VERDICT_NAMES, CaseResult, GradeReport, GroupResult

_COLOURS = {"AC": "32", "WA": "31", "TLE": "33", "MLE": "33", "RE": "35", "CE": "35", "OLE": "33", "JE": "41"}
MARKS = {"AC": ".", "WA": "W", "TLE": "T", "MLE": "M", "RE": "R", "CE": "C", "OLE": "O", "JE": "J"}
DEFAULT_WIDTH = 80  # when neither the terminal nor COLUMNS says
MIN_WIDTH, MAX_WIDTH = 40, 160
SCREEN_LINES = 24  # the default report of one named mistake fits an 80x24 terminal
MESSAGE_LINES = 6  # lines of one message before "[... more in --json ...]"
DETAILED_FAILURES = 1  # failing tests shown in full with --verbose
# The checks that decide before any value is compared: their message is the next step.
STRUCTURAL_CHECKS = ("type", "dtype", "shape")


@dataclass(frozen=True)
class Invocation:
    """How the learner ran the grader, so that advice is a command they can run as printed."""

    program: str = "python -m grader"  # what came before the subcommand: "grader", ".venv/bin/python -m grader"
    command: str = "grade"  # "grade", or "watch" (which grades again at every save)
    path: str | None = None  # the file as they named it; None: the report's own file name

    def file(self, r: GradeReport) -> str:
        return self.path or (r.submission.file if r.submission else "solution.py")

    def grade(self, r: GradeReport, *flags: str) -> str:
        """The `grade` command line for this learner's file, with `flags`."""
        return " ".join([self.program, "grade", shlex.quote(self.file(r)), *flags])


def terminal_width(environ: Mapping[str, str] | None = None) -> int:
    """Columns to render for: COLUMNS if set, else the terminal's, else 80 (clamped to 40..160)."""
    cols = 0
    raw = (environ or {}).get("COLUMNS", "")
    if raw.strip().isdigit():
        cols = int(raw)
    if cols <= 0:
        cols = shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return max(MIN_WIDTH, min(MAX_WIDTH, cols))


def _paint(text: str, code: str | None, colour: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if colour and code else text


def _verdict_paint(text: str, verdict: str, colour: bool) -> str:
    return _paint(text, _COLOURS.get(verdict), colour)


def _wrap(text: str, indent: str, width: int, limit: int = MESSAGE_LINES, rest: str | None = None) -> list[str]:
    """Wrap each paragraph of `text` at word boundaries; long messages end with a pointer to --json."""
    rest = indent if rest is None else rest
    lines: list[str] = []
    for para in text.splitlines() or [""]:
        wrapped = textwrap.wrap(
            para, width, initial_indent=indent if not lines else rest, subsequent_indent=rest, break_on_hyphens=False
        ) or [indent]
        lines += wrapped
    if len(lines) > limit:
        lines = lines[:limit] + [f"{rest}[... {len(lines) - limit} more lines in --json ...]"]
    return lines


# --- the group table ------------------------------------------------------------------------


def _columns(r: GradeReport) -> tuple[int, int, bool]:
    name_w = max(len(g.name) + (0 if g.visible else 1) for g in r.groups) + 1
    marks_w = max(max(g.total for g in r.groups), 5) + 1
    return name_w, marks_w, r.max_score > 0


def _exercises(g: GroupResult) -> str:
    return ", ".join(g.exercises) or g.description or g.name


def _group_rows(r: GradeReport, colour: bool, width: int, verbose: bool) -> list[str]:
    name_w, marks_w, scored = _columns(r)
    points_w = 7 if scored else 0
    lead = 2 + name_w + 7 + marks_w + points_w
    room = width - lead
    below = room < 16  # a narrow terminal: "what it exercises" under each row
    # Long group names on a very narrow terminal: each name on a line of its own, its cells below.
    stacked = lead > width
    if below:
        lead, room = 4, width - 4
    titles = (
        f"{'result':<7}{'tests':<{marks_w}}{'points':<{points_w}}" if scored else f"{'result':<7}{'tests':<{marks_w}}"
    )
    head = f"  {'group':<{name_w}}{titles}"
    out = ["  group", f"    {titles}".rstrip()] if stacked else [head.rstrip() if below else f"{head}what it exercises"]
    for g in r.groups:
        name = g.name + ("" if g.visible else "*")
        marks = "".join(
            _verdict_paint(MARKS.get(c.verdict, "?"), c.verdict, colour) for c in r.tests if c.group == g.name
        )
        pad = " " * (marks_w - g.total)
        points = f"{f'{g.score}/{g.points}':<{points_w}}" if scored else ""
        what = _exercises(g)
        # Whole words only: shortened with "..." by default, continued on more lines with --verbose.
        cells = (
            textwrap.wrap(what, room, break_on_hyphens=False)
            if verbose
            else [textwrap.shorten(what, room, placeholder=" ...")]
        ) or [""]
        row = f"  {name:<{name_w}}{_verdict_paint(f'{g.verdict:<7}', g.verdict, colour)}{marks}{pad}{points}"
        if stacked:
            out.append(f"  {name}")
            row = f"    {_verdict_paint(f'{g.verdict:<7}', g.verdict, colour)}{marks}{pad}{points}"
        if below:
            out.append(row.rstrip())
            out += [" " * lead + c for c in cells]
        else:
            out.append(f"{row}{cells[0]}".rstrip())
            out += [" " * lead + c for c in cells[1:]]
    seen = list(dict.fromkeys(c.verdict for c in r.tests))
    legend = "   ".join(f"{MARKS[v]} {VERDICT_NAMES[v].lower() if v != 'AC' else 'passed'}" for v in seen)
    hidden = "* hidden: results only, never data.   " if any(not g.visible for g in r.groups) else ""
    out += _wrap(f"{hidden}{legend}", "  ", width, 2)
    return out


# --- failures and diagnosis -------------------------------------------------------------------


def _case_lines(c: CaseResult, colour: bool, width: int) -> list[str]:
    t = f", {c.time_s:.2f}s" if c.time_s is not None else ""
    tag = "" if c.visible else " (hidden)"
    out = _wrap(f"{c.verdict} {c.name}{tag}  [{c.check}{t}]", "  ", width, 2)
    out[0] = out[0].replace(c.verdict, _verdict_paint(c.verdict, c.verdict, colour), 1)
    out += _wrap(c.message, "      ", width)
    pattern = (c.diagnosis or {}).get("pattern")
    if pattern:
        out += _wrap(f"Where: {pattern['sentence']}", "      ", width, 3)
    if c.stdout.strip():
        out.append("      stdout:")
        out += _wrap(c.stdout.strip(), "        ", width, 3)
    return out


def _first_sentence(text: str) -> str:
    line = (text.strip().splitlines() or [""])[0]
    cut = line.find(". ")
    return line if cut < 0 else line[: cut + 1]


def _short_failure(c: CaseResult) -> str:
    tag = "" if c.visible else " (hidden)"
    what = _first_sentence(c.message)
    if c.check == "tolerance" and c.error is not None:
        e = c.error
        if not c.visible:  # magnitudes only (judging/hidden.py): "all" or "some", a power of ten
            what = f"{'all' if e.outside == e.total else 'some'} values off, largest error about {e.max_abs_error:.0e}."
        else:
            what = f"{e.outside} of {e.total} values off, largest error {e.max_abs_error:.3g}."
    return f"First failure: {c.name}{tag} [{c.check}]: {what}"


def _match_line(fp: Mapping[str, Any]) -> str:
    if fp.get("kind") in ("combined", "fitted"):
        message: str = fp["message"]
        return message
    m = fp["mistakes"][0]
    if fp.get("basis") == "dtype":
        return f"Known mistake: {m['title']}. Your outputs are float32 arrays."
    from ..feedback.diagnose import unexplained_note  # the diagnosis's modules: only for a report that names a mistake

    unexplained = unexplained_note(len(fp.get("cases_without_evidence") or ()))
    # A match through a wrong shape: its message begins with the shape sentence (feedback/diagnose.py).
    message = str(fp.get("message") or "")
    shape = message.partition("Known mistake: ")[0] if message.startswith("Your output has ") else ""
    return f"{shape}Known mistake: {m['title']}. Reproduced on all {fp['cases_compared']} tests compared.{unexplained}"


def _diagnosis_short(r: GradeReport, colour: bool, width: int, with_failure: bool = True) -> list[str]:
    d = r.diagnosis or {}
    fp = d.get("fingerprint") or {}
    failing = [c for c in r.tests if c.verdict != "AC"]
    if fp.get("status") == "match":
        lines = _wrap(_match_line(fp), "  ", width, 3)
        lines[0] = _paint(lines[0], "1", colour)
        return lines
    out: list[str] = []
    reading = (d.get("groups") or {}).get("reading") or ""
    none = " No known mistake matches." if fp.get("status") == "no_match" else ""
    if reading or none:
        out += _wrap(f"Reading: {reading}{none}" if reading else none.strip(), "  ", width, 3)
    if with_failure and failing and failing[0].check not in STRUCTURAL_CHECKS:  # else the next step says it
        out += _wrap(_short_failure(failing[0]), "  ", width, 2)
    if fp.get("status") == "ambiguous":
        out += _wrap(fp["message"], "  ", width, 3)
    return out


def _diagnosis_lines(d: dict[str, Any], colour: bool, width: int) -> list[str]:
    out: list[str] = []
    fp = d.get("fingerprint") or {}
    if fp.get("message"):
        out += _wrap(fp["message"], "  ", width)
    if fp.get("status") == "match":
        for m in fp["mistakes"]:
            out += _wrap(f"Why: {m['explanation']}", "  ", width)
            s = m["statement"]
            out += _wrap(f'Statement: section "{s["section"]}" ({s["anchor"]}): "{s["quote"]}"', "  ", width)
        fit = fp.get("fit")
        if fit:
            out += _wrap(
                f"Fitted {fit['title']}: {fit['value']:.6g} (the statement's: {fit['expected']:.10g}); it "
                f"explains all {fit['cases_explained']} tests compared, the largest difference "
                f"{_residual_text(fit['largest_residual'])}. Statement: section "
                f'"{fit["statement"]["section"]}" ({fit["statement"]["anchor"]}).',
                "  ",
                width,
            )
    if out:
        out[0] = _paint(out[0], "1", colour)
    return out


# A fit whose largest difference is below this share of the tolerance matches the submission
# to rounding: its digits depend on the CPU and BLAS kernel that ran the submission, so they
# are not printed (the verdict JSON keeps the figure).
ROUNDING_RESIDUAL = 1e-3


def _residual_text(resid: float) -> str:
    if resid < ROUNDING_RESIDUAL:
        return f"under {ROUNDING_RESIDUAL:g} of the tolerance (rounding)"
    return f"{resid:.2g} of the tolerance"


def _verbose_lines(r: GradeReport, colour: bool, width: int) -> list[str]:
    out: list[str] = []
    d = r.diagnosis or {}
    reading = (d.get("groups") or {}).get("reading")
    if reading:
        out += [""] + _wrap(f"Reading: {reading}", "  ", width, 4)
    failing = [c for c in r.tests if c.verdict != "AC"]
    if failing:
        out.append("")
        for c in failing[:DETAILED_FAILURES]:
            out += _case_lines(c, colour, width)
        if len(failing) > DETAILED_FAILURES:
            more = len(failing) - DETAILED_FAILURES
            out += _wrap(
                f"... and {more} more failing test{'s' if more > 1 else ''} (details in --json)", "  ", width, 2
            )
    diag = _diagnosis_lines(d, colour, width)
    if diag:
        out += [""] + diag
    return out


def _headline(r: GradeReport, colour: bool, width: int) -> list[str]:
    head = _verdict_paint(f"{r.verdict}  {VERDICT_NAMES[r.verdict]}", r.verdict, colour)
    score = f"score {r.score}/{r.max_score}" if r.max_score > 0 else "no points"
    tail = f"{score}   ({r.selection} tests, {r.bundle_id} {r.bundle_version})"
    plain = f"{r.verdict}  {VERDICT_NAMES[r.verdict]}   {tail}"
    if len(plain) <= width:
        return [f"{head}   {tail}"]
    return [head] + _wrap(tail, "  ", width, 2)


def render_text(
    r: GradeReport,
    colour: bool = False,
    width: int = DEFAULT_WIDTH,
    verbose: bool = False,
    invocation: Invocation | None = None,
    rows: int = SCREEN_LINES,
) -> str:
    """Verdict, per-group results, the diagnosis in brief, the next step (detail with `verbose`).

    The default report fits `rows` - 1 lines where it can: the first failure's line goes
    first (it is in --verbose), then the pointer to more detail."""
    width = max(MIN_WIDTH, width)
    how = invocation or Invocation()
    budget = rows - 1
    text = _render(r, colour, width, verbose, how, budget, with_failure=True)
    if not verbose and text.count("\n") > budget:
        text = _render(r, colour, width, verbose, how, budget, with_failure=False)
    return text


def _more_detail(how: Invocation) -> str:
    if how.command == "watch":  # watch has no --json; its flags are given when it starts
        return "(more detail: start watch with --verbose)"
    return "(more detail: --verbose; everything: --json)"


def _render(
    r: GradeReport, colour: bool, width: int, verbose: bool, how: Invocation, budget: int, with_failure: bool
) -> str:
    out = _headline(r, colour, width)
    out.append("")
    if r.compile.verdict != "OK":
        out += _wrap(r.compile.message, "  ", width)
    elif r.groups:
        out += _group_rows(r, colour, width, verbose)
        if r.verdict != "AC":
            short = [] if verbose else _diagnosis_short(r, colour, width, with_failure)
            if short:
                out += [""] + short
            if verbose:
                out += _verbose_lines(r, colour, width)
    if r.sandbox is not None and r.sandbox.unavailable:
        out.append("")
        out += _wrap(f"sandbox: {r.sandbox.mode}; unavailable here: {', '.join(r.sandbox.unavailable)}", "  ", width, 2)
    out.append("")
    out += _wrap(f"Next: {next_step(r, how)}", "", width, 4)
    if not verbose and r.verdict != "AC" and r.compile.verdict == "OK":
        hint = _wrap(_more_detail(how), "", width, 2)
        if len(out) + len(hint) <= budget:
            out += hint
    return "\n".join(out) + "\n"


def _implement_step(r: GradeReport, first: CaseResult, how: Invocation) -> str:
    """The starter's NotImplementedError: write the function, then check it on the samples."""
    function = first.message.split(f" {NOT_IMPLEMENTED}", 1)[0]
    then = (
        "save it: watch grades it again"
        if how.command == "watch"
        else f"check it with `{how.grade(r, '--tests', 'sample')}`"
    )
    return f"write the body of {function} in {how.file(r)} as statement.md describes, then {then}."


def next_step(r: GradeReport, how: Invocation | None = None) -> str:
    """The one thing to do next: the first failing *check* decides before any group reading."""
    if r.verdict == "AC":
        if r.selection == "all":
            return "nothing: every selected test passes."
        if r.selection == "practice":
            return "the practice set passes; the hidden tests decide the score (the judge grades them)."
        return "the samples pass; try the practice set (--tests practice), then the hidden tests decide."
    if r.compile.verdict != "OK":
        return "fix the problem above; the tests could not run."
    first = next(c for c in r.tests if c.verdict != "AC")
    if first.check == "run" and NOT_IMPLEMENTED in first.message:
        return _implement_step(r, first, how or Invocation())
    fp = (r.diagnosis or {}).get("fingerprint") or {}
    # A matched mistake explains the first failure unless that failure returned no array to
    # compare and the mistake did not foresee it (fingerprint.py): a wrong shape or an exception
    # of its own comes before the mistake's fix, which alone would leave it.
    matched = fp.get("status") == "match"
    explained = matched and first.name not in fp.get("cases_without_evidence", ())
    if not explained and (first.check in STRUCTURAL_CHECKS or (matched and first.check == "run")):
        return f"fix test {first.name} first ({first.check} check): {_first_sentence(first.message)}"
    if r.diagnosis and r.diagnosis.get("next_step"):
        step: str = r.diagnosis["next_step"]
        return step
    return f"fix test {first.name} first: {_first_sentence(first.message)}"


def use_colour(isatty: bool, no_color_flag: bool, environ: Mapping[str, str]) -> bool:
    """Colour only on a terminal, unless --no-color, NO_COLOR (set and not empty,
    https://no-color.org) or TERM=dumb says otherwise."""
    return isatty and not no_color_flag and not environ.get("NO_COLOR") and environ.get("TERM") != "dumb"
