"""Every platform behind one name: result formats for `grade --format` and exports for `export`.

`render_platform` turns a GradeReport into one platform's results document
(Gradescope's or Exercism's results.json, JUnit XML, PrairieLearn's
results.json); `render_platform_error` gives the same format's "could not be
judged" document, so a platform shows the student a reason instead of a
broken run. `export_platform` writes one platform's package into a folder.
Each platform's own module holds the format and the export; this module only
dispatches by name.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..problem.bundle import Bundle
from ..judging.verdict import GradeReport

PLATFORM_FORMATS = ("gradescope", "exercism", "junit", "prairielearn")
EXPORT_PLATFORMS = ("gradescope", "kattis", "prairielearn", "otter")


@dataclass(frozen=True)
class Exported:
    """What an export wrote: the main path, and the one line telling the owner what to do with it."""
    path: Path
    next_step: str


def render_platform(fmt: str, report: GradeReport, bundle: Bundle, elapsed_s: float | None = None,
                    timestamp: datetime | None = None) -> str:
    """The report in one platform's format."""
    if fmt == "gradescope":
        from . import gradescope
        return gradescope.render(report, elapsed_s)
    if fmt == "exercism":
        from . import exercism
        return exercism.render(report, bundle.spec, exercism.visible_cases(bundle))
    if fmt == "junit":
        from . import junit
        return junit.render(report, elapsed_s, timestamp)
    if fmt == "prairielearn":
        from . import prairielearn
        return prairielearn.render(report)
    raise ValueError(f"unknown format {fmt!r} (use one of {', '.join(PLATFORM_FORMATS)})")


def render_platform_error(fmt: str, bundle: Bundle, submission: Path, reason: str) -> str:
    """The platform's document for a submission that cannot be judged at all."""
    if fmt == "gradescope":
        from . import gradescope
        return gradescope.render_error(bundle.spec, reason)
    if fmt == "exercism":
        from . import exercism
        return exercism.render_error(reason, Path(submission).parent)
    if fmt == "junit":
        from . import junit
        return junit.render_error(bundle.spec, reason)
    if fmt == "prairielearn":
        from . import prairielearn
        return prairielearn.render_error(bundle.spec, reason)
    raise ValueError(f"unknown format {fmt!r} (use one of {', '.join(PLATFORM_FORMATS)})")


def export_platform(platform: str, bundle: Bundle, out: Path | None = None, zip_file: bool = False,
                    force: bool = False) -> Exported:
    """Write `platform`'s package into `out`, a new or empty folder (default dist/<id>-<version>-<platform>).

    `zip_file` (Gradescope only, the `export-gradescope` spelling): `out` names the zip itself, which
    replaces an existing file only with `force`. Either is refused by problem/safe_write.py's rules
    (never through a link, never into the bundle) before anything is built. Raises ExportError with
    a one-line reason."""
    from .files import ExportError
    from ..maintain.pack import PackError
    from ..problem.safe_write import WriteRefused, folder_problem, make_output_folder, target_problem
    spec = bundle.spec
    stem = f"{spec.id}-{spec.version}-{platform}"
    try:
        if out is None:     # the default's folder, dist/, is made; a folder the user names must exist
            out = make_output_folder(bundle.root / "dist") / (stem + (".zip" if zip_file else ""))
        out = Path(out)
        protected = bundle.own_parts()
        problem = target_problem(out, force, protected) if zip_file else folder_problem(out, protected)
        if problem:
            raise WriteRefused(problem)
        return _export(platform, bundle, out, stem, zip_file, force)
    except (PackError, WriteRefused) as exc:
        raise ExportError(str(exc)) from None


def _export(platform: str, bundle: Bundle, out: Path, stem: str, zip_file: bool, force: bool) -> Exported:
    if platform == "gradescope":
        from .files import write_export
        from . import gradescope
        if not zip_file:
            write_export(out, {})          # the same folder checks as every export
        path = gradescope.export_gradescope(bundle, out if zip_file else out / f"{stem}.zip", force)
        return Exported(path, f"{path.stat().st_size / 1e6:.2f} MB; upload it as the autograder of a "
                              "Gradescope programming assignment")
    if platform == "kattis":
        from . import kattis
        path = kattis.export_kattis(bundle, out)
        return Exported(path, f"check it with `{kattis.verify_command(path)}` (PyPI problemtools, with a "
                              "python3 that has NumPy on PATH: the languages.yaml beside it makes python3 "
                              "CPython), then upload the folder")
    if platform == "prairielearn":
        from . import prairielearn
        path = prairielearn.export_prairielearn(bundle, out)
        return Exported(path, f"copy it into your course's questions/ folder; build and push the grading image "
                              f"{prairielearn.image_name(bundle.spec)} with {path}/image/Dockerfile (docs/platforms.md)")
    if platform == "otter":
        from . import otter
        path = otter.export_otter(bundle, out)
        return Exported(path, f"run `otter assign {path} DIST` (PyPI otter-grader): it checks that the "
                              "reference scores 100% and writes DIST/student/ and DIST/autograder/")
    raise ValueError(f"unknown platform {platform!r} (use one of {', '.join(EXPORT_PLATFORMS)})")
