"""A cache of parsed test cases, keyed by the SHA-256 of each JSON file.

Parsing the 5 MB of case JSON costs more than judging the reference on all of
it, so a parsed case is kept as a small binary entry (a JSON header and the
arrays' raw float64 bytes; nothing is ever unpickled) named after the hash
of the file's bytes. The JSON files stay the
source of truth: a changed file has a new hash and is parsed again; an entry
that cannot be read or does not match is ignored and rewritten. Entries are
written to a temporary file and renamed, so concurrent graders never see half
an entry.

Where: $GRADER_CACHE_DIR if set ("off" switches the cache off), else
$XDG_CACHE_HOME/grader/cases, else ~/.cache/grader/cases, created
private (0700). A cache that cannot be created or written (a read-only
container) is simply not used, and neither is a folder or an entry that
another user owns or could write (`trusted`): an entry decides what a grading
compares against.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
import struct
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from .cases import FORMAT_SUFFIX, TestCase, case_from_bytes, is_dict_list, load_cases, read_case_bytes

CACHE_VERSION = 1
ENV = "GRADER_CACHE_DIR"


def cache_dir() -> Path | None:
    """The cache folder, or None when the cache is switched off."""
    value = os.environ.get(ENV)
    if value == "off":
        return None
    if value:
        return Path(value)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "grader" / "cases"


def _private(st: os.stat_result) -> bool:
    return st.st_uid == os.geteuid() and not st.st_mode & 0o022


def trusted(folder: Path) -> bool:
    """Owned by this user and writable by no one else. A cache entry decides what a grading
    compares against (a spec entry, what it allows), so nothing another user could have written
    is ever read: it only costs the parsing."""
    try:
        return _private(os.stat(folder))
    except OSError:
        return False


def open_folder(folder: Path) -> bool:
    """Create the cache folder (private) if it is missing; may it be used? A folder of ours that
    others may write (made under a umask of 002 before folders were made private) is made private:
    its entries are still checked one by one, and whatever someone else put there is theirs."""
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = os.stat(folder)
        if st.st_uid == os.geteuid() and st.st_mode & 0o022:
            os.chmod(folder, stat.S_IMODE(st.st_mode) & ~0o077)
    except OSError:
        return False
    return trusted(folder)


def read_entry(folder: Path, name: str) -> bytes | None:
    """The bytes of entry `name`, or None unless the folder and the entry (a regular file, not a
    link) are this user's alone. Both are checked on the open descriptors themselves, so nothing
    can be swapped in between the check and the read."""
    try:
        dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        if not _private(os.fstat(dfd)):
            return None
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            return f.read() if stat.S_ISREG(st.st_mode) and _private(st) else None
    except OSError:
        return None
    finally:
        os.close(dfd)


def _key(data: bytes) -> str:
    return hashlib.sha256(f"{FORMAT_SUFFIX}|{CACHE_VERSION}|".encode() + data).hexdigest()


MAGIC = b"GRDCASE3"  # the entry layout's version: an entry of another is a miss


def _item_array(name: str, index: int, key: str) -> str:
    """The header's name of the array under `key` in item `index` of list input `name` (a NUL
    separates them: no parameter's name holds one)."""
    return f"{name}\0{index}\0{key}"


