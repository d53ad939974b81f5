"""The manifest of a bundle archive: every file's sha256 and size, the flavour, the seed policy.

Written by `pack` as MANIFEST.json at the top of the archive's folder, read back
strictly by `check_archive` (unknown keys, malformed records and disagreeing
totals are rejected), so a platform can tell exactly what it received.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from .. import __version__
from ..problem.bundle import Bundle
from ..problem.spec import ProblemSpec

FLAVOURS = ("judge", "practice")
MANIFEST_NAME = "MANIFEST.json"
# The archives' format name ("vit-grader" is the grader's old name): frozen, since every archive
# already packed carries it and check-archive reads it.
MANIFEST_FORMAT = "vit-grader/bundle-manifest/1"
CHUNK = 1 << 16


class ArchiveRejected(Exception):
    """The archive is unsafe, corrupt, tampered with or fails a check; str() is one line."""


@dataclass(frozen=True)
class FileRecord:
    path: str  # POSIX path relative to the bundle root
    sha256: str
    size: int
    executable: bool = False


@dataclass(frozen=True)
class Manifest:
    bundle_id: str
    version: str
    flavour: str
    grader_version: str
    seed_policy: dict[str, Any]
    groups: dict[str, list[str]]  # "included" / "absent" test groups
    files: tuple[FileRecord, ...]

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def to_json(self) -> str:
        doc = {
            "format": MANIFEST_FORMAT,
            "bundle_id": self.bundle_id,
            "version": self.version,
            "flavour": self.flavour,
            "grader_version": self.grader_version,
            "seed_policy": self.seed_policy,
            "groups": self.groups,
            "file_count": len(self.files),
            "total_bytes": self.total_bytes,
            "files": [
                {"path": f.path, "sha256": f.sha256, "size": f.size, "executable": f.executable} for f in self.files
            ],
        }
        return json.dumps(doc, indent=1, sort_keys=False, ensure_ascii=True) + "\n"


_SHA256 = re.compile(r"[0-9a-f]{64}")


def parse_manifest(text: str) -> Manifest:
    """Read MANIFEST.json strictly; ArchiveRejected with the offending field otherwise."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ArchiveRejected(f"{MANIFEST_NAME} is not valid JSON ({exc})") from None
    keys = {
        "format",
        "bundle_id",
        "version",
        "flavour",
        "grader_version",
        "seed_policy",
        "groups",
        "file_count",
        "total_bytes",
        "files",
    }
    if not isinstance(raw, dict) or set(raw) != keys:
        raise ArchiveRejected(f"{MANIFEST_NAME} must have exactly the keys {', '.join(sorted(keys))}")
    if raw["format"] != MANIFEST_FORMAT:
        raise ArchiveRejected(f"{MANIFEST_NAME}: unknown format {raw['format']!r} (expected {MANIFEST_FORMAT})")
    if raw["flavour"] not in FLAVOURS:
        raise ArchiveRejected(f"{MANIFEST_NAME}: flavour must be judge or practice, got {raw['flavour']!r}")
    files = []
    if not isinstance(raw["files"], list):
        raise ArchiveRejected(f"{MANIFEST_NAME}: 'files' must be a list")
    for i, f in enumerate(raw["files"]):
        ok = (
            isinstance(f, dict)
            and set(f) == {"path", "sha256", "size", "executable"}
            and isinstance(f["path"], str)
            and isinstance(f["sha256"], str)
            and _SHA256.fullmatch(f["sha256"])
            and isinstance(f["size"], int)
            and not isinstance(f["size"], bool)
            and f["size"] >= 0
            and isinstance(f["executable"], bool)
        )
        if not ok:
            raise ArchiveRejected(f"{MANIFEST_NAME}: files[{i}] is malformed")
        files.append(FileRecord(f["path"], f["sha256"], f["size"], f["executable"]))
    paths = [f.path for f in files]
    if len(set(paths)) != len(paths):
        raise ArchiveRejected(f"{MANIFEST_NAME}: a path is listed twice")
    manifest = Manifest(
        str(raw["bundle_id"]),
        str(raw["version"]),
        raw["flavour"],
        str(raw["grader_version"]),
        raw["seed_policy"],
        raw["groups"],
        tuple(files),
    )
    if raw["file_count"] != len(files) or raw["total_bytes"] != manifest.total_bytes:
        raise ArchiveRejected(f"{MANIFEST_NAME}: file_count/total_bytes disagree with its file list")
    return manifest


def digest(path: Path) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def file_records(root: Path, rels: Iterable[str]) -> tuple[FileRecord, ...]:
    out = []
    for rel in rels:
        path = Path(root) / rel
        sha, size = digest(path)
        out.append(FileRecord(rel, sha, size, bool(path.stat().st_mode & 0o111)))
    return tuple(out)


def seed_policy(spec: ProblemSpec, flavour: str) -> dict[str, Any]:
    """What a reader of the manifest may rely on about the test data."""
    if flavour == "judge":
        return {
            "hidden_cases": "included",
            "generator_seed": spec.generator_seed,
            "statement": "testcases/ is generated from this published seed by `python -m grader generate` "
            "and is byte-identical on regeneration (`generate --check`); to judge on cases "
            "nobody has seen, grade with `--secret-seed SEED`",
        }
    return {
        "hidden_cases": "absent",
        "generator_seed": None,
        "statement": "only the visible groups' cases and the practice set (testcases/practice/, public "
        "seed tests.practice_seed, no points) are included; the hidden cases, the reference "
        "solution and the expected-verdict submissions are not in this archive, so "
        "`grade --tests all` and `--secret-seed` need the judge archive",
    }


def build_manifest(bundle: Bundle, flavour: str, records: Sequence[FileRecord]) -> Manifest:
    spec = bundle.spec
    present = {
        PurePosixPath(r.path).parts[1]
        for r in records
        if r.path.startswith("testcases/") and len(PurePosixPath(r.path).parts) == 3
    }
    names = [g.name for g in spec.groups]
    return Manifest(
        spec.id,
        spec.version,
        flavour,
        __version__,
        seed_policy(spec, flavour),
        {"included": [g for g in names if g in present], "absent": [g for g in names if g not in present]},
        tuple(records),
    )
