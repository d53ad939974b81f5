"""run_batch: a class's downloads in, DIR/<id>.json, grades.csv and summary.md out.

Steps: check the arguments; find the students in every input (unpacking zips
safely into DIR/.batch/unpacked/); make ids unique; keep this shard's
students; read the test cases and measure the speed probe once; skip the
students whose result in DIR is still valid (resume); grade the rest, one
process per submission (runner.py), locally or one container each; write the
gradebook and the summary. Ctrl-C or SIGTERM ends every grading process and
sandbox, keeps what is done, and writes the outputs for it.
"""
from __future__ import annotations

import os
import shutil
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable

from .. import __version__
from ..judging.judge import GradeOptions, cases_step, probe_step
from ..judging.notebook import NotebookError, extract_code
from ..judging.paths import read_regular
from ..judging.source import MAX_NOTEBOOK_BYTES
from ..problem.bundle import Bundle, BundleError
from ..problem.safe_write import WriteRefused, make_output_folder
from ..report.json_report import render_json
from ..sandbox.early import Spawned
from ..sandbox.launcher import SandboxError
from . import docker as docker_mode
from .gradebook_files import Outputs, write_outputs
from .ids import unique_ids
from .folder_intake import walk_folder
from .intake import IntakeError
from .layouts import Choice, Entry, discover, single_file, wrapper_prefix
from .local import Task, file_sha256, grade_task, unjudged_report
from .runner import Interrupted, interruptible, run_parallel
from .record_seal import file_digest, load_key, sealed, verified
from .shards import select
from .similarity import fingerprint, windows
from .state import (RunKey, StateDirError, StudentRecord, load_run, make_state_dirs, reusable, run_level_problems,
                    save_record, save_run, student_output_problem)
from .writes import OutputError, atomic_write
from .zip_intake import unpack_zip

EXIT_OK, EXIT_SOME_FAILED, EXIT_BAD = 0, 1, 2
EXIT_INTERRUPTED = 130


class BatchError(Exception):
    """Bad arguments or a broken bundle: nothing was graded (exit 2)."""


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    not_judged: int
    not_ac: int
    elapsed_s: float

    @property
    def eta_s(self) -> float | None:
        return None if not self.done else self.elapsed_s / self.done * (self.total - self.done)


@dataclass(frozen=True)
class BatchOptions:
    inputs: tuple[Path, ...]
    out: Path
    jobs: int = 0                         # 0: the number of cores
    tests: str = "all"
    secret_seed: int | None = None
    random_seed: bool = False             # --secret-seed random: reuse DIR's seed when resuming
    docker: bool = False
    image: str = docker_mode.DEFAULT_IMAGE
    shard: tuple[int, int] | None = None
    isolation: str = "auto"
    file: str | None = None               # --file: a glob naming the file to grade among a student's several
    progress: Callable[[Progress], None] | None = None


@dataclass(frozen=True)
class BatchResult:
    out: Path
    outputs: Outputs
    graded: int                # graded by this run
    reused: int                # kept from an earlier run (resume)
    interrupted: str | None    # the signal's name when stopped early
    input_problems: tuple[str, ...]

    @property
    def exit_status(self) -> int:
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


def _check_paths(opts: BatchOptions) -> None:
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


def find_entries(inputs: tuple[Path, ...], work: Path, choice: Choice = Choice()
                 ) -> tuple[list[Entry], list[str], list[str], list[str]]:
    """(entries, refused entry lines, ignored files, refused inputs) of all inputs."""
    entries, refused, ignored, problems = [], [], [], []
    for n, p in enumerate(inputs, 1):
        label = p.name if p.is_file() else (p.name or str(p))
        try:
            if p.is_dir():
                found = discover(label, walk_folder(p), choice=choice)
            elif p.suffix.lower() == ".zip":
                dest = work / f"{n}"
                if dest.is_symlink():      # planted in a DIR someone else prepared: never unpack through it
                    dest.unlink()
                shutil.rmtree(dest, ignore_errors=True)
                try:
                    dest.mkdir(parents=True)
                except OSError as exc:
                    raise IntakeError(f"{dest}: cannot be made empty to unpack {p.name} into "
                                      f"({exc.strerror or exc})") from None
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
            text = extract_code(text)[0]
        except (NotebookError, ValueError, RecursionError):
            return ""
    return text if len(text.encode("utf-8", "surrogatepass")) <= limit else ""


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


def _triage(out: Path, entries: list[Entry], key: RunKey, seal_key: bytes | None
            ) -> tuple[dict[str, StudentRecord], list[tuple[Entry, str]], int]:
    """(records kept or not judged, students to grade with their file's sha256, how many were kept):
    a student whose sealed result in DIR is still valid is kept (resume); one with a folder, link or
    FIFO where its files belong in DIR is "could not be judged", and nothing of it is written."""
    records: dict[str, StudentRecord] = {}
    todo: list[tuple[Entry, str]] = []
    reused = 0
    for e in entries:
        sha = file_sha256(e.path)
        damaged = student_output_problem(out, e.student)
        if damaged:
            records[e.student] = StudentRecord(e.student, e.source, e.layout, e.name, e.late, sha, key, 0.0,
                                               False, damaged, "CE")
            continue
        kept = reusable(out, e.student, sha, key)
        if kept is not None and kept.source == e.source and \
                verified(kept, file_digest(out / f"{e.student}.json", out), seal_key):
            records[e.student] = kept
            reused += 1
        else:
            todo.append((e, sha))
    return records, todo, reused


