"""The class over a track, as records: the steps graded, each student with the steps each of their
files answers, each step's run, and what finding the class said (track_batch.py makes them,
track_gradebook.py writes DIR/grades.csv and DIR/summary.md from them).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..problem.bundle import Bundle
from .api import BatchResult
from .layouts import Entry
from .step_match import FileMatch, StepKey


@dataclass(frozen=True)
class ClassStep:
    """One step of the track graded for the class: its name (DIR/<name>/), title and bundle."""

    name: str
    title: str
    bundle: Bundle
    number: int  # its place in the track, from 1

    @property
    def key(self) -> StepKey:
        return StepKey(self.name, self.bundle.spec.function)

    @property
    def label(self) -> str:
        return f"step {self.number} {self.name}"


@dataclass(frozen=True)
class ClassStudent:
    """One student of the class: as found, each file's steps, and why nothing answers a step."""

    entry: Entry
    matches: tuple[FileMatch, ...]
    nothing: str  # why no file of theirs answers any step ("" when one does)


@dataclass(frozen=True)
class StepRun:
    step: ClassStep
    result: BatchResult


@dataclass(frozen=True)
class Intake:
    """What finding the class said, once for every step."""

    refused: tuple[str, ...]  # entries of the inputs not let through
    ignored: tuple[str, ...]  # files that are nobody's submission
    problems: tuple[str, ...]  # inputs refused as a whole
