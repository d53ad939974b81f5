"""The track: track.yaml, the ordered steps of a course, each step a bundle folder.

track.yaml sits at the root of the repository (or of a track archive) and is read as strictly
as problem.yaml: its rules are written once, as `TRACK_YAML`, in spec_rules.py's kinds, so an
unknown key, a missing key or a wrong type is a one-line TrackError naming the path. A step's
title and what it exercises are not repeated there: they are read from the step's own
problem.yaml (`step_bundle`), whose `track:` block must agree with track.yaml (`step_problems`).

A step's folder is hostile input like any other path from a file: it must be relative, free of
`..` and of links leading out of the track's folder, or the whole track.yaml is refused.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .bundle import Bundle, BundleError, open_bundle
from .spec_rules import ROOT, Choice, Integer, ListOf, Record, SpecError, Text, json_schema

TRACK_FILE = "track.yaml"
TRACK_YAML_LIMIT = 1 << 16  # bytes: six steps take 1 KB
_NAME = "[a-z0-9]+(-[a-z0-9]+)*"
_STEP = Record(
    {
        "name": Text(pattern=_NAME, message="use lower-case letters, digits and single '-' ({value!r})"),
        "step": Integer(minimum=1, message="must be 1 or more"),
        "bundle": Text(),
        "summary": Text(),
    },
    optional=frozenset({"summary"}),
    def_name="step",
)
TRACK_YAML = Record(
    {
        "schema_version": Choice((1,), "only version 1 is understood, got {value!r}"),
        "id": Text(pattern=_NAME, message="use lower-case letters, digits and single '-' ({value!r})"),
        "name": Text(),
        "title": Text(),
        "version": Text(),
        "steps": ListOf(_STEP, unique_key="name", noun="step"),
    }
)
SCHEMA_TITLE = "track.yaml of a track of problem bundles (schema_version 1)"
SCHEMA_DESCRIPTION = (
    "Generated from TRACK_YAML in grader/problem/track.py, the rules the grader checks track.yaml "
    "against (python3 scripts/schemas.py writes this file). Every object is closed, so an unknown "
    "key is an error. The grader also refuses what JSON Schema cannot say: two steps of one name or "
    "one folder, steps not numbered 1, 2, ... in order, an empty list of steps, and a bundle folder "
    "that is absolute, holds '..' or leads out of the track's folder."
)
# Words in a group's `exercises` that say nothing of one step in particular.
GENERIC_EXERCISES = frozenset({"statement examples", "everything", "efficiency"})


def track_schema_text() -> str:
    """schemas/track.schema.json's exact text: TRACK_YAML written as JSON Schema."""
    return json.dumps(json_schema(TRACK_YAML, SCHEMA_TITLE, SCHEMA_DESCRIPTION, ("step",)), indent=2) + "\n"


class TrackError(ValueError):
    """track.yaml is missing, unreadable, refused, or names no such step (one line)."""


@dataclass(frozen=True)
class TrackStep:
    name: str
    number: int
    folder: str  # as track.yaml writes it, relative to the track's root ("." for the root)
    root: Path  # the folder itself (absolute; it may be absent from this copy)
    summary: str = ""

    @property
    def present(self) -> bool:
        return (self.root / "problem.yaml").is_file()

    def missing_text(self) -> str:
        return f"step {self.number} {self.name!r}: its bundle {self.folder} is not in this copy"


@dataclass(frozen=True)
class Track:
    root: Path  # the folder holding track.yaml
    id: str
    name: str  # each step's problem.yaml says it as track.name
    title: str
    version: str
    steps: tuple[TrackStep, ...]

    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.steps)

    def step(self, key: str) -> TrackStep:
        """The step named `key`, or numbered `key`; TrackError listing the known names."""
        for s in self.steps:
            if key in (s.name, str(s.number)):
                return s
        known = ", ".join(f"{s.number} {s.name}" for s in self.steps)
        raise TrackError(f"no step {key!r} in {self.root / TRACK_FILE}: the steps are {known}")

    def step_at(self, folder: Path) -> TrackStep | None:
        """The step whose bundle is `folder`, if any."""
        target = folder.resolve()
        return next((s for s in self.steps if s.root.resolve() == target), None)


def _folder_problem(root: Path, folder: str) -> str | None:
    """Why a step's folder may not be used: absolute, `..`, backslashes, or leaving `root`."""
    pure = PurePosixPath(folder)
    if not folder or "\\" in folder or "\0" in folder:
        return "must be a relative POSIX path"
    if pure.is_absolute() or folder.startswith("~"):
        return "must be relative to the track's folder, not absolute"
    if ".." in pure.parts:
        return "may not contain '..'"
    try:
        inside = (root / folder).resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError) as exc:  # a link loop (RuntimeError before Python 3.13)
        return f"cannot be resolved: {exc}"
    return None if inside else "leads out of the track's folder (a symbolic link?)"


