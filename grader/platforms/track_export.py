"""Every step of a track exported for one platform: `export PLATFORM --track`.

PrairieLearn gets one course folder (prairielearn_course.py: one question per
step, one assessment listing them). Every other platform gets one package per
step, each exactly what `export PLATFORM --step NAME` writes, in
`<out>/<step name>/`: a Kattis problem package per step (each verified on its
own by problemtools), an Otter master notebook per step, a Gradescope
autograder per step. A step whose bundle is not in this copy is left out and
named; `out` must be a new or empty folder, as for any export.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..problem.bundle import Bundle
from ..problem.safe_write import WriteRefused, folder_problem, make_output_folder
from ..problem.track import Track, TrackError, present_bundles
from .files import ExportError
from .formats import export_platform
from .listing import EXPORT_PLATFORMS
from .prairielearn_course import export_prairielearn_course


@dataclass(frozen=True)
class TrackExport:
    """What `export --track` wrote: the folder, one line per package, and the steps left out."""

    out: Path
    written: tuple[str, ...]
    left_out: tuple[str, ...]


def present_steps(track: Track) -> tuple[list[tuple[str, Bundle]], list[str]]:
    """(step name, bundle) of every step in this copy, in order; the others' one-line reasons.
    ExportError for a present step that is broken or disagrees with track.yaml."""
    try:
        present, missing = present_bundles(track)
    except TrackError as exc:
        raise ExportError(str(exc)) from None
    return [(step.name, bundle) for step, bundle in present], [step.missing_text() for step in missing]


def export_track(platform_name: str, track: Track, out: Path) -> TrackExport:
    """Write every present step's package for `platform_name` under `out` (new or empty, in no
    step's bundle: problem/safe_write.py's rules, as for any export)."""
    if platform_name not in EXPORT_PLATFORMS:
        raise ExportError(f"unknown platform {platform_name!r} (use one of {', '.join(EXPORT_PLATFORMS)})")
    steps, left_out = present_steps(track)
    if not steps:
        raise ExportError(f"no step of {track.name!r} is in this copy")
    out = Path(out)
    protected = tuple(p for _, bundle in steps for p in bundle.own_parts())
    if platform_name == "prairielearn":
        path = export_prairielearn_course(track.name, steps, out, protected)
        return TrackExport(path, (f"a PrairieLearn course with {len(steps)} questions",), tuple(left_out))
    try:
        problem = folder_problem(out, protected)
        if problem:
            raise WriteRefused(problem)
        make_output_folder(out, protected)
        if any(out.iterdir()):
            raise WriteRefused(f"{out} is not empty: give a new or empty folder")
    except (WriteRefused, OSError) as exc:
        raise ExportError(str(exc)) from None
    written = []
    for name, bundle in steps:
        result = export_platform(platform_name, bundle, out / name)
        written.append(f"{name}: {result.path}: {result.next_step}")
    return TrackExport(out, tuple(written), tuple(left_out))
