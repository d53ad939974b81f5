"""PrairieLearn: a whole track as one course folder, one question per step.

The layout is PrairieLearn's own (docs/courseConfiguration.md,
docs/courseInstance.md, docs/assessment/index.md; schemas in
apps/prairielearn/src/schemas/schemas/, read at PrairieLearn commit
88fb8556a7): `infoCourse.json` at the top (required `name`, `title`,
`topics`; no other properties than the schema's), `questions/<track>/<step>/`
holding each step's question folder exactly as `export prairielearn` writes it
for one bundle (prairielearn.py), and one course instance
`courseInstances/<track>/` (required `uuid`, `longName`) with one Homework
assessment listing the steps in track order (required `uuid`, `type`,
`title`, `set`, `number`; `zones` of questions by id). Every topic and tag the
questions use is declared in infoCourse.json, so PrairieLearn's sync adds
none with a warning (sync/course-db.ts adds only its default tags and
assessment sets). UUIDs are derived from the track's and steps' names and
versions, so exporting again gives the same course; an instructor sets who may
see the course instance (its `publishing`/access rules) in PrairieLearn.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..problem.bundle import Bundle
from .files import ExportError, ExportFile, write_export
from .prairielearn import info_json, prairielearn_files

POINTS_PER_STEP = 10  # each step's question is worth the same; its score fraction scales it


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug or "track"


def _uuid(*parts: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, ":".join(("vit-grader", "prairielearn-course", *parts))))


def course_files(track_name: str, steps: Sequence[tuple[str, Bundle]]) -> dict[str, ExportFile]:
    """The course folder's files for `steps` ((step name, bundle) in track order)."""
    if not steps:
        raise ExportError("the track has no step to export")
    names = [name for name, _ in steps]
    bad = [n for n in names if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", n)]
    if bad or len(set(names)) != len(names):
        raise ExportError(f"step names must be distinct lower-case words joined by '-': {', '.join(bad or names)}")
    slug = _slug(track_name)
    versions = ",".join(f"{n}@{b.spec.version}" for n, b in steps)
    files: dict[str, ExportFile] = {}
    tags: dict[str, None] = {}
    topics: dict[str, None] = {}
    zone: list[dict[str, Any]] = []
    for name, bundle in steps:
        info = info_json(bundle.spec)
        topics[info["topic"]] = None
        tags.update(dict.fromkeys(info["tags"]))
        for rel, f in prairielearn_files(bundle).items():
            files[f"questions/{slug}/{name}/{rel}"] = f
        zone.append({"id": f"{slug}/{name}", "autoPoints": POINTS_PER_STEP, "maxAutoPoints": POINTS_PER_STEP})
    course = {
        "uuid": _uuid(slug),
        "name": "".join(word[0] for word in track_name.split()).upper() or "TRACK",  # a short code, as 'TAM 212'
        "title": track_name,
        "topics": [{"name": t, "color": "blue1", "description": f"The {t} track"} for t in topics],
        "tags": [{"name": t, "color": "gray1"} for t in tags],
    }
    instance = {"uuid": _uuid(slug, "instance"), "longName": f"{track_name}: every step"}
    assessment = {
        "uuid": _uuid(slug, "assessment", versions),
        "type": "Homework",
        "title": f"{track_name}: the {len(steps)} steps",
        "set": "Homework",
        "number": "1",
        "zones": [{"title": track_name, "questions": zone}],
    }
    base = f"courseInstances/{slug}"
    files["infoCourse.json"] = _json(course)
    files[f"{base}/infoCourseInstance.json"] = _json(instance)
    files[f"{base}/assessments/{slug}/infoAssessment.json"] = _json(assessment)
    return files


def _json(doc: dict[str, Any]) -> ExportFile:
    return ExportFile((json.dumps(doc, indent=2) + "\n").encode())


def export_prairielearn_course(
    track_name: str, steps: Sequence[tuple[str, Bundle]], out_dir: Path, protected: Sequence[Path] = ()
) -> Path:
    """Write the course folder `out_dir` (new or empty, outside `protected`); returns it."""
    write_export(out_dir, course_files(track_name, steps), protected)
    return Path(out_dir)
