"""`batch --track`: a class over the whole track, one `run_batch` per step, one gradebook.

The class is found once (api.find_entries: every layout batch knows), each student with every
.py and .ipynb file of theirs (Entry.candidates). Each file is read once with `ast` for the steps
it answers (step_match.py: the step's function defined at module level, else the step named in
the file's name). Then each step is an ordinary batch run into DIR/<step>/ (every output of
run_batch: verdict JSON, feedback, LMS files, summaries; resume) over the students who handed in
something for it, each with that step's file (BatchOptions.students). A student who handed in
nothing for a step is not in that step's run: an empty cell in DIR/grades.csv, not a CE. A student
none of whose files answers any step is named once (DIR/summary.md, DIR/grades.csv's message) and
counts as not judged for the exit status. track_gradebook.py writes DIR/grades.csv and
DIR/summary.md from the steps' rows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..problem.safe_write import WriteRefused, make_output_folder
from ..sandbox.early import Spawned
from .api import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SOME_FAILED,
    BatchError,
    BatchOptions,
    check_paths,
    find_entries,
    run_batch,
)
from .layouts import Choice, Entry
from .state import StateDirError, make_state_dirs, run_level_problems
from .step_match import match_file, nothing_answers, step_file
from .summary_doc import Block
from .track_class import ClassStep, ClassStudent, Intake, StepRun
from .track_gradebook import write_track_outputs

STEP_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")  # track.yaml's rule: DIR/<name>/ is one plain folder


@dataclass(frozen=True)
class TrackBatchResult:
    """What `batch --track` did: each step's run (in track order), the class, the track files."""

    out: Path
    runs: tuple[StepRun, ...]
    students: tuple[ClassStudent, ...]
    intake: Intake
    interrupted: str | None  # the signal's name when a step's run was stopped early
    problems: tuple[str, ...] = ()  # DIR/grades.csv or DIR/summary.md could not be written
    blocks: tuple[Block, ...] = ()  # DIR/summary.md's content, for the terminal (summary_doc.plain_text)

    @property
    def exit_status(self) -> int:
        """As batch's: 130 interrupted; 1 when a student, an input or an output failed; else 0."""
        if self.interrupted:
            return EXIT_INTERRUPTED
        failed = (
            self.problems
            or self.intake.problems
            or any(s.nothing for s in self.students)
            or any(r.result.exit_status != EXIT_OK for r in self.runs)
        )
        return EXIT_SOME_FAILED if failed else EXIT_OK


def check_options(opts: BatchOptions) -> None:
    """BatchError for what `--track` cannot do (checked before the track is even read)."""
    if opts.shard is not None:
        raise BatchError("--shard with --track: shard each step instead (batch --step NAME --shard K/N)")
    if opts.docker:
        raise BatchError("--docker with --track: grade each step in its image instead (batch --step NAME --docker)")
    if opts.students is not None:
        raise BatchError("batch --track finds the class itself: give inputs, not students")


def _check(steps: Sequence[ClassStep], opts: BatchOptions) -> None:
    """BatchError for bad options, or steps that cannot each have a folder."""
    check_options(opts)
    if not steps:
        raise BatchError("no step of the track is in this copy: nothing to grade")
    names = [s.name for s in steps]
    bad = next((n for n in names if not STEP_NAME.fullmatch(n)), None)
    if bad is not None:
        raise BatchError(f"step name {bad[:60]!r}: use lower-case letters, digits and single '-'")
    if len(set(names)) != len(names):
        raise BatchError("two steps share one name: each step has its own folder DIR/<step>/")


def _prepare(steps: Sequence[ClassStep], opts: BatchOptions) -> Path:
    """DIR made (or checked, when resuming), protecting every step's bundle; the folder the zips
    are unpacked into."""
    check_paths(opts)
    protected = tuple(p for s in steps for p in s.bundle.own_parts())
    try:
        make_output_folder(opts.out, protected)
        unpacked = make_state_dirs(opts.out, "unpacked")
    except (WriteRefused, StateDirError) as exc:
        raise BatchError(f"--out {exc}") from None
    damaged = run_level_problems(opts.out)
    if damaged:
        raise BatchError(damaged[0])
    return unpacked


def find_class(steps: Sequence[ClassStep], opts: BatchOptions, unpacked: Path) -> tuple[list[ClassStudent], Intake]:
    """Every student of the inputs (ids unique), each file read once for the steps it answers."""
    entries, refused, ignored, problems = find_entries(opts.inputs, unpacked, Choice(opts.file))
    keys = [s.key for s in steps]
    max_bytes = max(s.bundle.spec.limits.source_kib for s in steps) * 1024
    students = []
    for e in entries:
        matches = tuple(match_file(c, e.layout, keys, max_bytes, e.within) for c in e.candidates)
        nothing = ""
        if not any(m.answers for m in matches):
            nothing = e.problem if not e.candidates and e.problem else nothing_answers(matches, keys)
        students.append(ClassStudent(e, matches, nothing))
    return students, Intake(tuple(refused), tuple(ignored), tuple(problems))


def step_entries(step: ClassStep, students: Sequence[ClassStudent], choice: Choice) -> tuple[Entry, ...]:
    """The students who handed in something for `step`, each Entry carrying that step's file (or,
    for several files none of which can be chosen, the reason as its problem)."""
    out = []
    for s in students:
        chosen, why = step_file(s.matches, step.key, choice, s.entry.layout)
        if chosen is None and not why:
            continue  # not submitted for this step
        e = s.entry
        source = chosen.source if chosen else e.source
        out.append(replace(e, source=source, path=chosen.path if chosen else None, problem=why, candidates=()))
    return tuple(out)


def run_track_batch(
    steps: Sequence[ClassStep], opts: BatchOptions, zygote: Spawned | None = None, left_out: Sequence[str] = ()
) -> TrackBatchResult:
    """Grade the class of `opts.inputs` for every step into `opts.out` (the module docstring);
    `left_out`: one line per step of the track not in this copy, for the summary. `zygote`
    (sandbox/early.py), if given, runs the first step's speed probe.

    Raises BatchError for bad arguments or a broken bundle (nothing more is graded); an
    interruption before a step's grading starts raises runner.Interrupted."""
    try:
        _check(steps, opts)
        unpacked = _prepare(steps, opts)
        students, intake = find_class(steps, opts, unpacked)
        runs: list[StepRun] = []
        interrupted = None
        for step in steps:
            step_opts = replace(
                opts, out=opts.out / step.name, students=step_entries(step, students, Choice(opts.file))
            )
            result = run_batch(step.bundle, step_opts, zygote)
            zygote = None  # run_batch closed it: the later steps start their own probe
            runs.append(StepRun(step, result))
            if result.interrupted:
                interrupted = result.interrupted
                break
    finally:
        if zygote is not None:
            zygote.close()
    problems, blocks = write_track_outputs(opts.out, steps, runs, students, intake, left_out, opts.tests)
    return TrackBatchResult(opts.out, tuple(runs), tuple(students), intake, interrupted, tuple(problems), tuple(blocks))