def _run_batch(bundle: Bundle, opts: BatchOptions, zygote: Spawned | None) -> BatchResult:
    _check_paths(opts)
    out = opts.out
    try:
        make_output_folder(out, bundle.own_parts())
        unpacked = make_state_dirs(out, "unpacked")
    except (WriteRefused, StateDirError) as exc:
        raise BatchError(f"--out {exc}") from None
    damaged = run_level_problems(out)
    if damaged:
        raise BatchError(damaged[0])
    seed = opts.secret_seed
    if opts.random_seed:
        previous = load_run(out) or {}
        seed = previous.get("secret_seed") if isinstance(previous.get("secret_seed"), int) \
            else int.from_bytes(os.urandom(8), "little")
    if opts.docker:
        try:
            docker_mode.check_engine(opts.image)
        except docker_mode.DockerUnavailable as exc:
            raise BatchError(str(exc)) from None
    entries, refused, ignored, problems = find_entries(opts.inputs, unpacked, Choice(opts.file))
    all_ids = [e.student for e in entries]
    if opts.shard:
        mine = set(select(all_ids, *opts.shard))
        entries = [e for e in entries if e.student in mine]
    # One worker per submission: the batch's jobs already use the cores.
    options = GradeOptions(tests=opts.tests, secret_seed=seed, isolation=opts.isolation, second_worker=False)
    try:
        cases = cases_step(bundle, options)
        if not opts.docker:
            options = replace(options, probe_s=probe_step(bundle, options, zygote))
        if zygote is not None:
            zygote.close()   # unused (Docker) or the probe's, ended: no task inherits its socket
    except BundleError as exc:
        raise BatchError(str(exc)) from None
    except SandboxError as exc:
        raise BatchError(f"the sandbox cannot start here: {exc}") from None
    key = RunKey(bundle.spec.id, bundle.spec.version, __version__, opts.tests, seed,
                 f"docker:{opts.image}" if opts.docker else "local")
    run = {**asdict(key),
           "shard": f"{opts.shard[0]}/{opts.shard[1]}" if opts.shard else None,
           "students": sorted(all_ids), "shard_students": sorted(e.student for e in entries),
           "students_in_shard": len(entries), "groups": bundle.group_names(opts.tests),
           "refused": refused, "ignored": ignored, "input_problems": problems}
    try:
        save_run(out, run)
    except OutputError as exc:
        raise BatchError(str(exc)) from None
    starter_path = bundle.root / "starter" / "solution.py"
    starter = windows(starter_path.read_text(encoding="utf-8")) if starter_path.is_file() else set()

    seal_key = load_key()
    source_limit = bundle.spec.limits.source_kib * 1024
    records, todo, reused = _triage(out, entries, key, seal_key)
    token = os.urandom(4).hex()
    tasks = [Task(e.student, e.path, e.problem, out / f"{e.student}.json",
                  container=f"vit-batch-{token}-{i}" if opts.docker else "", within=e.within)
             for i, (e, _) in enumerate(todo)]
    started = time.monotonic()
    counts = {"done": 0, "not_judged": 0, "not_ac": 0}

    def report_progress() -> None:
        if opts.progress:
            opts.progress(Progress(counts["done"], len(tasks), counts["not_judged"], counts["not_ac"],
                                   time.monotonic() - started))

    def print_of(path: Path | None) -> list[int]:
        return fingerprint(_source_text(path, source_limit), starter) if path else []

    def on_done(index: int, result: dict) -> None:
        e, sha = todo[index]
        prints = result.get("fingerprint")
        if not (isinstance(prints, list) and all(type(x) is int for x in prints)):
            prints = print_of(e.path)
        if "error" in result:   # the grading process itself failed: the student is not judged
            reason = f"grading failed: {result['error']}"
            result = {"verdict": "CE", "judged": False, "reason": reason, "seconds": 0.0}
            try:
                atomic_write(tasks[index].out_json, render_json(unjudged_report(bundle, options, cases, reason)))
            except OutputError as exc:
                result["reason"] = f"{reason}; {exc}"
        rec = StudentRecord(e.student, e.source, e.layout, e.name, e.late, sha, key, float(result["seconds"]),
                            bool(result["judged"]), str(result["reason"]), str(result["verdict"]), prints)
        rec = sealed(rec, file_digest(tasks[index].out_json, out), seal_key)
        try:
            save_record(out, rec)
        except OutputError as exc:   # kept in memory: the gradebook still lists the student, as not judged
            rec = replace(rec, judged=False, reason=str(exc))
        records[e.student] = rec
        counts["done"] += 1
        counts["not_judged"] += not rec.judged
        counts["not_ac"] += rec.verdict != "AC"
        report_progress()

    if opts.docker:
        cfg = docker_mode.DockerConfig(opts.image)

        def grade_one(task: Task) -> dict:
            return docker_mode.docker_task(cfg, bundle, options, cases, task)
    else:
        def grade_one(task: Task) -> dict:
            return grade_task(bundle, options, cases, task)

    def work(task: Task) -> dict:
        # The similarity fingerprint is taken in the task's own process: in parallel,
        # not before the first grading starts (0.15 s for 40 students).
        return {**grade_one(task), "fingerprint": print_of(task.path)}
    jobs = opts.jobs or default_jobs()
    interrupted = None
    try:
        run_parallel(tasks, work, jobs, timeout_s=bundle.spec.limits.total_time_s + 180,
                     on_done=on_done, on_tick=report_progress)
    except Interrupted as exc:
        interrupted = str(exc)
    finally:
        if opts.docker:
            docker_mode.remove_containers([t.container for t in tasks])
    outputs = write_outputs(out, run, [records[s] for s in sorted(records)])
    return BatchResult(out, outputs, counts["done"], reused, interrupted, tuple(problems))
