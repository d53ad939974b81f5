"""What a batch keeps in DIR/.batch/ so that it can resume, and shards can be merged.

- run.json: how the batch was run (bundle, grader, tests, hidden-set seed,
  local or Docker, the shard, and the full list of student ids);
- <id>.json: one record per student: where the file came from, its sha256,
  the run key it was graded under, the grading time, whether it could be
  judged (and why not), and its similarity fingerprint.

A student is skipped on a re-run when DIR/<id>.json exists and its record has
the same file hash and the same run key (bundle id and version, grader
version, tests, seed, mode).
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .ids import valid_id

STATE_DIR = ".batch"
RUN_FILE = "run.json"


@dataclass(frozen=True)
class RunKey:
    """Everything that, if changed, makes a stored verdict stale."""
    bundle_id: str
    bundle_version: str
    grader_version: str
    tests: str
    secret_seed: int | None
    mode: str                 # "local" or "docker:<image>"


@dataclass(frozen=True)
class StudentRecord:
    student: str
    source: str
    layout: str
    name: str
    late: bool
    sha256: str               # of the graded file's bytes; "" when there was none
    key: RunKey
    seconds: float            # wall time of this student's grading
    judged: bool              # False: could not be read or judged (reason says why)
    reason: str
    verdict: str
    fingerprint: list[int] = field(default_factory=list)   # similarity k-gram hashes


def atomic_write(path: Path, text: str) -> None:
    """Write `text` to `path` so that a reader (or a kill) never sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    os.replace(tmp, path)


def state_dir(out: Path) -> Path:
    return out / STATE_DIR


def save_record(out: Path, rec: StudentRecord) -> None:
    atomic_write(state_dir(out) / f"{rec.student}.json", json.dumps(asdict(rec), sort_keys=True) + "\n")


def load_record(out: Path, student: str) -> StudentRecord | None:
    """The stored record of `student`, or None if there is none or it is damaged."""
    try:
        data = json.loads((state_dir(out) / f"{student}.json").read_text(encoding="utf-8"))
        data["key"] = RunKey(**data["key"])
        rec = StudentRecord(**data)
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return rec if rec.student == student else None


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
    """The stored record if this student's result can be kept as it is."""
    rec = load_record(out, student)
    if rec is None or rec.key != key or rec.sha256 != sha256 or not sha256:
        return None
    return rec if (out / f"{student}.json").is_file() else None


def save_run(out: Path, run: dict) -> None:
    atomic_write(state_dir(out) / RUN_FILE, json.dumps(run, sort_keys=True, indent=1) + "\n")


def load_run(out: Path) -> dict | None:
    try:
        data = json.loads((state_dir(out) / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
