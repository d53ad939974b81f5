"""The track on the command line: `--step NAME` (or its number) on every command that takes
`--bundle`, resolved through track.yaml, and the `track` command's table of the steps.

track.yaml is looked for in the current folder, else in the folder the grader was installed
from (a clone or an unpacked track archive: both hold it at their root).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from ..problem.bundle import Bundle, BundleError, default_root, open_bundle
from ..problem.track import (
    TRACK_FILE,
    Track,
    TrackError,
    TrackStep,
    exercises,
    find_track_root,
    load_track,
    step_bundle,
    step_problems,
)
from ..sandbox.untrusted import clean
from .commands import CannotJudge

FIELD_CAP = 300  # characters of one field: a title, a summary, an exercise
WIDTH = 96  # the table's lines; what a step exercises wraps at a word


def current_track(cwd: Path | None = None) -> Track:
    """The track of the current folder, else of the installed grader's folder; TrackError if none."""
    here = Path(cwd) if cwd is not None else Path(os.getcwd())
    root = find_track_root(here, default_root())
    if root is None:
        raise TrackError(f"no {TRACK_FILE} in {here} nor in {default_root()}: this copy holds no track")
    return load_track(root)


def step_root(step: str, given: str | None, cwd: Path | None = None) -> Path:
    """The folder of the step named (or numbered) `step`, which --bundle, if `given` too, must
    name. CannotJudge, one line, for an unknown step, a step not in this copy, a step whose
    problem.yaml disagrees with track.yaml, or a --bundle that is another folder."""
    try:
        track = current_track(cwd)
        chosen = track.step(step)
        step_bundle(track, chosen)  # present, loadable, and agreeing with track.yaml
    except TrackError as exc:
        raise CannotJudge(str(exc)) from None
    if given is not None and Path(given).resolve() != chosen.root.resolve():
        raise CannotJudge(
            f"--step {step} is the bundle {chosen.folder} but --bundle names {given}: give one of the two"
        )
    return chosen.root


@dataclass(frozen=True)
class StepRow:
    """One line of `track`'s table."""

    number: int
    name: str
    folder: str
    present: bool
    title: str
    exercises: tuple[str, ...]
    summary: str
    problems: tuple[str, ...]  # one line each: a broken bundle, a disagreement with track.yaml

    def as_json(self) -> dict[str, object]:
        return {
            "step": self.number,
            "name": self.name,
            "folder": self.folder,
            "present": self.present,
            "title": self.title,
            "summary": self.summary,
            "exercises": list(self.exercises),
            "problems": list(self.problems),
        }


def _shown(text: str) -> str:
    """A field of track.yaml or problem.yaml as one line of the table: the files come from outside
    (an archive from anywhere), so sandbox/untrusted.py's `clean` makes any control visible."""
    return clean(" ".join(text.split()), FIELD_CAP)


def step_row(track: Track, step: TrackStep) -> StepRow:
    row = _step_row(track, step)
    return StepRow(
        row.number,
        _shown(row.name),
        _shown(row.folder),
        row.present,
        _shown(row.title),
        tuple(_shown(e) for e in row.exercises),
        _shown(row.summary),
        tuple(_shown(p) for p in row.problems),
    )


def _step_row(track: Track, step: TrackStep) -> StepRow:
    if not step.present and not os.path.lexists(step.root / "problem.yaml"):
        return StepRow(step.number, step.name, step.folder, False, "", (), step.summary, ())
    try:
        bundle: Bundle = open_bundle(step.root)
    except BundleError as exc:
        problem = f"step {step.number} {step.name!r}: {exc}"
        return StepRow(step.number, step.name, step.folder, True, "", (), step.summary, (problem,))
    problems = tuple(step_problems(track, step, bundle))
    return StepRow(
        step.number, step.name, step.folder, True, bundle.spec.title, exercises(bundle), step.summary, problems
    )


def render_track(track: Track, rows: list[StepRow]) -> str:
    """The table: number, name, title, folder, present or missing; then what each exercises."""
    lines = [f"{_shown(track.title)} ({len(rows)} steps, {_shown(str(track.root / TRACK_FILE))})", ""]
    width = max(len(r.name) for r in rows) if rows else 0
    title_width = max((len(r.title) for r in rows), default=0) or 1
    for r in rows:
        state = "present" if r.present else "missing (not in this copy)"
        lines.append(f"{r.number:>2}  {r.name:<{width}}  {r.title or '-':<{title_width}}  {r.folder:<24}  {state}")
        if r.summary:
            lines.append(f"{'':>4}{r.summary}")
        if r.exercises:
            lines += textwrap.wrap(
                ", ".join(r.exercises), WIDTH, initial_indent="    exercises: ", subsequent_indent=" " * 15
            )
    lines += ["", "Work on one: `python -m grader grade FILE --step NAME` (a name or a number)."]
    return "".join(f"{ln}\n" for ln in lines)


def track_command(args: argparse.Namespace, bundle: Bundle | None) -> int:
    """`track [--json]`: the steps; exit 1 when a present step disagrees with track.yaml."""
    try:
        track = current_track()
    except TrackError as exc:
        raise CannotJudge(str(exc)) from None
    rows = [step_row(track, s) for s in track.steps]
    if args.json:
        doc = {k: _shown(v) for k, v in (("id", track.id), ("name", track.name), ("title", track.title))}
        doc["version"] = _shown(track.version)
        sys.stdout.write(json.dumps({**doc, "steps": [r.as_json() for r in rows]}, indent=1) + "\n")
    else:
        sys.stdout.write(render_track(track, rows))
    problems = [p for r in rows for p in r.problems]
    for p in problems:
        print(f"grader: {p}", file=sys.stderr)
    return 1 if problems else 0
