"""problem.yaml as parsed, cached by the SHA-256 of its bytes.

PyYAML costs every grading about 60 ms before the first test can run (30 ms to
import, 30 ms to parse 7 KB), more than judging the three samples. The parsed
document is kept as a JSON entry named after the hash of the file's bytes, in
the case cache's folder (case_cache.cache_dir, with its switch and its rules:
written to a temporary file and renamed; unreadable entries are misses, and a
folder or entry that another user could have written is never read). problem.yaml stays
the source of truth: a changed file has a new hash and is parsed again, and
spec.parse_spec validates the document either way. Only a document that JSON
represents exactly is cached; nothing is unpickled.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .case_cache import cache_dir, open_folder, read_entry

CACHE_VERSION = 1
T = TypeVar("T")


def _key(data: bytes) -> str:
    return hashlib.sha256(f"problem.yaml|{CACHE_VERSION}|".encode() + data).hexdigest()


def _store(folder: Path, key: str, doc: Any) -> None:
    try:
        text = json.dumps(doc, allow_nan=False)  # in the document's order: errors are reported in it
        if not _same(json.loads(text), doc):
            return  # not exactly JSON (dates, sets, integer keys): always parsed
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".spec.json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, folder / f"{key}.spec.json")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except (OSError, TypeError, ValueError):
        pass  # a read-only or full cache, or a document JSON cannot hold, only costs speed


def _same(a: Any, b: Any) -> bool:
    """Equal, of the same types (1 == 1.0 == True in Python) and with keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    same: bool = a == b
    return same


def parsed_cached(data: bytes, parse: Callable[[bytes], Any], check: Callable[[Any], T]) -> T:
    """`check(parse(data))`, with the parsed document taken from the cache when these exact bytes
    were parsed before. Whatever `parse` or `check` raises propagates, and a document is cached
    only once `check` has accepted it: never an invalid one (nor a YAML alias bomb, which `check`
    refuses before anything would expand it)."""
    folder = cache_dir()
    if folder is None or not open_folder(folder):
        return check(parse(data))
    key = _key(data)
    cached = read_entry(folder, f"{key}.spec.json")
    if cached is not None:
        try:
            doc = json.loads(cached.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            pass
        else:
            return check(doc)
    doc = parse(data)
    result = check(doc)
    _store(folder, key, doc)
    return result
