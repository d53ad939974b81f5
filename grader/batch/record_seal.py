"""Resume trusts only what this user's batch wrote: a keyed seal on each record.

DIR is a folder anyone with write access to it can edit (a course share, a
copied folder): a forged DIR/<id>.json saying AC, with a record claiming the
student's file hash and the run key, would otherwise be kept by a resume. So
each record carries the sha256 of the verdict JSON that was written and an
HMAC-SHA256 of the record, keyed by a secret that lives outside DIR, in the
user's state folder ($XDG_STATE_HOME or ~/.local/state, grader/batch.key,
mode 0600, made on first use). A resume keeps a result only if the seal
verifies and the verdict JSON still has the hash sealed; anything else is
graded again. Without a usable key (no writable home) nothing is kept: slower,
never wrong.

batch-merge cannot verify seals made on other machines: it re-checks the
shape of every file instead (gradebook.report_shape_ok) and trusts the shard
workers, which are the operator's own (docs/batch.md).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from dataclasses import asdict, replace
from pathlib import Path

from ..judging.paths import read_regular
from .state import StudentRecord, read_state

KEY_BYTES = 32


def key_path() -> Path | None:
    base = os.environ.get("XDG_STATE_HOME") or (
        os.path.join(os.path.expanduser("~"), ".local", "state") if os.path.expanduser("~") != "~" else ""
    )
    return Path(base, "grader", "batch.key") if base else None


def load_key() -> bytes | None:
    """This user's sealing key, made on first use; None when it cannot be read or made."""
    path = key_path()
    if path is None:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as f:
                f.write(os.urandom(KEY_BYTES))
        key = read_regular(path, KEY_BYTES + 1)
    except OSError:
        return None
    return key if len(key) == KEY_BYTES else None


def file_digest(path: Path, within: Path) -> str:
    """sha256 of a verdict JSON in DIR, or "" when it is not a readable regular file of bounded size."""
    data = read_state(path, within)
    return "" if data is None else hashlib.sha256(data).hexdigest()


def _mac(key: bytes, rec: StudentRecord) -> str:
    body = json.dumps(asdict(replace(rec, seal="")), sort_keys=True).encode("utf-8")
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def sealed(rec: StudentRecord, report_sha256: str, key: bytes | None) -> StudentRecord:
    """`rec` with the hash of its verdict JSON and, when there is a key, its seal."""
    rec = replace(rec, report_sha256=report_sha256, seal="")
    return replace(rec, seal=_mac(key, rec)) if key else rec


def verified(rec: StudentRecord, report_sha256: str, key: bytes | None) -> bool:
    """Did this user's batch write `rec`, for the verdict JSON whose hash is `report_sha256`?"""
    return bool(
        key
        and rec.seal
        and report_sha256
        and rec.report_sha256 == report_sha256
        and hmac.compare_digest(rec.seal, _mac(key, rec))
    )
