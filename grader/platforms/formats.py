"""Every platform behind one name: result formats for `grade --format` and exports for `export`.

`render_platform` turns a GradeReport into one platform's results document
(Gradescope's or Exercism's results.json, JUnit XML, PrairieLearn's
results.json); `render_platform_error` gives the same format's "could not be
judged" document, so a platform shows the student a reason instead of a
broken run. `export_platform` writes one platform's package into a folder.
Each platform's own module holds the format and the export and registers
them (registry.py); this module only checks the name, and for an export the
output path, then dispatches through the registry.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from ..judging.verdict import GradeReport
from ..problem.bundle import Bundle
from ..problem.safe_write import WriteRefused, folder_problem, make_output_folder, target_problem
from .files import ExportError
from .registry import EXPORT_PLATFORMS, PLATFORM_FORMATS, Exported, ExportTarget, Platform, Rendering, platform

__all__ = [
    "EXPORT_PLATFORMS",
    "PLATFORM_FORMATS",
    "Exported",
    "export_platform",
    "render_platform",
    "render_platform_error",
]


def _results_platform(fmt: str) -> Platform:
    if fmt not in PLATFORM_FORMATS:
        raise ValueError(f"unknown format {fmt!r} (use one of {', '.join(PLATFORM_FORMATS)})")
    return platform(fmt)


def render_platform(
    fmt: str, report: GradeReport, bundle: Bundle, elapsed_s: float | None = None, timestamp: datetime | None = None
) -> str:
    """The report in one platform's format."""
    render = _results_platform(fmt).render
    assert render is not None  # LISTED says it has one; tests/test_formats.py checks
    return render(report, Rendering(bundle, elapsed_s, timestamp))


def render_platform_error(fmt: str, bundle: Bundle, submission: Path, reason: str) -> str:
    """The platform's document for a submission that cannot be judged at all."""
    render_error = _results_platform(fmt).render_error
    assert render_error is not None
    return render_error(Rendering(bundle), Path(submission), reason)


def export_platform(
    platform_name: str, bundle: Bundle, out: Path | None = None, zip_file: bool = False, force: bool = False
) -> Exported:
    """Write `platform_name`'s package into `out`, a new or empty folder (default dist/<id>-<version>-<platform>).

    `zip_file` (Gradescope only, the `export-gradescope` spelling): `out` names the zip itself, which
    replaces an existing file only with `force`. Either is refused by problem/safe_write.py's rules
    (never through a link, never into the bundle) before anything is built. Raises ExportError with
    a one-line reason."""
    if platform_name not in EXPORT_PLATFORMS:
        raise ValueError(f"unknown platform {platform_name!r} (use one of {', '.join(EXPORT_PLATFORMS)})")
    export = platform(platform_name).export
    assert export is not None
    spec = bundle.spec
    stem = f"{spec.id}-{spec.version}-{platform_name}"
    try:
        if out is None:  # the default's folder, dist/, is made; a folder the user names must exist
            out = make_output_folder(bundle.root / "dist") / (stem + (".zip" if zip_file else ""))
        out = Path(out)
        protected = bundle.own_parts()
        problem = target_problem(out, force, protected) if zip_file else folder_problem(out, protected)
        if problem:
            raise WriteRefused(problem)
    except WriteRefused as exc:
        raise ExportError(str(exc)) from None
    return export(ExportTarget(bundle, out, stem, zip_file, force))
