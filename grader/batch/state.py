"""What a batch keeps in DIR/.batch/ so that it can resume, and shards can be merged.

- _run.json: how the batch was run (bundle, grader, tests, hidden-set seed,
  local or Docker, the shard, and the full list of student ids);
- <id>.json: one record per student: where the file came from, its sha256,
  the run key it was graded under, the grading time, whether it could be
  judged (and why not), and its similarity fingerprint.

A student is skipped on a re-run when DIR/<id>.json exists and its record has
the same file hash and the same run key (bundle id and version, grader
version, tests, seed, mode).

A DIR is read back as hostile (a resumed folder someone else could write to,
a shard folder from another machine): every file is read through
judging/paths.py (no symlink followed, no FIFO or device opened, a size
bound), and a record or _run.json whose fields have the wrong types is treated
as missing, never as a crash further on.
"""

from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..judging.paths import read_regular
from ..judging.verdict import VERDICTS
from .ids import valid_id
from .lms_ids import NO_LMS_IDS, LmsIds, lms_ids_from_json
from .writes import atomic_write, output_problem

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_D = TypeVar("_D", bound="DataclassInstance")

STATE_DIR = ".batch"
RUN_FILE = "_run.json"  # "_": no student id starts with one (ids.valid_id), so no student "run" overwrites it
MAX_STATE_FILE = 16 << 20  # a record, a verdict JSON or _run.json of a large class is far smaller


@dataclass(frozen=True)
class RunKey:
    """Everything that, if changed, makes a stored verdict stale."""

    bundle_id: str
    bundle_version: str
    grader_version: str
    tests: str
    secret_seed: int | None
    mode: str  # "local" or "docker:<image>"


def run_key(run: dict[str, Any]) -> RunKey:
    """The run key a _run.json records: its fields are RunKey's, by name (api.py writes them)."""
    return RunKey(**{f.name: run[f.name] for f in fields(RunKey)})


@dataclass(frozen=True)
class StudentRecord:
    student: str
    source: str
    layout: str
    name: str
    late: bool | None  # Canvas's LATE marker; None where the download says nothing about lateness
    sha256: str  # of the graded file's bytes; "" when there was none
    key: RunKey
    seconds: float  # wall time of this student's grading
    judged: bool  # False: could not be read or judged (reason says why)
    reason: str
    verdict: str
    fingerprint: list[int] = field(default_factory=list)  # similarity k-gram hashes
    report_sha256: str = ""  # of DIR/<id>.json as written (record_seal.py)
    seal: str = ""  # HMAC of this record with the user's key (record_seal.py); "" when unsealed
    lms: LmsIds = NO_LMS_IDS  # what the LMS matches this student on


def state_dir(out: Path) -> Path:
    return out / STATE_DIR


class StateDirError(Exception):
    """DIR's own folders are not plain folders (a hostile or damaged DIR)."""


def make_state_dirs(out: Path, *below: str) -> Path:
    """DIR/.batch (and DIR/.batch/<below>...), created if needed, each a real folder: a symlinked
    .batch or .batch/unpacked in a DIR someone else prepared would make the batch write records
    into, or empty (the unpacked zips are replaced), a folder elsewhere."""
    folder = out
    for name in (STATE_DIR, *below):
        folder = folder / name
        try:
            os.mkdir(folder, 0o755)
        except FileExistsError:
            pass
        except OSError as exc:
            raise StateDirError(f"{folder}: cannot be created ({exc.strerror or exc})") from None
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            raise StateDirError(f"{folder} is not a folder (a symbolic link?): refused, use a fresh --out")
    return folder


def run_level_problems(out: Path, also: tuple[str, ...] = ()) -> list[str]:
    """Why the run's own files of DIR (and the files named `also`, the LMS files) cannot be written
    (a batch checks them before grading, a merge before copying)."""
    paths = (
        out / "grades.csv",
        out / "summary.md",
        out / "summary.html",
        state_dir(out) / RUN_FILE,
        *(out / name for name in also),
    )
    return [p for p in (output_problem(path) for path in paths) if p]


def student_output_problem(out: Path, student: str) -> str | None:
    """Why a student's verdict JSON or record cannot be written, or None."""
    return output_problem(out / f"{student}.json") or output_problem(state_dir(out) / f"{student}.json")


def read_state(path: Path, within: Path) -> bytes | None:
    """The bytes of a file in DIR, or None if it is missing, not a regular file inside `within`
    (a symlink, FIFO, device: never followed or opened) or over MAX_STATE_FILE."""
    try:
        data = read_regular(path, MAX_STATE_FILE + 1, within=within)
    except OSError:
        return None
    return data if len(data) <= MAX_STATE_FILE else None