def _encode(case: TestCase) -> bytes:
    """MAGIC, the header's length, a JSON header (metadata, the inputs in order: each scalar's
    value, each list's keys per item, each array's shape), the arrays' raw float64 bytes."""
    arrays = {k: np.ascontiguousarray(v, dtype="<f8") for k, v in case.inputs.items() if isinstance(v, np.ndarray)}
    lists = {k: v for k, v in case.inputs.items() if is_dict_list(v)}
    for k, items in lists.items():
        for i, d in enumerate(items):
            arrays.update({_item_array(k, i, key): np.ascontiguousarray(a, dtype="<f8") for key, a in d.items()})
    scalars = [[k, v] for k, v in case.inputs.items() if not isinstance(v, np.ndarray) and k not in lists]
    if case.expected is not None:
        arrays[""] = np.ascontiguousarray(case.expected, dtype="<f8")  # "": no parameter's name
    head = {
        "name": case.name,
        "group": case.group,
        "description": case.description,
        "explanation": case.explanation,
        "extra": case.extra,
        "order": list(case.inputs),
        "scalars": scalars,
        "lists": [[k, [list(d) for d in items]] for k, items in lists.items()],
        "arrays": [[k, list(a.shape)] for k, a in arrays.items()],
    }
    raw = json.dumps(head, sort_keys=True).encode("utf-8")
    return MAGIC + struct.pack("<Q", len(raw)) + raw + b"".join(a.tobytes() for a in arrays.values())


def _arrays(data: bytes, offset: int, shapes: list[tuple[str, list[int]]]) -> tuple[dict[str, np.ndarray], int]:
    arrays = {}
    for key, shape in shapes:
        dims = [int(d) for d in shape]  # a damaged entry raises: a miss
        count = math.prod(dims)
        arrays[str(key)] = (
            np.frombuffer(data, dtype="<f8", count=count, offset=offset).reshape(dims).astype(np.float64, copy=True)
        )
        offset += 8 * count
    return arrays, offset


def _decode(data: bytes) -> TestCase | None:
    try:
        if not data.startswith(MAGIC):
            return None
        (n,) = struct.unpack_from("<Q", data, len(MAGIC))
        start = len(MAGIC) + 8
        head = json.loads(data[start : start + n].decode("utf-8"))
        arrays, offset = _arrays(data, start + n, head["arrays"])
        lists = {
            str(k): [{str(key): arrays.pop(_item_array(k, i, key)) for key in d} for i, d in enumerate(items)]
            for k, items in head["lists"]
        }
        values: dict[str, object] = {**dict(head["scalars"]), **arrays, **lists}
        if offset != len(data) or set(values) - {""} != set(head["order"]):
            return None
        return TestCase(
            name=str(head["name"]),
            group=str(head["group"]),
            description=str(head["description"]),
            inputs={k: values[k] for k in head["order"]},
            expected=arrays.get(""),
            explanation=str(head["explanation"]),
            extra=dict(head["extra"]),
        )
    except Exception:  # a damaged or foreign entry is a miss, never an error: the JSON decides
        return None


def _store(folder: Path, key: str, case: TestCase) -> None:
    try:
        import tempfile  # here: only a cache miss writes, and the import costs every grading 2-3 ms

        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".case")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_encode(case))
            os.replace(tmp, folder / f"{key}.case")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass  # a read-only or full cache only costs speed


def cached_reader() -> Callable[[Path], TestCase]:
    """cases.read_case through the cache: the same case (a bad file raises CaseFileError as
    always, and is never cached), from the cache when these exact bytes were parsed before. The
    folder is found and checked once for the hits of every file the reader reads (each entry's
    read checks the folder again, on its open descriptor: read_entry), and again before each
    entry is written (a folder that is no longer this user's alone gets none)."""
    folder = cache_dir()
    usable = folder is not None and open_folder(folder)

    def read(path: Path) -> TestCase:
        data = read_case_bytes(path)
        if folder is None or not usable:
            return case_from_bytes(data, str(path))
        key = _key(data)
        data_cached = read_entry(folder, f"{key}.case")
        case = _decode(data_cached) if data_cached is not None else None
        if case is not None:
            return case
        case = case_from_bytes(data, str(path))
        if open_folder(folder):
            _store(folder, key, case)
        return case

    return read


def read_case_cached(path: Path) -> TestCase:
    """One case file through the cache (cached_reader's, for a single file)."""
    return cached_reader()(path)


def load_cases_cached(root: Path, groups: Iterable[str], under: str = "") -> list[TestCase]:
    """cases.load_cases through the cache (the same checks, the same order)."""
    return load_cases(root, groups, under, read=cached_reader())
