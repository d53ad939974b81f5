"""run_batch: a class's downloads in, DIR/<id>.json, grades.csv and summary.md out.

Steps: check the arguments; find the students in every input (unpacking zips
safely into DIR/.batch/unpacked/); make ids unique; keep this shard's
students; read the test cases and measure the speed probe once; skip the
students whose result in DIR is still valid (resume); grade the rest
(grading.py), one process per submission (runner.py), locally or one
container each; write the gradebook and the summary. Ctrl-C or SIGTERM ends
every grading process and sandbox, keeps what is done, and writes the outputs
for it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from .. import __version__
from ..feedback.grade import prepared_mistakes
from ..judging.judge import GradeOptions, cases_step, probe_step
from ..problem.bundle import Bundle, BundleError
from ..problem.safe_write import WriteRefused, make_output_folder
from ..sandbox.early import Spawned
from ..sandbox.launcher import SandboxError
from . import docker as docker_mode
from .discovery import discover
from .folder_intake import walk_folder
from .gradebook import mistake_titles
from .gradebook_files import Outputs, write_outputs
from .grading import Fingerprints, Grading, Judging, Progress, triage
from .ids import unique_ids
from .intake import IntakeError
from .layouts import Choice, Entry, single_file, wrapper_prefix
from .lms_files import LMS_FILE_NAMES, LmsOptionError, LmsOptions, check_canvas_assignment, check_points
from .record_seal import load_key
from .runner import interruptible
from .shards import select
from .state import RunKey, StateDirError, load_run, make_state_dirs, run_level_problems, save_run
from .writes import OutputError
from .zip_intake import unpack_zip

EXIT_OK, EXIT_SOME_FAILED, EXIT_BAD = 0, 1, 2
EXIT_INTERRUPTED = 130


class BatchError(Exception):
    """Bad arguments or a broken bundle: nothing was graded (exit 2)."""


@dataclass(frozen=True)
class BatchOptions:
    """What to grade, where to, and how: `batch`'s command line (command.py), or a library caller's."""

    inputs: tuple[Path, ...]
    out: Path
    jobs: int = 0  # 0: the number of cores
    tests: str = "all"
    secret_seed: int | None = None
    random_seed: bool = False  # --secret-seed random: reuse DIR's seed when resuming
    docker: bool = False
    image: str = ""  # --image; "": $GRADER_IMAGE, else the bundle's <id>-grader:local
    shard: tuple[int, int] | None = None
    isolation: str = "auto"
    file: str | None = None  # --file: a glob naming the file to grade among a student's several
    points: float | None = None  # --points: the LMS files' maximum grade (None: the problem's maximum score)
    canvas_assignment: str | None = None  # --canvas-assignment "HW4 (12345)": canvas-gradebook.csv's column
    progress: Callable[[Progress], None] | None = None
    # The class as a caller already found it (`batch --track`, track_batch.py: once for every step),
    # graded instead of finding students in `inputs`, which are still checked.
    students: tuple[Entry, ...] | None = None


@dataclass(frozen=True)
class BatchResult:
    """What a run did: its outputs, how many students it graded or kept, and why it stopped early."""

    out: Path
    outputs: Outputs
    graded: int  # graded by this run
    reused: int  # kept from an earlier run (resume)
    interrupted: str | None  # the signal's name when stopped early
    input_problems: tuple[str, ...]

    @property
    def exit_status(self) -> int:
        """130 when interrupted; 1 when a student or an input could not be judged, or an output
        could not be written; else 0."""
        if self.interrupted:
            return EXIT_INTERRUPTED
        rows = self.outputs.rows
        failed = self.input_problems or self.outputs.problems or any(not r.judged for r in rows)
        return EXIT_SOME_FAILED if failed else EXIT_OK


def default_jobs() -> int:
    """The cores this process may run on (its CPU affinity, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def check_paths(opts: BatchOptions) -> None:
    """BatchError for an input that is missing, a link, not a file or folder, or nested with
    --out; or a --file pattern that is blank or holds a NUL."""
    if not opts.inputs:
        raise BatchError("give at least one INPUT: a folder, a zip file or a submission file")
    out = opts.out.resolve()
    for p in opts.inputs:
        if not p.exists() and not p.is_symlink():
            raise BatchError(f"{p}: no such file or folder")
        if p.is_symlink():
            raise BatchError(f"{p}: is a symbolic link: pass the file or folder itself")
        if not (p.is_dir() or p.is_file()):
            raise BatchError(f"{p}: not a regular file or folder")
        rp = p.resolve()
        if p.is_dir() and (out == rp or rp in out.parents):
            raise BatchError(f"--out {opts.out} is inside the input {p}: its outputs would be read as submissions")
        if out in rp.parents:
            raise BatchError(f"the input {p} is inside --out {opts.out}")
    if opts.file is not None and (not opts.file.strip() or "\0" in opts.file):
        raise BatchError(f"--file {opts.file!r}: give a file name or a glob pattern such as solution.py or *.ipynb")
    lms_options(opts.points, opts.canvas_assignment)


def lms_options(points: float | None, canvas_assignment: str | None) -> LmsOptions:
    """The LMS files' options, checked; BatchError for a bad --points or --canvas-assignment."""
    try:
        return LmsOptions(
            None if points is None else check_points(points),
            None if canvas_assignment is None else check_canvas_assignment(canvas_assignment),
        )
    except LmsOptionError as exc:
        raise BatchError(str(exc)) from None


def find_entries(
    inputs: tuple[Path, ...], work: Path, choice: Choice = Choice()
) -> tuple[list[Entry], list[str], list[str], list[str]]:
    """(entries, refused entry lines, ignored files, refused inputs) of all inputs, the zips
    unpacked into `work`/<n> (n: the input's place, from 1); ids made unique across inputs."""
    entries: list[Entry] = []
    refused: list[str] = []
    ignored: list[str] = []
    problems: list[str] = []
    for n, p in enumerate(inputs, 1):
        label = p.name if p.is_file() else (p.name or str(p))
        try:
            if p.is_dir():
                found = discover(label, walk_folder(p), choice=choice)
            elif p.suffix.lower() == ".zip":
                dest = _emptied(work / f"{n}", p.name)
                found = discover(label, unpack_zip(p, dest, wrapper=wrapper_prefix), unwrap=True, choice=choice)
            else:
                entries.append(single_file(p, label))
                continue
        except IntakeError as exc:
            problems.append(str(exc))
            continue
        entries += found.entries
        refused += [f"{label}: {r.line()}" for r in found.refused]
        ignored += found.ignored
    entries.sort(key=lambda e: (e.student, e.source))
    ids = unique_ids(e.student for e in entries)
    return [replace(e, student=i) for e, i in zip(entries, ids)], refused, ignored, problems


def _emptied(dest: Path, archive: str) -> Path:
    """`dest`, made an empty folder to unpack `archive` into (an earlier run's copy removed);
    IntakeError when it cannot be."""
    if dest.is_symlink():  # planted in a DIR someone else prepared: never unpack through it
        dest.unlink()
    shutil.rmtree(dest, ignore_errors=True)
    try:
        dest.mkdir(parents=True)
    except OSError as exc:
        raise IntakeError(f"{dest}: cannot be made empty to unpack {archive} into ({exc.strerror or exc})") from None
    return dest


def run_batch(bundle: Bundle, opts: BatchOptions, zygote: Spawned | None = None) -> BatchResult:
    """Grade every student of `opts.inputs` into `opts.out` (see the module docstring);
    `zygote` (sandbox/early.py), if given, runs the speed probe.

    Raises BatchError for bad arguments or a broken bundle; an interruption before
    grading starts raises Interrupted, one during grading returns a result saying so."""
    with interruptible():
        try:
            return _run_batch(bundle, opts, zygote)
        finally:
            if zygote is not None:
                zygote.close()


@dataclass(frozen=True)
class Students:
    """Who a run grades, and what finding them in the inputs said."""

    entries: list[Entry]  # this shard's students (every student without --shard)
    all_ids: list[str]  # every student of the inputs, in all shards
    refused: list[str]  # entries of the inputs that were not let through
    ignored: list[str]  # files that are nobody's submission
    problems: list[str]  # inputs refused as a whole


def _run_batch(bundle: Bundle, opts: BatchOptions, zygote: Spawned | None) -> BatchResult:
    """run_batch's steps, in the order the module docstring gives."""
    if opts.docker and not opts.image:
        image = os.environ.get(docker_mode.IMAGE_ENV) or docker_mode.default_image(bundle.spec.id)
        opts = replace(opts, image=image)
    unpacked = _prepare_out(bundle, opts)
    seed = _hidden_seed(opts)
    if opts.docker:
        _check_docker(opts.image)
    students = _find_students(opts, unpacked)
    judging = _prepare_judging(bundle, opts, seed, zygote)
    key = RunKey(
        bundle.spec.id,
        bundle.spec.version,
        __version__,
        opts.tests,
        seed,
        f"docker:{opts.image}" if opts.docker else "local",
    )
    run = _run_record(bundle, opts, key, students)
    try:
        save_run(opts.out, run)
    except OutputError as exc:
        raise BatchError(str(exc)) from None
    prints = Fingerprints.for_bundle(bundle)
    seal_key = load_key()
    triaged = triage(opts.out, students.entries, key, seal_key)
    grading = Grading(opts.out, judging, key, seal_key, triaged, prints, opts.progress)
    interrupted = grading.run(opts.jobs or default_jobs(), bundle.spec.limits.total_time_s + 180)
    lms = lms_options(opts.points, opts.canvas_assignment)
    outputs = write_outputs(opts.out, run, grading.sorted_records(), mistake_titles(bundle), bundle=bundle, lms=lms)
    return BatchResult(opts.out, outputs, grading.counts.done, triaged.reused, interrupted, tuple(students.problems))


def _prepare_out(bundle: Bundle, opts: BatchOptions) -> Path:
    """DIR made (or checked, when resuming) before anything is read: the folder the zips are
    unpacked into; BatchError for bad arguments or a DIR the run may not write."""
    check_paths(opts)
    try:
        make_output_folder(opts.out, bundle.own_parts())
        unpacked = make_state_dirs(opts.out, "unpacked")
    except (WriteRefused, StateDirError) as exc:
        raise BatchError(f"--out {exc}") from None
    damaged = run_level_problems(opts.out, LMS_FILE_NAMES)
    if damaged:
        raise BatchError(damaged[0])
    return unpacked


def _hidden_seed(opts: BatchOptions) -> int | None:
    """The secret seed to judge on: --secret-seed's; with `random`, DIR's when resuming, else a new one."""
    if not opts.random_seed:
        return opts.secret_seed
    previous = load_run(opts.out) or {}
    seed = previous.get("secret_seed")
    return seed if isinstance(seed, int) else int.from_bytes(os.urandom(8), "little")


def _check_docker(image: str) -> None:
    """BatchError unless the Docker engine answers and has `image`."""
    try:
        docker_mode.check_engine(image)
    except docker_mode.DockerUnavailable as exc:
        raise BatchError(str(exc)) from None


def _find_students(opts: BatchOptions, unpacked: Path) -> Students:
    """Every student of the inputs, with unique ids, and this shard's."""
    refused: list[str]
    ignored: list[str]
    problems: list[str]
    if opts.students is not None:
        entries, refused, ignored, problems = list(opts.students), [], [], []
    else:
        entries, refused, ignored, problems = find_entries(opts.inputs, unpacked, Choice(opts.file))
    all_ids = [e.student for e in entries]
    if opts.shard:
        mine = set(select(all_ids, *opts.shard))
        entries = [e for e in entries if e.student in mine]
    return Students(entries, all_ids, refused, ignored, problems)


def _prepare_judging(bundle: Bundle, opts: BatchOptions, seed: int | None, zygote: Spawned | None) -> Judging:
    """The test cases read and, locally, the speed probe measured, once for every student; BatchError
    for a broken bundle or a sandbox that cannot start."""
    # One worker per submission: the batch's jobs already use the cores.
    options = GradeOptions(tests=opts.tests, secret_seed=seed, isolation=opts.isolation, second_worker=False)
    try:
        cases = cases_step(bundle, options)
        if not opts.docker:
            options = replace(options, probe_s=probe_step(bundle, options, zygote))
        if zygote is not None:
            zygote.close()  # unused (Docker) or the probe's, ended: no task inherits its socket
    except BundleError as exc:
        raise BatchError(str(exc)) from None
    except SandboxError as exc:
        raise BatchError(f"the sandbox cannot start here: {exc}") from None
    if opts.docker:
        return Judging(bundle, options, cases, docker_mode.DockerConfig(opts.image))
    # Every forked grading inherits the diagnosis ready: none imports it or loads variants.py again,
    # nor computes the mistakes' outputs on the smallest cases, where every diagnosis starts.
    return Judging(bundle, options, cases, mistakes=prepared_mistakes(bundle, cases) if options.diagnose else None)


def _run_record(bundle: Bundle, opts: BatchOptions, key: RunKey, students: Students) -> dict[str, Any]:
    """DIR/.batch/_run.json: how the run was made and whom it found (state.py reads it back)."""
    return {
        **asdict(key),
        "shard": f"{opts.shard[0]}/{opts.shard[1]}" if opts.shard else None,
        "students": sorted(students.all_ids),
        "shard_students": sorted(e.student for e in students.entries),
        "students_in_shard": len(students.entries),
        "groups": bundle.group_names(opts.tests),
        "refused": students.refused,
        "ignored": students.ignored,
        "input_problems": students.problems,
    }
