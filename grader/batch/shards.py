"""--shard K/N and batch-merge: fanning a course out over any engine, and back.

A shard is every N-th student of the whole batch in id order, starting at the
K-th: deterministic, the same on every machine given the same inputs, and an
exact 1/N (give or take one). Each shard writes a complete DIR of its own;
`merge_dirs` checks that the shards belong together (same bundle, grader,
tests, seed, mode and student list; each K of 1..N exactly once; every
student graded), copies the verdict JSON files and records into one DIR and
writes grades.csv and summary.md exactly as a single run over the same inputs
would (apart from timings).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..problem.bundle import Bundle
from ..problem.safe_write import WriteRefused, folder_problem, make_output_folder
from .fit import record_misfit, run_misfit, score_misfit
from .gradebook import mistake_titles, report_shape_ok
from .gradebook_files import Outputs, write_outputs
from .lms_files import LMS_FILE_NAMES, NO_LMS_OPTIONS, LmsOptions
from .state import (
    RUN_FILE,
    StateDirError,
    StudentRecord,
    load_records,
    load_run,
    make_state_dirs,
    parse_json,
    read_state,
    run_level_problems,
    save_record,
    save_run,
    state_dir,
    student_output_problem,
)
from .writes import OutputError, atomic_write

# What must agree between shards (everything in _run.json except the shard's own part).
AGREE = (
    "bundle_id",
    "bundle_version",
    "grader_version",
    "tests",
    "secret_seed",
    "mode",
    "students",
    "groups",
    "refused",
    "ignored",
    "input_problems",
)


class ShardError(Exception):
    """Bad --shard, or shard folders that cannot be merged (exit 2)."""


def parse_shard(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not m:
        raise ShardError(f"--shard: expected K/N such as 2/8, got {text!r}")
    k, n = int(m[1]), int(m[2])
    if n < 1 or not 1 <= k <= n:
        raise ShardError(f"--shard {text}: K must be between 1 and N (N >= 1)")
    return k, n


def select(ids: list[str], k: int, n: int) -> list[str]:
    """The ids of shard k of n: every n-th id in sorted order, from the k-th."""
    return [s for i, s in enumerate(sorted(ids)) if i % n == k - 1]


def _copy_student(out: Path, rec: StudentRecord, data: bytes | None) -> StudentRecord:
    """Write one student's verdict JSON (`data`, None when not to be copied) and record into `out`;
    the record as merged (not judged, saying why, when `out` has a folder or link where its files
    belong)."""
    damaged = student_output_problem(out, rec.student)
    if damaged:
        return replace(rec, judged=False, reason=damaged)
    try:
        if data is not None:
            atomic_write(out / f"{rec.student}.json", data.decode("utf-8"))
        save_record(out, rec)
    except OutputError as exc:
        return replace(rec, judged=False, reason=str(exc))
    return rec


def _shard_students(d: Path, run: dict[str, Any], bundle: Bundle) -> list[tuple[StudentRecord, bytes | None]]:
    """A shard's records of its own students, each with its verdict JSON's bytes (None when it is not
    to be copied); ShardError if any record or score does not fit the bundle (fit.py)."""
    found = []
    for rec in load_records(d):
        if rec.student not in run["shard_students"]:
            continue
        misfit = record_misfit(d, rec, run)
        # Through the same checked reader as a resume: a symlink, FIFO or malformed verdict
        # JSON in a shard folder is not copied (its student counts as not judged).
        data = read_state(d / f"{rec.student}.json", d)
        report = parse_json(data)
        if not report_shape_ok(report, mistake_titles(bundle)):
            data = None
        elif misfit is None:
            misfit = score_misfit(d, rec.student, report, run, bundle)
        if misfit:
            raise ShardError(f"refused: {misfit}")
        found.append((rec, data))
    return found


def _load_runs(dirs: list[Path], bundle: Bundle) -> list[tuple[Path, dict[str, Any]]]:
    runs = []
    for d in dirs:
        run = load_run(d)
        if run is None:
            raise ShardError(
                f"{d}: not a batch output folder (no readable {state_dir(d).name}/{RUN_FILE}, "
                "or one with fields of the wrong type)"
            )
        misfit = run_misfit(d, run, bundle)
        if misfit:
            raise ShardError(f"refused: {misfit}")
        runs.append((d, run))
    return runs


def merge_dirs(
    dirs: list[Path], out: Path, bundle: Bundle, lms: LmsOptions = NO_LMS_OPTIONS
) -> tuple[Outputs, dict[str, Any]]:
    """Merge shard folders into `out`, checked against `bundle`; returns the outputs (the LMS files
    written as `lms` says) and the merged run description."""
    refused = folder_problem(out, bundle.own_parts())  # before any shard is read
    if refused:
        raise ShardError(f"--out {refused}")
    runs = _load_runs(dirs, bundle)
    _check_shards(runs)
    try:
        make_output_folder(out, bundle.own_parts())
        make_state_dirs(out)
    except (WriteRefused, StateDirError) as exc:
        raise ShardError(f"--out {exc}") from None
    damaged = run_level_problems(out, LMS_FILE_NAMES)
    if damaged:
        raise ShardError(damaged[0])
    found = [(d, rec, data) for d, run in runs for rec, data in _shard_students(d, run, bundle)]
    merged: dict[str, StudentRecord] = {}
    for d, rec, data in found:
        if rec.student in merged:
            raise ShardError(f"student {rec.student} is in two shards")
        merged[rec.student] = rec if d.resolve() == out.resolve() else _copy_student(out, rec, data)
    first = runs[0][1]
    run = {k: first.get(k) for k in AGREE}
    run.update(
        shard=None,
        merged_from=len(runs),
        students_in_shard=len(first.get("students", [])),
        shard_students=sorted(first.get("students", [])),
    )
    try:
        save_run(out, run)
    except OutputError as exc:
        raise ShardError(str(exc)) from None
    return write_outputs(
        out, run, [merged[s] for s in sorted(merged)], mistake_titles(bundle), bundle=bundle, lms=lms
    ), run


def _check_shards(runs: list[tuple[Path, dict[str, Any]]]) -> None:
    """ShardError unless the folders are the shards of one batch, each K of 1..N once."""
    first_dir, first = runs[0]
    for d, run in runs[1:]:
        for key in AGREE:
            if run.get(key) != first.get(key):
                raise ShardError(f"{d} and {first_dir} do not belong to the same batch: their {key} differ")
    shards = [run.get("shard") for _, run in runs]
    if any(s is None for s in shards):
        if len(runs) > 1:
            raise ShardError("a folder without --shard cannot be merged with others")
    else:
        parsed = [parse_shard(s) for s in shards if s is not None]  # none is, here
        n = parsed[0][1]
        if any(pn != n for _, pn in parsed):
            raise ShardError("the folders come from different shard counts (N)")
        for (d, run), (k, _) in zip(runs, parsed):
            if sorted(run.get("shard_students", [])) != select(run.get("students", []), k, n):
                raise ShardError(f"{d}: its students are not those of shard {k}/{n} of the batch")
        ks = sorted(k for k, _ in parsed)
        if ks != list(range(1, n + 1)):
            missing = sorted(set(range(1, n + 1)) - set(ks))
            dup = sorted({k for k in ks if ks.count(k) > 1})
            raise ShardError(
                f"shards do not cover 1..{n} exactly once"
                + (f": missing {', '.join(f'{k}/{n}' for k in missing)}" if missing else "")
                + (f": repeated {', '.join(f'{k}/{n}' for k in dup)}" if dup else "")
            )
