"""The platforms the grader knows, by name: where each one lives and what it offers, behind one signature.

Each platform module (gradescope.py, exercism.py, junit.py, kattis.py,
prairielearn.py, otter.py) registers itself with one module-level record,
`PLATFORM = Platform(...)`: its results-format renderer, its "cannot judge"
renderer and its export, each with the one signature every platform shares
(`Render`, `RenderError`, `Export` below) and None where the platform has no
such thing. formats.py dispatches through `platform(name)` and nothing else.

`LISTED` (listing.py) names the module of each platform and what it offers:
a platform's module, with what it pulls in (PyYAML, the packer), is imported
only when that platform is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..judging.verdict import GradeReport
from ..problem.bundle import Bundle
from .listing import EXPORT_PLATFORMS, LISTED, PLATFORM_FORMATS, Listing

__all__ = [
    "EXPORT_PLATFORMS",
    "LISTED",
    "PLATFORM_FORMATS",
    "Export",
    "Exported",
    "ExportTarget",
    "Listing",
    "Platform",
    "Render",
    "RenderError",
    "Rendering",
    "platform",
]


@dataclass(frozen=True)
class Rendering:
    """What a renderer may read besides the report: the bundle, the run's duration, the time to stamp."""

    bundle: Bundle
    elapsed_s: float | None = None
    timestamp: datetime | None = None


@dataclass(frozen=True)
class ExportTarget:
    """Where an export goes: `out` (already checked by formats.py), the default file stem
    (<id>-<version>-<platform>), and whether `out` names a zip file that `force` may replace."""

    bundle: Bundle
    out: Path
    stem: str
    zip_file: bool = False
    force: bool = False


@dataclass(frozen=True)
class Exported:
    """What an export wrote: the main path, and the one line telling the owner what to do with it."""

    path: Path
    next_step: str


# The one signature of each kind. An export raises files.ExportError with a one-line reason.
Render = Callable[[GradeReport, Rendering], str]
RenderError = Callable[[Rendering, Path, str], str]  # (context, submission, reason)
Export = Callable[[ExportTarget], Exported]


@dataclass(frozen=True)
class Platform:
    """One platform as its module registers it."""

    name: str
    render: Render | None = None
    render_error: RenderError | None = None
    export: Export | None = None


def platform(name: str) -> Platform:
    """The record `name`'s module registers (the module is imported now, once). KeyError if unknown."""
    module = importlib.import_module(f"{__package__}.{LISTED[name].module}")
    record: Platform = module.PLATFORM
    return record
