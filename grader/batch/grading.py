"""The grading part of a batch run: which students to grade, and each one's record as it ends.

A run first sorts its students (triage): one whose sealed result in DIR is
still valid is kept (resume, record_seal.py); one with a folder, link or FIFO
where its files belong in DIR is "could not be judged", and nothing of it is
written; the rest are graded. Grading runs one task per student, in a forked
process each (runner.py), locally (local.py) or in a container (docker.py),
with what the run prepared once (Judging). As each task ends, this process
seals its record over the verdict JSON written, saves it in DIR/.batch/ and
counts it for the progress line; a task whose process failed gets the
verdict JSON of a CE saying so.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..judging.judge import GradeOptions
from ..judging.notebook import NotebookError, extract
from ..judging.paths import read_regular
from ..judging.source import MAX_NOTEBOOK_BYTES
from ..judging.verdict import GradeReport
from ..problem.bundle import Bundle
from ..problem.cases import TestCase
from ..report.json_report import render_json
from ..sandbox.early import Spawned
from ..sandbox.master import Master
from . import docker as docker_mode
from .layouts import Entry
from .local import Task, file_sha256, grade_task, unjudged_report
from .record_seal import file_digest, sealed, verified
from .runner import Interrupted, run_parallel
from .similarity import fingerprint, windows
from .state import RunKey, StudentRecord, reusable, save_record, student_output_problem
from .writes import OutputError, atomic_write

if TYPE_CHECKING:
    from ..feedback.fingerprint import MistakeOutputs


@dataclass(frozen=True)
class Progress:
    """How far a run's grading is, for the progress line (progress.py)."""

    done: int
    total: int
    not_judged: int
    not_ac: int
    elapsed_s: float

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the pace so far; None before the first student is done."""
        return None if not self.done else self.elapsed_s / self.done * (self.total - self.done)


@dataclass(frozen=True)
class Judging:
    """What grading any one student needs, prepared once by the run: the bundle, the options (with
    the speed probe), the test cases, and the container to grade in (None: locally)."""

    bundle: Bundle
    options: GradeOptions
    cases: list[TestCase]
    docker: docker_mode.DockerConfig | None = None
    mistakes: MistakeOutputs | None = None  # the diagnosis, prepared before the first fork

    def grade(self, task: Task, zygote: Spawned | None = None) -> dict[str, Any]:
        """Grade one student (in the task's forked process) and write its verdict JSON (locally, in
        `zygote` if given: one the run's master forked)."""
        if self.docker is not None:
            return docker_mode.docker_task(self.docker, self.bundle, self.options, self.cases, task)
        return grade_task(self.bundle, self.options, self.cases, task, zygote, self.mistakes)

    def master(self) -> Master | None:
        """A clean master for this run's local gradings (sandbox/master.py); None in a container."""
        if self.docker is not None:
            return None
        return Master.start(self.bundle.spec.allowed_imports.all_modules(), self.options.isolation)

    def unjudged(self, reason: str) -> GradeReport:
        """The report of a CE saying `reason`, for a student who could not be graded."""
        return unjudged_report(self.bundle, self.options, self.cases, reason)


@dataclass(frozen=True)
class Fingerprints:
    """How a student's similarity fingerprint is taken: the k-grams of the code, less the starter's."""

    starter: set[int]
    source_limit: int  # bytes: a larger file is a CE, and is not tokenized

    @classmethod
    def for_bundle(cls, bundle: Bundle) -> Fingerprints:
        starter_path = bundle.root / "starter" / "solution.py"
        starter = windows(starter_path.read_text(encoding="utf-8")) if starter_path.is_file() else set()
        return cls(starter, bundle.spec.limits.source_kib * 1024)

    def of(self, path: Path | None) -> list[int]:
        """The fingerprint of a student's file ([] for none, or one that cannot be read)."""
        return fingerprint(_source_text(path, self.source_limit), self.starter) if path else []


def _source_text(path: Path, limit: int) -> str:
    """The code to fingerprint: "" for a file over the submission limit (a CE anyway), so a hostile
    file cannot make the batch tokenize megabytes in the parent (1 MiB of '(' takes about 25 s)."""
    notebook = path.name.lower().endswith(".ipynb")
    cap = MAX_NOTEBOOK_BYTES if notebook else limit
    try:
        raw = read_regular(path, cap + 1)
    except OSError:
        return ""
    if len(raw) > cap:
        return ""
    text = raw.decode("utf-8", "replace")
    if notebook:
        try:
            text = extract(text, limit).source  # code over the limit is refused before it is read
        except (NotebookError, ValueError, RecursionError, MemoryError):
            return ""
    return text if len(text.encode("utf-8", "surrogatepass")) <= limit else ""


@dataclass(frozen=True)
class Triage:
    """A run's students sorted: those it keeps, and those it grades."""

    records: dict[str, StudentRecord]  # kept from an earlier run, or not judged (DIR damaged where its files go)
    todo: list[tuple[Entry, str]]  # to grade, each with its file's sha256
    reused: int  # how many of `records` were kept from an earlier run


def triage(out: Path, entries: list[Entry], key: RunKey, seal_key: bytes | None) -> Triage:
    """Sort `entries` (see the module docstring): a student's result is kept only if its record has
    the same file hash and run key, and its seal verifies over the verdict JSON in DIR."""
    records: dict[str, StudentRecord] = {}
    todo: list[tuple[Entry, str]] = []
    reused = 0
    for e in entries:
        sha = file_sha256(e.path)
        damaged = student_output_problem(out, e.student)
        if damaged:
            records[e.student] = StudentRecord(
                e.student, e.source, e.layout, e.name, e.late, sha, key, 0.0, False, damaged, "CE", lms=e.lms
            )
            continue
        kept = reusable(out, e.student, sha, key)
        if (
            kept is not None
            and kept.source == e.source
            and kept.lms == e.lms
            and verified(kept, file_digest(out / f"{e.student}.json", out), seal_key)
        ):
            records[e.student] = kept
            reused += 1
        else:
            todo.append((e, sha))
    return Triage(records, todo, reused)


@dataclass
class _Counts:
    done: int = 0
    not_judged: int = 0
    not_ac: int = 0


class Grading:
    """One run's grading of the students its triage left to grade (see the module docstring)."""

    def __init__(
        self,
        out: Path,
        judging: Judging,
        key: RunKey,
        seal_key: bytes | None,
        triaged: Triage,
        prints: Fingerprints,
        progress: Callable[[Progress], None] | None,
    ) -> None:
        self.out, self.judging, self.key, self.seal_key = out, judging, key, seal_key
        self.prints, self.progress = prints, progress
        self.todo = triaged.todo
        self.records = dict(triaged.records)
        token = os.urandom(4).hex()  # in this run's container names: two runs never remove each other's
        in_docker = judging.docker is not None
        self.tasks = [
            Task(
                e.student,
                e.path,
                e.problem,
                out / f"{e.student}.json",
                container=f"grader-batch-{token}-{i}" if in_docker else "",
                within=e.within,
            )
            for i, (e, _) in enumerate(self.todo)
        ]
        self.counts = _Counts()
        self.started = time.monotonic()
        self.master: Master | None = None  # while `run` runs: forks each task's zygote

    def run(self, jobs: int, timeout_s: float) -> str | None:
        """Grade every task, at most `jobs` at once; the signal's name if interrupted, else None.
        Every container of the run is removed however it ends, and its master is ended.

        One master serves every job: it only forks (a few milliseconds a submission), each
        request is one record on its socket, and N masters would cost N start-ups and N
        copies of NumPy's memory for nothing."""
        self.master = self.judging.master() if self.tasks else None
        try:
            run_parallel(
                self.tasks, self.work, jobs, timeout_s=timeout_s, on_done=self.on_done, on_tick=self.report_progress
            )
        except Interrupted as exc:
            return str(exc)
        finally:
            if self.master is not None:
                self.master.close()
                self.master = None
            if self.judging.docker is not None:
                docker_mode.remove_containers([t.container for t in self.tasks])
        return None

    def keep_master(self) -> None:
        """Start a new master if this run's has died (the tasks started from now on use it)."""
        if self.master is not None and not self.master.alive():
            self.master.close()
            self.master = self.judging.master()

    def sorted_records(self) -> list[StudentRecord]:
        """Every student's record (kept, not judged, graded now), by id."""
        return [self.records[s] for s in sorted(self.records)]

    def work(self, task: Task) -> dict[str, Any]:
        """One task, in its own forked process: the grading's result and the file's fingerprint."""
        # The similarity fingerprint is taken in the task's own process: in parallel,
        # not before the first grading starts (0.15 s for 40 students).
        zygote = self.master.zygote() if self.master is not None and task.path is not None else None
        try:
            graded = self.judging.grade(task, zygote)
        finally:
            if zygote is not None:
                zygote.close()  # unless its Sandbox took it (a CE never starts one)
        return {**graded, "fingerprint": self.prints.of(task.path)}

    def on_done(self, index: int, result: dict[str, Any]) -> None:
        """A task ended (called in this process): its student's record made, sealed, saved, counted."""
        self.keep_master()
        entry, sha = self.todo[index]
        prints = result.get("fingerprint")
        if not (isinstance(prints, list) and all(type(x) is int for x in prints)):
            prints = self.prints.of(entry.path)
        if "error" in result:  # the grading process itself failed: the student is not judged
            result = self.failed(self.tasks[index], result["error"])
        rec = self.record(entry, sha, result, prints)
        self.records[entry.student] = rec
        self.counts.done += 1
        self.counts.not_judged += not rec.judged
        self.counts.not_ac += rec.verdict != "AC"
        self.report_progress()

    def failed(self, task: Task, error: object) -> dict[str, Any]:
        """The result for a task whose grading process failed: not judged, its verdict JSON that of
        a CE saying so (or, when that cannot be written, the reason says why)."""
        reason = f"grading failed: {error}"
        result: dict[str, Any] = {"verdict": "CE", "judged": False, "reason": reason, "seconds": 0.0}
        try:
            atomic_write(task.out_json, render_json(self.judging.unjudged(reason)))
        except OutputError as exc:
            result["reason"] = f"{reason}; {exc}"
        return result

    def record(self, entry: Entry, sha: str, result: dict[str, Any], prints: list[int]) -> StudentRecord:
        """The student's record, sealed over the verdict JSON in DIR and saved in DIR/.batch/; when it
        cannot be saved, kept in memory as not judged, so the gradebook still lists the student."""
        rec = StudentRecord(
            entry.student,
            entry.source,
            entry.layout,
            entry.name,
            entry.late,
            sha,
            self.key,
            float(result["seconds"]),
            bool(result["judged"]),
            str(result["reason"]),
            str(result["verdict"]),
            prints,
            lms=entry.lms,
        )
        rec = sealed(rec, file_digest(self.out / f"{entry.student}.json", self.out), self.seal_key)
        try:
            save_record(self.out, rec)
        except OutputError as exc:
            rec = replace(rec, judged=False, reason=str(exc))
        return rec

    def report_progress(self) -> None:
        """Tell the run's progress callback, if it has one, how far the grading is."""
        if self.progress:
            self.progress(
                Progress(
                    self.counts.done,
                    len(self.tasks),
                    self.counts.not_judged,
                    self.counts.not_ac,
                    time.monotonic() - self.started,
                )
            )