def parse_track(raw: object, root: Path) -> Track:
    """The Track of a parsed track.yaml at `root`, or TrackError with the path of the fault."""
    try:
        doc = TRACK_YAML.check(raw, ROOT)
    except SpecError as exc:
        raise TrackError(f"{TRACK_FILE}: {str(exc).removeprefix(f'{ROOT}: ')}") from None
    if not doc["steps"]:
        raise TrackError(f"{TRACK_FILE}: steps: a track has at least one step")
    steps = []
    for i, s in enumerate(doc["steps"]):
        problem = _folder_problem(root, s["bundle"])
        if problem:
            raise TrackError(f"{TRACK_FILE}: steps[{i}].bundle {s['bundle']!r} {problem}")
        if s["step"] != i + 1:
            raise TrackError(f"{TRACK_FILE}: steps[{i}].step is {s['step']}: the steps are numbered 1, 2, ... in order")
        steps.append(TrackStep(s["name"], s["step"], s["bundle"], root / s["bundle"], s.get("summary", "")))
    folders = [os.path.normpath(s.folder) for s in steps]
    if len(set(folders)) != len(folders):
        raise TrackError(f"{TRACK_FILE}: two steps share one bundle folder")
    return Track(root, doc["id"], doc["name"], doc["title"], doc["version"], tuple(steps))


def load_track(root: Path) -> Track:
    """track.yaml in the folder `root` (a regular file, plain YAML), or TrackError, one line."""
    from .spec_cache import YAMLRefused, parse_yaml, read_bundle_file

    path = Path(root) / TRACK_FILE
    if not path.exists() and not path.is_symlink():
        raise TrackError(f"no {TRACK_FILE} in {root}: this folder holds no track")
    try:
        text = read_bundle_file(path, TRACK_YAML_LIMIT).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TrackError(f"cannot read {path}: {exc}") from None
    try:
        raw = parse_yaml(text)
    except YAMLRefused as exc:  # the parser's reason spans lines and speaks of problem.yaml, its usual file
        reason = " ".join(str(exc).split()).replace("problem.yaml", TRACK_FILE)
        raise TrackError(f"{path} is not valid YAML: {reason}") from None
    return parse_track(raw, Path(root).resolve())


def find_track_root(cwd: Path, default: Path) -> Path | None:
    """Where track.yaml is: the current folder when it holds one, else `default` (the folder the
    grader was installed from) when it does, else None."""
    for folder in (Path(cwd), Path(default)):
        if os.path.lexists(folder / TRACK_FILE):
            return folder
    return None


def step_problems(track: Track, step: TrackStep, bundle: Bundle) -> list[str]:
    """Where the step's problem.yaml `track:` block disagrees with track.yaml, one line each."""
    spec, where = bundle.spec, f"{step.folder}/problem.yaml"
    out = []
    if spec.track_name != track.name:
        out.append(f"{where}: track.name is {spec.track_name!r}, track.yaml's name is {track.name!r}")
    if spec.track_step != step.number:
        out.append(f"{where}: track.step is {spec.track_step}, track.yaml makes {step.name!r} step {step.number}")
    if spec.track_steps != len(track.steps):
        out.append(f"{where}: track.steps is {spec.track_steps}, track.yaml lists {len(track.steps)} steps")
    return out


def step_bundle(track: Track, step: TrackStep) -> Bundle:
    """The step's bundle, checked against track.yaml; TrackError, one line, when it is not in this
    copy, is broken, or disagrees with track.yaml."""
    if not step.present and not os.path.lexists(step.root / "problem.yaml"):
        raise TrackError(step.missing_text())
    try:
        bundle = open_bundle(step.root)
    except BundleError as exc:
        raise TrackError(f"step {step.number} {step.name!r}: {exc}") from None
    problems = step_problems(track, step, bundle)
    if problems:
        raise TrackError(f"{problems[0]} (track.yaml and problem.yaml must agree)")
    return bundle


def present_bundles(
    track: Track, steps: Sequence[TrackStep] | None = None
) -> tuple[list[tuple[TrackStep, Bundle]], list[TrackStep]]:
    """Each step (of `steps`, default all) in this copy with its bundle (step_bundle: TrackError
    when one is broken or disagrees with track.yaml), and the steps this copy lacks, in order."""
    present, missing = [], []
    for step in track.steps if steps is None else steps:
        if step.present:
            present.append((step, step_bundle(track, step)))
        else:
            missing.append(step)
    return present, missing


def exercises(bundle: Bundle) -> tuple[str, ...]:
    """What a step exercises: its groups' `exercises`, each once, in order, the generic ones left out."""
    seen = dict.fromkeys(e for g in bundle.spec.groups for e in g.exercises if e not in GENERIC_EXERCISES)
    return tuple(seen)