def parse_json(data: bytes | None) -> object:
    """The JSON value of `data`, or None if it is not UTF-8 JSON."""
    try:
        return None if data is None else json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None


def read_json(path: Path, within: Path) -> object:
    """The JSON in a file of DIR (see read_state), or None."""
    return parse_json(read_state(path, within))


def _typed(value: object, kind: object) -> bool:
    """Is `value` (read back from JSON) of the annotated type `kind` (the dataclasses' annotations)?"""
    if kind == "str":
        return type(value) is str
    if kind == "bool":
        return type(value) is bool
    if kind == "bool | None":
        return value is None or type(value) is bool
    if kind == "float":
        return type(value) in (int, float) and math.isfinite(cast(float, value)) and cast(float, value) >= 0
    if kind == "int | None":
        return value is None or type(value) is int
    if kind == "list[int]":
        return type(value) is list and all(type(v) is int for v in value)
    return False


def _build(cls: type[_D], data: object) -> _D | None:
    """`cls(**data)` if `data` has exactly its fields, each of its type; else None."""
    if not isinstance(data, dict) or set(data) != {f.name for f in fields(cls)}:
        return None
    for f in fields(cls):
        if f.type not in ("RunKey", "LmsIds") and not _typed(data[f.name], f.type):
            return None
    return cls(**data)


def save_record(out: Path, rec: StudentRecord) -> None:
    atomic_write(state_dir(out) / f"{rec.student}.json", json.dumps(asdict(rec), sort_keys=True) + "\n")


def load_record(out: Path, student: str) -> StudentRecord | None:
    """The stored record of `student`, or None if there is none or it is damaged. Older records
    are read as they were written: without `lms` (no identifiers known), with `late` a bool."""
    data = read_json(state_dir(out) / f"{student}.json", out)
    if not isinstance(data, dict):
        return None
    key = _build(RunKey, data.get("key"))
    lms = lms_ids_from_json(data.get("lms"))
    rec = _build(StudentRecord, {**data, "key": key, "lms": lms}) if key is not None else None
    return rec if rec is not None and rec.student == student and rec.verdict in VERDICTS else None


def load_records(out: Path) -> list[StudentRecord]:
    """Every student record in DIR/.batch/, sorted by id."""
    folder = state_dir(out)
    try:
        names = sorted(p.name for p in folder.iterdir())
    except OSError:
        return []
    out_records = []
    for name in names:
        if name.endswith(".json") and name != RUN_FILE and valid_id(name[:-5]):
            rec = load_record(out, name[:-5])
            if rec is not None:
                out_records.append(rec)
    return out_records


def reusable(out: Path, student: str, sha256: str, key: RunKey) -> StudentRecord | None:
    """The stored record if this student's result can be kept as it is (the caller then checks
    its seal: record_seal.verified)."""
    rec = load_record(out, student)
    if rec is None or rec.key != key or rec.sha256 != sha256 or not sha256:
        return None
    return rec if (out / f"{student}.json").is_file() else None


def save_run(out: Path, run: dict[str, Any]) -> None:
    atomic_write(state_dir(out) / RUN_FILE, json.dumps(run, sort_keys=True, indent=1) + "\n")


def load_run(out: Path) -> dict[str, Any] | None:
    data = read_json(state_dir(out) / RUN_FILE, out)
    return data if isinstance(data, dict) and _run_typed(data) else None


# _run.json's fields and their types (the ones a resume, a merge or the summary reads).
_RUN_FIELDS = {
    "bundle_id": "str",
    "bundle_version": "str",
    "grader_version": "str",
    "tests": "str",
    "secret_seed": "int | None",
    "mode": "str",
    "shard": "str | None",
    "students": "list[str]",
    "shard_students": "list[str]",
    "students_in_shard": "int",
    "groups": "list[str]",
    "refused": "list[str]",
    "ignored": "list[str]",
    "input_problems": "list[str]",
}


def _run_typed(data: dict[str, Any]) -> bool:
    for name, kind in _RUN_FIELDS.items():
        if name not in data:
            return False
        value = data[name]
        if kind == "list[str]":
            ok = type(value) is list and all(type(v) is str for v in value)
        elif kind == "str | None":
            ok = value is None or type(value) is str
        elif kind == "int":
            ok = type(value) is int and value >= 0
        else:
            ok = _typed(value, kind)
        if not ok:
            return False
    return True
